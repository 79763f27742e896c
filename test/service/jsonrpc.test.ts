/**
 * The JSON-RPC client (src/service/jsonrpc.ts) against the emulator over HTTP (a black box),
 * and against fake services that misbehave: what goes on the wire (POST, the JSON-RPC type,
 * positional params, Basic auth, never Expect), results, the service's errors with their
 * codes, and failures of our own (refused, timeout, not JSON, HTTP errors, arguments).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient, serviceUrl, DEFAULT_API_URL } from '../../src/service/jsonrpc.js';
import { ServiceError } from '../../src/service/errors.js';
import { fakeService, freePort, silentServer, startEmulator, type Emu } from './helpers.js';

let emu: Emu;
let client: ServiceClient;

beforeAll(async () => {
  emu = await startEmulator();
  client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
});
afterAll(async () => {
  await emu.close();
});

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected a ServiceError');
}

describe('serviceUrl', () => {
  it('appends the JSON-RPC path to a base URL, keeps a path given, refuses what is not an http(s) URL', () => {
    expect(serviceUrl('http://127.0.0.1:4010')).toBe('http://127.0.0.1:4010/json-rpc/v1.1/');
    expect(serviceUrl('http://127.0.0.1:4010/')).toBe('http://127.0.0.1:4010/json-rpc/v1.1/');
    expect(serviceUrl(DEFAULT_API_URL)).toBe('https://api.callr.com/json-rpc/v1.1/');
    expect(serviceUrl('https://proxy.example/callr/rpc')).toBe('https://proxy.example/callr/rpc');
    expect(serviceUrl('ftp://x')).toEqual({ problem: '"ftp://x" is not an http:// or https:// URL' });
    expect(serviceUrl('api.callr.com')).toMatchObject({ problem: expect.stringContaining('is not a URL') });
    expect(serviceUrl('http://u:p@x/')).toMatchObject({ problem: expect.stringContaining('holds credentials') });
  });
});

describe('ServiceClient against the emulator', () => {
  it('apps.create, apps.get, apps.update, apps.get_list: the app objects as the API returns them', async () => {
    const app = await client.apps.create('front desk', {
      url: 'http://127.0.0.1:3000/rt/desk',
      login: 'cs',
      password: 'pw:with:colons',
    });
    expect(app).toMatchObject({
      name: 'front desk',
      package: 'REALTIME10',
      p: { url: 'http://127.0.0.1:3000/rt/desk', login: 'cs', password: 'pw:with:colons', data_format: 'JSON' },
    });
    expect(app.hash).toMatch(/^[A-Z0-9]{8}$/);
    expect(await client.apps.get(app.hash)).toEqual(app);
    const updated = await client.apps.update(app.hash, 'front desk 2', { url: 'http://127.0.0.1:3001/rt/desk' });
    expect(updated).toMatchObject({
      hash: app.hash,
      name: 'front desk 2',
      p: { url: 'http://127.0.0.1:3001/rt/desk', login: '', password: '', data_format: 'JSON' },
    });
    const list = await client.apps.list();
    expect(list.map((a) => a.hash)).toContain(app.hash);
    expect(list.find((a) => a.hash === app.hash)).toEqual(updated);
  });

  it('calls.realtime answers the call id; sms.send, sms.get, sms.get_list', async () => {
    const app = await client.apps.create('sink', { url: 'http://127.0.0.1:1/rt' });
    const id = await client.calls.realtime(
      app.hash,
      { number: '+33612345678', timeout: 30 },
      { cdr_field: 'appt42', cli: 'BLOCKED' },
    );
    expect(id).toMatch(/^[A-Z0-9]{8}$/);
    const hash = await client.sms.send('SMS', '+33612345678', 'Hello from the client', null);
    const sms = await client.sms.get(hash);
    expect(sms).toMatchObject({ hash, to: '+33612345678', text: 'Hello from the client', type: 'OUT' });
    const now = Date.now();
    const list = await client.sms.list('OUT', new Date(now - 3_600_000), new Date(now + 3_600_000));
    expect(list.map((s) => s.hash)).toContain(hash);
  });

  it("the service's errors keep their codes: 20 not found, -32602 invalid params; fromService is true", async () => {
    const notFound = await failure(client.apps.get('ZZZZZZZZ'));
    expect(notFound).toMatchObject({ code: 20, method: 'apps.get', fromService: true });
    expect(notFound.message).toBe('apps.get: no application with hash ZZZZZZZZ (code 20)');
    const badNumber = await failure(client.calls.realtime('ZZZZZZZZ', { number: '+33612345678', timeout: 30 }));
    expect(badNumber.code).toBe(20);
    const invalid = await failure(client.call('apps.create', ['VOICEMAIL', 'x', {}]));
    expect(invalid.code).toBe(-32602);
    const unknown = await failure(client.call('calls.hangup', []));
    expect(unknown.code).toBe(-32601);
  });

  it('a wrong account is code 22, said as an authentication failure', async () => {
    const bad = new ServiceClient({ url: emu.base, login: 'emulator', password: 'wrong' });
    const e = await failure(bad.apps.list());
    expect(e.code).toBe(22);
    expect(e.isAuth).toBe(true);
    expect(e.message).toMatch(
      /^apps\.get_list: authentication failed: check the account \(login and password\) \(code 22: /,
    );
  });

  it('an account whose password holds colons authenticates (the login ends at the first colon)', async () => {
    const other = await startEmulator({ login: 'acme', password: 'a:b::c' });
    try {
      const c = new ServiceClient({ url: other.base, login: 'acme', password: 'a:b::c' });
      expect(await c.apps.list()).toEqual([]);
      expect(() => new ServiceClient({ url: other.base, login: 'ac:me', password: 'x' })).toThrow(/without ":"/);
    } finally {
      await other.close();
    }
  });

  it('arguments are checked before anything is sent (SERVICE_BAD_ARGS)', async () => {
    const cases: [Promise<unknown>, RegExp][] = [
      [client.calls.realtime('A1B2C3D4', { number: '0612345678', timeout: 30 }), /number "0612345678"/],
      [
        client.calls.realtime('A1B2C3D4', { number: '+33612345678', timeout: 3 }),
        /timeout: whole seconds from 5 to 300/,
      ],
      [
        client.calls.realtime('A1B2C3D4', { number: '+33612345678', timeout: 30 }, { cdr_field: 'no spaces allowed' }),
        /cdr_field/,
      ],
      [client.calls.realtime('A1B2C3D4', { number: '+33612345678', timeout: 30 }, { cli: '12' }), /cli "12"/],
      [client.calls.realtime('../etc', { number: '+33612345678', timeout: 30 }), /app: an application hash/],
      [client.apps.create('x', { url: 'javascript:alert(1)' }), /url: the http/],
      [client.apps.create('x', { url: 'http://h/rt', login: 'a' }), /login and password go together/],
      [client.apps.create('', { url: 'http://h/rt' }), /name: a non-empty name/],
      [client.sms.send('SMS', 'nope', 'hi'), /to: /],
    ];
    for (const [p, msg] of cases) {
      const e = await failure(p);
      expect(e.code).toBe('SERVICE_BAD_ARGS');
      expect(e.message).toMatch(msg);
    }
  });
});

describe('ServiceClient on the wire and against services that misbehave', () => {
  it('POSTs JSON-RPC 2.0 with positional params, Basic auth, the JSON-RPC type, and no Expect header', async () => {
    const fake = await fakeService((_req, body) => ({
      body: JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: 'CALL0001' }),
    }));
    try {
      const c = new ServiceClient({ url: fake.url, login: 'acme', password: 'p:ss' });
      expect(await c.calls.realtime('A1B2C3D4', { number: '+33612345678', timeout: 30 }, { cdr_field: 'x1' })).toBe(
        'CALL0001',
      );
      const r = fake.requests[0]!;
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/json-rpc/v1.1/');
      expect(r.headers['content-type']).toBe('application/json-rpc; charset=utf-8');
      expect(r.headers.authorization).toBe('Basic ' + Buffer.from('acme:p:ss').toString('base64'));
      expect(r.headers.expect).toBeUndefined();
      expect(JSON.parse(r.body)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        method: 'calls.realtime',
        params: ['A1B2C3D4', { number: '+33612345678', timeout: 30 }, { cdr_field: 'x1' }],
      });
    } finally {
      await fake.close();
    }
  });

  it('a service that never answers: SERVICE_TIMEOUT after the timeout, not a hang', async () => {
    const silent = await silentServer();
    try {
      const c = new ServiceClient({ url: silent.url, login: 'a', password: 'b', timeoutMs: 300 });
      const t0 = Date.now();
      const e = await failure(c.apps.list());
      expect(e.code).toBe('SERVICE_TIMEOUT');
      expect(e.message).toBe(`apps.get_list: no answer from ${silent.url}/json-rpc/v1.1/ within 300 ms`);
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      await silent.close();
    }
  });

  it('nothing listening: SERVICE_UNREACHABLE, connection refused', async () => {
    const port = await freePort();
    const c = new ServiceClient({ url: `http://127.0.0.1:${port}`, login: 'a', password: 'b' });
    const e = await failure(c.apps.list());
    expect(e.code).toBe('SERVICE_UNREACHABLE');
    expect(e.message).toBe(
      `apps.get_list: cannot reach http://127.0.0.1:${port}/json-rpc/v1.1/: connection refused (ECONNREFUSED)`,
    );
  });

  it(
    'an HTML 502 of a proxy is SERVICE_HTTP; a 200 that is not JSON-RPC is SERVICE_BAD_REPLY; an answer of ' +
      'another id too',
    async () => {
      let answer = { status: 502, type: 'text/html', body: '<html>Bad Gateway</html>' };
      const fake = await fakeService(() => answer);
      try {
        const c = new ServiceClient({ url: fake.url, login: 'a', password: 'b' });
        expect(await failure(c.apps.list())).toMatchObject({ code: 'SERVICE_HTTP', details: { status: 502 } });
        answer = { status: 200, type: 'text/html', body: '<html>welcome</html>' };
        expect((await failure(c.apps.list())).code).toBe('SERVICE_BAD_REPLY');
        answer = { status: 200, type: 'application/json', body: '{"hello":"world"}' };
        expect((await failure(c.apps.list())).message).toBe(
          'apps.get_list: the answer is not a JSON-RPC 2.0 response (no result, no error)',
        );
        answer = { status: 200, type: 'application/json', body: '{"jsonrpc":"2.0","id":999,"result":[]}' };
        expect((await failure(c.apps.list())).message).toMatch(/the answer's id 999 is not the request's/);
        answer = { status: 200, type: 'application/json', body: '{"jsonrpc":"2.0","id":5,"result":"not a list"}' };
        expect((await failure(c.apps.list())).code).toBe('SERVICE_BAD_REPLY');
        // a JSON-RPC error sent with an HTTP error status is still the service's error
        answer = {
          status: 401,
          type: 'application/json',
          body: '{"jsonrpc":"2.0","id":null,"error":{"code":22,"message":"Authentication failed"}}',
        };
        expect((await failure(c.apps.list())).code).toBe(22);
      } finally {
        await fake.close();
      }
    },
  );

  it('a reply over the size cap is refused, not buffered without end', async () => {
    const big = 'x'.repeat(9 * 1024 * 1024);
    const fake = await fakeService(() => ({ body: big }));
    try {
      const c = new ServiceClient({ url: fake.url, login: 'a', password: 'b' });
      const e = await failure(c.apps.list());
      expect(e.code).toBe('SERVICE_BAD_REPLY');
      expect(e.message).toMatch(/larger than 8388608 bytes/);
    } finally {
      await fake.close();
    }
  });
});
