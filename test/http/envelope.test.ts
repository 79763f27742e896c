/**
 * Every error answered, whoever answers it (a route, Fastify's router, Node's HTTP parser),
 * is `{"error":{"code","message"}}` with a catalogue code: sent as raw bytes over a real
 * socket to the real-time routes, health and the admin API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { createServer } from '../../src/http/server.js';
import { codeInfo } from '../../src/errors/catalogue.js';
import { openSocket, parseAnswer, rawHttp, type RawAnswer } from '../helpers/socket.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listen(setup?: (a: FastifyInstance) => void): Promise<number> {
  app = (await createServer({ flowsDir: FLOWS, logLevel: false, admin: { login: 'boss', password: 's3cret' } })).app;
  setup?.(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

function expectEnvelope(a: RawAnswer, status: number, code: string, message?: string): void {
  expect(a.status, a.text.slice(0, 300)).toBe(status);
  expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = JSON.parse(a.body) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error)).toEqual(['code', 'message']);
  expect(body.error.code).toBe(code);
  expect(codeInfo(code).http).toBe(status);
  expect(body.error.message).toEqual(message ?? expect.any(String));
}

const body = rtBody();
const json = (path: string, extra = '', payload = body) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
  `application/json\r\n${extra}Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
const long = 'a'.repeat(101);

describe('errors Node and Fastify would answer in their own format', () => {
  it.each([
    // the real-time routes
    [
      'rt: bad % escape',
      'POST /rt/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n',
      400,
      'BAD_HTTP_REQUEST',
      'the URL has an invalid % escape',
    ],
    [
      'rt: flow name over 100 characters',
      json(`/rt/${long}`),
      414,
      'URI_TOO_LONG',
      'a path segment of the URL is longer than 100 characters',
    ],
    [
      'rt: headers over 16 KiB',
      json('/rt/desk', `X-Big: ${'b'.repeat(17_000)}\r\n`),
      431,
      'HEADERS_TOO_LARGE',
      'the request line and headers are larger than the server accepts (16 KiB)',
    ],
    [
      'rt: URL over 16 KiB',
      `POST /rt/desk?${'q'.repeat(17_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
      undefined,
    ],
    [
      'rt: bad chunked framing',
      'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: ' +
        'chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
      'BAD_HTTP_REQUEST',
      'the request is not valid HTTP/1.1 (HPE_INVALID_CHUNK_SIZE)',
    ],
    [
      'rt: Content-Length and Transfer-Encoding',
      'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'BAD_HTTP_REQUEST',
      'the request is not valid HTTP/1.1 (HPE_INVALID_TRANSFER_ENCODING)',
    ],
    [
      'rt: bad Content-Length',
      'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\r\n\r\n{}',
      400,
      'BAD_HTTP_REQUEST',
      'the request is not valid HTTP/1.1 (HPE_INVALID_CONTENT_LENGTH)',
    ],
    [
      'rt: unknown method',
      'BREW /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
      400,
      'BAD_HTTP_REQUEST',
      'the request is not valid HTTP/1.1 (HPE_INVALID_METHOD)',
    ],
    ['rt: bad HTTP version', 'POST /rt/desk HTTP/7.1\r\nHost: 127.0.0.1\r\n\r\n', 400, 'BAD_HTTP_REQUEST', undefined],
    [
      'rt: no Host',
      'POST /rt/desk HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      400,
      'BAD_HTTP_REQUEST',
      'an HTTP/1.1 request needs a Host header',
    ],
    [
      'rt: Expect other than 100-continue',
      json('/rt/desk', 'Expect: the-unexpected\r\n'),
      417,
      'EXPECTATION_FAILED',
      'the only expectation supported is Expect: 100-continue',
    ],
    [
      'rt: not JSON (Content-Type)',
      'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'send the body as JSON with Content-Type: application/json (got text/plain)',
    ],
    [
      'rt: unparsable Content-Type',
      'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ;;;\r\nContent-Length: 2\r\n\r\n{}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      undefined,
    ],
    [
      'rt: body over the limit',
      json('/rt/desk', '', `{"pad":"${'p'.repeat(70_000)}"}`),
      413,
      'BODY_TOO_LARGE',
      'the body is larger than 65536 bytes',
    ],
    [
      'rt: CONNECT (Node closed it unanswered)',
      'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n',
      405,
      'METHOD_NOT_ALLOWED',
      'CONNECT is not supported: this is an HTTP endpoint, not a proxy',
    ],
    [
      'rt: a transfer coding other than chunked (gzip was ignored)',
      'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, ' +
        'chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      415,
      'UNSUPPORTED_ENCODING',
      'Transfer-Encoding "gzip, chunked" is not supported: send the body chunked or with a Content-Length, ' +
        'uncompressed',
    ],
    // health
    [
      'health: bad % escape',
      'GET /health%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
      400,
      'BAD_HTTP_REQUEST',
      'the URL has an invalid % escape',
    ],
    [
      'health: headers over 16 KiB',
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
      undefined,
    ],
    [
      'health: no Host',
      'GET /health HTTP/1.1\r\n\r\n',
      400,
      'BAD_HTTP_REQUEST',
      'an HTTP/1.1 request needs a Host header',
    ],
    [
      'health: Expect other than 100-continue',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: x\r\n\r\n',
      417,
      'EXPECTATION_FAILED',
      undefined,
    ],
    [
      'health: a method it does not take',
      'POST /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n',
      405,
      'METHOD_NOT_ALLOWED',
      'health only takes GET',
    ],
    // admin
    [
      'admin: bad % escape',
      `GET /admin/flows/%e0%a4%a HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN}\r\n\r\n`,
      400,
      'BAD_HTTP_REQUEST',
      'the URL has an invalid % escape',
    ],
    [
      'admin: name over 100 characters',
      `GET /admin/flows/${long} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN}\r\n\r\n`,
      414,
      'URI_TOO_LONG',
      undefined,
    ],
    [
      'admin: bad chunked framing',
      `POST /admin/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN}\r\nContent-Type: ` +
        `application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}\r\n0\r\n\r\n`,
      400,
      'BAD_HTTP_REQUEST',
      undefined,
    ],
    [
      'admin: no Host',
      `GET /admin/flows HTTP/1.1\r\nAuthorization: ${ADMIN}\r\n\r\n`,
      400,
      'BAD_HTTP_REQUEST',
      'an HTTP/1.1 request needs a Host header',
    ],
    [
      'admin: a method it does not take',
      `DELETE /admin/flows HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN}\r\n\r\n`,
      404,
      'NOT_FOUND',
      'no route DELETE /admin/flows',
    ],
    [
      'admin: not JSON (form)',
      `POST /admin/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN}\r\nContent-Type: ` +
        `application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b`,
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      undefined,
    ],
  ])('%s', async (_what, bytes, status, code, message) => {
    const port = await listen();
    const a = await rawHttp(port, bytes, { firstResponse: true });
    expectEnvelope(a, status, code, message);
  });

  it('a body shorter than its Content-Length, then the end of the stream: 400 BAD_HTTP_REQUEST', async () => {
    const port = await listen();
    const a = await rawHttp(
      port,
      `POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 30)}`,
      { end: true },
    );
    expectEnvelope(a, 400, 'BAD_HTTP_REQUEST');
    expect(a.closed).toBe(true);
  });

  it('framing errors close the connection; routing errors keep it', async () => {
    const port = await listen();
    expect(
      (
        await rawHttp(port, 'POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', {
          waitMs: 3000,
        })
      ).closed,
    ).toBe(true);
    const kept = await rawHttp(port, 'GET /health%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { waitMs: 300 });
    expect(kept.status).toBe(400);
    expect(kept.closed).toBe(false);
  });

  it(
    'a request that arrives while the server shuts down: ' + '503 SHUTTING_DOWN, and the connection is closed',
    async () => {
      const release: { go?: () => void } = {};
      const port = await listen((a) =>
        a.get('/slow', () => new Promise<string>((r) => (release.go = () => r('done')))),
      );
      const s = await openSocket(port);
      s.socket.write('GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await until(() => release.go !== undefined);
      const closing = app!.close();
      app = undefined;
      await new Promise((r) => setTimeout(r, 50)); // preClose has run
      s.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await new Promise((r) => setTimeout(r, 50));
      release.go!();
      await closing;
      await s.closed;
      const second = s.data().slice(s.data().indexOf('HTTP/1.1', 10));
      expectEnvelope(
        parseAnswer(second, true, 0),
        503,
        'SHUTTING_DOWN',
        'the server is shutting down: send the request to another instance',
      );
      expect(second).toMatch(/\r\nconnection: close\r\n/i);
    },
  );
});

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
