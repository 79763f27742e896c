/** JSON-RPC 2.0 at /json-rpc/v1.1/: transport, auth, every method and its bad params. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUTH, cmd, fakeServer, rawHttp, startEmulator, type Running } from './helpers.js';

let e: Running;
beforeEach(async () => {
  e = await startEmulator();
});
afterEach(async () => e.close());

const RPC = '/json-rpc/v1.1/';
const raw = (raw: string, headers: Record<string, string> = {}) =>
  e.req(RPC, { raw, headers: { 'content-type': 'application/json-rpc; charset=utf-8', ...headers } });
const APP_PARAMS = { url: 'http://127.0.0.1:9/rt', login: 'svc', password: 'pw', data_format: 'JSON' };
const errorOf = (r: any) => r.error as { code: number; message: string };

describe('transport', () => {
  it(
    'answers a call with jsonrpc 2.0, the id, and ' + 'application/json-rpc; application/json is accepted too',
    async () => {
      const r = await raw(JSON.stringify({ jsonrpc: '2.0', method: 'apps.get_list', params: [], id: 'a1' }));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json-rpc; charset=utf-8');
      expect(r.json).toEqual({ jsonrpc: '2.0', id: 'a1', result: [] });
      const j = await e.req('/json-rpc/v1.1', { body: { jsonrpc: '2.0', method: 'apps.get_list', id: 7 } });
      expect(j.json).toEqual({ jsonrpc: '2.0', id: 7, result: [] });
    },
  );

  it.each([
    ['not JSON', '{"jsonrpc": "2.0",', -32700, /parse error: the body is not JSON/],
    [
      'a batch',
      '[{"jsonrpc":"2.0","method":"apps.get_list","id":1}]',
      -32600,
      /batches are not supported: send one JSON-RPC call per HTTP request/,
    ],
    ['a number', '42', -32600, /must be a JSON-RPC 2.0 request object/],
    ['no jsonrpc', '{"method":"apps.get_list","id":1}', -32600, /jsonrpc must be "2.0"/],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","method":"apps.get_list","id":1}', -32600, /jsonrpc must be "2.0"/],
    ['a method number', '{"jsonrpc":"2.0","method":3,"id":1}', -32600, /method must be a string/],
    [
      'an object id',
      '{"jsonrpc":"2.0","method":"apps.get_list","id":{}}',
      -32600,
      /id must be a string, a number or null/,
    ],
    [
      'named params',
      '{"jsonrpc":"2.0","method":"sms.get","params":{"hash":"ABCD1234"},"id":1}',
      -32602,
      /params must be a positional array \(named params are not supported\)/,
    ],
    [
      'an unknown method',
      '{"jsonrpc":"2.0","method":"sms.delete","params":[],"id":1}',
      -32601,
      /method not found: sms.delete; this emulator has apps.create, apps.update, apps.get, apps.get_list, calls.realtime, sms.send, sms.get, sms.get_list/,
    ],
  ])('HTTP 200 with a JSON-RPC error for %s', async (_n, body, code, re) => {
    const r = await raw(body);
    expect(r.status).toBe(200);
    expect(r.json.jsonrpc).toBe('2.0');
    expect(errorOf(r.json).code).toBe(code);
    expect(errorOf(r.json).message).toMatch(re);
  });

  it('code 22 without or with wrong credentials', async () => {
    for (const authorization of ['', 'Basic ' + Buffer.from('acme:wrong').toString('base64')]) {
      const r = await raw('{"jsonrpc":"2.0","method":"apps.get_list","params":[],"id":5}', { authorization });
      expect(r.json).toEqual({
        jsonrpc: '2.0',
        id: 5,
        error: { code: 22, message: expect.stringMatching(/authentication failed/) },
      });
    }
  });

  it('405 for GET, 415 for another Content-Type', async () => {
    const g = await e.req(RPC);
    expect(g.status).toBe(405);
    expect(g.headers.get('allow')).toBe('POST');
    expect(errorOf(g.json).message).toMatch(/POSTed, not sent with GET/);
    const t = await raw('{}', { 'content-type': 'text/plain' });
    expect(t.status).toBe(415);
    expect(t.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message:
          'Content-Type must be application/json-rpc; charset=utf-8 (or application/json, UTF-8), got "text/plain"',
      },
    });
  });

  it.each([
    ['no Content-Type', null],
    ['an empty Content-Type', ''],
    ['a Content-Type that is not a media type', 'a b'],
    ['a lone semicolon', ';'],
    ['a bare word', 'json'],
    ['a list of types', 'application/json, text/plain'],
    ['another charset', 'application/json-rpc; charset=utf-16'],
    ['a charset without value', 'application/json; charset'],
    ['form data', 'application/x-www-form-urlencoded'],
  ])(
    '415 with a JSON-RPC error (code -32600, id null) for %s, never an internal error; nothing runs',
    async (_n, type) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        method: 'sms.send',
        params: ['Acme', '+33612345678', 'hi', null],
        id: 9,
      });
      const head =
        `POST ${RPC} HTTP/1.1\r\nHost: ` +
        `x\r\nAuthorization: ${AUTH}${type === null ? '' : `\r\nContent-Type: ${type}`}`;
      const r = await rawHttp(e.base, head, body);
      expect(r.status).toBe(415);
      expect(r.headers['content-type']).toBe('application/json-rpc; charset=utf-8');
      const got = type === null || type === '' ? 'none' : JSON.stringify(type);
      expect(JSON.parse(r.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Content-Type must be application/json-rpc; charset=utf-8 (or application/json, UTF-8), got ${got}`,
        },
      });
      expect(e.emu.ctx.store.sms.size).toBe(0);
    },
  );

  it.each([
    'application/json-rpc; charset=utf-8',
    'application/json-rpc',
    'Application/JSON; charset="UTF-8"',
    'application/json;',
  ])('accepts Content-Type %s', async (type) => {
    const r = await rawHttp(
      e.base,
      `POST ${RPC} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: ${type}`,
      '{"jsonrpc":"2.0","method":"apps.get_list","params":[],"id":3}',
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', id: 3, result: [] });
  });

  it('413 with a JSON-RPC error for a body over the limit', async () => {
    const r = await raw(
      JSON.stringify({ jsonrpc: '2.0', method: 'apps.get_list', params: ['x'.repeat(3 * 1024 * 1024)], id: 1 }),
    );
    expect(r.status).toBe(413);
    expect(r.headers.get('content-type')).toBe('application/json-rpc; charset=utf-8');
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'the request is too large: at most 2097152 bytes' },
    });
  });

  it('a notification (no id) runs and gets no answer', async () => {
    const r = await raw(
      JSON.stringify({ jsonrpc: '2.0', method: 'sms.send', params: ['Acme', '+33612345678', 'hi', null] }),
    );
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(e.emu.ctx.store.sms.size).toBe(1);
  });
});

describe('apps', () => {
  it('apps.create a REALTIME10 app, apps.get it, apps.get_list', async () => {
    const r = await e.rpc('apps.create', ['REALTIME10', 'front desk', APP_PARAMS]);
    const app = r.result;
    expect(app).toEqual({
      hash: expect.stringMatching(/^[A-Z0-9]{8}$/),
      name: 'front desk',
      package: 'REALTIME10',
      p: APP_PARAMS,
      date_creation: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      date_update: app.date_creation,
    });
    expect((await e.rpc('apps.get', [app.hash])).result).toEqual(app);
    expect((await e.rpc('apps.get_list', [])).result).toEqual([app]);
    expect((await e.rpc('apps.get_list', [true])).result).toEqual([app]);
    const minimal = (await e.rpc('apps.create', ['REALTIME10', 'no auth', { url: 'https://ivr.example.com/rt' }]))
      .result;
    expect(minimal.p).toEqual({ url: 'https://ivr.example.com/rt', login: '', password: '', data_format: 'JSON' });
  });

  it.each([
    ['apps.create', ['REALTIME10', 'x'], -32602, /apps.create takes 3 params \[type, name, params\], got 2/],
    [
      'apps.create',
      ['VOICEMAIL', 'x', APP_PARAMS],
      -32602,
      /"VOICEMAIL" is not emulated; the only application type is REALTIME10/,
    ],
    ['apps.create', [10, 'x', APP_PARAMS], -32602, /params\[0\] \(type\) must be a string/],
    ['apps.create', ['REALTIME10', '', APP_PARAMS], -32602, /params\[1\] \(name\) must be a non-empty string/],
    ['apps.create', ['REALTIME10', 'x', []], -32602, /params\[2\] \(params\) must be an object/],
    [
      'apps.create',
      ['REALTIME10', 'x', { ...APP_PARAMS, uri: 'x' }],
      -32602,
      /params\[2\].uri is not a REALTIME10 parameter/,
    ],
    [
      'apps.create',
      ['REALTIME10', 'x', { ...APP_PARAMS, url: 'ivr.example.com' }],
      -32602,
      /params\[2\].url must be the http:\/\/ or https:\/\/ URL/,
    ],
    ['apps.create', ['REALTIME10', 'x', { ...APP_PARAMS, login: 5 }], -32602, /params\[2\].login must be a string/],
    ['apps.create', ['REALTIME10', 'x', { ...APP_PARAMS, data_format: 'XML' }], -32602, /data_format must be "JSON"/],
    ['apps.get', ['ABCD1234'], 20, /no application with hash ABCD1234/],
    ['apps.get', ['abc'], -32602, /params\[0\] \(app\) must be an application hash/],
    ['apps.get_list', [1], -32602, /params\[0\] \(full\) must be true or false/],
    ['apps.update', ['ABCD1234', 'x', APP_PARAMS], 20, /no application with hash ABCD1234/],
    ['apps.update', ['ABCD1234'], -32602, /apps.update takes 3 params \[hash, name, params\], got 1/],
  ])('%s %j: error %i', async (method, params, code, re) => {
    const r = await e.rpc(method, params);
    expect(errorOf(r).code).toBe(code);
    expect(errorOf(r).message).toMatch(re);
  });
});

describe('calls.realtime', () => {
  it('places an outbound call to the app URL with its credentials; the id comes back as request_hash', async () => {
    const server = await fakeServer(() => ({ body: cmd('hangup', 1) }));
    try {
      const app = (
        await e.rpc('apps.create', ['REALTIME10', 'reminder', { url: server.url, login: 'svc', password: 'pw' }])
      ).result;
      const r = await e.rpc('calls.realtime', [
        app.hash,
        { number: '+447700900456', timeout: 25 },
        { cdr_field: 'rem42', cli: '+442079460321' },
      ]);
      const id = r.result as string;
      expect(id).toMatch(/^[A-Z0-9]{8}$/);
      await Promise.allSettled([...e.emu.ctx.background]);
      const t = (await e.req(`/emulator/calls/${id}`)).json;
      expect(t).toMatchObject({
        id,
        direction: 'outbound',
        request_hash: id,
        to: '+447700900456',
        from: '+442079460321',
        app: app.hash,
        status: 'ended',
        ended_by: 'flow',
        caller: 'default caller',
      });
      expect(server.seen).toHaveLength(2);
      const first = server.seen[0]!;
      expect(first.headers.authorization).toBe('Basic ' + Buffer.from('svc:pw').toString('base64'));
      expect(first.json).toMatchObject({
        app: app.hash,
        request_hash: id,
        cli_number: '+442079460321',
        cli_name: '',
        number: '+447700900456',
        cdr_field: 'rem42',
        call_status: 'UP',
        command: '',
        command_id: 0,
      });
      expect(server.seen[1]!.json).toMatchObject({
        request_hash: id,
        call_status: 'HANGUP',
        command: 'hangup',
        command_id: 1,
      });
    } finally {
      await server.close();
    }
  });

  it('a number with a registered caller script that does not answer: one NOANSWER request', async () => {
    const server = await fakeServer(() => ({ body: cmd('hangup', 1) }));
    try {
      const app = (await e.rpc('apps.create', ['REALTIME10', 'r', { url: server.url }])).result;
      const put = await e.req('/emulator/callers/+447700900456', {
        method: 'PUT',
        body: { caller_text: 'call:\n  answer: NOANSWER\n', caller_file: 'noanswer.yaml' },
      });
      expect(put.json).toEqual({ number: '+447700900456', caller: 'noanswer.yaml' });
      const id = (await e.rpc('calls.realtime', [app.hash, { number: '+447700900456', timeout: 40 }, null])).result;
      await Promise.allSettled([...e.emu.ctx.background]);
      const t = (await e.req(`/emulator/calls/${id}`)).json;
      expect(t).toMatchObject({
        ended_by: 'not_answered',
        end_reason: '+447700900456 did not answer',
        duration_ms: 40000,
        commands: [],
        from: '',
      });
      expect(
        server.seen.map((s) => [s.json.call_status, s.json.command, s.json.command_id, s.headers.authorization]),
      ).toEqual([['NOANSWER', '', 0, undefined]]);
    } finally {
      await server.close();
    }
  });

  it.each([
    [['ABCD1234', { number: '+33612345678', timeout: 30 }], 20, /no application with hash ABCD1234/],
    [[null, { number: '+33612345678' }], -32602, /params\[0\] \(app\) must be an application hash/],
    [['@APP', '+33612345678'], -32602, /params\[1\] \(target\) must be an object \{number, timeout\}/],
    [['@APP', { number: '+33612345678', timeout: 30, ring: 3 }], -32602, /params\[1\].ring is not a target field/],
    [['@APP', { number: '0612345678', timeout: 30 }], -32602, /params\[1\].number "0612345678": an E.164 number/],
    [['@APP', { number: 33612345678, timeout: 30 }], -32602, /params\[1\].number must be an E.164 string/],
    [
      ['@APP', { number: '+33612345678', timeout: 4 }],
      -32602,
      /params\[1\].timeout must be whole seconds from 5 to 300, got 4/,
    ],
    [
      ['@APP', { number: '+33612345678', timeout: 30 }, { cdr: 'x' }],
      -32602,
      /params\[2\].cdr is not an option; the options are cdr_field and cli/,
    ],
    [
      ['@APP', { number: '+33612345678', timeout: 30 }, { cdr_field: 'not alnum!' }],
      -32602,
      /params\[2\].cdr_field "not alnum!": a cdr_field is at most 32 letters and digits/,
    ],
    [
      ['@APP', { number: '+33612345678', timeout: 30 }, { cli: 'HIDDEN' }],
      -32602,
      /params\[2\].cli "HIDDEN": a caller id is an E.164 number or BLOCKED/,
    ],
    [['@APP', { number: '+33612345678', timeout: 30 }, []], -32602, /params\[2\] \(options\) must be an object/],
    [['@APP'], -32602, /calls.realtime takes 2 to 3 params \[app, target, options\], got 1/],
  ])('%j: error %i', async (params, code, re) => {
    const app = (await e.rpc('apps.create', ['REALTIME10', 'x', APP_PARAMS])).result;
    const r = await e.rpc(
      'calls.realtime',
      (params as unknown[]).map((p) => (p === '@APP' ? app.hash : p)),
    );
    expect(errorOf(r).code).toBe(code);
    expect(errorOf(r).message).toMatch(re);
    expect(e.emu.ctx.store.calls.size).toBe(0);
  });
});

describe('sms', () => {
  it('sms.send, sms.get (encoding and parts), sms.get_list', async () => {
    const hash = (await e.rpc('sms.send', ['Acme', '+33612345678', 'ê'.repeat(71), { force_encoding: 'UNICODE' }]))
      .result;
    expect(hash).toMatch(/^[A-Z0-9]{8}$/);
    const sms = (await e.rpc('sms.get', [hash])).result;
    expect(sms).toMatchObject({ hash, type: 'OUT', encoding: 'UNICODE', parts: 2, from: 'Acme' });
    const h2 = (await e.rpc('sms.send', ['', '+33612345678', 'x'])).result;
    const day = new Date().toISOString().slice(0, 10);
    const list = (await e.rpc('sms.get_list', ['OUT', `${day} 00:00:00`, `${day} 23:59:59`])).result;
    expect(list.map((s: any) => s.hash).sort()).toEqual([hash, h2].sort());
  });

  it.each([
    ['sms.send', ['Acme', '+33612345678'], -32602, /sms.send takes 3 to 4 params \[from, to, body, options\], got 2/],
    ['sms.send', ['Acme!', '+33612345678', 'x'], -32602, /invalid params: from "Acme!" is not a valid sender/],
    [
      'sms.send',
      ['Acme', '+33612345678', 'x', { force_encoding: 'ASCII' }],
      -32602,
      /options.force_encoding must be "GSM" or "UNICODE"/,
    ],
    ['sms.send', [null, '+33612345678', 'x'], -32602, /from cannot be null/],
    ['sms.get', ['ABCD1234'], 20, /no SMS with hash ABCD1234/],
    ['sms.get', [1234], -32602, /params\[0\] \(hash\): hash must be a string, got number/],
    ['sms.get', [], -32602, /sms.get takes 1 params \[hash\], got 0/],
    ['sms.get_list', ['OUT', '2026-01-01', '2026-01-02 00:00:00'], -32602, /from "2026-01-01" is not a datetime/],
    ['sms.get_list', ['ALL', '2026-01-01 00:00:00', '2026-01-02 00:00:00'], -32602, /type must be IN or OUT/],
  ])('%s %j: error %i', async (method, params, code, re) => {
    const r = await e.rpc(method, params);
    expect(errorOf(r).code).toBe(code);
    expect(errorOf(r).message).toMatch(re);
  });
});
