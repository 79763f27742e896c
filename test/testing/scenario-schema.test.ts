import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ACTION_SPECS } from '../../src/flow/actions.js';
import { parseScenario, TERMINAL_STEP_STATUSES } from '../../src/testing/scenario.js';
import { LOOKUP_ERRORS } from '../../src/engine/http-wait.js';
import { codeInfo } from '../../src/errors/catalogue.js';

const schema = JSON.parse(readFileSync('schemas/scenario.schema.json', 'utf8')) as {
  definitions: {
    action: { enum: string[] };
    step: { properties: { status: { enum: string[] }; answer: { properties: { error: { description: string } } } } };
    mocks: { properties: { http: { items: { properties: { error: { enum: string[] } } } } } };
  };
};
const validate = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true }).compile(
  schema,
);
const SCENARIOS = readdirSync('flows')
  .filter((f) => f.endsWith('.test.yaml'))
  .map((f) => `flows/${f}`);

const errorsOf = (doc: unknown) =>
  validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);

describe('schemas/scenario.schema.json', () => {
  it('names every command and effect, and every terminal status', () => {
    expect([...schema.definitions.action.enum].sort()).toEqual(Object.keys(ACTION_SPECS).sort());
    expect(schema.definitions.step.properties.status.enum).toEqual([...TERMINAL_STEP_STATUSES]);
  });

  it('takes every error kind of a lookup (one list: LOOKUP_ERRORS), which the docs and the hint name', () => {
    expect(LOOKUP_ERRORS).toContain('TOO_DEEP');
    expect(schema.definitions.mocks.properties.http.items.properties.error.enum).toEqual([...LOOKUP_ERRORS]);
    const said = (text: string) => LOOKUP_ERRORS.filter((k) => !text.includes(k));
    expect(said(schema.definitions.step.properties.answer.properties.error.description)).toEqual([]);
    expect(said(codeInfo('EFFECT_FAILED').hint)).toEqual([]);
    for (const doc of ['docs/testing.md', 'docs/simulate.md', 'docs/flow-language.md'])
      expect(said(readFileSync(doc, 'utf8')), doc).toEqual([]);
  });

  it.each(SCENARIOS)('accepts %s', (file) => {
    expect(SCENARIOS.length).toBeGreaterThanOrEqual(6);
    expect(errorsOf(parse(readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('accepts the docs example forms', () => {
    const ok = `flow: front-desk
cases:
  - name: all forms
    call: { caller: "+33612345678", caller_name: "", called: "+33123456789", app: APP00001, cdr_field: "",
            request_hash: null, date_started: "2026-11-22 10:00:00", variables: {}, callid: "1000" }
    vars: { office_open: false }
    mocks: { sms: [{ hash: SMS00001 }, { error: REJECTED, message: no }], now: "2026-11-22T10:00:00Z" }
    steps:
      - expect: play
        result: 0
      - expect: { command: read, params: { max_digits: 1 } }
        result: "1"
      - expect: { command: dialout }
        error: FAILED
      - expect: { sms: { to: "+33612345678" } }
      - expect: sms
      - expect: { command: sms, params: { to: "+33612345678" } }
      - expect: play
        status: HANGUP
`;
    expect(errorsOf(parse(ok))).toEqual([]);
    expect(() => parseScenario(ok, 'ok.test.yaml')).not.toThrow();
  });

  const head = 'flow: front-desk\ncases:\n  - name: c\n';
  const bad: [string, string][] = [
    ['an unknown case key', `${head}    mock: {}\n    steps:\n      - expect: play\n`],
    ['an unknown top-level key', `flow: x\ncases: []\nextra: 1\n`],
    ['no flow', `cases: []\n`],
    ['a case without steps', `${head}    vars: {}\n`],
    ['empty steps', `${head}    steps: []\n`],
    ['vars not a map', `${head}    vars: [a]\n    steps:\n      - expect: play\n`],
    ['a missing expect', `${head}    steps:\n      - result: "1"\n`],
    ['an unknown command', `${head}    steps:\n      - expect: jump\n`],
    ['expect without command', `${head}    steps:\n      - expect: { params: {} }\n`],
    ['a bad status', `${head}    steps:\n      - expect: play\n        status: GONE\n`],
    ['result and error', `${head}    steps:\n      - expect: read\n        result: "1"\n        error: FAILED\n`],
    ['an empty error', `${head}    steps:\n      - expect: read\n        error: ""\n`],
    ['an sms step with a result', `${head}    steps:\n      - expect: { sms: {} }\n        result: SMS1\n`],
    ['callid not digits', `${head}    call: { callid: "12x" }\n    steps:\n      - expect: play\n`],
    ['an unknown call field', `${head}    call: { number: "+33" }\n    steps:\n      - expect: play\n`],
    ['a bad date_started', `${head}    call: { date_started: "2026-11-22" }\n    steps:\n      - expect: play\n`],
    [
      'an sms mock with hash and error',
      `${head}    mocks: { sms: [{ hash: S, error: E }] }\n    steps:\n      - expect: play\n`,
    ],
    ['an sms mock with neither', `${head}    mocks: { sms: [{ message: m }] }\n    steps:\n      - expect: play\n`],
    ['an unknown mock', `${head}    mocks: { clock: 1 }\n    steps:\n      - expect: play\n`],
    ['a check step with a result', `${head}    steps:\n      - expect: { vars: { pin: "1" } }\n        result: "1"\n`],
    ['check vars not a map', `${head}    steps:\n      - expect: { command: read, vars: [pin] }\n`],
    ['an unknown key in a check', `${head}    steps:\n      - expect: { stpe: menu }\n`],
    [
      "an unknown key in the case's expect",
      `${head}    steps:\n      - expect: play\n    expect: { step: a, varz: {} }\n`,
    ],
    ['an empty case expect', `${head}    steps:\n      - expect: play\n    expect: {}\n`],
    ['a call status that is not one', `${head}    call: { status: ANSWERED }\n    steps:\n      - expect: play\n`],
    ['an answer to a command', `${head}    steps:\n      - expect: play\n        answer: { status: 200 }\n`],
    ['an answer with a bad status', `${head}    steps:\n      - expect: http\n        answer: { status: 99 }\n`],
    ['an answer with too many fillers', `${head}    steps:\n      - expect: http\n        answer: { fillers: 101 }\n`],
    [
      'an answer with status and error',
      `${head}    steps:\n      - expect: http\n        answer: { status: 200, error: NETWORK }\n`,
    ],
    ['an unknown key in an answer', `${head}    steps:\n      - expect: http\n        answer: { stauts: 200 }\n`],
    ['now: on an http step', `${head}    steps:\n      - expect: http\n        now: "2026-11-22T11:00:00Z"\n`],
    ['now: on an sms step', `${head}    steps:\n      - expect: sms\n        now: "2026-11-22T11:00:00Z"\n`],
    ['now: on a check', `${head}    steps:\n      - expect: { step: menu }\n        now: "2026-11-22T11:00:00Z"\n`],
  ];

  it("accepts what recordings write: lookups with their answer, each request's clock, a call never answered", () => {
    const ok = `flow: bank-line
environment: local
cases:
  - name: recorded
    vars: { lang: fr-FR }
    mocks: { now: "2026-11-23T10:00:00.000Z", http: [{ method: GET, url: "http://x/y", status: 404 }] }
    steps:
      - expect: { http: { method: GET, url: "http://x/v1/accounts/***/balance" } }
        answer: { status: 200, body: { amount: 1 }, fillers: 1 }
      - expect: { command: play, params: { media_id: "x" } }
        result: "0"
        now: "2026-11-23T10:00:04.000Z"
      - expect: http
        answer: { error: TIMEOUT }
      - expect: http
        answer: { fillers: 2 }
  - name: never answered
    call: { request_hash: OUT1, status: NOANSWER }
    steps: []
`;
    expect(errorsOf(parse(ok))).toEqual([]);
    expect(() => parseScenario(ok, 'ok.test.yaml')).not.toThrow();
  });

  it('accepts checks of vars and step: beside a command, alone, after the hangup, at the case level', () => {
    const ok = `flow: pin-line
cases:
  - name: checks
    steps:
      - expect: { command: read, step: account }
        result: "314159"
      - expect: { vars: { account: "314159" }, step: pin }
      - expect: { command: read, vars: { account: 314159 } }
        status: HANGUP
      - expect: { vars: { account: "314159" } }
    expect: { vars: { pin: null }, step: pin }
`;
    expect(errorsOf(parse(ok))).toEqual([]);
    expect(() => parseScenario(ok, 'ok.test.yaml')).not.toThrow();
  });

  it.each(bad)('rejects %s, as the loader does', (_what, text) => {
    expect(errorsOf(parse(text))).not.toEqual([]);
    expect(() => parseScenario(text, 'bad.test.yaml')).toThrow(/^bad\.test\.yaml:\d+:\d+: /);
  });
});
