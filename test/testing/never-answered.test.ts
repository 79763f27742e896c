/**
 * A call never answered (an outbound call whose first request is NOANSWER, BUSY...): the hangup handler runs with the
 * vars the call was placed with (issue 22 item 8), in every tool: scenarios, `paths`, `simulate`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCallerScript } from '../../src/emulator/caller/load.js';
import { generateCases, scenarioYaml } from '../../src/testing/paths.js';
import { runCase } from '../../src/testing/runner.js';
import { parseScenario, ScenarioFileError } from '../../src/testing/scenario.js';
import { ScriptedCaller, SimSession } from '../../src/testing/simulate.js';
import { yamlFlow } from '../engine/yaml.js';

const reminder = () => yamlFlow(readFileSync('flows/reminder.yaml', 'utf8'), 'flows/reminder.yaml');

const NOTIFY = `
version: 1
name: notify
start: hello
vars: { who: nobody }
handlers: { hangup: missed }
steps:
  hello: { say: "Hello {{ vars.who }}.", next: bye }
  bye: { hangup: {} }
  missed:
    when: 'call.status == "BUSY"'
    then: text
    else: done
  text:
    sms: { to: "+33612345678", body: "{{ vars.who }} was busy" }
    next: done
  done:
    set: { filed: true }
`;

describe('scenarios of a call never answered', () => {
  it('the reminder reports not reached, with the vars the call was placed with', async () => {
    const s = parseScenario(
      [
        'flow: reminder',
        'cases:',
        '  - name: busy',
        '    call: { status: BUSY }',
        '    vars: { patient: Ms Jones }',
        '    steps: []',
        '    expect: { vars: { patient: Ms Jones, outcome: not_reached, reason: busy } }',
      ].join('\n'),
      'r.test.yaml',
    );
    expect(runCase(await reminder(), s.cases[0]!)).toMatchObject({ ok: true, trace: [] });
  });

  it("the hangup handler's effects are its steps; a command step is refused at load", async () => {
    const f = await yamlFlow(NOTIFY);
    const s = parseScenario(
      'flow: notify\ncases:\n  - name: busy\n    call: { status: BUSY }\n    vars: { who: Ann }\n    steps:\n' +
        '      - expect: { sms: { body: "Ann was busy" } }\n    expect: { vars: { filed: true } }\n',
      'n.test.yaml',
    );
    expect(runCase(f, s.cases[0]!)).toMatchObject({
      ok: true,
      trace: ['sms { to: "+33612345678", body: "Ann was busy" }'],
    });
    let errors: string[] = [];
    try {
      parseScenario(
        'flow: notify\ncases:\n  - name: busy\n    call: { status: NOANSWER }\n    steps:\n      - expect: play\n',
        'n.test.yaml',
      );
    } catch (e) {
      errors = (e as ScenarioFileError).errors.map((x) => `${x.line}:${x.column}: ${x.message}`);
    }
    expect(errors).toEqual([
      '6:9: a call never answered (call.status NOANSWER) sends no command: its steps are the sms and http effects ' +
        'of the hangup handler, and checks of vars or step',
    ]);
  });
});

describe('the other tools', () => {
  it('paths starts a call never answered for a handler branch on call.status, and writes it', async () => {
    const f = await reminder();
    const g = generateCases(f, ['record_outcome:case1']);
    const yaml = scenarioYaml(f, g);
    expect(yaml).toContain(
      [
        '  - name: "record_outcome:case1"',
        '    call: { status: "NOANSWER" }',
        '    # takes record_outcome:case1 (a call never answered: only the hangup handler runs)',
        '    steps: []',
      ].join('\n'),
    );
    expect(parseScenario(yaml, 'g.test.yaml').cases.map((c) => runCase(f, c).ok)).toEqual([true]);
  });

  it('simulate: a caller script whose call is not answered (answer BUSY) runs the hangup handler only', async () => {
    const loaded = loadCallerScript('name: away\ncall:\n  answer: BUSY\n', 'away.yaml');
    if (!('script' in loaded) || !loaded.script) throw new Error(JSON.stringify(loaded));
    const caller = new ScriptedCaller(loaded.script);
    const s = new SimSession(await yamlFlow(NOTIFY), { ...caller.options(), vars: { who: 'Bob' } });
    const ev = s.start();
    expect(ev).toContainEqual(expect.objectContaining({ kind: 'sms', body: 'Bob was busy' }));
    expect(s.question?.kind).toBe('sms');
    const a = caller.answer(s.question!);
    expect(s.answer(a.answer).at(-1)).toMatchObject({
      kind: 'end',
      status: 'BUSY',
      why: 'the call was never answered (BUSY): only the hangup handler ran',
      vars: { who: 'Bob', filed: true },
    });
  });
});
