/**
 * POST /emulator/calls: check the body, place the call (inbound to a url, an app or a
 * routed DID; or outbound through a url or an app), and answer its transcript when it
 * ends (`wait`, the default) or 202 with its id at once.
 */
import type { FastifyReply } from 'fastify';
import { checkE164, checkFormat } from '../../protocol/formats.js';
import type { EmulatorContext } from '../context.js';
import { placeCall, registeredCaller, type PlaceRequest } from '../driver/place.js';
import { isHttpUrl } from '../sms/validate.js';
import { callerFromBody } from './caller-body.js';
import { error } from './routes.js';

const KEYS = [
  'url',
  'app',
  'did',
  'outbound',
  'caller',
  'caller_text',
  'caller_file',
  'auth',
  'ring_timeout',
  'cdr_field',
  'cli',
  'realtime',
  'reply_timeout_ms',
  'wait',
];

export async function runCallRequest(ctx: EmulatorContext, body: unknown, reply: FastifyReply) {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return error(
      reply,
      400,
      'BAD_REQUEST',
      'the body must be a JSON object, e.g. {"url": "http://127.0.0.1:3000/rt/front-desk"}',
    );
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).find((k) => !KEYS.includes(k));
  if (extra) return error(reply, 400, 'BAD_REQUEST', `unknown field ${extra}; the fields are ${KEYS.join(', ')}`);
  const targets = ['url', 'app', 'did'].filter((k) => b[k] !== undefined);
  if (targets.length !== 1)
    return error(
      reply,
      400,
      'BAD_REQUEST',
      'give exactly one of url (a real-time URL), app (an application hash) or did (a number routed to an app)',
    );
  if (b.url !== undefined && (typeof b.url !== 'string' || !isHttpUrl(b.url)))
    return error(reply, 400, 'BAD_REQUEST', `url must be an http:// or https:// URL, got ${JSON.stringify(b.url)}`);
  let app = undefined;
  if (b.app !== undefined) {
    app = typeof b.app === 'string' ? ctx.store.apps.get(b.app) : undefined;
    if (!app)
      return error(reply, 404, 'NOT_FOUND', `no application ${JSON.stringify(b.app)} (create one with apps.create)`);
  }
  let did: string | undefined;
  if (b.did !== undefined) {
    const hash = typeof b.did === 'string' ? ctx.store.dids.get(b.did) : undefined;
    app = hash ? ctx.store.apps.get(hash) : undefined;
    if (!app)
      return error(
        reply,
        404,
        'NOT_FOUND',
        `${JSON.stringify(b.did)} is not routed to an application (PUT /emulator/dids/<number>)`,
      );
    did = b.did as string;
  }
  let auth: { login: string; password: string } | undefined;
  if (b.auth !== undefined && b.auth !== null) {
    const a = b.auth as Record<string, unknown>;
    if (typeof a !== 'object' || typeof a.login !== 'string' || typeof a.password !== 'string')
      return error(reply, 400, 'BAD_REQUEST', 'auth must be {"login": "...", "password": "..."}');
    if (app)
      return error(reply, 400, 'BAD_REQUEST', "auth is for url calls; an app's calls use the app's login and password");
    auth = { login: a.login, password: a.password };
  }
  for (const k of ['realtime', 'wait'])
    if (b[k] !== undefined && typeof b[k] !== 'boolean')
      return error(reply, 400, 'BAD_REQUEST', `${k} must be true or false`);
  const rt = b.reply_timeout_ms;
  if (rt !== undefined && (typeof rt !== 'number' || !Number.isInteger(rt) || rt < 50 || rt > 60000))
    return error(reply, 400, 'BAD_REQUEST', 'reply_timeout_ms must be whole milliseconds from 50 to 60000');
  const caller = callerFromBody(b);
  if (!caller.ok) return reply.code(400).send({ error: caller.error });
  const common = { realtime: b.realtime as boolean | undefined, replyTimeoutMs: rt as number | undefined };
  let req: PlaceRequest;
  if (b.outbound !== undefined) {
    if (did) return error(reply, 400, 'BAD_REQUEST', 'an outbound call goes through a url or an app, not a did');
    if (typeof b.outbound !== 'string' || checkE164(b.outbound))
      return error(
        reply,
        400,
        'BAD_REQUEST',
        `outbound is the E.164 number to call${typeof b.outbound === 'string' ? `: ${checkE164(b.outbound)}` : ''}`,
      );
    const ring = b.ring_timeout ?? 30;
    if (typeof ring !== 'number' || !Number.isInteger(ring) || ring < 5 || ring > 300)
      return error(reply, 400, 'BAD_REQUEST', 'ring_timeout is whole seconds from 5 to 300');
    for (const [k, f] of [
      ['cdr_field', 'cdr_customer_field'],
      ['cli', 'cli_phone_number'],
    ] as const) {
      if (b[k] !== undefined && (typeof b[k] !== 'string' || checkFormat(f, b[k] as string)))
        return error(
          reply,
          400,
          'BAD_REQUEST',
          `${k}: ${typeof b[k] === 'string' ? checkFormat(f, b[k] as string) : 'must be a string'}`,
        );
    }
    const script = caller.text ? caller.script : registeredCaller(ctx, b.outbound);
    req = { kind: 'outbound', to: b.outbound, ringTimeoutS: ring, script, ...common };
    if (b.cdr_field !== undefined) req.cdrField = b.cdr_field as string;
    if (b.cli !== undefined) req.cli = b.cli as string;
  } else {
    for (const k of ['ring_timeout', 'cdr_field', 'cli'])
      if (b[k] !== undefined) return error(reply, 400, 'BAD_REQUEST', `${k} is for outbound calls (give outbound)`);
    req = { kind: 'inbound', script: caller.script, ...common };
    if (did) req.did = did;
  }
  if (app) req.app = app;
  else req.url = b.url as string;
  if (auth) req.auth = auth;
  const placed = placeCall(ctx, req);
  if (!placed.ok)
    return placed.busy
      ? error(reply, 429, 'TOO_MANY_CALLS', placed.message)
      : error(reply, 400, 'BAD_REQUEST', placed.message);
  if (b.wait === false)
    return reply.code(202).send({ id: placed.id, callid: placed.callid, transcript: `/emulator/calls/${placed.id}` });
  return placed.done;
}
