/**
 * Subflows in the tools: coverage keys of a flow that enters a module, the graph, paths,
 * and scenarios that target a module directly (with: params, expect: return).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Coverage } from '../../src/testing/coverage.js';
import { flowTransitions } from '../../src/testing/transitions.js';
import { toMermaid } from '../../src/testing/graph.js';
import { generateCases } from '../../src/testing/paths.js';
import { loadFlowDir, runScenarioFile } from '../../src/testing/index.js';
import { load, MAIN, PIN_CHECK } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-subflow-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('coverage, graph and paths of a flow that enters a module', () => {
  const { flows } = load({ 'main.yaml': MAIN, 'pin-check.yaml': PIN_CHECK });
  const main = flows.get('main')!;

  it(
    "lists the ways back to each call site and the module's own transitions, namespaced, at their file " + 'positions',
    () => {
      const t = flowTransitions(main);
      expect(t.all).toEqual([
        'verify:verified',
        'verify:locked',
        'menu:default',
        'pin-check:ask:1234',
        'pin-check:ask:TIMEOUT',
        'pin-check:ask:TIMEOUT:then',
        'pin-check:ask:default',
        'pin-check:ask:default:then',
      ]);
      expect(t.pos.get('verify:locked')).toEqual({ file: 'main.yaml', line: 11, column: 27 });
      expect(t.pos.get('pin-check:ask:TIMEOUT')).toEqual({ file: 'pin-check.yaml', line: 16, column: 16 });
    },
  );

  it("the graph shows the subflow, the module's steps and the way back to the caller", () => {
    const m = toMermaid(main);
    expect(m).toContain('s0{{"verify<br/>subflow pin-check"}}');
    expect(m).toContain('s4{{"pin-check:done<br/>return verified"}}');
    expect(m).toContain('s0 -->|"enter pin-check"| s3');
    expect(m).toContain('s4 -->|"verified (back to verify)"| s1');
    expect(m).toContain('s5 -->|"locked (back to verify)"| s2');
    expect(m.match(/enter pin-check/g)).toHaveLength(1);
  });

  it('paths finds a call for every transition, through the module', () => {
    const g = generateCases(main);
    expect(g.cases.map((c) => c.transition).sort()).toEqual([...flowTransitions(main).all].sort());
    expect(g.skipped).toEqual([]);
  });

  it('coverage counts the transitions taken inside the module', async () => {
    writeFileSync(join(dir, 'main.yaml'), MAIN);
    writeFileSync(join(dir, 'pin-check.yaml'), PIN_CHECK);
    writeFileSync(
      join(dir, 'main.test.yaml'),
      'flow: main\ncases:\n  - name: locked\n    steps:\n      - { expect: read, result: "0" }\n      - { ' +
        'expect: read, result: "0" }\n      - { expect: read, result: "0" }\n      - expect: hangup\n',
    );
    const set = await loadFlowDir(dir);
    expect([...set.byName.keys()].sort()).toEqual(['main', 'pin-check']);
    const cov = new Coverage();
    const run = await runScenarioFile(join(dir, 'main.test.yaml'), set, cov);
    expect(run.cases.map((c) => c.ok)).toEqual([true]);
    const [r] = cov.report();
    expect(r!.missedTransitions.map((m) => m.key)).toEqual([
      'verify:verified',
      'menu:default',
      'pin-check:ask:1234',
      'pin-check:ask:TIMEOUT',
      'pin-check:ask:TIMEOUT:then',
    ]);
    expect(r!.missedSteps.map((m) => m.id)).toEqual(['menu', 'pin-check:done']);
  });
});

describe('scenarios of a module', () => {
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('with: gives the params, expect: return checks the result and values', async () => {
    write('main.yaml', MAIN);
    write('pin-check.yaml', PIN_CHECK);
    const f = write(
      'pin.test.yaml',
      'flow: pin-check\ncases:\n  - name: ok\n    with: { account: "42" }\n    steps:\n      - expect: { ' +
        'command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter the PIN of account 42." } }\n        ' +
        'result: "1234"\n      - expect: { return: verified, values: { holder: Ann } }\n  - name: wrong ' +
        'value\n    with: { account: "42" }\n    steps:\n      - { expect: read, result: "1234" }\n      - ' +
        'expect: { return: verified, values: { holder: Bob } }\n',
    );
    const run = await runScenarioFile(f, await loadFlowDir(dir));
    expect(run.errors).toEqual([]);
    expect(run.cases.map((c) => c.ok)).toEqual([true, false]);
    expect(run.cases[1]!.failure).toMatchObject({
      message: 'return: params differ (from flow step "done")',
      diff: ['- params.values: {"holder":"Bob"}', '+ params.values: {"holder":"Ann"}'],
    });
  });

  it(
    "with: names the module's params: an unknown one (did you mean) and a required one left out are the file's " +
      'errors',
    async () => {
      const f = write(
        'bad.test.yaml',
        'flow: pin-check\ncases:\n  - name: typo\n    with: { acount: "42" }\n    steps:\n      - expect: read\n',
      );
      const run = await runScenarioFile(f, await loadFlowDir(dir));
      expect(run.errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
        '4:13 with: module "pin-check" has no param "acount" (did you mean "account"?)',
        '3:5 case "typo": module "pin-check" needs "account" in with: (required param)',
      ]);
    },
  );
});

describe('the schemas know subflows', () => {
  it('flow schema: module:, subflow:, return:, save as a map; scenario schema: with: and expect: return', async () => {
    const { readFileSync } = await import('node:fs');
    const { Ajv } = await import('ajv');
    const { parse } = await import('yaml');
    const ajv = () => new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    const flow = ajv().compile(JSON.parse(readFileSync('schemas/flow.schema.json', 'utf8')) as object);
    expect(flow(parse(MAIN)), JSON.stringify(flow.errors)).toBe(true);
    expect(flow(parse(PIN_CHECK)), JSON.stringify(flow.errors)).toBe(true);
    expect(flow(parse(MAIN.replace('flow: pin-check', 'flwo: pin-check')))).toBe(false);
    expect(flow(parse(PIN_CHECK.replace('results:', 'result:')))).toBe(false);
    const scenario = ajv().compile(JSON.parse(readFileSync('schemas/scenario.schema.json', 'utf8')) as object);
    const doc = parse(
      'flow: pin-check\ncases:\n  - name: ok\n    with: { account: "42" }\n    steps:\n      - { expect: ' +
        'read, result: "1234" }\n      - expect: { return: verified, values: { holder: Ann } }\n',
    );
    expect(scenario(doc), JSON.stringify(scenario.errors)).toBe(true);
  });
});
