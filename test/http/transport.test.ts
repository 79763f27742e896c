/**
 * Slow and greedy clients, over real sockets: a request that is never finished is answered
 * 408 and closed after its (test-shortened) timeout; an idle keep-alive connection is closed;
 * connections over the cap are closed as they are accepted while the open ones are served.
 */
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { createServer, type ServerOptions } from '../../src/http/server.js';
import { transportOptions } from '../../src/http/transport.js';
import { callscript, guardServer, serverOptions } from '../../src/index.js';
import { openSocket, rawHttp, within } from '../helpers/socket.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listen(opts: Partial<ServerOptions>): Promise<number> {
  app = (await createServer({ flowsDir: FLOWS, logLevel: false, ...opts })).app;
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

const TIMEOUT = {
  code: 'REQUEST_TIMEOUT',
  message: 'the request was not received in time (headers within 300 ms, the whole request within 600 ms)',
};
const body = rtBody();

describe('a request that is never finished', () => {
  it.each([
    ['nothing sent', '', 300],
    ['the headers cut short', 'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica', 300],
    [
      'the body cut short',
      `POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
      600,
    ],
  ])('%s: 408 REQUEST_TIMEOUT, then the connection is closed', async (_what, bytes, timeout) => {
    const port = await listen({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const a = await rawHttp(port, bytes, { waitMs: 10_000 });
    expect(a.closed).toBe(true);
    expect(a.ms).toBeGreaterThanOrEqual(timeout * 0.9);
    expect(a.status).toBe(408);
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(a.body)).toEqual({ error: TIMEOUT });
    // and the server goes on serving
    const ok = await rawHttp(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
  });

  it('keeps no call state from the cut request', async () => {
    const port = await listen({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    await rawHttp(
      port,
      `POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, -1)}`,
      { waitMs: 10_000 },
    );
    const health = await app!.inject({ method: 'GET', url: '/health' });
    expect(health.json().calls).toBe(0);
  });

  it('with the defaults, the headers have 10 s and the whole request 10 s (set on the Node server)', async () => {
    await listen({});
    expect([
      app!.server.headersTimeout,
      app!.server.requestTimeout,
      app!.server.keepAliveTimeout,
      app!.server.timeout,
      app!.server.maxConnections,
    ]).toEqual([10_000, 10_000, 5_000, 30_000, 900]);
  });
});

describe('an idle keep-alive connection', () => {
  it('is closed after keep_alive_timeout_ms (announced in Keep-Alive; Node adds 1 s to it)', async () => {
    const port = await listen({ keepAliveTimeoutMs: 2000 });
    const a = await rawHttp(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { waitMs: 15_000 });
    expect(a.status).toBe(200);
    expect(a.headers['keep-alive']).toBe('timeout=2');
    expect(a.closed).toBe(true);
    expect(a.ms).toBeGreaterThanOrEqual(1800);
  });
});

describe('the connection cap', () => {
  it('closes connections over max_connections as they come, serves the open ones, and logs it', async () => {
    const lines: Record<string, unknown>[] = [];
    const t = { maxConnections: 3, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };
    // the plugin in an app of one's own, with the server pieces it documents
    const a = Fastify({
      logger: { level: 'warn', stream: { write: (s: string) => lines.push(JSON.parse(s)) } },
      ...serverOptions(t),
    });
    guardServer(a, t);
    await a.register(callscript, { flowsDir: FLOWS });
    app = a;
    await a.listen({ port: 0, host: '127.0.0.1' });
    const port = (a.server.address() as AddressInfo).port;
    const open = [await openSocket(port), await openSocket(port), await openSocket(port)];
    await until(async () => (await connections(a)) === 3);
    const over = await openSocket(port);
    expect(await within(over.closed, 5000)).toBe(true);
    expect(over.data()).toBe('');
    expect(await connections(a)).toBe(3);
    // an open connection is still served
    open[0]!.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await until(async () => /"status":"degraded"/.test(open[0]!.data()));
    expect(open[0]!.data()).toMatch(/^HTTP\/1\.1 200 OK/);
    // a slot freed is taken by the next connection
    open[1]!.socket.destroy();
    await until(async () => (await connections(a)) === 2);
    const next = await rawHttp(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(next.status).toBe(200);
    expect(lines.filter((l) => l.code === 'CONNECTION_LIMIT')).toEqual([
      expect.objectContaining({
        level: 40,
        maxConnections: 3,
        msg: 'a connection was refused: 3 are open (server.max_connections)',
      }),
    ]);
    for (const s of open) s.socket.destroy();
  });
});

describe('transport options', () => {
  it.each([
    [
      { headersTimeoutMs: 20_000, requestTimeoutMs: 10_000 },
      'callscript server: headersTimeoutMs (20000) must not be longer than requestTimeoutMs (10000)',
    ],
    [{ maxConnections: 0 }, 'callscript server: maxConnections must be an integer from 1 to 1000000, got 0'],
    [
      { keepAliveTimeoutMs: 1.5 },
      'callscript server: keepAliveTimeoutMs must be an integer from 100 to 600000, got 1.5',
    ],
  ])('are checked: %j', (given, message) => {
    expect(() => transportOptions(given)).toThrow(message);
  });
});

function connections(a: FastifyInstance): Promise<number> {
  return new Promise((resolve, reject) => a.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
