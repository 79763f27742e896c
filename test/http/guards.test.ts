/**
 * Cross-site requests and credential guessing: bodies must be JSON, the admin API refuses
 * requests a browser makes for another site, and failed authentications are logged and
 * limited per address (only failures count; the service's right credentials keep working).
 */
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { callscript, createServer, type CallscriptPluginOptions } from '../../src/index.js';
import { isJsonType, sameHost } from '../../src/http/guards.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');
const RT = basic('svc', 'rtpass');
const ADMIN = basic('boss', 's3cret');
const WRONG = basic('svc', 'guess');

let app: FastifyInstance | undefined;
let lines: Record<string, unknown>[] = [];
afterEach(async () => {
  await app?.close();
  app = undefined;
  lines = [];
});

async function start(opts: Partial<CallscriptPluginOptions> = {}): Promise<FastifyInstance> {
  app = Fastify({ logger: { level: 'warn', stream: { write: (s: string) => lines.push(JSON.parse(s)) } } });
  await app.register(callscript, {
    flowsDir: FLOWS,
    auth: { login: 'svc', password: 'rtpass' },
    admin: { login: 'boss', password: 's3cret' },
    allowedHosts: ['admin.example'],
    ...opts,
  });
  await app.ready();
  lines = []; // the fixture flows' diagnostics, logged at load
  return app;
}

let callid = 1000;
const rt = (
  a: FastifyInstance,
  authorization: string,
  remoteAddress = '127.0.0.1',
  headers: Record<string, string> = {},
) =>
  a.inject({
    method: 'POST',
    url: '/rt/desk',
    remoteAddress,
    headers: { authorization, 'content-type': 'application/json', ...headers },
    payload: rtBody({ callid: String(callid++) }),
  });
const canary = (a: FastifyInstance, headers: Record<string, string>, payload = '{"percent":100}') =>
  a.inject({
    method: 'POST',
    url: '/admin/flows/desk/canary',
    headers: { authorization: ADMIN, host: 'admin.example:3000', ...headers },
    payload,
  });
const canaryNow = async (a: FastifyInstance) =>
  (await a.inject({ method: 'GET', url: '/admin/flows/desk', headers: { authorization: ADMIN } })).json().canary;
const errorOf = (r: { json: () => unknown }) => (r.json() as { error: { code: string; message: string } }).error;

describe('bodies must be JSON', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['JSON in another charset', 'application/json; charset=iso-8859-1'],
    ['a JSON-looking type', 'application/jsonx'],
  ])('POST /rt with %s: 415 UNSUPPORTED_MEDIA_TYPE, no call started', async (_what, type) => {
    const a = await start();
    const r = await rt(a, RT, '127.0.0.1', { 'content-type': type });
    expect(r.statusCode).toBe(415);
    expect(errorOf(r)).toEqual({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: `send the body as JSON with Content-Type: application/json (got ${type})`,
    });
    expect((await a.inject({ method: 'GET', url: '/health' })).json().calls).toBe(0);
  });

  it('POST /rt with a body and no Content-Type: 415', async () => {
    const a = await start();
    const r = await a.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { authorization: RT },
      payload: Buffer.from(rtBody()),
    });
    expect(r.statusCode).toBe(415);
    expect(errorOf(r).message).toBe('send the body as JSON with Content-Type: application/json (got none)');
  });

  it(
    'an admin POST with a text/plain or form body (what a ' + 'web page can send anywhere) changes nothing: 415',
    async () => {
      const a = await start();
      for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
        const r = await canary(a, { 'content-type': type });
        expect(r.statusCode).toBe(415);
        expect(errorOf(r).code).toBe('UNSUPPORTED_MEDIA_TYPE');
      }
      // an empty form posted to reload: a Content-Type with no body is refused too
      const reload = await a.inject({
        method: 'POST',
        url: '/admin/reload',
        headers: { authorization: ADMIN, 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' },
      });
      expect(reload.statusCode).toBe(415);
      expect(await canaryNow(a)).toBeNull();
      // JSON (with or without charset) and a bodiless POST are fine
      expect((await canary(a, { 'content-type': 'application/json; charset=utf-8' })).statusCode).toBe(200);
      expect(await canaryNow(a)).toMatchObject({ percent: 100 });
      expect(
        (await a.inject({ method: 'POST', url: '/admin/reload', headers: { authorization: ADMIN } })).statusCode,
      ).toBe(200);
    },
  );

  it('isJsonType', () => {
    for (const t of [
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON;CHARSET=UTF8',
      'application/json ; charset="utf-8"',
      'application/json; foo=bar',
    ])
      expect(isJsonType(t), t).toBe(true);
    for (const t of [
      '',
      'text/json',
      'application/json-patch+json',
      'application/json; charset=utf-16',
      'application/jsonp',
      'text/plain; application/json',
    ])
      expect(isJsonType(t), t).toBe(false);
  });
});

describe('the admin API refuses cross-origin requests', () => {
  it.each([
    [
      { origin: 'https://evil.example' },
      'the admin API refuses requests from another origin (Origin: https://evil.example)',
    ],
    [
      { origin: 'http://admin.example:3001' },
      'the admin API refuses requests from another origin (Origin: http://admin.example:3001)',
    ],
    [{ origin: 'null' }, 'the admin API refuses requests from another origin (Origin: null)'],
    [
      { 'sec-fetch-site': 'cross-site' },
      'the admin API refuses requests sent by a browser for another site (Sec-Fetch-Site: cross-site)',
    ],
    [
      { 'sec-fetch-site': 'same-site' },
      'the admin API refuses requests sent by a browser for another site (Sec-Fetch-Site: same-site)',
    ],
    [
      { 'sec-fetch-site': 'same-origin', origin: 'https://evil.example' },
      'the admin API refuses requests from another origin (Origin: https://evil.example)',
    ],
  ])(
    '%j: 403 CROSS_ORIGIN, with the right credentials and a JSON body, and nothing changes',
    async (headers, message) => {
      const a = await start();
      const r = await canary(a, { 'content-type': 'application/json', ...headers });
      expect(r.statusCode).toBe(403);
      expect(errorOf(r)).toEqual({ code: 'CROSS_ORIGIN', message });
      const get = await a.inject({
        method: 'GET',
        url: '/admin/flows',
        headers: { authorization: ADMIN, host: 'admin.example:3000', ...headers },
      });
      expect(get.statusCode).toBe(403);
      expect(await canaryNow(a)).toBeNull();
    },
  );

  it('takes same-origin browser requests and clients that send neither header', async () => {
    const a = await start();
    const same: Record<string, string>[] = [
      {},
      { origin: 'http://admin.example:3000', 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of same) {
      expect(
        (await canary(a, { 'content-type': 'application/json', ...headers })).statusCode,
        JSON.stringify(headers),
      ).toBe(200);
    }
  });

  it('does not count a refused cross-origin request as a failed authentication', async () => {
    const a = await start({ authFailureLimit: 1 });
    for (let i = 0; i < 3; i++)
      expect(
        (await canary(a, { 'content-type': 'application/json', origin: 'https://evil.example', authorization: WRONG }))
          .statusCode,
      ).toBe(403);
    expect((await canary(a, { 'content-type': 'application/json' })).statusCode).toBe(200);
  });

  it('sameHost', () => {
    expect(sameHost('https://a.example', 'a.example:443')).toBe(true);
    expect(sameHost('http://a.example', 'A.example')).toBe(true);
    expect(sameHost('http://[::1]:3000', '[::1]:3000')).toBe(true);
    expect(sameHost('https://a.example', 'a.example:80')).toBe(false);
    expect(sameHost('ftp://a.example', 'a.example')).toBe(false);
    expect(sameHost('http://a.example', undefined)).toBe(false);
  });
});

describe('failed authentications', () => {
  it(
    'are logged and, past the limit, refused with 429 from that address whatever it sends; other addresses are ' +
      'served',
    async () => {
      const a = await start({ authFailureLimit: 3 });
      for (let i = 0; i < 3; i++) {
        const r = await rt(a, WRONG, '10.0.0.66');
        expect(r.statusCode).toBe(401);
        expect(errorOf(r).code).toBe('AUTH_REQUIRED');
      }
      const limited = await rt(a, WRONG, '10.0.0.66');
      expect(limited.statusCode).toBe(429);
      expect(errorOf(limited)).toEqual({
        code: 'AUTH_RATE_LIMITED',
        message: expect.stringMatching(/^too many failed authentications from this address: retry in (59|60) s$/),
      });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(59);
      // the right password from the guessing address is refused too: the 429s tell nothing
      expect((await rt(a, RT, '10.0.0.66')).statusCode).toBe(429);
      // another address, and the admin API (counted apart), are served
      expect((await rt(a, RT, '10.0.0.1')).statusCode).toBe(200);
      const adminGet = await a.inject({
        method: 'GET',
        url: '/admin/flows',
        remoteAddress: '10.0.0.66',
        headers: { authorization: ADMIN },
      });
      expect(adminGet.statusCode).toBe(200);
      const logged = lines.map((l) => [l.code, l.ip, l.msg]);
      expect(logged).toEqual([
        ['AUTH_REQUIRED', '10.0.0.66', 'failed authentication on /rt'],
        ['AUTH_REQUIRED', '10.0.0.66', 'failed authentication on /rt'],
        ['AUTH_REQUIRED', '10.0.0.66', 'failed authentication on /rt'],
        [
          'AUTH_RATE_LIMITED',
          '10.0.0.66',
          expect.stringMatching(/^failed authentications on \/rt: this address is refused for (59|60) s$/),
        ],
      ]);
    },
  );

  it(
    'never limit the service: its right credentials are served however many requests it sends, even after ' +
      'failures from its address',
    async () => {
      const a = await start({ authFailureLimit: 2 });
      const service = '198.51.100.7';
      for (let i = 0; i < 50; i++) expect((await rt(a, RT, service)).statusCode).toBe(200);
      // failures from the service's address (another tenant of the service, a credential change)
      expect([
        (await rt(a, WRONG, service)).statusCode,
        (await rt(a, WRONG, service)).statusCode,
        (await rt(a, WRONG, service)).statusCode,
      ]).toEqual([401, 401, 429]);
      for (let i = 0; i < 20; i++) expect((await rt(a, RT, service)).statusCode).toBe(200);
    },
  );

  it('on the admin API too, with its own counter', async () => {
    const a = await start({ authFailureLimit: 2 });
    const admin = (authorization: string) =>
      a.inject({ method: 'GET', url: '/admin/flows', remoteAddress: '10.0.0.9', headers: { authorization } });
    expect([
      (await admin(WRONG)).statusCode,
      (await admin(WRONG)).statusCode,
      (await admin(WRONG)).statusCode,
      (await admin(ADMIN)).statusCode,
    ]).toEqual([401, 401, 429, 429]);
    expect(errorOf(await admin(WRONG)).code).toBe('AUTH_RATE_LIMITED');
    expect((await rt(a, RT, '10.0.0.9')).statusCode).toBe(200);
    expect(lines.filter((l) => l.code === 'ADMIN_AUTH_REQUIRED').map((l) => l.msg)).toEqual([
      'failed authentication on the admin API',
      'failed authentication on the admin API',
    ]);
  });

  it(
    "a request without credentials (a browser's first visit to the console) is challenged, not counted as a " +
      'failure, and logged at debug only',
    async () => {
      const a = await start({ authFailureLimit: 2 });
      const visit = (authorization?: string) =>
        a.inject({
          method: 'GET',
          url: '/admin/console',
          remoteAddress: '10.0.0.12',
          ...(authorization ? { headers: { authorization } } : {}),
        });
      for (let i = 0; i < 10; i++) {
        const r = await visit();
        expect(r.statusCode).toBe(401);
        expect(r.headers['www-authenticate']).toBe('Basic realm="callscript-admin", charset="UTF-8"');
      }
      expect(lines.filter((l) => l.code === 'ADMIN_AUTH_REQUIRED')).toEqual([]);
      expect((await visit(ADMIN)).statusCode).toBe(200);
      // wrong credentials still count, and past the limit the address is refused, credentials or none
      expect([
        (await visit(WRONG)).statusCode,
        (await visit(WRONG)).statusCode,
        (await visit(WRONG)).statusCode,
        (await visit()).statusCode,
      ]).toEqual([401, 401, 429, 429]);
    },
  );

  it('are forgotten when the window ends', async () => {
    const a = await start({ authFailureLimit: 1, authFailureWindowMs: 1000 });
    expect([(await rt(a, WRONG, '10.0.0.5')).statusCode, (await rt(a, WRONG, '10.0.0.5')).statusCode]).toEqual([
      401, 429,
    ]);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await rt(a, RT, '10.0.0.5')).statusCode).toBe(200);
  });

  it(
    'behind a proxy listed in trust_proxy, are counted per X-Forwarded-For address; otherwise per connection ' +
      'address',
    async () => {
      for (const [trustProxy, second] of [
        [['127.0.0.1'], 401],
        [undefined, 429],
      ] as const) {
        const s = await createServer({
          flowsDir: FLOWS,
          logLevel: false,
          auth: { login: 'svc', password: 'rtpass' },
          authFailureLimit: 1,
          ...(trustProxy ? { trustProxy: [...trustProxy] } : {}),
        });
        app = s.app;
        const via = (client: string) => rt(s.app, WRONG, '127.0.0.1', { 'x-forwarded-for': client });
        expect(
          [(await via('203.0.113.1')).statusCode, (await via('203.0.113.2')).statusCode],
          String(trustProxy),
        ).toEqual([401, second]);
        await s.app.close();
        app = undefined;
      }
    },
  );

  it('with auth_failure_limit 0, are logged and never limited', async () => {
    const a = await start({ authFailureLimit: 0 });
    for (let i = 0; i < 20; i++) expect((await rt(a, WRONG, '10.0.0.66')).statusCode).toBe(401);
    expect(lines).toHaveLength(20);
  });
});
