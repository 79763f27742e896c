/**
 * Mocked HTTP beyond the first matching entry (docs/testing.md "Mocked HTTP"): answers in
 * turn (`answers:`), entries matched on the request's body and headers (`match:`), in
 * scenarios and in `callscript mock-http`, whose `--log` says what each request sent and
 * which route answered it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.js';
import { mockHttp } from '../../src/cli/mock-http.js';
import { parseScenario } from '../../src/testing/index.js';
import type { MockServer } from '../../src/testing/mock-http.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-mock-sequences-'));
/** The routes file and the log, out of the flows directory. */
const other = mkdtempSync(join(tmpdir(), 'cs-mock-routes-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

writeFileSync(
  join(dir, 'verify.yaml'),
  `version: 2
name: verify
vars: { account: "12345678", key: k1 }
start: check
steps:
  check:
    http:
      method: POST
      url: "https://bank.example/v1/verify"
      headers: { x-api-key: "{{ vars.key }}" }
      body: { account: "{{ vars.account }}" }
    save: answer
    on: { ok: good, "404": unknown, timeout: again, error: again, default: again }
  again:
    say: "One more try."
    next: check
  good: { say: "Verified.", next: bye }
  unknown: { say: "Unknown account.", next: bye }
  bye: { hangup: {} }
`,
);

const ROUTES = `        - url: "https://bank.example/v1/verify"
          match: { body: { account: "12345678" }, headers: { X-API-Key: k1 } }
          answers: [{ error: TIMEOUT }, { status: 503 }, { status: 200, body: { ok: true } }]
        - { url: "https://bank.example/v1/verify", status: 404 }
`;
const say = (text: string) =>
  `      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|${text}" } }\n`;

async function run(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  let out = '';
  const code = await testCommand([file], { flows: dir }, { write: (s: string) => (out += s) });
  return { code, out, shown: relative(process.cwd(), file) };
}

describe('mocks.http in a scenario', () => {
  it('answers in turn: a lookup that times out, then fails, then succeeds within one case', async () => {
    const r = await run(
      'turns.test.yaml',
      `flow: verify
cases:
  - name: fails, then succeeds
    mocks:
      http:
${ROUTES}    steps:
      - expect: http
${say('One more try.')}      - expect: http
${say('One more try.')}      - expect: http
${say('Verified.')}      - expect: hangup
`,
    );
    expect(r.out).toBe(`✓ ${r.shown} › fails, then succeeds\n\n1 passed, 0 failed\n`);
    expect(r.code).toBe(0);
  });

  it('matches on the body and headers sent: another account, or another key, takes the next entry', async () => {
    const r = await run(
      'match.test.yaml',
      `flow: verify
cases:
  - name: another account
    vars: { account: "999" }
    mocks:
      http:
${ROUTES}    steps:
      - expect: http
${say('Unknown account.')}  - name: another key
    vars: { key: k2 }
    mocks:
      http:
${ROUTES}    steps:
      - expect: http
${say('Unknown account.')}  - name: past the list, the last answer again
    mocks:
      http:
        - url: "https://bank.example/v1/verify"
          answers: [{ status: 503 }, { status: 404 }]
    steps:
      - expect: http
${say('One more try.')}      - expect: http
${say('Unknown account.')}`,
    );
    expect(r.out).toBe(
      `✓ ${r.shown} › another account\n✓ ${r.shown} › another key\n✓ ${r.shown} › past the list, the last ` +
        'answer again\n\n3 passed, 0 failed\n',
    );
    expect(r.code).toBe(0);
  });

  it('refuses an answer beside answers:, a bad match:, and says what a typo meant', () => {
    const text = [
      'flow: verify',
      'cases:',
      '  - name: x',
      '    mocks:',
      '      http:',
      '        - { url: "https://x/*", status: 200, answers: [{ status: 404 }] }',
      '        - { url: "https://x/*", match: { bdy: { a: 1 } } }',
      '        - { url: "https://x/*", answers: [{ satus: 404 }] }',
      '        - { url: "https://x/*", answers: [] }',
      '        - { url: "https://x/*", delay: 100, response: { a: 1 } }',
      '    steps:',
      '      - expect: http',
      '',
    ].join('\n');
    let message = '';
    try {
      parseScenario(text, 's.yaml');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.split('\n')).toEqual([
      "s.yaml:6:33: a mocks.http entry with answers: gives each answer's status, body, headers, delay_ms or error " +
        'there, not beside it',
      's.yaml:7:42: unknown key "bdy" in mocks.http match: did you mean "body"? (allowed: body, headers)',
      's.yaml:8:45: unknown key "satus" in an answer of mocks.http: did you mean "status"? (allowed: status, body, ' +
        'headers, delay_ms, error)',
      's.yaml:9:42: mocks.http: answers is a list of 1 to 100 answers { status, body, headers, delay_ms, error }',
      's.yaml:10:33: unknown key "delay" in a mocks.http entry: did you mean "delay_ms"? (allowed: method, url, ' +
        'match, status, body, headers, delay_ms, error, answers)',
      's.yaml:10:45: unknown key "response" in a mocks.http entry: did you mean "body"? (allowed: method, url, ' +
        'match, status, body, headers, delay_ms, error, answers)',
    ]);
  });
});

describe('schemas/scenario.schema.json', () => {
  it('takes match: and answers:, and refuses an answer beside answers:', async () => {
    const { Ajv } = await import('ajv');
    const schema = JSON.parse(readFileSync('schemas/scenario.schema.json', 'utf8')) as object;
    const validate = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true }).compile(schema);
    const doc = (entry: object) => ({
      flow: 'verify',
      cases: [{ name: 'x', mocks: { http: [{ url: 'https://x/*', ...entry }] }, steps: [{ expect: 'http' }] }],
    });
    expect(validate(doc({ match: { body: { a: 1 }, headers: { k: 'v' } }, answers: [{ error: 'TIMEOUT' }, {}] }))).toBe(
      true,
    );
    expect(validate(doc({ status: 200, answers: [{ status: 404 }] }))).toBe(false);
    expect(validate(doc({ match: { bdy: 1 } }))).toBe(false);
  });
});

describe('callscript mock-http', () => {
  const sink = () => {
    let text = '';
    return { w: new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) }), text: () => text };
  };
  const routes = join(other, 'routes.yaml');
  writeFileSync(
    routes,
    `routes:
  - url: "/v1/verify"
    method: POST
    match: { body: { account: "12345678" }, headers: { x-api-key: k1 } }
    answers: [{ status: 503 }, { status: 200, body: { ok: true } }]
  - { url: "/v1/verify", status: 404, body: { error: "no such account" } }
`,
  );
  const post = (url: string, body: unknown, key: string) =>
    fetch(`${url}/v1/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, authorization: 'Bearer s3cret' },
      body: JSON.stringify(body),
    }).then(async (r) => `${r.status} ${await r.text()}`);

  it('answers in turn and by body and headers; --log prints each request and what answered it', async () => {
    const out = sink();
    const err = sink();
    const s = (await mockHttp({ routes, port: '0', log: true }, out.w, err.w)) as MockServer;
    try {
      expect(await post(s.url, { account: '12345678' }, 'k1')).toBe('503 ');
      expect(await post(s.url, { account: '12345678' }, 'k1')).toBe('200 {"ok":true}');
      expect(await post(s.url, { account: '12345678' }, 'k1')).toBe('200 {"ok":true}');
      expect(await post(s.url, { account: '999' }, 'k1')).toBe('404 {"error":"no such account"}');
      expect(await post(s.url, { account: '12345678' }, 'k2')).toBe('404 {"error":"no such account"}');
      expect((await fetch(`${s.url}/nowhere`)).status).toBe(404);
    } finally {
      await s.close();
    }
    expect(err.text()).toBe('');
    expect(out.text()).toBe(
      `callscript mock-http: 2 routes from ${routes} at ${s.url}\n` +
        `POST /v1/verify {"account":"12345678"} -> 503 (${routes}:2, answer 1)\n` +
        `POST /v1/verify {"account":"12345678"} -> 200 (${routes}:2, answer 2)\n` +
        `POST /v1/verify {"account":"12345678"} -> 200 (${routes}:2, answer 2)\n` +
        `POST /v1/verify {"account":"999"} -> 404 (${routes}:6)\n` +
        `POST /v1/verify {"account":"12345678"} -> 404 (${routes}:6)\n` +
        'GET /nowhere -> 404 (no route)\n',
    );
  });

  it('--log file: a JSON line per request, headers included, credentials masked', async () => {
    const log = join(other, 'requests.jsonl');
    const s = (await mockHttp({ routes, port: '0', log }, sink().w, sink().w)) as MockServer;
    try {
      await post(s.url, { account: '12345678' }, 'k1');
    } finally {
      await s.close();
    }
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const r = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(r).toMatchObject({
      method: 'POST',
      url: '/v1/verify',
      body: '{"account":"12345678"}',
      route: 2,
      answer: 1,
      outcome: 503,
    });
    expect(r.headers).toMatchObject({ 'x-api-key': '***', authorization: '***', 'content-type': 'application/json' });
  });

  it('a hostile body (nested 400,000 deep, or not JSON) matches no body condition; the server goes on', async () => {
    const s = (await mockHttp({ routes, port: '0' }, sink().w, sink().w)) as MockServer;
    try {
      const deep = '['.repeat(400_000) + ']'.repeat(400_000);
      const send = (body: string) =>
        fetch(`${s.url}/v1/verify`, { method: 'POST', headers: { 'x-api-key': 'k1' }, body }).then((r) => r.status);
      expect(await send(deep)).toBe(404);
      expect(await send('{"account":')).toBe(404);
      expect(await post(s.url, { account: '12345678' }, 'k1')).toBe('503 ');
    } finally {
      await s.close();
    }
  });

  it('--log into a directory that does not exist: exit 2, said', async () => {
    const err = sink();
    expect(await mockHttp({ routes, port: '0', log: join(dir, 'no', 'such', 'log') }, sink().w, err.w)).toBe(2);
    expect(err.text()).toMatch(/^callscript mock-http: --log .*no\/such\/log: ENOENT/);
  });
});
