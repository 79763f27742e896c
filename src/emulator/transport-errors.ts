/**
 * Errors Node or Fastify answer before any route runs (a bad % escape in the URL, headers
 * too large, broken framing), in the envelope of the API the request was for: the SMS REST
 * API's `{status:"error",data:{code,message}}`, JSON-RPC's error object, or the control
 * API's `{error:{code,message}}`. The URL is read from the request when Node could parse
 * that much, else from the first line of the raw bytes.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERR } from './errors.js';

function bodyFor(url: string, status: number, message: string): { type: string; body: string } {
  if (url.startsWith('/rest/'))
    return {
      type: 'application/json; charset=utf-8',
      body: JSON.stringify({
        status: 'error',
        data: { code: status === 431 || status === 414 ? ERR.TOO_LARGE : ERR.MALFORMED, message },
      }),
    };
  if (url.startsWith('/json-rpc') && status === 415)
    return {
      type: 'application/json-rpc; charset=utf-8',
      body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message }, id: null }),
    };
  if (url.startsWith('/json-rpc'))
    return {
      type: 'application/json-rpc; charset=utf-8',
      body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message }, id: null }),
    };
  return {
    type: 'application/json; charset=utf-8',
    body: JSON.stringify({ error: { code: status === 431 ? 'TOO_LARGE' : 'BAD_REQUEST', message } }),
  };
}

/** Fastify's frameworkErrors: the request was parsed, its URL is known. */
export function frameworkError(err: Error & { code?: string }, req: FastifyRequest, reply: FastifyReply): void {
  const message =
    err.code === 'FST_ERR_BAD_URL' ? 'the URL has an invalid % escape' : `bad request (${err.code ?? err.message})`;
  const { type, body } = bodyFor(req.url, 400, message);
  void reply.code(400).type(type).send(body);
}

/** Node's clientError: the request could not be parsed; the socket is answered and closed. */
export function clientError(error: Error, socket: Socket): void {
  const err = error as Error & { code?: string; rawPacket?: Buffer };
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const url = /^[A-Z]+ (\S+)/.exec(err.rawPacket?.subarray(0, 2048).toString('latin1') ?? '')?.[1] ?? '';
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'the request line and headers are too large'
      : status === 408
        ? 'the request did not arrive in time'
        : `the request is not valid HTTP/1.1 (${err.code ?? 'unknown'})`;
  const { type, body } = bodyFor(url, status, message);
  const reason =
    status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${type}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * What Node answers with an empty body, and what the APIs must refuse before reading a
 * body: an Expect other than 100-continue (417), an HTTP/1.1 request without Host (400), a
 * body with a Content-Encoding other than identity (415: it would be read as plain text).
 */
export function guardEmulator(app: FastifyInstance): void {
  app.server.on('checkExpectation', (req, res) => {
    const { type, body } = bodyFor(req.url ?? '', 417, 'the only expectation supported is Expect: 100-continue');
    res
      .writeHead(417, { 'content-type': type, 'content-length': Buffer.byteLength(body), connection: 'close' })
      .end(body);
  });
  app.addHook('onRequest', (req, reply, done) => {
    const problem =
      req.headers.host === undefined && req.raw.httpVersion === '1.1'
        ? ([400, 'an HTTP/1.1 request needs a Host header'] as const)
        : req.headers['content-encoding'] !== undefined &&
            req.headers['content-encoding'].trim().toLowerCase() !== 'identity'
          ? ([
              415,
              `Content-Encoding ${JSON.stringify(req.headers['content-encoding'].slice(0, 40))} is not supported: ` +
                'send the body uncompressed',
            ] as const)
          : undefined;
    if (!problem) return done();
    const { type, body } = bodyFor(req.url, problem[0], problem[1]);
    void reply.code(problem[0]).type(type).send(body);
  });
}
