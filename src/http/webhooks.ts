/**
 * The service's webhooks (docs/webhooks.md): `POST /webhooks/callr` (the path is
 * configurable) receives the events the service POSTs to an endpoint subscribed with
 * webhooks.subscribe and a secret:
 *
 * - `sms.mt.status_update`, an SMS's status changed: recorded for that SMS (by its hash),
 *   so that the call that sent it shows its delivery status (GET /admin/calls/:callid);
 * - `sms.mo`, an SMS was received: logged (sender, recipient, length; never the text) and
 *   counted;
 * - any other type: acknowledged and counted, nothing else.
 *
 * What is checked, in order: the signature header is there (before the body is read);
 * the body is JSON (Content-Type) and not over the size cap; the signature matches the raw
 * bytes (constant time, ./webhook-signature.ts); the event is one (event_id, type, data...);
 * its event_at is within `toleranceMs` of this server's clock, either way (at most the 48 h
 * its id is remembered: a captured event cannot be replayed once its id is forgotten, nor
 * one dated ahead kept for later). An event is handled once: its event_id is claimed in the
 * store (shared by instances), a repeat (the service retries when an answer is lost) is
 * answered 200 and not recorded again. A store failure gives the claim back and answers 503:
 * the service's retry is then handled. The route exists only with a secret: there is no
 * unsigned mode.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { codeDefault, codeNumberDefault, codeNumberProblem, codeString } from '../config/code.js';
import { MAX_REPORTS, reportText, SMS_HASH } from '../engine/sms-delivery.js';
import { hasSmsStatus, type CallStore, type SmsStatusStore } from '../store/types.js';
import { sendError } from './envelope.js';
import { isJsonType } from './guards.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureMatches } from './webhook-signature.js';

/**
 * The config file's `webhooks:`; their defaults and bounds are in the table of options (src/config/table-services.ts).
 */
export interface WebhookOptions {
  /**
   * The secret given to webhooks.subscribe as hmac_secret (webhooks.secret: MIN_SECRET_CHARS to MAX_SECRET_CHARS
   * characters). Without it the route is off.
   */
  secret?: string;
  /** Secrets also accepted while a subscription moves to a new one (rotation); never used without `secret`. */
  previousSecrets?: string[];
  /** Where the route is (webhooks.path). */
  path?: string;
  /** Largest body taken, in bytes (webhooks.body_limit; its default takes an SMS object with the longest text). */
  bodyLimit?: number;
  /** How far an event's event_at may be from the clock, either way, in ms (webhooks.tolerance_ms). */
  toleranceMs?: number;
  /** The clock event_at is compared with (default Date.now). */
  now?: () => number;
}

const SECRET = codeString('webhooks.secret');
const PATH = codeString('webhooks.path');
const PATH_RE = new RegExp(PATH.pattern!);
/** The metrics' default path, which the webhooks' may not take. */
const METRICS_PATH = codeDefault('metrics.path');
export const DEFAULT_WEBHOOK_PATH = codeDefault('webhooks.path') as string;
export const DEFAULT_WEBHOOK_BODY_LIMIT = codeNumberDefault('webhooks.bodyLimit');
export const DEFAULT_WEBHOOK_TOLERANCE_MS = codeNumberDefault('webhooks.toleranceMs');
export const MIN_SECRET_CHARS = SECRET.minLength!;
export const MAX_SECRET_CHARS = SECRET.maxLength!;
/**
 * How long an event id is remembered (the service's retries come well within it); webhooks.tolerance_ms may not be
 * longer (an event older than its id's memory would be taken again).
 */
export const EVENT_TTL_MS = 48 * 3600_000;
/** Event ids taken: what the service sends (UUIDs and the like), short enough to be a store key. */
const EVENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const STATUS = /^[A-Z_]{1,32}$/;
/** At most one log line of refused signatures per this long. */
const LOG_EVERY_MS = 10_000;

/** Event types counted by name; any other counts as `other` (what a sender writes never becomes a label of its own). */
export const WEBHOOK_TYPES = ['sms.mt.status_update', 'sms.mo'] as const;
export type WebhookResult =
  | 'ok'
  | 'duplicate'
  | 'ignored'
  | 'bad_signature'
  | 'bad_event'
  | 'bad_json'
  | 'bad_time'
  | 'unsupported_type'
  | 'too_large'
  | 'store_unavailable';

/** Why the options cannot be used (null when they can). */
export function webhookOptionsProblem(o: WebhookOptions): string | null {
  const secretFits = (x: unknown) =>
    typeof x === 'string' && x.length >= MIN_SECRET_CHARS && x.length <= MAX_SECRET_CHARS;
  if (o.secret !== undefined && !secretFits(o.secret))
    return (
      `webhooks.secret must be ${MIN_SECRET_CHARS} to ${MAX_SECRET_CHARS} characters ` +
      '(e.g. openssl rand -base64 32)'
    );
  for (const p of o.previousSecrets ?? [])
    if (!secretFits(p))
      return `each previous webhook secret must be ${MIN_SECRET_CHARS} to ${MAX_SECRET_CHARS} characters`;
  const path = o.path ?? DEFAULT_WEBHOOK_PATH;
  if (!PATH_RE.test(path) || path.includes('//') || path.endsWith('/'))
    return `webhooks.path ${PATH.format!.must}, got ${JSON.stringify(path).slice(0, 80)}`;
  if (
    path === '/rt' ||
    path.startsWith('/rt/') ||
    path === '/health' ||
    path.startsWith('/health/') ||
    path === '/admin' ||
    path.startsWith('/admin/') ||
    path === METRICS_PATH
  )
    return `webhooks.path ${path} is taken by another route of callscript`;
  const problem =
    codeNumberProblem('webhooks.bodyLimit', o.bodyLimit ?? DEFAULT_WEBHOOK_BODY_LIMIT) ??
    codeNumberProblem('webhooks.toleranceMs', o.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS);
  return problem ?? null;
}

/** The events counted since the start, by type and result. */
export class WebhookCounts {
  private readonly counts = new Map<string, number>();

  add(type: string, result: WebhookResult): void {
    const t = (WEBHOOK_TYPES as readonly string[]).includes(type) ? type : type === 'unknown' ? 'unknown' : 'other';
    const k = `${t} ${result}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }

  /** [{type, result, count}], sorted. */
  list(): { type: string; result: string; count: number }[] {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, count]) => {
        const [type, result] = k.split(' ') as [string, string];
        return { type, result, count };
      });
  }
}

export interface WebhookReceiver {
  path: string;
  counts: WebhookCounts;
}

interface Deps {
  store: CallStore & SmsStatusStore;
  /** How long an SMS's reports are kept (its call's record may be shown that long). */
  ttlMs: number;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; debug(o: object, m: string): void };
}

/**
 * The route of the plugin's `webhooks` options: registered when a secret is given and the
 * store keeps delivery status; else off, with a warning when webhooks were configured. A
 * problem with the options is thrown (the plugin's registration fails).
 */
export async function webhookRoute(
  app: FastifyInstance,
  o: WebhookOptions | undefined,
  store: CallStore,
  d: Omit<Deps, 'store'>,
): Promise<WebhookReceiver | undefined> {
  if (!o) return undefined;
  const bad = webhookOptionsProblem(o);
  if (bad) throw new Error(`callscript plugin: ${bad}`);
  if (o.secret === undefined) {
    d.log.warn(
      { code: 'WEBHOOKS_OFF', path: o.path ?? DEFAULT_WEBHOOK_PATH },
      `webhooks: no secret (webhooks.secret or CALLSCRIPT_WEBHOOK_SECRET): ${o.path ?? DEFAULT_WEBHOOK_PATH} is off`,
    );
    return undefined;
  }
  if (!hasSmsStatus(store)) {
    d.log.warn(
      { code: 'WEBHOOKS_UNSUPPORTED' },
      'webhooks: the call store given has no delivery status methods (smsSent, smsReport...): the webhook route is off',
    );
    return undefined;
  }
  return registerWebhooks(app, { ...o, secret: o.secret }, { ...d, store });
}

/** Registers the route (the options checked before). */
export async function registerWebhooks(
  app: FastifyInstance,
  o: WebhookOptions & { secret: string },
  d: Deps,
): Promise<WebhookReceiver> {
  const path = o.path ?? DEFAULT_WEBHOOK_PATH;
  const bodyLimit = o.bodyLimit ?? DEFAULT_WEBHOOK_BODY_LIMIT;
  const toleranceMs = o.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS;
  const now = o.now ?? Date.now;
  const counts = new WebhookCounts();
  // the current secret first; each is compared in constant time (their number is no secret)
  const secrets = [o.secret, ...(o.previousSecrets ?? [])];
  const signatureLog = throttledWarn(
    d.log,
    'WEBHOOK_SIGNATURE',
    '(is the secret the hmac_secret given to webhooks.subscribe?)',
  );
  const refused = (reply: FastifyReply, message: string) => {
    counts.add('unknown', 'bad_signature');
    signatureLog(message);
    return sendError(reply, 401, 'WEBHOOK_SIGNATURE', message);
  };
  const timeLog = throttledWarn(
    d.log,
    'WEBHOOK_EVENT_TIME',
    "(a replayed event, a retry later than webhooks.tolerance_ms, or this server's clock is wrong)",
  );

  await app.register(async (scope) => {
    // the raw bytes, for the signature; a larger body is refused while it is read
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit },
      (_req: FastifyRequest, body: Buffer, done: (err: null, body: Buffer) => void) => done(null, body),
    );
    scope.setErrorHandler((err: Error & { code?: string; statusCode?: number }, req, reply) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        counts.add('unknown', 'too_large');
        return sendError(
          reply,
          413,
          'BODY_TOO_LARGE',
          `the body is larger than ${bodyLimit} bytes (webhooks.body_limit)`,
        );
      }
      if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500)
        return sendError(reply, 400, 'BAD_HTTP_REQUEST', 'the request could not be read');
      req.log.error({ err }, 'webhook: unexpected error');
      return sendError(reply, 500, 'INTERNAL', 'unexpected error');
    });

    const onRequest = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (req.headers[SIGNATURE_HEADER] === undefined)
        return void refused(
          reply,
          'the X-CALLR-HmacSignature header is missing: events are signed with the webhook secret',
        );
      const type = req.headers['content-type'];
      if (type === undefined || !isJsonType(type)) {
        counts.add('unknown', 'unsupported_type');
        return void sendError(
          reply,
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `send the event as JSON with Content-Type: application/json ` +
            `(got ${type === undefined ? 'none' : type.slice(0, 100)})`,
        );
      }
      done();
    };

    scope.post(path, { onRequest }, async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (!secrets.some((secret) => signatureMatches(raw, req.headers[SIGNATURE_HEADER], secret)))
        return refused(
          reply,
          'the X-CALLR-HmacSignature does not match the body (base64 HMAC-SHA256 of the raw body with the ' +
            'webhook secret)',
        );
      let event: unknown;
      try {
        event = JSON.parse(raw.toString('utf8'));
      } catch {
        counts.add('unknown', 'bad_json');
        return sendError(reply, 400, 'BAD_JSON', 'the event is not valid JSON');
      }
      const e = checkEvent(event, req.headers[EVENT_ID_HEADER]);
      if (typeof e === 'string') {
        counts.add('unknown', 'bad_event');
        return sendError(reply, 400, 'WEBHOOK_BAD_EVENT', e);
      }
      const late = timeProblem(e.at, now(), toleranceMs);
      if (late !== undefined) {
        counts.add(e.type, 'bad_time');
        timeLog(late);
        return sendError(reply, 400, 'WEBHOOK_EVENT_TIME', late);
      }
      const handled = await handle(e, d, counts);
      if (handled === 'store_unavailable')
        return sendError(
          reply,
          503,
          'STORE_UNAVAILABLE',
          'the call store is unavailable: the event was not recorded (the service tries again)',
        );
      if (handled === 'bad_event')
        return sendError(
          reply,
          400,
          'WEBHOOK_BAD_EVENT',
          'the data of an sms.mt.status_update is an SMS object with a hash (8 upper-case letters and ' +
            'digits) and a status',
        );
      return reply
        .code(200)
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ status: handled === 'ok' ? 'ok' : handled }));
    });
    const notAllowed = (_req: FastifyRequest, reply: FastifyReply) =>
      sendError(reply.header('allow', 'POST'), 405, 'METHOD_NOT_ALLOWED', 'the webhook route only takes POST');
    scope.route({ method: ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT'], url: path, handler: notAllowed });
  });
  return { path, counts };
}

/** A warning logged at most once per LOG_EVERY_MS, with the number of refusals since the last one. */
function throttledWarn(log: Deps['log'], code: string, hint: string): (message: string) => void {
  let last = 0;
  let unlogged = 0;
  return (message) => {
    unlogged++;
    const t = Date.now();
    if (t - last < LOG_EVERY_MS) return;
    last = t;
    log.warn(
      { code, refused: unlogged },
      `webhooks: ${unlogged} event${unlogged === 1 ? '' : 's'} refused: ${message} ${hint}`,
    );
    unlogged = 0;
  };
}

/** Why an event dated `at` is refused at `now` (more than `toleranceMs` away, either way), or undefined. */
export function timeProblem(at: number, now: number, toleranceMs: number): string | undefined {
  const off = at - now;
  if (Math.abs(off) <= toleranceMs) return undefined;
  return (
    `event_at ${new Date(at).toISOString()} is ${Math.round(Math.abs(off) / 1000)} s ` +
    `${off < 0 ? 'before' : 'after'} this server's clock, more than webhooks.tolerance_ms (${toleranceMs} ms) allows`
  );
}

interface Event {
  id: string;
  type: string;
  at: number;
  try: number;
  data: Record<string, unknown>;
}

/** The event, or what is wrong with it. */
function checkEvent(v: unknown, headerId: string | string[] | undefined): Event | string {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return 'the event is a JSON object {event_id, event_at, hook_hash, try, type, data}';
  const o = v as Record<string, unknown>;
  if (typeof o.event_id !== 'string' || !EVENT_ID.test(o.event_id))
    return 'event_id must be a string of 1 to 128 letters, digits and . _ : -';
  if (headerId !== undefined && headerId !== o.event_id)
    return 'the X-CALLR-EventId header is not the event_id of the body';
  if (typeof o.type !== 'string' || o.type === '' || o.type.length > 100)
    return 'type must be the event type, e.g. sms.mt.status_update';
  const at = typeof o.event_at === 'string' ? Date.parse(o.event_at) : NaN;
  if (!Number.isFinite(at)) return 'event_at must be an ISO 8601 time, e.g. 2026-11-23T10:00:00.000Z';
  if (!Number.isSafeInteger(o.try) || (o.try as number) < 0) return 'try must be the retry counter: 0, 1, 2...';
  if (o.data === null || typeof o.data !== 'object' || Array.isArray(o.data))
    return 'data must be an object (the SMS object for SMS events)';
  return { id: o.event_id, type: o.type, at, try: o.try as number, data: o.data as Record<string, unknown> };
}

async function handle(e: Event, d: Deps, counts: WebhookCounts): Promise<WebhookResult> {
  const report = e.type === 'sms.mt.status_update' ? smsReport(e) : undefined;
  if (report === null) {
    counts.add(e.type, 'bad_event');
    return 'bad_event';
  }
  let claimed = false;
  try {
    if (!(await d.store.claimEvent(e.id, EVENT_TTL_MS))) {
      counts.add(e.type, 'duplicate');
      d.log.debug(
        { code: 'WEBHOOK_DUPLICATE', event_id: e.id, type: e.type, try: e.try },
        `webhook ${e.type} ${e.id}: handled already (a retry)`,
      );
      return 'duplicate';
    }
    claimed = true;
    if (report) {
      await d.store.smsReport(
        report.hash,
        e.id,
        reportText({ status: report.status, error: report.error, at: e.at, event: e.id }),
        MAX_REPORTS,
        d.ttlMs,
      );
      d.log.debug(
        { event_id: e.id, hash: report.hash, status: report.status },
        `webhook: SMS ${report.hash} is ${report.status}`,
      );
    } else if (e.type === 'sms.mo') {
      const text = typeof e.data.text === 'string' ? e.data.text : '';
      d.log.info(
        {
          code: 'WEBHOOK_SMS_MO',
          event_id: e.id,
          hash: str(e.data.hash),
          from: str(e.data.from),
          to: str(e.data.to),
          chars: [...text].length,
          parts: typeof e.data.parts === 'number' ? e.data.parts : null,
          encoding: str(e.data.encoding),
        },
        `inbound SMS ${str(e.data.hash)} from ${str(e.data.from)} to ${str(e.data.to)} (${[...text].length} ` +
          `characters; the text is not logged)`,
      );
    } else {
      counts.add(e.type, 'ignored');
      d.log.debug(
        { event_id: e.id, type: e.type.slice(0, 100) },
        `webhook of type ${e.type.slice(0, 100)}: nothing to do`,
      );
      return 'ignored';
    }
    counts.add(e.type, 'ok');
    return 'ok';
  } catch (err) {
    if (claimed) await d.store.releaseEvent(e.id).catch(() => undefined);
    counts.add(e.type, 'store_unavailable');
    d.log.warn(
      {
        code: 'STORE_UNAVAILABLE',
        event_id: e.id,
        type: e.type,
        err: err instanceof Error ? err.message : String(err),
      },
      `webhook ${e.type} ${e.id} not recorded: the store failed (answered 503: the service tries again)`,
    );
    return 'store_unavailable';
  }
}

/** An sms.mt.status_update's SMS hash, status and error; null when its data is not an SMS object. */
function smsReport(e: Event): { hash: string; status: string; error: string } | null {
  const { hash, status, status_error: error } = e.data;
  if (typeof hash !== 'string' || !SMS_HASH.test(hash) || typeof status !== 'string' || !STATUS.test(status))
    return null;
  return { hash, status, error: typeof error === 'string' ? error.slice(0, 200) : '' };
}

/** A short string of the sender's data, for a log line (never more than 40 characters). */
function str(v: unknown): string {
  return typeof v === 'string' ? v.slice(0, 40) : '';
}
