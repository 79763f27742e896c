/**
 * `callscript paths` on a flow with calendars: it tries call times at which each calendar
 * is open, closed and on a holiday, so the calendar step's three transitions get a case.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { paths } from '../../src/cli/paths.js';
import { loadFlowDir, runScenarioFile } from '../../src/testing/index.js';

const DIR = new URL('../fixtures/v2-tables', import.meta.url).pathname;
const sink = () => {
  let s = '';
  return {
    w: new Writable({
      write(c, _e, cb) {
        s += c.toString();
        cb();
      },
    }),
    text: () => s,
  };
};

describe('callscript paths with calendars', () => {
  it(
    'finds a case for open, closed and holiday; the one transition that needs time to pass is named with how ' +
      'to write it',
    async () => {
      const out = join(mkdtempSync(join(tmpdir(), 'cal-paths-')), 'bank-hours.paths.test.yaml');
      const err = sink();
      expect(await paths('bank-hours', { flows: DIR, out }, sink().w, err.w)).toBe(0);
      expect(err.text()).toContain(`${out}: 17 cases for 18 uncovered transitions`);
      expect(err.text()).toContain(
        'no case for advisor:default: not found: no call searched (46 call states from 3 starts) reached this ' +
          'step where none of its conditions held; it reads a calendar: write this case by hand with the time ' +
          "that makes it hold (mocks.now, or a step's now: when time passes during the call)",
      );
      const text = readFileSync(out, 'utf8');
      expect(text).toContain('call: { date_started: "2026-12-25 12:00:00" }');
      const run = await runScenarioFile(out, await loadFlowDir(DIR));
      expect(run.errors).toEqual([]);
      expect(run.cases.map((c) => c.name)).toContain('hours:holiday');
      expect(run.cases.filter((c) => !c.ok)).toEqual([]);
    },
  );
});

describe('callscript graph with calendars', () => {
  it("labels a calendar step's edges with its results", async () => {
    const { graph } = await import('../../src/cli/graph.js');
    const out = sink();
    expect(await graph('bank-hours', { flows: DIR }, out.w, sink().w)).toBe(0);
    expect(out.text()).toContain('s0{{"hours<br/>calendar office"}}');
    expect(out.text()).toContain('s0 -->|"open"| s1');
    expect(out.text()).toContain('s0 -->|"holiday"| s8');
    expect(out.text()).toContain('s0 -->|"closed"| s7');
  });
});
