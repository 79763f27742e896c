/**
 * The JSON-RPC 2.0 transport at /json-rpc/v1.1/ as the service runs it: POST, body
 * `application/json-rpc; charset=utf-8` (application/json accepted too), positional
 * params only, one call per request (a batch gets -32600), HTTP Basic auth (code 22).
 * Every JSON-RPC answer is HTTP 200; transport errors (another method, Content-Type,
 * a body too large...) get their HTTP status (405, 415, 413...) with a JSON-RPC error
 * body, code -32600 and id null. A body nested too deep is an invalid request (-32600).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EmulatorContext } from '../context.js';
import { basicAuthOk } from '../auth.js';
import { ERR } from '../errors.js';
import { repliesWhenSaved } from '../saved-replies.js';
import { jsonTooDeep, TOO_DEEP } from '../json-depth.js';
import { RpcError, rpcMethods, type RpcMethod } from './methods.js';

type Id = string | number | null;

export function jsonRpc(ctx: EmulatorContext) {
  const methods = rpcMethods(ctx);
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

    // A call whose change could not be saved: error -32000 for its id; a notification: 503, still no body.
    repliesWhenSaved(app, ctx, (reply, message, payload) => {
      if (typeof payload !== 'string' || payload === '') {
        reply.code(503);
        return null;
      }
      reply.code(200).type('application/json-rpc; charset=utf-8');
      return JSON.stringify(envelope(idOf(payload), { code: -32000, message }));
    });

    app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, req, reply) => {
      // Fastify refuses a Content-Type it cannot parse ("a b", ";") before the handler runs.
      if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415)
        return unsupportedType(reply, req.headers['content-type']);
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413)
        return transportError(reply, 413, `the request is too large: at most ${app.initialConfig.bodyLimit} bytes`);
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
        return transportError(reply, err.statusCode, `bad request: ${err.message}`);
      ctx.log.error({ err }, 'JSON-RPC internal error');
      return answer(reply, null, { code: -32603, message: 'internal error of the emulator' });
    });

    const handler = async (
      req: { method: string; headers: Record<string, string | string[] | undefined>; body: unknown },
      reply: FastifyReply,
    ) => {
      if (req.method !== 'POST') {
        reply.header('allow', 'POST');
        return transportError(reply, 405, `JSON-RPC requests are POSTed, not sent with ${req.method}`);
      }
      if (!jsonRpcType(req.headers['content-type'])) return unsupportedType(reply, req.headers['content-type']);
      const text = String(req.body ?? '');
      if (jsonTooDeep(text))
        return answer(reply, null, { code: -32600, message: `invalid request: the body is ${TOO_DEEP}` });
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch (err) {
        return answer(reply, null, {
          code: -32700,
          message: `parse error: the body is not JSON (${(err as Error).message})`,
        });
      }
      if (Array.isArray(msg))
        return answer(reply, null, {
          code: -32600,
          message: 'batches are not supported: send one JSON-RPC call per HTTP request',
        });
      if (!msg || typeof msg !== 'object')
        return answer(reply, null, {
          code: -32600,
          message: 'invalid request: the body must be a JSON-RPC 2.0 request object',
        });
      const m = msg as Record<string, unknown>;
      const id = validId(m.id) ? (m.id as Id) : null;
      if (!validId(m.id) && 'id' in m)
        return answer(reply, null, { code: -32600, message: 'invalid request: id must be a string, a number or null' });
      if (m.jsonrpc !== '2.0')
        return answer(reply, id, { code: -32600, message: 'invalid request: jsonrpc must be "2.0"' });
      if (typeof m.method !== 'string')
        return answer(reply, id, { code: -32600, message: 'invalid request: method must be a string' });
      if (m.params !== undefined && !Array.isArray(m.params)) {
        return answer(reply, id, {
          code: -32602,
          message: 'invalid params: params must be a positional array (named params are not supported)',
        });
      }
      if (!basicAuthOk(req.headers.authorization as string | undefined, ctx.account)) {
        return answer(reply, id, {
          code: ERR.AUTH,
          message: 'authentication failed: HTTP Basic with the account login and password is required',
        });
      }
      const method: RpcMethod | undefined = Object.prototype.hasOwnProperty.call(methods, m.method)
        ? methods[m.method]
        : undefined;
      if (!method) {
        return answer(reply, id, {
          code: -32601,
          message: `method not found: ${m.method}; this emulator has ${Object.keys(methods).join(', ')}`,
        });
      }
      const params = (m.params as unknown[] | undefined) ?? [];
      let result: unknown;
      try {
        result = await method(params);
      } catch (err) {
        if (err instanceof RpcError) return answer(reply, id, { code: err.code, message: err.message });
        ctx.log.error({ err, method: m.method }, 'JSON-RPC method failed');
        return answer(reply, id, { code: -32603, message: 'internal error of the emulator' });
      }
      // A notification (no id) gets no answer.
      if (!('id' in m)) return reply.code(204).send();
      return answer(reply, id, undefined, result);
    };
    app.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], url: '/', handler });
  };
}

/** The id of an answer we wrote (null when there is none). */
function idOf(payload: string): Id {
  try {
    const id = (JSON.parse(payload) as { id?: unknown }).id;
    return validId(id) ? (id as Id) : null;
  } catch {
    return null;
  }
}

function validId(v: unknown): boolean {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

function envelope(id: Id, error?: { code: number; message: string }, result?: unknown): Record<string, unknown> {
  return error ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', id, result: result ?? null };
}

/** `application/json-rpc` or `application/json`, with no charset or charset=utf-8. */
export function jsonRpcType(header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const m = /^\s*application\/(?:json-rpc|json)\s*(;.*)?$/i.exec(header);
  if (!m) return false;
  for (const param of (m[1] ?? '').split(';').slice(1)) {
    const eq = param.indexOf('=');
    const name = (eq < 0 ? param : param.slice(0, eq)).trim().toLowerCase();
    const value =
      eq < 0
        ? ''
        : param
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1')
            .toLowerCase();
    if (name === 'charset' && value !== 'utf-8') return false;
  }
  return true;
}

function unsupportedType(reply: FastifyReply, header: string | string[] | undefined) {
  const got = typeof header === 'string' && header.trim() !== '' ? JSON.stringify(header.slice(0, 100)) : 'none';
  return transportError(
    reply,
    415,
    `Content-Type must be application/json-rpc; charset=utf-8 (or application/json, UTF-8), got ${got}`,
  );
}

/** An error of the HTTP exchange itself: its status, a JSON-RPC error body, id null. */
function transportError(reply: FastifyReply, status: number, message: string) {
  return reply
    .code(status)
    .type('application/json-rpc; charset=utf-8')
    .send(JSON.stringify(envelope(null, { code: -32600, message })));
}

function answer(reply: FastifyReply, id: Id, error?: { code: number; message: string }, result?: unknown) {
  return reply
    .code(200)
    .type('application/json-rpc; charset=utf-8')
    .send(JSON.stringify(envelope(id, error, result)));
}
