/**
 * Scenario checks of the call (#11 item 8): `expect: { vars, step }` beside a command, alone
 * (checked on the call at its next command), and at the case's level (at its end): subset
 * match, exact diff lines, the file:line of the check, sensitive values never printed.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { formatCase, parseScenario, runCase, ScenarioFileError } from '../../src/testing/index.js';

const FLOW = 'test/fixtures/sensitive/pin-line.yaml';

async function pinLine() {
  const text = await readFile(FLOW, 'utf8');
  const { model } = checkFlow(text, FLOW);
  return compileFlow(model!, text);
}

const file = (...lines: string[]) => ['flow: pin-line', 'cases:', ...lines].join('\n') + '\n';

async function run(text: string) {
  const f = await pinLine();
  return parseScenario(text, 't.test.yaml').cases.map((c) => formatCase('t.test.yaml', runCase(f, c)));
}

describe('checks of vars and step', () => {
  it('pass beside a command, alone, after the hangup and at the case level', async () => {
    const out = await run(
      file(
        '  - name: granted',
        '    steps:',
        '      - expect: read',
        '        result: "314159"',
        '      - expect: { command: read, step: pin, vars: { account: "314159" } }',
        '        result: "4821"',
        '      - expect: { vars: { pin: "4821" }, step: card }',
        '      - expect: read',
        '        result: "1111"',
        '      - expect: play',
        '      - expect: hangup',
        '      - expect: { vars: { card: "1111" }, step: end }',
        '    expect: { vars: { account: 314159, pin: "4821", card: "1111" }, step: end }',
      ),
    );
    expect(out).toEqual([['✓ t.test.yaml › granted']]);
  });

  it(
    'a difference: every key that differs, - expected + actual, the line of the check; a sensitive actual is ' + '***',
    async () => {
      const out = await run(
        file(
          '  - name: wrong',
          '    steps:',
          '      - expect: read',
          '        result: "314159"',
          '      - expect: read',
          '        result: "4822"',
          '      - expect: { vars: { pin: "4821", account: "314158", nothing: null }, step: card }',
        ),
      );
      expect(out).toEqual([
        [
          '✗ t.test.yaml › wrong',
          '    t.test.yaml:9: step 3: the call is at flow step "denied", not "card"; vars.pin, vars.account ' +
            'differ (at flow step "denied")',
          '      - step: card',
          '      + step: denied',
          '      - vars.pin: "4821"',
          '      + vars.pin: *** (sensitive: not shown)',
          '      - vars.account: "314158"',
          '      + vars.account: "314159"',
        ],
      ]);
      expect(out.flat().join('\n')).not.toContain('4822');
    },
  );

  it("the case's expect is checked where the case stops, and named so", async () => {
    const out = await run(
      file(
        '  - name: end',
        '    steps:',
        '      - expect: read',
        '        result: "314159"',
        '      - expect: read',
        '        result: "4822"',
        '    expect:',
        '      step: granted',
        '      vars: { absent: 1 }',
      ),
    );
    expect(out).toEqual([
      [
        '✗ t.test.yaml › end',
        `    t.test.yaml:10: the case's expect: the call is at flow step "denied", not "granted"; ` +
          `vars.absent differs (at flow step "denied")`,
        '      - step: granted',
        '      + step: denied',
        '      - vars.absent: 1',
        '      + vars.absent: (absent)',
      ],
    ]);
  });

  it('a check alone before an sms the flow sends first is refused with the reason', async () => {
    const text = [
      'version: 2',
      'sensitive: [code]',
      'start: a',
      'steps:',
      '  a: { set: { code: "9876" }, next: s }',
      '  s:',
      '    sms: { to: "+33612345678", body: "Hello" }',
      '    next: b',
      '  b: { say: "Bye", next: c }',
      '  c: { hangup: {} }',
      '',
    ].join('\n');
    const { model } = checkFlow(text, 'sms.yaml');
    const f = compileFlow(model!, text);
    const s = parseScenario(
      [
        'flow: sms',
        'cases:',
        '  - name: x',
        '    steps:',
        '      - expect: { vars: { code: "9876" } }',
        '      - expect: sms',
        '',
      ].join('\n'),
      't.test.yaml',
    );
    const r = runCase(f, s.cases[0]!);
    expect(r.failure?.message).toBe(
      'this step checks the call at its next command, but the flow performed an sms first (from flow step ' +
        '"s"): write the sms step before it',
    );
    const ok = parseScenario(
      [
        'flow: sms',
        'cases:',
        '  - name: x',
        '    steps:',
        '      - expect: sms',
        '      - expect: { vars: { code: "9876" }, step: b }',
        '',
      ].join('\n'),
      't.test.yaml',
    );
    expect(runCase(f, ok.cases[0]!).ok).toBe(true);
  });

  it('file mistakes: positioned, one message each', () => {
    const bad = file(
      '  - name: x',
      '    steps:',
      '      - expect: { vars: [pin] }',
      '      - expect: { step: a, params: { max_digits: 1 } }',
      '      - expect: { vars: { pin: "1" } }',
      '        result: "1"',
      '      - expect: { stpe: a }',
      '    expect: { varz: {} }',
    );
    let errors: string[] = [];
    try {
      parseScenario(bad, 't.test.yaml');
    } catch (err) {
      errors = (err as ScenarioFileError).errors.map((e) => `${e.line}:${e.column}: ${e.message}`);
    }
    expect(errors).toEqual([
      '5:25: expect.vars must be a map of variables and their expected values, not a list',
      '6:36: expect.params needs `command:` (the command whose params they are)',
      '8:17: a step that only checks vars or step sends nothing: `result:` belongs to the step of the ' +
        'command it answers',
      '9:19: unknown key "stpe" in expect: did you mean "step"? (allowed: command, params, vars, step)',
      `10:15: unknown key "varz" in a case's expect: did you mean "vars"? (allowed: vars, step)`,
    ]);
  });
});
