/**
 * A step that carries a result and an end status (issue 22 item 7): the caller hangs up during `record`, and the
 * terminal request carries the file name, which the step's `save:` keeps before the hangup handler runs. The same in
 * every tool: scenarios (runner and schema), `paths`, `simulate`, recordings and their replay.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { advance } from '../../src/engine/advance.js';
import type { CallState } from '../../src/engine/types.js';
import { buildRecording, recordingYaml, type Exchange } from '../../src/testing/record.js';
import { replayRecording } from '../../src/testing/replay.js';
import { generateCases, scenarioYaml } from '../../src/testing/paths.js';
import { runCase } from '../../src/testing/runner.js';
import { parseScenario, ScenarioFileError } from '../../src/testing/scenario.js';
import { parseLine, SimSession } from '../../src/testing/simulate.js';
import { req as request } from '../engine/helpers.js';
import { yamlFlow } from '../engine/yaml.js';

const BOX = `
version: 1
name: box
start: rec
handlers: { hangup: filed }
vars: { owner: "+447911123456" }
steps:
  rec:
    record: { max_duration: 60 }
    save: message
    next: done
  done:
    set: { reviewed: true }
    next: bye
  bye: { hangup: {} }
  filed:
    when: "has(vars.message) && !has(vars.reviewed)"
    then: text_owner
    else: quiet
  text_owner:
    sms: { to: "{{ vars.owner }}", body: "New message: {{ vars.message }}" }
    next: quiet
  quiet:
    set: { filed: true }
`;

const scenario = (steps: string) =>
  parseScenario(`flow: box\ncases:\n  - name: c\n    steps:\n${steps}`, 'box.test.yaml').cases[0]!;

const errorsOf = (text: string): string[] => {
  try {
    parseScenario(text, 's.test.yaml');
    return [];
  } catch (e) {
    return (e as ScenarioFileError).errors.map((x) => `${x.line}:${x.column}: ${x.message}`);
  }
};

describe('scenarios: a step with a result (or an error) and a status', () => {
  it('the terminal request carries the result: save: keeps it, the hangup handler texts the owner', async () => {
    const f = await yamlFlow(BOX);
    const c = scenario(
      [
        '      - expect: record',
        '        result: msg-0001.wav',
        '        status: HANGUP',
        '      - expect: { sms: { to: "+447911123456", body: "New message: msg-0001.wav" } }',
      ].join('\n') + '\n    expect: { vars: { message: msg-0001.wav, filed: true } }\n',
    );
    expect(c.steps[0]).toMatchObject({ result: 'msg-0001.wav', status: 'HANGUP' });
    const r = runCase(f, c);
    expect(r.failure).toBeUndefined();
    expect(r.ok).toBe(true);
  });

  it('a status alone carries nothing; an error with it is no result (nothing saved)', async () => {
    const f = await yamlFlow(BOX);
    for (const extra of ['', '        error: FAILED\n']) {
      const c = parseScenario(
        'flow: box\ncases:\n  - name: c\n    steps:\n      - expect: record\n        status: HANGUP\n' +
          extra +
          '    expect: { vars: { filed: true } }\n',
        'box.test.yaml',
      ).cases[0]!;
      const r = runCase(f, c);
      expect(r.ok, extra).toBe(true);
      expect(r.trace).toEqual(['record { max_duration: 60 }']);
    }
  });

  it('the result is checked as any result is; result and error together are refused', async () => {
    const read = (r: string) =>
      `flow: box\ncases:\n  - name: c\n    steps:\n      - expect: { command: read, params: { max_digits: 2 } }\n` +
      `        result: "${r}"\n        status: HANGUP\n`;
    expect(errorsOf(read('12'))).toEqual([]);
    expect(errorsOf(read('12#'))).toEqual([
      '6:17: result: "12#" is not a result of read: read returns 1 to 2 keys of 0-9 and * (max_digits: 2), or ' +
        "TIMEOUT; # ends the input and is not part of the result: did you mean '12'?",
    ]);
    expect(
      errorsOf(
        'flow: box\ncases:\n  - name: c\n    steps:\n      - expect: record\n        result: a.wav\n' +
          '        error: FAILED\n        status: HANGUP\n',
      ),
    ).toEqual(['7:16: a step has a result or an error, not both (either may come with a status)']);
  });

  it('the JSON Schema of scenario files takes a status with a result or an error, not a result with an error', () => {
    const schema = JSON.parse(readFileSync('schemas/scenario.schema.json', 'utf8')) as object;
    const validate = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true }).compile(schema);
    const doc = (step: string) => parse(`flow: box\ncases:\n  - name: c\n    steps:\n      - ${step}\n`) as unknown;
    expect(validate(doc('{ expect: record, result: a.wav, status: HANGUP }'))).toBe(true);
    expect(validate(doc('{ expect: record, error: FAILED, status: HANGUP }'))).toBe(true);
    expect(validate(doc('{ expect: record, result: a.wav, error: FAILED }'))).toBe(false);
    expect(validate(doc('{ expect: sms, result: a.wav, status: HANGUP }'))).toBe(false);
  });
});

describe('the other tools', () => {
  it('paths finds the handler branch only a hangup carrying the recording reaches, and writes it', async () => {
    const f = await yamlFlow(BOX);
    const g = generateCases(f, ['filed:case1']);
    const yaml = scenarioYaml(f, g);
    expect(yaml).toContain(
      ['      - expect: record', '        result: "record-result"', '        status: HANGUP', ''].join('\n'),
    );
    const s = parseScenario(yaml, 'generated.test.yaml');
    expect(s.cases.map((c) => runCase(f, c).ok)).toEqual([true]);
  });

  it('simulate: h during a record hangs up with the recording kept (its file name sent)', async () => {
    const s = new SimSession(await yamlFlow(BOX));
    s.start();
    expect(s.question).toEqual({ kind: 'text', command: 'record', suggested: 'rec-1000001-1.wav' });
    const typed = parseLine(s.question!, 'h');
    expect(typed).toEqual({
      kind: 'answer',
      answer: { kind: 'hangup', result: 'rec-1000001-1.wav' },
      text: 'hang up (the recording rec-1000001-1.wav is kept)',
    });
    if (typed.kind !== 'answer') return;
    const ev = s.answer(typed.answer);
    expect(ev).toContainEqual(expect.objectContaining({ kind: 'sms', body: 'New message: rec-1000001-1.wav' }));
    expect(s.path[0]).toEqual({ step: 'rec', command: 'record', outcome: 'caller hung up (result rec-1000001-1.wav)' });
    // a read question: h carries nothing
    expect(parseLine({ kind: 'keys', command: 'read', maxDigits: 2 }, 'h')).toMatchObject({
      answer: { kind: 'hangup' },
    });
  });

  it('a recording keeps the result beside the status, and replays green', async () => {
    const f = await yamlFlow(BOX);
    const base = request({ callid: '1234', date_started: '2026-11-22 10:00:00' });
    const ex: Exchange[] = [];
    let state: CallState | undefined;
    const reqs = [
      base,
      { ...base, command: 'record', command_id: 1, command_result: 'msg-9.wav', call_status: 'HANGUP' as const },
    ];
    for (const q of reqs) {
      let o = advance(f, state, q, { now: 0, unknownCall: 'restart' });
      const effects: Exchange['effects'] = [];
      while (o.kind === 'effect') {
        effects.push({ effect: o.effect, result: { ok: true, value: 'SMS00001' } });
        o = o.resume({ ok: true, value: 'SMS00001' });
      }
      if (o.kind !== 'reply') throw new Error(o.kind);
      ex.push({
        request: q,
        flow: { name: f.name, version: f.version },
        now: 0,
        effects,
        reply: o.reply,
        ...(o.state ? { step: o.state.step } : {}),
        ended: !o.state,
      });
      state = o.state ?? undefined;
    }
    const rec = buildRecording(ex);
    expect(rec.cases[0]!.steps).toEqual([
      { expect: { command: 'record', params: { max_duration: 60 } }, at: 'rec', result: 'msg-9.wav', status: 'HANGUP' },
    ]);
    expect(replayRecording(f, recordingYaml(rec))).toMatchObject({ ok: true, divergences: [] });
  });
});
