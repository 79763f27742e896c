import { readFile } from 'node:fs/promises';
import { cmd, flow, hangup } from '../engine/helpers.js';
import { describe, expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.js';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { parseScenario, runCase, ScenarioFileError } from '../../src/testing/index.js';

const DIR = 'test/fixtures/scenarios';

async function menuFlow() {
  const file = `${DIR}/menu.yaml`;
  const text = await readFile(file, 'utf8');
  const { model } = checkFlow(text, file);
  return compileFlow(model!, text);
}

async function cli(args: string[], flags: Record<string, string | boolean> = {}) {
  let out = '';
  const code = await testCommand(args, { flows: DIR, ...flags }, { write: (s: string) => (out += s) });
  return { code, lines: out.split('\n') };
}

describe('callscript test', () => {
  it('reports a failing case with the diff, the step line and exit code 1', async () => {
    const { code, lines } = await cli([`${DIR}/cases/fail.scenario.yaml`]);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `✓ ${DIR}/cases/fail.scenario.yaml › passes`,
      `✗ ${DIR}/cases/fail.scenario.yaml › wrong command`,
      `    ${DIR}/cases/fail.scenario.yaml:12: step 2: expected read, got play (from flow step "one")`,
      '      expected: read { max_digits: 1 }',
      '      actual:   play { media_id: "TTS|TTS_EN-GB_SERENA|One." }',
      '      - command: read',
      '      + command: play',
      '',
      '1 passed, 1 failed',
      '',
    ]);
  });

  it('reports invalid scenario files at file:line:col with exit code 2', async () => {
    const { code, lines } = await cli([`${DIR}/cases/bad.scenario.yaml`]);
    expect(code).toBe(2);
    expect(lines.slice(0, 2)).toEqual([
      `${DIR}/cases/bad.scenario.yaml:5:17: expect: "jump" is not a command name`,
      `${DIR}/cases/bad.scenario.yaml:7:17: status: "GONE" is not one of HANGUP, NOANSWER, BUSY, CONGESTION, REJECTED`,
    ]);
    expect(lines).toContain('0 passed, 0 failed');
  });

  it('the example flows pass their scenarios', async () => {
    const { code, lines } = await cli(['flows'], { flows: 'flows' });
    expect(lines.filter((l) => l.startsWith('✗'))).toEqual([]);
    expect(code).toBe(0);
  });
});

describe('scenario files', () => {
  it('gives positioned errors', () => {
    const text =
      'flow: menu\ncases:\n  - name: a\n    call: { callid: "12x" }\n    steps: []\n  - name: a\n    ' +
      'steps:\n      - expect: play\n      - expect: read\n        result: "1"\n        error: FAILED\n';
    let errors: string[] = [];
    try {
      parseScenario(text, 's.test.yaml');
    } catch (e) {
      errors = (e as ScenarioFileError).errors.map((x) => `${x.line}:${x.column}: ${x.message}`);
    }
    expect(errors).toEqual([
      '4:21: call.callid must be digits',
      '5:12: steps must not be empty (only a call never answered, call: { status: NOANSWER }, has none)',
      '6:11: case name "a" is already used at line 3',
      '11:16: a step has a result or an error, not both (either may come with a status)',
    ]);
  });

  it('YAML syntax errors are positioned too', () => {
    expect(() => parseScenario('flow: [menu\n', 'x.test.yaml')).toThrow(/^x\.test\.yaml:\d+:\d+: /);
  });
});

describe('mocks', () => {
  const steps = (extra: string) =>
    `flow: menu\ncases:\n  - name: c\n${extra}    steps:\n      - expect: read\n        result: "2"\n      - ` +
    `expect: { sms: { to: "+33612345678", body: Hello } }\n      - expect: hangup\n`;

  it('an sms error takes the error branch', async () => {
    const s = parseScenario(steps('    mocks: { sms: [{ error: REJECTED }] }\n'), 't.yaml');
    const r = runCase(await menuFlow(), s.cases[0]!);
    expect(r.ok).toBe(true);
    expect(r.trace).toEqual([
      'read { media_id: "TTS|TTS_EN-GB_SERENA|Press 1 or 2.", max_digits: 1, timeout_ms: 5000 }',
      'sms { to: "+33612345678", body: "Hello" }',
      'hangup {}',
    ]);
  });

  it('a failure names the flow step that sent the command, or the branch say: that played', async () => {
    const f = flow({
      name: 'menu',
      steps: {
        ask: cmd(
          'read',
          { media_id: ['Press 1.'], max_digits: 1 },
          { on: { '1': 'bye', default: { goto: 'ask', say: 'Nope.' } } },
        ),
        bye: hangup(),
      },
    });
    const c = parseScenario(
      'flow: menu\ncases:\n  - name: c\n    steps:\n      - expect: read\n        result: "5"\n      - expect: read\n',
      't.yaml',
    ).cases[0]!;
    expect(runCase(f, c).failure?.message).toBe(
      'expected read, got play (from the say: of a branch of flow step "ask")',
    );
    const d = parseScenario('flow: menu\ncases:\n  - name: d\n    steps:\n      - expect: play\n', 't.yaml').cases[0]!;
    expect(runCase(f, d).failure?.message).toBe('expected play, got read (from flow step "ask")');
  });

  it('an sms hash other than SMS00001 goes on to another command', async () => {
    const s = parseScenario(steps('    mocks: { sms: [{ hash: SMS99 }] }\n'), 't.yaml');
    const r = runCase(await menuFlow(), s.cases[0]!);
    expect(r.ok).toBe(false);
    expect(r.failure?.message).toBe('expected hangup, got play (from flow step "one")');
  });

  it('mocks.now is the engine clock (the summary duration)', async () => {
    const s = parseScenario(
      'flow: menu\ncases:\n  - name: c\n    mocks: { now: "2026-11-22T10:00:00Z" }\n    steps:\n      - expect: read\n',
      't.yaml',
    );
    expect(s.cases[0]!.mocks.now).toBe(Date.parse('2026-11-22T10:00:00Z'));
    expect(runCase(await menuFlow(), s.cases[0]!).ok).toBe(true);
    const bad = 'flow: menu\ncases:\n  - name: c\n    mocks: { now: "soon" }\n    steps:\n      - expect: read\n';
    expect(() => parseScenario(bad, 't.yaml')).toThrow('t.yaml:4:19: mocks.now: "soon" is not a date');
  });
});

describe('case vars', () => {
  async function frontDesk() {
    const file = 'flows/front-desk.yaml';
    const text = await readFile(file, 'utf8');
    const { model } = checkFlow(text, file);
    return compileFlow(model!, text);
  }
  const scenario = (vars: string) =>
    `flow: front-desk\ncases:\n  - name: c\n${vars}    call: { caller: "+442071234567" }\n    steps:\n      ` +
    `- expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Thank you for calling Acme Ltd. ` +
    `Our office is closed. We are open every day from 8 in the morning until 6 in the evening, UTC." } }\n   ` +
    `   - expect: play\n      - expect: hangup\n`;

  it('override the flow initial vars for the case only', async () => {
    const flow = await frontDesk();
    const before = flow.tables.initialVars;
    const s = parseScenario(scenario('    vars: { office_open: false, company: Acme Ltd }\n'), 't.yaml');
    expect(s.cases[0]!.vars).toEqual({ office_open: false, company: 'Acme Ltd' });
    const r = runCase(flow, s.cases[0]!);
    expect(r.failure).toBeUndefined();
    expect(r.ok).toBe(true);
    // the compiled flow is untouched: without vars, the office is open
    expect(flow.tables.initialVars).toBe(before);
    expect(flow.tables.initialVars).toMatchObject({ office_open: true, company: 'Acme' });
    const open = runCase(flow, parseScenario(scenario(''), 't.yaml').cases[0]!);
    expect(open.ok).toBe(false);
    expect(s.cases[0]!.vars).toEqual({ office_open: false, company: 'Acme Ltd' });
  });

  it('vars must be a map; unknown case keys are still refused', () => {
    expect(() => parseScenario(scenario('    vars: [office_open]\n'), 't.yaml')).toThrow(
      't.yaml:4:11: vars must be a map of flow vars, not a list',
    );
    expect(() => parseScenario(scenario('    var: { office_open: false }\n'), 't.yaml')).toThrow(
      't.yaml:4:5: unknown key "var" in a case: did you mean "vars"? (allowed: name, call, vars, with, ' +
        'mocks, steps, expect, queues)',
    );
    expect(parseScenario(scenario(''), 't.yaml').cases[0]!.vars).toEqual({});
  });
});

describe('scenario-file mistakes: one message each, with a did-you-mean (#14 item 7)', () => {
  const file = (steps: string, caseKeys = '') =>
    `flow: voicemail\ncases:\n  - name: one\n${caseKeys}    steps:\n${steps}`;
  const errors = (text: string): string[] => {
    try {
      parseScenario(text, 't.yaml');
      return [];
    } catch (err) {
      return (err as Error).message.split('\n').filter((l) => l.startsWith('t.yaml:'));
    }
  };

  it('a misspelt key gets the nearest allowed one, and no second message for the key it hides', () => {
    expect(errors(file('      - expct: play\n'))).toEqual([
      't.yaml:5:9: unknown key "expct" in a step: did you mean "expect"? ' +
        '(allowed: expect, result, error, status, now, answer, queues)',
    ]);
    expect(errors(file('      - expect: play\n        reslt: "0"\n'))).toEqual([
      't.yaml:6:9: unknown key "reslt" in a step: did you mean "result"? ' +
        '(allowed: expect, result, error, status, now, answer, queues)',
    ]);
    expect(errors(file('      - expect: { comand: play }\n'))).toEqual([
      't.yaml:5:19: unknown key "comand" in expect: did you mean "command"? (allowed: command, params, vars, step)',
    ]);
  });

  it('a misspelt command name, and a command written as a key of expect', () => {
    expect(errors(file('      - expect: plya\n'))).toEqual([
      't.yaml:5:17: expect: "plya" is not a command name (did you mean "play"?)',
    ]);
    expect(errors(file('      - expect: { command: hangpu }\n'))).toEqual([
      't.yaml:5:28: expect.command: "hangpu" is not a command name (did you mean "hangup"?)',
    ]);
    expect(errors(file('      - expect: { play: { media_id: 1 } }\n'))).toEqual([
      't.yaml:5:19: expect: write `expect: play`, or `expect: { command: play, params: { ... } }` to check ' +
        'its params (a command is not a key of expect)',
    ]);
  });

  it('a call field written in the case instead of under call:', () => {
    expect(errors(file('      - expect: play\n', '    caller: "+447911000111"\n'))).toEqual([
      't.yaml:4:5: unknown key "caller" in a case: it goes under call: (call: { caller: ... })',
    ]);
    expect(errors(file('      - expect: play\n', '    caler: "+447911000111"\n'))).toEqual([
      't.yaml:4:5: unknown key "caler" in a case: did you mean "caller"? it goes under call: (call: { caller: ... })',
    ]);
  });
});

describe('bigint params', () => {
  it('hangup_callid callid (a bigint) is matched and shown digit for digit', async () => {
    const file = 'flows/support-line.yaml';
    const text = await readFile(file, 'utf8');
    const flow = compileFlow(checkFlow(text, file).model!, text);
    const scenario = (callid: string) =>
      `flow: support-line\ncases:\n  - name: c\n    steps:\n      - expect: play\n      - expect: read\n     ` +
      `   result: "*"\n      - expect: read\n        result: "739514"\n      - expect: read\n        result: ` +
      `"18446744073709551615"\n      - expect: read\n        result: "1"\n      - expect: { command: ` +
      `hangup_callid, params: { callid: "${callid}" } }\n`;
    expect(runCase(flow, parseScenario(scenario('18446744073709551615'), 't.yaml').cases[0]!).ok).toBe(true);
    const r = runCase(flow, parseScenario(scenario('5678'), 't.yaml').cases[0]!);
    expect(r.failure?.actual).toBe('hangup_callid { callid: 18446744073709551615 }');
    expect(r.failure?.diff).toEqual(['- params.callid: "5678"', '+ params.callid: 18446744073709551615']);
  });
});

describe('results a command can never return', () => {
  it('are refused as scenario file errors at the result, with the possible results and a did-you-mean', async () => {
    const { code, lines } = await cli([`${DIR}/cases/impossible.scenario.yaml`]);
    const f = `${DIR}/cases/impossible.scenario.yaml`;
    expect(lines).toEqual([
      `${f}:6:17: result: "timeout" is not a result of read: read returns the keys pressed (0-9 and *), or ` +
        `TIMEOUT; did you mean 'TIMEOUT'?`,
      `${f}:8:17: result: "12#" is not a result of read: read returns the keys pressed (0-9 and *), or ` +
        `TIMEOUT; # ends the input and is not part of the result: did you mean '12'?`,
      `${f}:11:17: result: "12" is not a result of read: read returns one key of 0-9 and * (max_digits: 1), ` +
        `or TIMEOUT; "12" has 2 keys`,
      '',
      '1 invalid scenario file',
      '0 passed, 0 failed',
      '',
    ]);
    expect(code).toBe(2);
  });

  it(
    'a read result longer than the max_digits the flow sent is ' + 'refused when the case runs, the other cases run',
    async () => {
      const text = (await readFile(`${DIR}/cases/impossible.scenario.yaml`, 'utf8')).replace(
        / {2}- name: results no command returns[\s\S]*?(?= {2}- name: a read)/,
        '',
      );
      const s = parseScenario(text, 'x.test.yaml');
      const flow = await menuFlow();
      const r = runCase(flow, s.cases[0]!);
      expect(r.ok).toBe(false);
      expect(r.failure).toMatchObject({
        refused: true,
        pos: { line: 6, col: 17 },
        message:
          'result: "12" is not a result of read: read returns one key of 0-9 and * (max_digits: 1), or ' +
          'TIMEOUT; "12" has 2 keys',
      });
      expect(runCase(flow, s.cases[1]!).ok).toBe(true);
    },
  );

  it(
    'enum results: the set listed, a did-you-mean for a near miss, none for another value; no result for a ' +
      'command that has none',
    () => {
      const parse = (command: string, result: string) => {
        try {
          parseScenario(
            `flow: f\ncases:\n  - name: a\n    steps:\n      - expect: ${command}\n        result: "${result}"\n`,
            't.yaml',
          );
          return 'ok';
        } catch (e) {
          return (e as ScenarioFileError).message;
        }
      };
      expect(parse('dialout', '9')).toBe(
        't.yaml:6:17: result: "9" is not a result of dialout: dialout returns only NOANSWER',
      );
      expect(parse('dialout', 'NOANSWR')).toBe(
        `t.yaml:6:17: result: "NOANSWR" is not a result of dialout: dialout returns only NOANSWER; did you ` +
          `mean 'NOANSWER'?`,
      );
      expect(parse('play', '2')).toBe('t.yaml:6:17: result: "2" is not a result of play: play returns 0 or 1');
      expect(parse('wait_for_silence', 'SILENSE')).toBe(
        `t.yaml:6:17: result: "SILENSE" is not a result of wait_for_silence: wait_for_silence returns SILENCE ` +
          `or TIMEOUT; did you mean 'SILENCE'?`,
      );
      expect(parse('hangup_callid', '0')).toBe(
        't.yaml:6:17: result: "0" is not a result of hangup_callid: hangup_callid returns no result (the empty ' +
          'string); leave result out',
      );
      expect(parse('record', 'anything.wav')).toBe('ok');
      expect(parse('read', '*0')).toBe('ok');
      expect(parse('dialout', 'NOANSWER')).toBe('ok');
    },
  );
});
