/**
 * Caller scripts (`*.caller.yaml`) are never flows (#11 item 8): a directory's flow files leave
 * them out (registry, reload, validate of a directory, watch), and naming one where a flow is
 * expected says what it is (validate, scenario files' flow:, paths, graph, simulate).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from '../../src/registry/registry.js';
import { isFlowFileName, listFlowFiles } from '../../src/registry/load.js';
import { validate } from '../../src/cli/validate.js';
import { loadFlow } from '../../src/cli/paths.js';
import { loadFlowDir, runScenarioFile } from '../../src/testing/index.js';

const CALLER = new URL('../fixtures/callers/front-desk/sales-answered.yaml', import.meta.url).pathname;
const FLOW = new URL('../../flows/front-desk.yaml', import.meta.url).pathname;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callscript-callers-'));
  copyFileSync(FLOW, join(dir, 'front-desk.yaml'));
  copyFileSync(CALLER, join(dir, 'sales.caller.yaml'));
  copyFileSync(CALLER, join(dir, 'other.caller.yml'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function sink(): { out: Writable; text: () => string } {
  let s = '';
  return {
    out: new Writable({
      write(c: Buffer, _e, done) {
        s += c.toString();
        done();
      },
    }),
    text: () => s,
  };
}

describe('caller scripts are never flows', () => {
  it(
    'are not flow files of a directory: the registry loads ' + 'the flows beside them, and nothing about them',
    async () => {
      expect(isFlowFileName('sales.caller.yaml')).toBe(false);
      expect(isFlowFileName('other.caller.yml')).toBe(false);
      expect(isFlowFileName('caller.yaml')).toBe(true); // a flow named caller is a flow
      expect(await listFlowFiles(dir)).toEqual([join(dir, 'front-desk.yaml')]);
      const { registry, report } = await Registry.fromDirectory(dir);
      expect(registry.list().map((f) => f.name)).toEqual(['front-desk']);
      expect(report.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(report.refused).toEqual([]);
      expect((await loadFlowDir(dir)).problems).toEqual([]);
    },
  );

  it('validate of the directory checks the flow only; naming a caller script says what it is', async () => {
    const a = sink();
    expect(await validate([dir], a.out)).toBe(0);
    expect(a.text()).toBe('1 file checked, 1 valid: no problems\n');
    const b = sink();
    const named = join(dir, 'sales.caller.yaml');
    expect(await validate([named], b.out)).toBe(0);
    expect(b.text()).toBe(
      `${named} is a caller script (*.caller.yaml), not a flow: caller scripts are played by callscript call ` +
        `--caller and simulate --caller; not checked here\n0 files checked, 0 valid: no problems\n`,
    );
  });

  it('a scenario file whose flow: is a caller script, and paths/graph/simulate given one, say what it is', async () => {
    writeFileSync(
      join(dir, 'x.test.yaml'),
      'flow: sales.caller.yaml\ncases:\n  - name: c\n    steps:\n      - expect: play\n',
    );
    const run = await runScenarioFile(join(dir, 'x.test.yaml'), await loadFlowDir(dir));
    expect(run.errors.map((e) => `${e.line}:${e.column}: ${e.message}`)).toEqual([
      '1:7: flow: sales.caller.yaml is a caller script (*.caller.yaml), not a flow: caller scripts are ' +
        'played by callscript call --caller and simulate --caller',
    ]);
    await expect(loadFlow(join(dir, 'sales.caller.yaml'), dir)).rejects.toThrow(
      /is a caller script \(\*\.caller\.yaml\), not a flow/,
    );
  });
});
