/**
 * The SMS REST API v1.1 (register with prefix /rest/v1.1): GET /sms, POST /sms,
 * GET /sms/send, GET /sms/<hash>, HTTP Basic auth, and the envelope
 * `{"status":"success","data":...}` / `{"status":"error","data":{"code","message"}}` for
 * every answer, errors of any kind included (never a bare 500).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../context.js';
import { basicAuthOk } from '../auth.js';
import { ERR, fromFastifyError } from '../errors.js';
import { repliesWhenSaved } from '../saved-replies.js';
import { getSms, listSms, sendSms } from './service.js';
import { CALLID_HEADER } from '../../sms/client.js';
import { checkSmsToSend, optionsFromQuery } from './validate.js';

const FIELDS = ['from', 'to', 'body', 'options'];
const HINTS: Record<string, string> = {
  text: 'body',
  message: 'body',
  sender: 'from',
  recipient: 'to',
  destination: 'to',
};

export function smsRest(ctx: EmulatorContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.removeContentTypeParser('text/plain');
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    app.addHook('onRequest', async (req, reply) => {
      if (!basicAuthOk(req.headers.authorization, ctx.account)) {
        reply.header('www-authenticate', 'Basic realm="callscript emulator"');
        return fail(
          reply,
          401,
          ERR.AUTH,
          req.headers.authorization
            ? 'authentication failed: wrong login or password'
            : 'authentication required: HTTP Basic with the account login and password',
        );
      }
    });

    repliesWhenSaved(app, ctx, (reply, message) => {
      reply.code(503).type('application/json; charset=utf-8');
      return JSON.stringify({ status: 'error', data: { code: ERR.STORAGE, message } });
    });

    app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, req, reply) => {
      const e = fromFastifyError(err);
      if (e.status >= 500) ctx.log.error({ err, url: req.url }, 'SMS REST internal error');
      return fail(reply, e.status, e.code, e.message);
    });

    app.setNotFoundHandler((req, reply) => {
      const path = req.url.split('?')[0]!.replace(/^.*\/rest\/v1\.1/, '');
      if (/^\/sms(\/[^/]*)?\/?$/.test(path))
        return fail(
          reply,
          405,
          ERR.METHOD_NOT_ALLOWED,
          `${req.method} is not allowed on ${path}: use GET /sms, POST /sms, GET /sms/send or GET /sms/<hash>`,
        );
      return fail(
        reply,
        404,
        ERR.NOT_FOUND,
        `no endpoint ${req.method} ${path}: the SMS API has GET /sms, POST /sms, GET /sms/send and GET /sms/<hash>`,
      );
    });

    app.get('/sms', async (req, reply) => {
      const q = req.query as Record<string, unknown>;
      const unknown = Object.keys(q).filter((k) => !['type', 'from', 'to'].includes(k));
      if (unknown.length > 0)
        return fail(
          reply,
          400,
          ERR.INVALID_PARAM,
          `unknown query parameter ${unknown[0]}: GET /sms takes type (IN|OUT), from and to (datetimes, UTC)`,
        );
      const r = listSms(ctx, q.type, q.from, q.to);
      return r.ok ? ok(reply, r.value) : fail(reply, 400, ERR.INVALID_PARAM, r.message);
    });

    app.post('/sms', async (req, reply) => {
      const body = req.body;
      if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
        return fail(
          reply,
          400,
          ERR.MALFORMED,
          'the body must be a JSON object {"from", "to", "body", "options"} with Content-Type: application/json',
        );
      }
      const o = body as Record<string, unknown>;
      const form = /x-www-form-urlencoded/.test(req.headers['content-type'] ?? '');
      let input: Record<string, unknown> = o;
      if (form) {
        const opts = optionsFromQuery(o);
        if (!opts.ok) return fail(reply, 400, ERR.INVALID_PARAM, opts.message);
        input = { ...pick(o, ['from', 'to', 'body']), options: opts.value };
      } else {
        const extra = Object.keys(o).find((k) => !FIELDS.includes(k));
        if (extra) return fail(reply, 400, ERR.INVALID_PARAM, unknownField(extra));
      }
      return send(req, reply, input, (k) => k in input && (k !== 'options' || input.options !== undefined));
    });

    app.get('/sms/send', async (req, reply) => {
      const q = req.query as Record<string, unknown>;
      const extra = Object.keys(q).find(
        (k) => !['from', 'to', 'body'].includes(k) && !k.startsWith('options.') && k !== 'options',
      );
      if (extra) return fail(reply, 400, ERR.INVALID_PARAM, unknownField(extra));
      for (const k of ['from', 'to', 'body']) {
        if (Array.isArray(q[k]))
          return fail(reply, 400, ERR.INVALID_PARAM, `${k} is given ${(q[k] as unknown[]).length} times; give it once`);
      }
      const opts = optionsFromQuery(q);
      if (!opts.ok) return fail(reply, 400, ERR.INVALID_PARAM, opts.message);
      const input = { ...pick(q, ['from', 'to', 'body']), options: opts.value };
      return send(req, reply, input, (k) => k in q);
    });

    app.get('/sms/:hash', async (req, reply) => {
      const r = getSms(ctx, (req.params as { hash: string }).hash);
      if (r.ok) return ok(reply, r.value);
      return fail(reply, r.notFound ? 404 : 400, r.notFound ? ERR.NOT_FOUND : ERR.INVALID_PARAM, r.message);
    });

    function send(
      req: FastifyRequest,
      reply: FastifyReply,
      input: Record<string, unknown>,
      has: (k: string) => boolean,
    ) {
      const r = checkSmsToSend(input, has);
      if (!r.ok) return fail(reply, 400, ERR.INVALID_PARAM, r.message);
      const callid = req.headers[CALLID_HEADER];
      const sent = sendSms(ctx, r.value, typeof callid === 'string' ? callid : undefined);
      return sent.ok ? ok(reply, sent.hash) : fail(reply, sent.failure.http, sent.failure.code, sent.failure.message);
    }
  };
}

function unknownField(k: string): string {
  const hint = HINTS[k] ? ` (did you mean ${HINTS[k]}?)` : '';
  return `unknown parameter ${k}${hint}: an SMS takes from, to, body and options`;
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in o) out[k] = o[k];
  return out;
}

export function ok(reply: FastifyReply, data: unknown) {
  return reply.code(200).type('application/json; charset=utf-8').send({ status: 'success', data });
}

export function fail(reply: FastifyReply, http: number, code: number, message: string) {
  return reply.code(http).type('application/json; charset=utf-8').send({ status: 'error', data: { code, message } });
}
