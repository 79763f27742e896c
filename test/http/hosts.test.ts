/**
 * Host names (src/http/hosts.ts): a DNS-rebinding page (Host and Origin of its own name)
 * reads neither the admin API and its console, nor /metrics, nor /health; localhost, IP
 * addresses and the names of server.allowed_hosts are answered; /rt, the webhooks and
 * /health/live answer any name; a request with two Host headers is refused on every route
 * (over a real socket: fastify.inject cannot send two).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { createServer, type ServerOptions } from '../../src/http/server.js';
import { hostIsAllowed, hostName } from '../../src/http/hosts.js';
import { rawHttp } from '../helpers/socket.js';
import { rtBody } from '../helpers/rt.js';
import { checkConfig } from '../../src/config/check.js';
import { resolveSettings } from '../../src/cli/settings.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const SECRET = 'test-webhook-secret-0123456789';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(opts: Partial<ServerOptions> = {}): Promise<FastifyInstance> {
  app = (
    await createServer({
      flowsDir: FLOWS,
      logLevel: false,
      admin: { login: 'boss', password: 's3cret' },
      webhooks: { secret: SECRET },
      ...opts,
    })
  ).app;
  await app.ready();
  return app;
}

const get = (a: FastifyInstance, url: string, headers: Record<string, string>) =>
  a.inject({ method: 'GET', url, headers: { authorization: ADMIN, ...headers } });

const refused = (host: string, path: string) => ({
  code: 'HOST_NOT_ALLOWED',
  message:
    `the host "${host}" is not one this server answers to on ${path}: localhost, an IP address, or a name of ` +
    'server.allowed_hosts',
});

describe('DNS rebinding: a page of its own name pointed at this server', () => {
  const rebinding = { host: 'evil.example:3000', origin: 'http://evil.example:3000', 'sec-fetch-site': 'same-origin' };

  it.each(['/admin/flows', '/admin/calls', '/admin/console', '/metrics', '/health'])(
    'GET %s: 403 HOST_NOT_ALLOWED (the right credentials notwithstanding)',
    async (path) => {
      const a = await start();
      const r = await get(a, path, rebinding);
      expect(r.statusCode).toBe(403);
      expect(r.json()).toEqual({ error: refused('evil.example:3000', path) });
    },
  );

  it('a POST to the admin API changes nothing', async () => {
    const a = await start();
    const r = await a.inject({
      method: 'POST',
      url: '/admin/flows/desk/canary',
      headers: { authorization: ADMIN, 'content-type': 'application/json', ...rebinding },
      payload: '{"percent":100}',
    });
    expect([r.statusCode, r.json().error.code]).toEqual([403, 'HOST_NOT_ALLOWED']);
    expect((await get(a, '/admin/flows/desk', {})).json().canary).toBeNull();
  });

  it('/rt, the webhooks and /health/live answer any name (the service calls them by their public name)', async () => {
    const a = await start();
    const rt = await a.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { host: 'ivr.public.example', 'content-type': 'application/json' },
      payload: rtBody(),
    });
    expect(rt.statusCode).toBe(200);
    expect((await get(a, '/health/live', { host: 'evil.example' })).json()).toEqual({ status: 'ok' });
    // the webhook route's own checks answer, not the host's
    const hook = await a.inject({
      method: 'POST',
      url: '/webhooks/callr',
      headers: { host: 'ivr.public.example', 'content-type': 'application/json' },
      payload: '{}',
    });
    expect([hook.statusCode, hook.json().error.code]).toEqual([401, 'WEBHOOK_SIGNATURE']);
  });

  it('X-Forwarded-Host from a proxy of server.trust_proxy is the host checked; from others it is ignored', async () => {
    const a = await start({ trustProxy: ['10.0.0.1'] });
    const viaProxy = await a.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '10.0.0.1',
      headers: { host: '127.0.0.1:3000', 'x-forwarded-host': 'evil.example' },
    });
    expect(viaProxy.json()).toEqual({ error: refused('evil.example', '/metrics') });
    const direct = await a.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '10.0.0.9',
      headers: { host: '127.0.0.1:3000', 'x-forwarded-host': 'evil.example' },
    });
    expect(direct.statusCode).toBe(200);
  });
});

describe('the names answered', () => {
  it('localhost, IP addresses and the names of allowed_hosts (exact, *.domain); their Origin', async () => {
    const a = await start({ allowedHosts: ['ivr.example.com', '*.ops.example'] });
    for (const host of [
      'localhost',
      'LOCALHOST:3000',
      '127.0.0.1:3000',
      '10.20.30.40',
      '[::1]:3000',
      'ivr.example.com',
      'ivr.example.com.:443',
      'a.ops.example',
      'b.c.ops.example:8080',
    ]) {
      const r = await get(a, '/admin/flows', { host });
      expect(r.statusCode, host).toBe(200);
    }
    for (const host of ['ops.example', 'example.com', 'ivr.example.com.evil.example', 'localhost.evil.example']) {
      const r = await get(a, '/admin/flows', { host });
      expect([r.statusCode, r.json().error.code], host).toEqual([403, 'HOST_NOT_ALLOWED']);
    }
    // the console's own requests: same origin, allowed host
    expect(
      (await get(a, '/admin/flows', { host: 'ivr.example.com', origin: 'http://ivr.example.com' })).statusCode,
    ).toBe(200);
    expect((await get(a, '/admin/flows', { host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' })).statusCode).toBe(
      200,
    );
    // an allowed host, and the Origin of another page
    const other = await get(a, '/admin/flows', { host: 'ivr.example.com', origin: 'http://evil.example' });
    expect([other.statusCode, other.json().error.code]).toEqual([403, 'CROSS_ORIGIN']);
  });

  it('hostName and hostIsAllowed', () => {
    expect(['Evil.Example.:80', '[::1]:3000', '1.2.3.4', 'a:b:c', '[zz]:1', 'x:99999999'].map(hostName)).toEqual([
      'evil.example',
      '::1',
      '1.2.3.4',
      undefined,
      undefined,
      undefined,
    ]);
    expect(hostIsAllowed('', [])).toBe(true); // HTTP/1.0 without Host: no browser sends that
    expect(hostIsAllowed('127.0.0.1.nip.io', [])).toBe(false);
    expect(hostIsAllowed('x.example', ['*.x.example'])).toBe(false);
  });

  it('a bad name in allowedHosts fails the registration; in callscript.yaml, a diagnostic at its place', async () => {
    await expect(start({ allowedHosts: ['http://ivr.example.com'] })).rejects.toThrow(
      'callscript plugin: allowedHosts: "http://ivr.example.com" is not a host name (ivr.example.com) or *. and a ' +
        'domain',
    );
    const d = checkConfig('server:\n  allowed_hosts: [ivr.example.com, "*"]\n', 'c.yaml').diagnostics;
    expect(d.map((x) => [x.code, x.line, x.column])).toEqual([['BAD_FORMAT', 2, 36]]);
  });

  it('serve: the names of allowed_hosts, and server.host when it is a name', async () => {
    const { mkdtempSync, writeFileSync, mkdirSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cs-hosts-'));
    mkdirSync(join(dir, 'flows'));
    const file = join(dir, 'callscript.yaml');
    writeFileSync(file, 'server:\n  host: ivr.internal\n  allowed_hosts: [ivr.example.com]\n');
    const r = await resolveSettings({ config: file }, {}, dir);
    expect(r.ok && r.settings.server.allowedHosts).toEqual(['ivr.example.com', 'ivr.internal']);
    writeFileSync(file, 'server:\n  host: 0.0.0.0\n');
    const ip = await resolveSettings({ config: file }, {}, dir);
    expect(ip.ok && ip.settings.server.allowedHosts).toBeUndefined();
  });
});

describe('two Host headers', () => {
  it.each([
    ['POST /rt/desk', `Content-Type: application/json\r\nContent-Length: ${rtBody().length}\r\n\r\n${rtBody()}`],
    ['GET /health/live', '\r\n'],
    ['GET /admin/flows', `Authorization: ${ADMIN}\r\n\r\n`],
    ['GET /nowhere', '\r\n'],
  ])('%s: 400 BAD_HTTP_REQUEST, nothing handled', async (line, rest) => {
    const a = await start();
    await a.listen({ port: 0, host: '127.0.0.1' });
    const port = (a.server.address() as AddressInfo).port;
    const r = await rawHttp(
      port,
      `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n${rest}`,
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({
      error: { code: 'BAD_HTTP_REQUEST', message: 'the request has 2 Host headers: send one' },
    });
    const health = await rawHttp(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(JSON.parse(health.body).calls).toBe(0);
  });
});
