/**
 * The one error format of every HTTP answer: `{"error":{"code","message"}}`, with a code of
 * the catalogue (src/errors/http-codes.ts). Routes answer through `sendError`; what Node or
 * Fastify would otherwise answer in their own format (a broken request line, headers too
 * large, a timed-out request, a bad `%` escape, a parameter too long, a content-type
 * parser's error) is turned into the same envelope here.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { codeInfo } from '../errors/catalogue.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** `extra`: more fields of the error object, after code and message (e.g. the service's `serviceCode`). */
export function errorBody(code: string, message: string, extra?: Record<string, unknown>): string {
  codeInfo(code); // every code answered is in the catalogue
  return JSON.stringify({ error: { code, message, ...extra } });
}

export function sendError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  extra?: Record<string, unknown>,
): FastifyReply {
  return reply
    .code(status)
    .header('content-type', JSON_TYPE)
    .send(errorBody(code, message, extra));
}

/** A whole HTTP/1.1 error response, for the places where only the socket is left. */
export function rawErrorResponse(status: number, code: string, message: string): string {
  const body = errorBody(code, message);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: ${JSON_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Status and code of an error Node's HTTP parser reports on a connection (the `clientError` event). */
export function clientErrorAnswer(
  err: NodeJS.ErrnoException,
  limits: { headersTimeoutMs: number; requestTimeoutMs: number },
): [number, string, string] {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        408,
        'REQUEST_TIMEOUT',
        `the request was not received in time (headers within ${limits.headersTimeoutMs} ms, the whole ` +
          `request within ${limits.requestTimeoutMs} ms)`,
      ];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'HEADERS_TOO_LARGE', 'the request line and headers are larger than the server accepts (16 KiB)'];
    default:
      return [
        400,
        'BAD_HTTP_REQUEST',
        `the request is not valid HTTP/1.1 (${String(err.code ?? 'parse error').slice(0, 40)})`,
      ];
  }
}

/**
 * Fastify's `clientErrorHandler`: answers a request Node could not parse (or did not receive
 * in time) in the envelope, then closes the connection. Nothing is written when a response is
 * already under way on the socket (a pipelined request): that would corrupt it.
 */
export function clientErrorHandler(limits: { headersTimeoutMs: number; requestTimeoutMs: number }) {
  return function (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, message] = clientErrorAnswer(err, limits);
    this.log.debug({ code, err: err.code }, 'client error');
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) socket.end(rawErrorResponse(status, code, message));
    socket.destroySoon();
  };
}

/** Fastify's `frameworkErrors`: a URL with a bad `%` escape, a route parameter over `maxParamLength`. */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendError(reply, 414, 'URI_TOO_LONG', 'a path segment of the URL is longer than 100 characters');
    return;
  }
  sendError(
    reply,
    400,
    'BAD_HTTP_REQUEST',
    err.code === 'FST_ERR_BAD_URL' ? 'the URL has an invalid % escape' : 'the request could not be routed',
  );
}

/** Status and code of an error thrown while handling a request (the plugin's error handler); undefined: a bug. */
export function requestErrorAnswer(
  err: Error & { code?: string; statusCode?: number },
  bodyLimit: number,
): [number, string, string] | undefined {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return [413, 'BODY_TOO_LARGE', `the body is larger than ${bodyLimit} bytes`];
  const status = err.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  if (status === 415)
    return [415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON with Content-Type: application/json'];
  if (err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH')
    return [400, 'BAD_HTTP_REQUEST', 'the body is not as long as its Content-Length says'];
  return [400, 'BAD_HTTP_REQUEST', 'the request could not be read'];
}
