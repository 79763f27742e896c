/**
 * The control API (register with prefix /emulator): run calls and read their transcripts,
 * inject inbound SMS, move an SMS to a failure status, route DIDs to applications,
 * register the caller script used when the emulator calls a number, the agents (agents.ts), reset. HTTP Basic
 * with the account credentials (GET /emulator/health excepted); errors are
 * `{"error":{"code","message"}}`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { checkE164, checkSmsSender } from '../../protocol/formats.js';
import { basicAuthOk } from '../auth.js';
import type { EmulatorContext } from '../context.js';
import { DELIVERY, FAILURES, forceStatus, smsObject, type SmsStatus } from '../sms/record.js';
import { HASH, receiveSms } from '../sms/service.js';
import { runCallRequest } from './run-call.js';
import { callerFromBody } from './caller-body.js';
import { repliesWhenSaved } from '../saved-replies.js';
import { agentRoutes } from './agents.js';

export function controlApi(ctx: EmulatorContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.addHook('onRequest', async (req, reply) => {
      if (req.url.replace(/\?.*$/, '').endsWith('/health')) return;
      if (!basicAuthOk(req.headers.authorization, ctx.account)) {
        reply.header('www-authenticate', 'Basic realm="callscript emulator"');
        return error(
          reply,
          401,
          'AUTH_REQUIRED',
          'HTTP Basic with the emulator account login and password is required',
        );
      }
    });
    repliesWhenSaved(app, ctx, (reply, message) => {
      reply.code(503).type('application/json; charset=utf-8');
      return JSON.stringify({ error: { code: 'STORAGE', message } });
    });
    app.setErrorHandler((err: { statusCode?: number; message: string }, _req, reply) => {
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) ctx.log.error({ err }, 'control API internal error');
      return error(
        reply,
        status,
        status === 500 ? 'INTERNAL' : 'BAD_REQUEST',
        status === 500 ? 'internal error of the emulator' : err.message,
      );
    });
    app.setNotFoundHandler((req, reply) =>
      error(
        reply,
        404,
        'NOT_FOUND',
        `no control endpoint ${req.method} ${req.url.split('?')[0]} (see docs/emulator.md)`,
      ),
    );

    app.get('/health', async () => ({
      status: 'ok',
      apps: ctx.store.apps.size,
      sms: ctx.store.sms.size,
      calls: ctx.store.calls.size,
      live_calls: ctx.live.size,
    }));

    app.post('/calls', async (req, reply) => runCallRequest(ctx, req.body, reply));

    app.get('/calls', async () =>
      [...ctx.store.calls.values()].reverse().map((t) => ({
        id: t.id,
        callid: t.callid,
        direction: t.direction,
        url: t.url,
        caller: t.caller,
        date_started: t.date_started,
        status: t.status,
        ended_by: t.ended_by ?? null,
        commands: t.commands.length,
        violations: t.violations.length,
      })),
    );

    app.get('/calls/:id', async (req, reply) => {
      const t = ctx.store.calls.get((req.params as { id: string }).id);
      return t ?? error(reply, 404, 'NOT_FOUND', `no call ${(req.params as { id: string }).id}`);
    });

    app.post('/sms/inbound', async (req, reply) => {
      const b = (req.body ?? {}) as Record<string, unknown>;
      if (typeof b.from !== 'string' || (checkE164(b.from) && (b.from === '' || checkSmsSender(b.from))))
        return error(reply, 400, 'BAD_REQUEST', 'from must be the sender: an E.164 number or an alphanumeric sender');
      if (typeof b.to !== 'string' || (checkE164(b.to) && !/^[0-9]{3,8}$/.test(b.to)))
        return error(
          reply,
          400,
          'BAD_REQUEST',
          'to must be one of your numbers (E.164) or short codes (3 to 8 digits)',
        );
      if (typeof b.body !== 'string' || b.body === '')
        return error(reply, 400, 'BAD_REQUEST', 'body must be the non-empty text of the SMS');
      const hash = receiveSms(ctx, b.from, b.to, b.body);
      return { hash, sms: smsObject(ctx.store.sms.get(hash)!, ctx.clock.now()) };
    });

    app.post('/sms/:hash/status', async (req, reply) => {
      const hash = (req.params as { hash: string }).hash;
      const r = HASH.test(hash) ? ctx.store.sms.get(hash) : undefined;
      if (!r) return error(reply, 404, 'NOT_FOUND', `no SMS ${hash}`);
      const b = (req.body ?? {}) as Record<string, unknown>;
      const all: readonly string[] = [...DELIVERY, ...FAILURES];
      if (typeof b.status !== 'string' || !all.includes(b.status))
        return error(reply, 400, 'BAD_REQUEST', `status must be one of ${all.join(', ')}`);
      if (b.error !== undefined && typeof b.error !== 'string')
        return error(reply, 400, 'BAD_REQUEST', 'error must be a string');
      forceStatus(r, b.status as SmsStatus, (b.error as string | undefined) ?? '', ctx.clock.now());
      ctx.store.putSms(r);
      ctx.webhooks.smsStatusSet(r);
      return smsObject(r, ctx.clock.now());
    });

    app.put('/sms-failures/:number', async (req, reply) => {
      const number = (req.params as { number: string }).number;
      const bad = checkE164(number);
      if (bad) return error(reply, 400, 'BAD_REQUEST', `${number}: ${bad}`);
      const b = (req.body ?? {}) as Record<string, unknown>;
      const http = b.http ?? 400;
      const code = b.code ?? 11;
      const message = b.message ?? `the recipient ${number} cannot receive SMS`;
      if (typeof http !== 'number' || !Number.isInteger(http) || http < 400 || http > 599)
        return error(reply, 400, 'BAD_REQUEST', 'http is the HTTP status of the failure, 400 to 599');
      if (typeof code !== 'number' || !Number.isInteger(code))
        return error(reply, 400, 'BAD_REQUEST', 'code is the error code of the envelope (an integer)');
      if (typeof message !== 'string' || message === '')
        return error(reply, 400, 'BAD_REQUEST', 'message must be a non-empty string');
      ctx.smsFailures.set(number, { http, code, message });
      return { number, http, code, message };
    });
    app.delete('/sms-failures/:number', async (req, reply) => {
      if (!ctx.smsFailures.delete((req.params as { number: string }).number))
        return error(reply, 404, 'NOT_FOUND', 'no SMS failure for this number');
      return reply.code(204).send();
    });

    // every attempt to deliver a webhook event (the last 1000), oldest first; ?event_id= keeps one event's
    app.get('/webhooks/deliveries', async (req) => {
      const id = (req.query as Record<string, unknown>).event_id;
      const all = ctx.webhooks.sender.deliveries();
      return typeof id === 'string' ? all.filter((d) => d.event_id === id) : all;
    });

    app.get('/dids', async () => Object.fromEntries(ctx.store.dids));
    app.put('/dids/:number', async (req, reply) => {
      const number = (req.params as { number: string }).number;
      const bad = checkE164(number);
      if (bad) return error(reply, 400, 'BAD_REQUEST', `${number}: ${bad}`);
      const appHash = ((req.body ?? {}) as Record<string, unknown>).app;
      if (typeof appHash !== 'string' || !ctx.store.apps.has(appHash))
        return error(
          reply,
          400,
          'BAD_REQUEST',
          `app must be the hash of an application (apps.create), got ${JSON.stringify(appHash ?? null)}`,
        );
      ctx.store.setDid(number, appHash);
      return { number, app: appHash };
    });
    app.delete('/dids/:number', async (req, reply) => {
      const number = (req.params as { number: string }).number;
      if (!ctx.store.deleteDid(number)) return error(reply, 404, 'NOT_FOUND', `${number} is not routed`);
      return reply.code(204).send();
    });

    app.get('/callers', async () => Object.fromEntries([...ctx.store.callers].map(([k, v]) => [k, v.file])));
    app.put('/callers/:number', async (req, reply) => {
      const number = (req.params as { number: string }).number;
      const bad = checkE164(number);
      if (bad) return error(reply, 400, 'BAD_REQUEST', `${number}: ${bad}`);
      const c = callerFromBody((req.body ?? {}) as Record<string, unknown>);
      if (!c.ok) return reply.code(400).send({ error: c.error });
      if (!c.text)
        return error(reply, 400, 'BAD_REQUEST', 'give caller (a script object) or caller_text (YAML or JSON text)');
      ctx.store.setCaller(number, { text: c.text, file: c.file });
      return { number, caller: c.script.name };
    });
    app.delete('/callers/:number', async (req, reply) => {
      const number = (req.params as { number: string }).number;
      if (!ctx.store.deleteCaller(number)) return error(reply, 404, 'NOT_FOUND', `no caller script for ${number}`);
      return reply.code(204).send();
    });

    agentRoutes(app, ctx);

    app.post('/reset', async () => {
      ctx.store.reset();
      ctx.smsFailures.clear();
      ctx.agents.clear();
      return { status: 'ok' };
    });
  };
}

export function error(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
) {
  return reply.code(status).send({ error: { code, message, ...extra } });
}
