/**
 * Typed values in an http step's request (issue 22 item 1): `{ expr: "..." }` in the body, the query and the
 * headers takes the CEL value, typed (a list, a number, a boolean, a map), as in `set:`; a whole body may come from
 * one. Checked at load like every expression, bounded once rendered like every body, and a failing expression takes
 * the step's error way as a failing template does.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { flowJsonSchema } from '../../src/flow/schema.js';
import { parseScenario, runCase } from '../../src/testing/index.js';
import { checkFlow } from '../../src/flow/check.js';
import { yamlFlow } from './yaml.js';
import { req, reply, tts } from './helpers.js';
import { CallDriver } from '../../src/testing/drive.js';
import { MockExecutor } from '../../src/testing/executors.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { generateCases, scenarioYaml } from '../../src/testing/paths.js';

const API = 'https://api.example';

/** A flow with the values a survey collected, and one http step whose `http:` lines are given. */
const surveyFlow = (...http: string[]) =>
  [
    'version: 2',
    'name: survey',
    'secrets: [TOKEN]',
    'vars: { results: [5, 3, 4], name: Ann, done: true, answers: { q1: 5, q2: "yes" } }',
    'start: send',
    'steps:',
    '  send:',
    '    http:',
    ...http.map((l) => `      ${l}`),
    '    on: { ok: thanks, default: failed, error: failed }',
    '  thanks: { say: "Thank you.", next: end }',
    '  failed: { say: "Failed {{ error }}.", next: end }',
    '  end: { hangup: {} }',
    '',
  ].join('\n');

/** One case: the lookup (checked against `http`, answered 200), then what is said. */
const lookupCase = (http: string, say: string) =>
  [
    'flow: survey',
    'cases:',
    '  - name: x',
    '    steps:',
    `      - expect: { http: ${http} }`,
    '        answer: { status: 200 }',
    `      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|${say}" } }`,
    '      - expect: hangup',
    '',
  ].join('\n');

const run = async (flowText: string, caseText: string) => {
  const flow = await yamlFlow(flowText, 'survey.yaml');
  return runCase(flow, parseScenario(caseText, 's.yaml').cases[0]!);
};

describe('{ expr: } in an http body', () => {
  it('sends the CEL value typed (list, number, boolean, map), not {"expr": "..."}', async () => {
    const flow = surveyFlow(
      'method: POST',
      `url: "${API}/v1/survey"`,
      'body:',
      '  name: "{{ vars.name }}"',
      '  results: { expr: "vars.results" }',
      '  count: { expr: "size(vars.results)" }',
      '  done: { expr: "vars.done" }',
      '  answers: { expr: "vars.answers" }',
      '  mean: { expr: "double(vars.results[0] + vars.results[1] + vars.results[2]) / 3.0" }',
      '  nested: [{ expr: "vars.results[0] > 4" }, literal]',
    );
    const body =
      '{ name: Ann, results: [5, 3, 4], count: 3, done: true, answers: { q1: 5, q2: "yes" }, mean: 4, ' +
      'nested: [true, literal] }';
    const r = await run(flow, lookupCase(`{ method: POST, url: "${API}/v1/survey", body: ${body} }`, 'Thank you.'));
    expect(r.failure?.message).toBeUndefined();
    expect(r.ok).toBe(true);
  });

  it('a whole body from one expression: a variable, or a map built in CEL', async () => {
    const whole = surveyFlow('method: POST', `url: "${API}/v1/survey"`, 'body: { expr: "vars.answers" }');
    const r1 = await run(
      whole,
      lookupCase(`{ method: POST, url: "${API}/v1/survey", body: { q1: 5, q2: "yes" } }`, 'Thank you.'),
    );
    expect(r1.failure?.message).toBeUndefined();
    const built = surveyFlow(
      'method: PUT',
      `url: "${API}/v1/survey"`,
      `body: { expr: '{"scores": vars.results, "caller": call.caller, "expr": dyn(1)}' }`,
    );
    const r2 = await run(
      built,
      lookupCase(
        `{ method: PUT, url: "${API}/v1/survey", body: { scores: [5, 3, 4], caller: "+33612345678", expr: 1 } }`,
        'Thank you.',
      ),
    );
    expect(r2.failure?.message).toBeUndefined();
  });
});

describe('{ expr: } in query and headers', () => {
  it('a number or a boolean is its text, a list in the query repeats the key, a secret is readable', async () => {
    const flow = surveyFlow(
      `url: "${API}/v1/survey"`,
      'query: { id: { expr: "vars.results" }, n: { expr: "size(vars.results)" }, done: { expr: "vars.done" } }',
      `headers: { X-Count: { expr: "size(vars.results) * 2" }, Authorization: { expr: '"Bearer " + secrets.TOKEN' } }`,
    );
    // the tools read every secret as ***, as recordings show them
    const r = await run(
      flow,
      lookupCase(
        `{ method: GET, url: "${API}/v1/survey?id=5&id=3&id=4&n=3&done=true", ` +
          `headers: { X-Count: "6", Authorization: "Bearer ***" } }`,
        'Thank you.',
      ),
    );
    expect(r.failure?.message).toBeUndefined();
  });

  it('a header given a list or a map takes the error way (INVALID_PARAM)', async () => {
    const flow = surveyFlow(`url: "${API}/v1/survey"`, 'headers: { X-Ids: { expr: "vars.results" } }');
    const out = firstRequest(await yamlFlow(flow, 'survey.yaml'));
    expect(out.replyJson).toBe(reply('play', 1, { media_id: tts('Failed INVALID_PARAM.') }));
    expect(out.log?.find((l) => l.code === 'RUNTIME_PARAM')?.msg).toBe(
      'http at send: headers.X-Ids: the value is a list, not a text; taking the error branch (INVALID_PARAM)',
    );
  });
});

/** The first request of a call of `flow`: the reply and its log (lookups answered 200). */
function firstRequest(flow: CompiledFlow) {
  const d = new CallDriver(flow, new MockExecutor({ http: [MOCK_200] }), { base: req(), now: Date.now() });
  const s = d.start();
  if (s.kind !== 'stepped' || s.outcome.kind !== 'reply') throw new Error(`not a reply: ${JSON.stringify(s)}`);
  return s.outcome;
}
const MOCK_200 = { url: '*', status: 200, body: null, headers: {}, delay_ms: 0 };

describe('a failing expression', () => {
  it("takes the step's error way with INVALID_PARAM, as a failing template does, and says why", async () => {
    const flow = surveyFlow('method: POST', `url: "${API}/v1/survey"`, 'body: { r: { expr: "vars.results[7]" } }');
    const out = firstRequest(await yamlFlow(flow, 'survey.yaml'));
    expect(out.replyJson).toBe(reply('play', 1, { media_id: tts('Failed INVALID_PARAM.') }));
    expect(out.log?.map((l) => [l.code, l.msg])).toEqual([
      ['RUNTIME_EXPRESSION', 'http at send: body: No such key: index out of bounds, index 7 >= size 3'],
      [
        'RUNTIME_PARAM',
        'http at send: body: No such key: index out of bounds, index 7 >= size 3; taking the error branch ' +
          '(INVALID_PARAM)',
      ],
    ]);
  });
});

describe('checked at load', () => {
  const diags = (flow: string) =>
    checkFlow(flow, 'survey.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`);

  it('as every expression: syntax, unknown variables and secrets, a key beside expr, a non-string', () => {
    expect(
      diags(
        surveyFlow(
          'method: POST',
          `url: "${API}/v1/survey"`,
          'body:',
          '  a: { expr: "vars.resuls" }',
          '  b: [{ expr: "size(" }]',
          '  c: { expr: "vars.results", as: list }',
          '  d: { expr: "secrets.TOKN" }',
          'query: { q: { expr: 42 } }',
          'headers: { X-A: { expr: "call.calr" } }',
        ),
      ),
    ).toEqual([
      '12:21 warning UNKNOWN_VARIABLE vars.resuls is read here but nothing sets it (no vars:, save:, set: or ' +
        "foreach of 'resuls')",
      "13:21 error BAD_EXPRESSION step 'send': http body: invalid CEL expression: Unexpected token: EOF",
      "14:36 error UNKNOWN_KEY step 'send': http body: unknown key 'as' beside expr",
      '15:21 error UNKNOWN_SECRET secrets.TOKN is not declared in secrets:',
      "16:27 error TYPE_MISMATCH step 'send': http query.q: a condition must be a CEL expression in a string, not " +
        'an integer (42)',
      '17:32 warning UNKNOWN_VARIABLE call.calr is not a call field',
    ]);
  });
});

describe('hostile', () => {
  /** A flow that says hello, then sends `body` (lines under `body:`), with `vars`. */
  const hostile = (vars: string, body: string) =>
    [
      'version: 2',
      `vars: ${vars}`,
      'start: hello',
      'steps:',
      '  hello: { say: "Hello.", next: send, on: { error: failed } }',
      '  send:',
      `    http: { method: POST, url: "${API}/v1/x", body: ${body} }`,
      '    on: { ok: thanks, default: failed, error: failed }',
      '  thanks: { say: "Thank you.", next: end }',
      '  failed: { say: "Failed {{ error }}.", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
  /** The request after the hello: its reply, its log and how long it took. */
  const second = async (flow: string) => {
    const d = new CallDriver(await yamlFlow(flow, 'h.yaml'), new MockExecutor({ http: [MOCK_200] }), {
      base: req(),
      now: Date.now(),
    });
    d.start();
    const t = performance.now();
    const s = d.report({ result: '0' });
    const ms = performance.now() - t;
    if (s.kind !== 'stepped' || s.outcome.kind !== 'reply') throw new Error('not a reply');
    return { out: s.outcome, ms, codes: s.outcome.log?.map((l) => l.code) };
  };

  it('a body far over its bound is refused before it is written out, in milliseconds', async () => {
    const three = '{ a: { expr: "vars.s" }, b: { expr: "vars.s" }, c: { expr: "vars.s" } }';
    const { out, ms } = await second(hostile(`{ s: "${'x'.repeat(30000)}" }`, three));
    expect(out.replyJson).toBe(reply('play', 2, { media_id: tts('Failed INVALID_PARAM.') }));
    expect(out.log?.map((l) => l.msg)).toEqual([
      'http at send: body: the rendered body is over 65536 bytes; taking the error branch (INVALID_PARAM)',
    ]);
    expect(ms).toBeLessThan(500);
  });

  it('a huge list runs out of the request budget (EVALUATION_LIMIT): the request is dropped, as for set:', async () => {
    // 600 copies of a list of 5,000: 3 million items, were they built
    const big = `[${Array.from({ length: 5000 }, (_, i) => i % 10).join(',')}]`;
    const list = `[${Array(600).fill('vars.l').join(', ')}]`;
    const { out, ms, codes } = await second(hostile(`{ l: ${big} }`, `{ expr: "${list}" }`));
    // the request keeps none of its changes: the step that issued the command (hello) takes its error way
    expect(out.replyJson).toBe(reply('play', 2, { media_id: tts('Failed EVALUATION_LIMIT.') }));
    expect(codes).toEqual(['EVALUATION_LIMIT', 'EVALUATION_LIMIT']);
    expect(ms).toBeLessThan(500);
  });

  it('a body nested deeper than an answer may be (64 levels) is refused, written or computed', async () => {
    // 58 maps as written, a list 10 deep from the expression: 68 levels once rendered
    const deep = `${'{ a: '.repeat(58)}{ expr: "[[[[[[[[[[1]]]]]]]]]]" }${' }'.repeat(58)}`;
    const { out } = await second(hostile('{}', deep));
    expect(out.replyJson).toBe(reply('play', 2, { media_id: tts('Failed INVALID_PARAM.') }));
    expect(out.log?.map((l) => l.msg)).toEqual([
      'http at send: body: the rendered body nests arrays and objects more than 64 levels deep; taking the error ' +
        'branch (INVALID_PARAM)',
    ]);
  });

  it('an answer saved whole (65 levels around a body of 64) sent on is an expression error, not a crash', async () => {
    const flow = surveyFlow(`url: "${API}/v1/a"`).replace(
      '    on: { ok: thanks',
      [
        '    save: answer',
        '    on: { ok: again, default: failed, error: failed }',
        '  again:',
        `    http: { method: POST, url: "${API}/v1/b", body: { expr: "vars.answer" } }`,
        '    on: { ok: thanks',
      ].join('\n'),
    );
    const body = `${'{ a: '.repeat(63)}1${' }'.repeat(63)}`;
    const text = [
      'flow: survey',
      'cases:',
      '  - name: x',
      '    steps:',
      '      - expect: http',
      `        answer: { status: 200, body: { a: ${body} } }`,
      '      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Failed INVALID_PARAM." } }',
      '      - expect: hangup',
      '',
    ].join('\n');
    const r = runCase(await yamlFlow(flow, 'survey.yaml'), parseScenario(text, 's.yaml').cases[0]!);
    expect(r.failure?.message).toBeUndefined();
  });
});

describe('in the tools', () => {
  it('paths takes every way out of the step, and every case it writes passes', async () => {
    const flow = await yamlFlow(
      surveyFlow('method: POST', `url: "${API}/v1/survey"`, 'body: { r: { expr: "vars.results" }, n: 1 }'),
      'survey.yaml',
    );
    const g = generateCases(flow);
    expect(g.skipped).toEqual([]);
    expect(g.cases.map((c) => c.transition)).toEqual(expect.arrayContaining(['send:ok', 'send:default', 'send:error']));
    const text = scenarioYaml(flow, g);
    for (const c of parseScenario(text, 'p.yaml').cases) expect(runCase(flow, c).failure?.message).toBeUndefined();
  });
});

describe('docs/flow-language.md', () => {
  it("the example of 'Typed values' checks clean and the schema accepts it", () => {
    const doc = readFileSync(new URL('../../docs/flow-language.md', import.meta.url), 'utf8');
    const at = doc.indexOf('### Typed values: `expr`');
    const steps = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
    const flow = [
      'version: 2',
      'environments: { test: { survey_api: "https://survey.example", crm: "https://crm.example" } }',
      'vars: { scores: [5, 3, 4], questions: [q1, q2, q3], record: { id: 7 } }',
      'start: send_survey',
      'steps:',
      steps.trimEnd(),
      '  thanks: { say: "Thank you.", next: end }',
      '  sorry: { say: "Sorry.", next: send_record }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    expect(checkFlow(flow, 'example.yaml').diagnostics).toEqual([]);
    const validate = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true }).compile(flowJsonSchema());
    expect(validate(parse(flow)), JSON.stringify(validate.errors)).toBe(true);
  });
});
