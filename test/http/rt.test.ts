import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { CallStore } from '../../src/store/types.js';
import type { RtOptions } from '../../src/http/options.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { ENDED } from '../../src/engine/call-record.js';
import { hooked } from '../helpers/store.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
let app: FastifyInstance | undefined;

async function server(opts: Partial<RtOptions> & { store?: CallStore } = {}) {
  const store = opts.store ?? new MemoryStore();
  app = await buildServer({ flowsDir: FLOWS, logLevel: false, ...opts, store });
  return { app, store };
}

afterEach(async () => {
  await app?.close();
  app = undefined;
});

function post(a: FastifyInstance, url: string, over: Partial<RtFields> = {}, headers: Record<string, string> = {}) {
  return a.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: rtBody(over),
  });
}

const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

describe('POST /rt/:flow', () => {
  it('answers the first command of the flow', async () => {
    const { app } = await server();
    const res = await post(app, '/rt/desk');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json()).toEqual({
      command: 'read',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.', max_digits: 1 },
      variables: {},
    });
  });

  it('walks a whole call and, on HANGUP, keeps only a tombstone of it', async () => {
    const { app, store } = await server();
    await post(app, '/rt/desk');
    const r2 = await post(app, '/rt/desk', { command: 'read', command_id: 1, command_result: '1' });
    expect(r2.json()).toEqual({
      command: 'dialout',
      command_id: 2,
      params: { targets: [{ number: '+33123456789', timeout: 30 }] },
      variables: {},
    });
    const r3 = await post(app, '/rt/desk', { command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
    expect(r3.json()).toMatchObject({
      command: 'play',
      command_id: 3,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Goodbye.' },
    });
    const r4 = await post(app, '/rt/desk', { command: 'play', command_id: 3, command_result: '0' });
    expect(r4.json()).toMatchObject({ command: 'hangup', command_id: 4, params: {} });
    expect(await store.size()).toBe(1);
    const r5 = await post(app, '/rt/desk', { command: 'hangup', command_id: 4, call_status: 'HANGUP' });
    expect(r5.statusCode).toBe(200);
    expect(r5.json()).toMatchObject({ command: 'hangup', params: {} });
    expect(await store.get('4242')).toBe(ENDED);
  });

  it('answers hangup to a late request of an ended call instead of restarting it (unknown_call: restart)', async () => {
    const { app, store } = await server();
    await post(app, '/rt/desk');
    const end = await post(app, '/rt/desk', { command: 'read', command_id: 1, call_status: 'HANGUP' });
    expect(end.json()).toEqual({ command: 'hangup', command_id: 2, params: {}, variables: {} });
    // the same terminal request again, then late live requests of the call: none restarts the flow
    const again = await post(app, '/rt/desk', { command: 'read', command_id: 1, call_status: 'HANGUP' });
    expect(again.body).toBe(end.body);
    for (const late of [
      { command: 'read', command_id: 1, command_result: '1' },
      { command: '', command_id: 0 },
      { command: 'play', command_id: 9, command_result: '0' },
    ]) {
      const res = await post(app, '/rt/desk', late);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ command: 'hangup', command_id: late.command_id + 1, params: {}, variables: {} });
    }
    expect(await store.get('4242')).toBe(ENDED);
  });

  it('forgets the tombstone after server.ended_call_ttl_s: the callid may then start a new call', async () => {
    let now = 1_000_000;
    const store = new MemoryStore(() => now);
    const { app } = await server({ store, endedTtlMs: 5_000 });
    await post(app, '/rt/desk');
    await post(app, '/rt/desk', { command: 'read', command_id: 1, call_status: 'HANGUP' });
    now += 4_999;
    expect((await post(app, '/rt/desk')).json()).toMatchObject({ command: 'hangup' });
    now += 2;
    expect((await post(app, '/rt/desk')).json()).toMatchObject({ command: 'read', command_id: 1 });
  });

  it.each(['HANGUP', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'])(
    'ends the call on %s with 200 and a hangup',
    async (status) => {
      const { app, store } = await server();
      await post(app, '/rt/desk');
      const res = await post(app, '/rt/desk', { command: 'read', command_id: 1, call_status: status });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ command: 'hangup', params: {}, variables: {} });
      expect(await store.get('4242')).toBe(ENDED);
    },
  );

  it('answers a terminal request for an unknown call with a hangup and keeps only its tombstone', async () => {
    const { app, store } = await server();
    const res = await post(app, '/rt/desk', { command: 'play', command_id: 7, call_status: 'HANGUP' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ command: 'hangup' });
    expect(await store.size()).toBe(1);
    expect(await store.get('4242')).toBe(ENDED);
  });

  it('answers a retried request with the same bytes and does not advance', async () => {
    const { app, store } = await server();
    const first = await post(app, '/rt/desk');
    const again = await post(app, '/rt/desk');
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    const r2 = await post(app, '/rt/desk', { command: 'read', command_id: 1, command_result: '1' });
    const r2again = await post(app, '/rt/desk', { command: 'read', command_id: 1, command_result: '1' });
    expect(r2again.body).toBe(r2.body);
    const snapshot = await store.get('4242');
    const stale = await post(app, '/rt/desk', { command: '', command_id: 0 });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ error: { code: 'STALE_REQUEST' } });
    expect(await store.get('4242')).toBe(snapshot);
  });

  it('keeps calls whose callids differ only beyond 2^53 apart, and echoes variables verbatim', async () => {
    const { app, store } = await server();
    const vars = '{"crm":12345678901234567890,"lang":"fr"}';
    const a = await post(app, '/rt/desk', { callid: '9007199254740993', variables: vars });
    await post(app, '/rt/desk', { callid: '9007199254740992' });
    expect(a.body.endsWith(`"variables":${vars}}`)).toBe(true);
    await post(app, '/rt/desk', {
      callid: '9007199254740993',
      command: 'read',
      command_id: 1,
      command_result: '1',
      variables: vars,
    });
    expect(await store.size()).toBe(2);
    expect(JSON.parse((await store.get('9007199254740993'))!).commandId).toBe(2);
    expect(JSON.parse((await store.get('9007199254740992'))!).commandId).toBe(1);
  });

  it('restarts the flow for a non-first request of an unknown call by default', async () => {
    const { app } = await server();
    const res = await post(app, '/rt/desk', { command: 'play', command_id: 5, command_result: '0' });
    expect(res.json()).toMatchObject({ command: 'read', command_id: 6 });
  });

  it('follows the unknown_call policy: reject and hangup', async () => {
    const { app, store } = await server({ unknownCall: 'reject' });
    const res = await post(app, '/rt/desk', { command: 'play', command_id: 5, command_result: '0' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'UNKNOWN_CALL' } });
    expect(await store.size()).toBe(0);
    await app.close();
    const h = await server({ unknownCall: 'hangup' });
    const res2 = await post(h.app, '/rt/desk', { command: 'play', command_id: 5, command_result: '0' });
    expect(res2.json()).toMatchObject({ command: 'hangup' });
    expect(await h.store.get('4242')).toBe(ENDED);
  });

  it('answers 404 UNKNOWN_FLOW for a flow not loaded, including one refused for errors', async () => {
    const { app } = await server();
    for (const name of ['nope', 'broken']) {
      const res = await post(app, `/rt/${name}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'UNKNOWN_FLOW', message: `no flow named "${name}" is loaded` } });
    }
  });
});

describe('POST /rt routing', () => {
  const routes = { apps: { APPOTHER: 'other' }, numbers: { '+33987654321': 'other' }, default: 'desk' };

  it('routes by app, then number, then default', async () => {
    const { app } = await server({ routes });
    expect((await post(app, '/rt', { app: 'APPOTHER', callid: '1' })).json()).toMatchObject({ command: 'play' });
    expect((await post(app, '/rt', { number: '+33987654321', callid: '2' })).json()).toMatchObject({ command: 'play' });
    expect((await post(app, '/rt', { callid: '3' })).json()).toMatchObject({ command: 'read' });
  });

  it('answers 404 NO_ROUTE without a default', async () => {
    const { app } = await server({ routes: { apps: {}, numbers: {} } });
    const res = await post(app, '/rt');
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('NO_ROUTE');
  });

  it('keeps a live call on its flow even if the route changes', async () => {
    const { app } = await server({ routes });
    await post(app, '/rt', { app: 'APPOTHER' });
    const res = await post(app, '/rt', { app: 'ELSE', command: 'play', command_id: 1, command_result: '0' });
    expect(res.json()).toMatchObject({ command: 'hangup', command_id: 2 });
  });
});

describe('bad requests never touch state', () => {
  it('401 without or with wrong Basic credentials, 200 with the right ones', async () => {
    const { app, store } = await server({ auth: { login: 'svc', password: 's3cret' } });
    const none = await post(app, '/rt/desk');
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toContain('Basic');
    expect(none.json()).toEqual({
      error: { code: 'AUTH_REQUIRED', message: 'valid HTTP Basic credentials are required' },
    });
    expect((await post(app, '/rt/desk', {}, { authorization: basic('svc', 'wrong') })).statusCode).toBe(401);
    expect((await post(app, '/rt/desk', {}, { authorization: 'Bearer x' })).statusCode).toBe(401);
    expect(await store.size()).toBe(0);
    expect((await post(app, '/rt/desk', {}, { authorization: basic('svc', 's3cret') })).statusCode).toBe(200);
    expect(await store.size()).toBe(1);
  });

  it('400 BAD_JSON, 400 BAD_REQUEST, 413 BODY_TOO_LARGE, 405 for GET', async () => {
    const { app, store } = await server({ bodyLimit: 2048 });
    const badJson = await app.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { 'content-type': 'application/json' },
      payload: '{"app":',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error.code).toBe('BAD_JSON');
    const o = JSON.parse(rtBody());
    delete o.cdr_field;
    const missing = await app.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(o),
    });
    expect(missing.json()).toEqual({
      error: { code: 'BAD_REQUEST', message: 'missing field cdr_field: an RT.Request has all 14 fields' },
    });
    const big = await post(app, '/rt/desk', { variables: { blob: 'x'.repeat(4096) } });
    expect(big.statusCode).toBe(413);
    expect(big.json().error.code).toBe('BODY_TOO_LARGE');
    const get = await app.inject({ method: 'GET', url: '/rt/desk' });
    expect(get.statusCode).toBe(405);
    expect(get.json().error.code).toBe('METHOD_NOT_ALLOWED');
    expect(await store.size()).toBe(0);
  });

  it('a bad request in the middle of a call leaves the call where it was', async () => {
    const { app, store } = await server();
    await post(app, '/rt/desk');
    const before = await store.get('4242');
    const o = { ...JSON.parse(rtBody({ command: 'read', command_id: 1, command_result: '1' })), command_id: 'x' };
    const res = await app.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(o),
    });
    expect(res.statusCode).toBe(400);
    expect(await store.get('4242')).toBe(before);
    const ok = await post(app, '/rt/desk', { command: 'read', command_id: 1, command_result: '1' });
    expect(ok.json()).toMatchObject({ command: 'dialout', command_id: 2 });
  });
});

describe('deadline', () => {
  it('answers a fallback wait when the store is slow, then the real reply on the next request', async () => {
    const inner = new MemoryStore();
    let delay = 0;
    const slow: CallStore = hooked(inner, { load: () => new Promise((r) => setTimeout(r, delay)) });
    const { app } = await server({ store: slow, deadlineMs: 100 });
    delay = 300;
    const late = await post(app, '/rt/desk');
    expect(late.json()).toEqual({ command: 'wait', command_id: 0, params: { wait: 1 }, variables: {} });
    delay = 0;
    await new Promise((r) => setTimeout(r, 300)); // the service plays the 1 s wait meanwhile
    const next = await post(app, '/rt/desk', { command: 'wait', command_id: 0, command_result: '0' });
    expect(next.json()).toMatchObject({ command: 'read', command_id: 1 });
  });

  it('plays the configured fallback media instead of the wait', async () => {
    const inner = new MemoryStore();
    const slow: CallStore = hooked(inner, { load: () => new Promise((r) => setTimeout(r, 250)) });
    const { app } = await server({ store: slow, deadlineMs: 100, fallback: 'TTS|TTS_EN-GB_SERENA|Please hold on.' });
    const late = await post(app, '/rt/desk', { command: 'read', command_id: 0 });
    expect(late.json()).toEqual({
      command: 'play',
      command_id: 0,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Please hold on.' },
      variables: {},
    });
  });

  it('a late step that failed: the fallback result is not taken as the caller input', async () => {
    const inner = new MemoryStore();
    let failSet = true;
    const flaky: CallStore = hooked(inner, {
      commit: async () => {
        if (failSet) {
          await new Promise((r) => setTimeout(r, 250));
          throw new Error('store down');
        }
      },
    });
    const { app } = await server({ store: flaky, deadlineMs: 100 });
    failSet = false;
    await post(app, '/rt/desk'); // read #1
    failSet = true;
    const late = await post(app, '/rt/desk', { command: 'read', command_id: 1, command_result: '1' });
    expect(late.json()).toEqual({ command: 'wait', command_id: 1, params: { wait: 1 }, variables: {} });
    await new Promise((r) => setTimeout(r, 300)); // the late step fails meanwhile
    failSet = false;
    const next = await post(app, '/rt/desk', { command: 'wait', command_id: 1, command_result: '0' });
    // the caller pressed 1 (sales), not 0
    expect(next.json()).toEqual({
      command: 'dialout',
      command_id: 2,
      params: { targets: [{ number: '+33123456789', timeout: 30 }] },
      variables: {},
    });
  });
});

describe('GET /health', () => {
  it('lists loaded flows with versions and refused files with their errors', async () => {
    const { app } = await server();
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    const h = res.json();
    // a refused file: still serving (200), but degraded (Part M of issue 12)
    expect(h.status).toBe('degraded');
    expect(h.reason).toBe(
      '1 flow file is refused (see refused): a flow whose edit is refused serves its previous version',
    );
    expect(h.flows.map((f: { name: string }) => f.name)).toEqual(['desk', 'other']);
    expect(h.flows[0].version).toMatch(/^[0-9a-f]{12}$/);
    expect(h.refused).toHaveLength(1);
    expect(h.refused[0].file).toMatch(/broken\.yaml$/);
    expect(h.refused[0].diagnostics[0].code).toBe('UNKNOWN_STEP');
    expect(h.calls).toBe(0);
  });
});

describe('numbers beyond 2^53 in variables', () => {
  it('reach hangup_callid digit for digit through call.variables', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'callscript-vars-'));
    writeFileSync(
      join(dir, 'kill.yaml'),
      'version: 1\nstart: k\nsteps:\n  k:\n    hangup_callid: "{{ call.variables.other }}"\n    next: end\n  ' +
        'end: { hangup: {} }\n',
    );
    app = await buildServer({ flowsDir: dir, logLevel: false });
    const res = await post(app, '/rt/kill', { variables: '{"other":9007199254740993}' });
    expect(res.body).toBe(
      '{"command":"hangup_callid","command_id":1,"params":{"callid":9007199254740993},' +
        '"variables":{"other":9007199254740993}}',
    );
  });
});

describe('a request must report the command it answers', () => {
  it('409 when the command name differs from the one sent, and nothing changes', async () => {
    const { app, store } = await server();
    await post(app, '/rt/desk');
    const before = await store.get('4242');
    const res = await post(app, '/rt/desk', { command: 'play', command_id: 1, command_result: '0' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toEqual({
      code: 'STALE_REQUEST',
      message: 'the request reports command "play" #1, but command #1 of this call is "read"',
    });
    expect(await store.get('4242')).toBe(before);
    const ahead = await post(app, '/rt/desk', { command: 'read', command_id: 9, command_result: '1' });
    expect(ahead.json().error.message).toBe(
      "command_id 9 is ahead of the call's latest command 1: no such command was sent",
    );
  });
});

describe('review fixes', () => {
  it('checks credentials before reading the body: a big unauthenticated body gets 401, not 413', async () => {
    const { app } = await server({ auth: { login: 'svc', password: 'pw' }, bodyLimit: 2048 });
    const res = await post(app, '/rt/desk', { variables: { blob: 'x'.repeat(10000) } });
    expect(res.statusCode).toBe(401);
  });

  it('answers 405 with Allow for every other method on /rt and /health', async () => {
    const { app } = await server();
    for (const [method, url, allow] of [
      ['OPTIONS', '/rt/desk', 'POST'],
      ['PUT', '/rt', 'POST'],
      ['POST', '/health', 'GET, HEAD'],
      ['DELETE', '/health', 'GET, HEAD'],
    ] as const) {
      const res = await app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json().error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('shows refused files by name only in /health', async () => {
    const { app } = await server();
    const h = (await app.inject({ method: 'GET', url: '/health' })).json();
    expect(h.refused[0].file).toBe('broken.yaml');
    expect(h.refused[0].diagnostics[0].file).toBe('broken.yaml');
  });

  it('refuses bad plugin options at registration with a clear message', async () => {
    await expect(buildServer({ flowsDir: FLOWS, logLevel: false, deadlineMs: -5 })).rejects.toThrow(
      'callscript plugin: deadlineMs must be an integer from 100 to 4900, got -5',
    );
    await expect(buildServer({ flowsDir: FLOWS, logLevel: false, unknownCall: 'foo' as never })).rejects.toThrow(
      'unknownCall must be restart, hangup or reject, got foo',
    );
  });
});
