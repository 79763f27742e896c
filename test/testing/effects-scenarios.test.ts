/**
 * What the scenario format gained for the tools' one effect model, and what a hostile file
 * can make of it: an http step's `answer:` (recordings), `call.status` (a call never
 * answered), a recording's masked input, and their bounds (fillers, forged lookups, a
 * status or key that is not one).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseScenario, runCase, ScenarioFileError } from '../../src/testing/index.js';
import { buildRecording, recordingYaml, type Exchange } from '../../src/testing/record.js';
import { replayRecording } from '../../src/testing/replay.js';
import { MockExecutor } from '../../src/testing/executors.js';
import { parseRoutes } from '../../src/testing/mock-http.js';
import type { RtRequest } from '../../src/protocol/rt.js';
import { yamlFlow } from '../engine/yaml.js';
import { req } from '../engine/helpers.js';

const LOOKUP = readFileSync('test/fixtures/http-lookups/lookup.yaml', 'utf8');
const PIN_LINE = readFileSync('test/fixtures/sensitive/pin-line.yaml', 'utf8');
const API = 'https://bank.example';
const URL_12 = `${API}/v1/balance?account=12`;

const problems = (text: string): string[] => {
  try {
    parseScenario(text, 's.yaml');
    return [];
  } catch (e) {
    return (e as ScenarioFileError).errors.map((x) => `${x.line}:${x.column}: ${x.message}`);
  }
};

const lookupCase = (steps: string, extra = '') =>
  [
    'flow: lookup',
    'cases:',
    '  - name: x',
    `    call: { variables: { api: "${API}" } }`,
    ...(extra ? [extra] : []),
    '    steps:',
    steps,
    '',
  ].join('\n');

describe("an http step's answer:", () => {
  it('answers the lookup instead of mocks.http, after its fillers', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const text = lookupCase(
      [
        `      - expect: { http: { method: GET, url: "${URL_12}" } }`,
        '        answer: { status: 200, body: { amount: 9 }, fillers: 2 }',
        '      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|One moment please." } }',
        '      - expect: { command: wait, params: { wait: 2 } }',
        '      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Your balance is 9." } }',
        '      - expect: hangup',
      ].join('\n'),
      '    mocks: { http: [{ url: "*", status: 404 }] }',
    );
    const r = runCase(flow, parseScenario(text, 's.yaml').cases[0]!);
    expect(r.failure?.message).toBeUndefined();
    expect(r.ok).toBe(true);
  });

  it('a wrong answer is said where it is written, one message each', () => {
    expect(
      problems(
        lookupCase(
          [
            '      - expect: http',
            '        answer: { status: 700, fillers: 1000000000, eror: NETWORK }',
            '      - expect: http',
            '        answer: { status: 200, error: TIMEOUT }',
            '      - expect: http',
            '        answer: { error: "not a kind" }',
            '      - expect: play',
            '        answer: { status: 200 }',
          ].join('\n'),
        ),
      ),
    ).toEqual([
      '7:27: answer.status is an HTTP status, 100 to 599',
      '7:41: answer.fillers is 0 to 100: the fillers played before the answer',
      '7:53: unknown key "eror" in answer (allowed: status, body, error, fillers)',
      '9:17: answer has a status or an error, not both',
      '11:26: answer.error is an error kind in capitals (TIMEOUT, NETWORK, REFUSED, TOO_LARGE, BAD_BODY, ' +
        'TOO_DEEP, ...)',
      '13:17: `answer:` answers the lookup of an http step (expect: http) or a queue operation (expect: queue); ' +
        'other steps take result:, error: or status:',
    ]);
  });

  it('as deep as a lookup may answer (64 levels) loads, in a scenario and a routes file; 80 levels in all', () => {
    const body = (levels: number) => `${'{ a: '.repeat(levels)}1${' }'.repeat(levels)}`;
    const answer = (levels: number) =>
      lookupCase(`      - expect: http\n        answer: { status: 200, body: ${body(levels)} }`);
    expect(problems(answer(64))).toEqual([]);
    expect(parseRoutes(`routes:\n  - { url: /x, body: ${body(64)} }\n`, 'r.yaml').problems).toEqual([]);
    // the file's own levels above the body: 6 (flow files keep 64 in all)
    expect(problems(answer(74))).toEqual([]);
    expect(problems(answer(75))).toEqual(['7:410: values are nested more than 80 levels deep']);
  });

  it('a forged recording: a lookup the flow does not make is a divergence, not a pass', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const forged = lookupCase(
      [
        `      - expect: { http: { method: POST, url: "${API}/v1/transfer", body: { to: "attacker" } } }`,
        '        answer: { status: 200, body: { amount: 1000000 } }',
        '      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Your balance is 1000000." } }',
      ].join('\n'),
    );
    const r = runCase(flow, parseScenario(forged, 's.yaml').cases[0]!);
    expect(r.failure?.message).toBe('http: params differ (from flow step "lookup")');
    const d = replayRecording(flow, forged).divergences[0]!;
    expect(d).toMatchObject({ request: 1, stepIndex: 0, actual: { http: { method: 'GET', url: URL_12 } } });
  });
});

describe('call.status: a call never answered', () => {
  it('has no steps, ends at once, and passes; a step left is a failure; UP needs steps', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const never = 'flow: lookup\ncases:\n  - name: x\n    call: { status: NOANSWER }\n    steps: []\n';
    expect(runCase(flow, parseScenario(never, 's.yaml').cases[0]!)).toMatchObject({ ok: true, trace: [] });
    const more = never.replace('steps: []', 'steps:\n      - expect: http');
    expect(runCase(flow, parseScenario(more, 's.yaml').cases[0]!).failure?.message).toBe(
      'the call ended, but 1 step(s) are left',
    );
    expect(problems(never.replace('NOANSWER', 'UP'))).toEqual([
      '5:12: steps must not be empty (only a call never answered, call: { status: NOANSWER }, has none)',
    ]);
    expect(problems(never.replace('NOANSWER', 'ANSWERED'))).toEqual([
      '4:21: call.status: "ANSWERED" is not one of INCOMING_CALL, UP, HANGUP, NOANSWER, BUSY, CONGESTION, REJECTED',
    ]);
  });
});

describe('recordings of lookups, start vars and a call never answered', () => {
  const at = Date.parse('2026-11-23T10:00:00Z');
  const fields = { callid: '42', variables: { api: API }, variablesRaw: JSON.stringify({ api: API }) };
  const ex = (request: RtRequest, more: Partial<Exchange>): Exchange => ({
    request,
    flow: { name: 'lookup', version: 'v1' },
    environment: 'staging',
    now: at,
    effects: [],
    reply: { command: 'hangup', command_id: 1, params: {}, variablesRaw: '{}' },
    ended: false,
    ...more,
  });

  it('a lookup pending at the first deadline, answered at the next: one step, its answer, its fillers; clocks', () => {
    const lookup = { kind: 'http' as const, step: 'lookup', callid: '42', filler: true };
    const params = { method: 'GET', url: URL_12, headers: { Authorization: 'Bearer ***' } };
    const rec = buildRecording([
      ex(req(fields), {
        vars: { account: '12' },
        effects: [{ effect: { ...lookup, params, wait: false }, result: { pending: true } }],
        reply: { command: 'play', command_id: 1, params: { media_id: 'x' }, variablesRaw: '{}' },
        step: 'lookup',
      }),
      ex(req({ ...fields, command: 'play', command_id: 1, command_result: '0' }), {
        now: at + 4000,
        effects: [
          {
            effect: { ...lookup, params, wait: true },
            result: { ok: true, value: '200', data: { status: 200, body: { amount: 3 } } },
          },
        ],
        reply: { command: 'hangup', command_id: 2, params: {}, variablesRaw: '{}' },
        step: 'end',
      }),
      ex(req({ ...fields, command: 'hangup', command_id: 2, call_status: 'HANGUP' }), { now: at + 5000, ended: true }),
    ]);
    expect(rec.environment).toBe('staging');
    const c = rec.cases[0]!;
    expect(c.vars).toEqual({ account: '12' });
    expect(c.mocks.now).toBe('2026-11-23T10:00:00.000Z');
    expect(c.steps.map(({ at: _a, ...s }) => s)).toEqual([
      { expect: { http: { method: 'GET', url: URL_12 } }, answer: { fillers: 1, status: 200, body: { amount: 3 } } },
      { expect: { command: 'play', params: { media_id: 'x' } }, result: '0', now: '2026-11-23T10:00:04.000Z' },
      { expect: { command: 'hangup', params: {} }, now: '2026-11-23T10:00:05.000Z' },
    ]);
    expect(recordingYaml(rec)).toMatch(/^environment: staging$/m);
  });

  it('a lookup that hit TOO_DEEP is recorded so (a step, and mocks.http after a hangup) and replays so', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const lookup = { kind: 'http' as const, step: 'lookup', callid: '42', filler: true, wait: false };
    const params = { method: 'GET', url: URL_12, headers: { Authorization: 'Bearer ***' } };
    const deep = { ok: false as const, error: 'TOO_DEEP', message: 'the answer nests arrays and objects ...' };
    const failed = { media_id: 'TTS|TTS_EN-GB_SERENA|Failed TOO_DEEP.' };
    const rec = buildRecording([
      ex(req(fields), {
        effects: [{ effect: { ...lookup, params }, result: deep }],
        reply: { command: 'play', command_id: 1, params: failed, variablesRaw: '{}' },
        step: 'failed',
      }),
      // the caller hangs up during the play: the hangup handler's lookup (here the same) is a mock, not a step
      ex(req({ ...fields, command: 'play', command_id: 1, call_status: 'HANGUP' }), {
        effects: [{ effect: { ...lookup, step: 'log', params }, result: deep }],
        ended: true,
      }),
    ]);
    const c = rec.cases[0]!;
    expect(c.steps.map(({ at: _a, ...s }) => s)).toEqual([
      { expect: { http: { method: 'GET', url: URL_12 } }, answer: { error: 'TOO_DEEP' } },
      { expect: { command: 'play', params: failed }, status: 'HANGUP' },
    ]);
    expect(c.mocks.http).toEqual([{ method: 'GET', url: URL_12, error: 'TOO_DEEP' }]);
    const text = recordingYaml(rec).replace('environment: staging\n', '');
    const parsed = parseScenario(text, 'r.yaml').cases[0]!;
    expect(runCase(flow, parsed)).toMatchObject({ ok: true });
    expect(replayRecording(flow, text)).toMatchObject({ ok: true });
    // what the replay's executor answers that lookup: TOO_DEEP, as recorded (not NETWORK, no entry matching)
    const mocks = new MockExecutor({ http: parsed.mocks?.http ?? [] });
    const ctx = { memo: {}, budgetMs: () => 3750, now: at };
    expect(mocks.perform({ ...lookup, step: 'log', params }, ctx)).toEqual({
      ok: false,
      error: 'TOO_DEEP',
      message: 'mocked TOO_DEEP',
    });
  });

  it('a first request with a terminal status: call.status and no steps, which the runner passes', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const rec = buildRecording([ex(req({ ...fields, request_hash: 'OUT1', call_status: 'BUSY' }), { ended: true })]);
    expect(rec.cases[0]!.call).toMatchObject({ status: 'BUSY', request_hash: 'OUT1' });
    expect(rec.cases[0]!.steps).toEqual([]);
    const text = recordingYaml(rec).replace('environment: staging\n', '');
    expect(runCase(flow, parseScenario(text, 'r.yaml').cases[0]!).ok).toBe(true);
    expect(replayRecording(flow, text).ok).toBe(true);
  });
});

describe("a recording's masked input", () => {
  it('is replayed with a stand-in that goes where the recording went; *** in later params matches it', async () => {
    const flow = await yamlFlow(PIN_LINE, 'pin-line.yaml');
    // pin-line: the PIN (sensitive) must be 4 digits; the card digits are checked against it
    const rec = (pinNext: string) => `flow: pin-line
cases:
  - name: recorded
    steps:
      - expect:
          { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter your account number.", max_digits: 6 } }
        result: "314159"
      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter your PIN.", max_digits: 4 } }
        result: "***"
      - expect: ${pinNext}
        status: HANGUP
`;
    const card =
      '{ command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter the last four digits of your card.", ' +
      'max_digits: 4 } }';
    expect(replayRecording(flow, rec(card))).toMatchObject({ ok: true });
    expect(runCase(flow, parseScenario(rec(card), 'r.yaml').cases[0]!).ok).toBe(true);
    // no stand-in can make the flow do what was never possible: the masked value is fed as written, and it fails
    const never = '{ command: dialout }';
    expect(replayRecording(flow, rec(never)).ok).toBe(false);
    expect(runCase(flow, parseScenario(rec(never), 'r.yaml').cases[0]!).ok).toBe(false);
  });
});
