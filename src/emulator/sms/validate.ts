/**
 * Validation of an SMS to send, shared by POST /sms, GET /sms/send and sms.send: the
 * `from`, `to`, `body` and `options` rules of the reference and protocol-notes.md, with
 * messages that name the parameter and say what is expected.
 */
import { checkE164, checkSmsSender } from '../../protocol/formats.js';
import { GSM_PART, MAX_PARTS, smsEncoding, smsPartsAtLeast } from '../../sms/encoding.js';

export interface SmsOptions {
  force_encoding?: 'GSM' | 'UNICODE';
  nature?: 'ALERTING' | 'MARKETING';
  user_data?: string;
  flash_message?: boolean;
  webhook?: { endpoint: string };
}

export interface SmsToSend {
  from: string;
  to: string;
  body: string;
  options: SmsOptions | null;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export const OPTION_KEYS = ['force_encoding', 'nature', 'user_data', 'flash_message', 'webhook'] as const;
export const USER_DATA_MAX = 32;
export { MAX_PARTS };
/**
 * Longest body segmented at all, in UTF-16 units (decision): twice the most GSM positions a
 * message can have, room for a forced GSM body whose accents transliteration folds. Longer
 * bodies are refused from their length, so the work per request stays bounded.
 */
export const MAX_BODY_UNITS = 2 * MAX_PARTS * GSM_PART;

const describe = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'string'
        ? `the string ${JSON.stringify(v.length > 30 ? v.slice(0, 30) + '…' : v)}`
        : typeof v === 'object'
          ? 'an object'
          : `${typeof v} ${String(v)}`;

/** Checks the four inputs, as given (JSON values, or strings from a query string). */
export function checkSmsToSend(
  input: { from?: unknown; to?: unknown; body?: unknown; options?: unknown },
  has: (k: string) => boolean,
): Checked<SmsToSend> {
  for (const k of ['from', 'to', 'body'] as const) {
    if (!has(k))
      return fail(
        k === 'from'
          ? 'from is required: a sender (1 to 11 of a-z A-Z 0-9 space - _, with a letter), or "" for a shared ' +
              'short code'
          : `${k} is required`,
      );
    const v = input[k];
    if (v === null) return fail(`${k} cannot be null${k === 'from' ? ' (use "" for a shared short code)' : ''}`);
    if (typeof v !== 'string') return fail(`${k} must be a string, got ${describe(v)}`);
  }
  const from = input.from as string;
  const to = input.to as string;
  const body = input.body as string;
  const badFrom = checkSmsSender(from);
  if (badFrom) return fail(`from "${from}" is not a valid sender: ${badFrom}, or "" for a shared short code`);
  const badTo = checkE164(to);
  if (badTo) return fail(`to "${to}" is not a valid recipient: ${badTo}`);
  if (body === '') return fail('body is empty: give the text of the message');
  const options = checkOptions(input.options);
  if (!options.ok) return options;
  const force = options.value?.force_encoding;
  if (body.length > MAX_BODY_UNITS)
    return fail(
      `body is too long: ${body.length} characters (a message has at most ${MAX_PARTS} parts; bodies ` +
        `over ${MAX_BODY_UNITS} characters are refused unread)`,
    );
  const least = smsPartsAtLeast(body, force);
  if (least > MAX_PARTS) return fail(`body is too long: at least ${least} parts (at most ${MAX_PARTS} parts)`);
  const enc = smsEncoding(body, force);
  if (enc.parts > MAX_PARTS)
    return fail(`body is too long: ${enc.parts} parts of ${enc.encoding} (at most ${MAX_PARTS} parts)`);
  return { ok: true, value: { from, to, body, options: options.value } };
}

export function checkOptions(v: unknown): Checked<SmsOptions | null> {
  if (v === undefined || v === null) return { ok: true, value: null };
  if (typeof v !== 'object' || Array.isArray(v)) return fail(`options must be an object or null, got ${describe(v)}`);
  const o = v as Record<string, unknown>;
  const out: SmsOptions = {};
  for (const [k, x] of Object.entries(o)) {
    switch (k) {
      case 'force_encoding':
        if (x !== 'GSM' && x !== 'UNICODE')
          return fail(`options.force_encoding must be "GSM" or "UNICODE", got ${describe(x)}`);
        out.force_encoding = x;
        break;
      case 'nature':
        if (x !== 'ALERTING' && x !== 'MARKETING')
          return fail(`options.nature must be "ALERTING" or "MARKETING", got ${describe(x)}`);
        out.nature = x;
        break;
      case 'user_data':
        if (typeof x !== 'string') return fail(`options.user_data must be a string, got ${describe(x)}`);
        if (x.length > USER_DATA_MAX)
          return fail(`options.user_data is ${x.length} characters long; at most ${USER_DATA_MAX}`);
        out.user_data = x;
        break;
      case 'flash_message':
        if (typeof x !== 'boolean') return fail(`options.flash_message must be true or false, got ${describe(x)}`);
        out.flash_message = x;
        break;
      case 'webhook': {
        const w = checkWebhook(x);
        if (!w.ok) return w;
        out.webhook = w.value;
        break;
      }
      default:
        return fail(`options.${k} is not an option; the options are ${OPTION_KEYS.join(', ')}`);
    }
  }
  return { ok: true, value: out };
}

function checkWebhook(x: unknown): Checked<{ endpoint: string }> {
  if (!x || typeof x !== 'object' || Array.isArray(x))
    return fail(`options.webhook must be an object {"endpoint": "https://..."}, got ${describe(x)}`);
  const w = x as Record<string, unknown>;
  for (const k of Object.keys(w))
    if (k !== 'endpoint') return fail(`options.webhook.${k} is not a webhook field; the only one is endpoint`);
  if (typeof w.endpoint !== 'string')
    return fail(`options.webhook.endpoint must be a URL string, got ${describe(w.endpoint)}`);
  if (!isHttpUrl(w.endpoint)) return fail(`options.webhook.endpoint "${w.endpoint}" is not an http:// or https:// URL`);
  return { ok: true, value: { endpoint: w.endpoint } };
}

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * options from a query string (`options.<key>=<value>`): booleans written true/false/1/0,
 * the webhook as `options.webhook=<url>` or `options.webhook.endpoint=<url>`.
 */
export function optionsFromQuery(q: Record<string, unknown>): Checked<Record<string, unknown> | undefined> {
  let out: Record<string, unknown> | undefined;
  for (const [key, raw] of Object.entries(q)) {
    if (!key.startsWith('options.') && key !== 'options') continue;
    if (Array.isArray(raw)) return fail(`${key} is given ${raw.length} times; give it once`);
    if (key === 'options') return fail('give options as options.<key>=<value> pairs, e.g. options.force_encoding=GSM');
    out ??= {};
    const name = key.slice('options.'.length);
    const v = String(raw);
    if (name === 'flash_message') {
      const b = { true: true, '1': true, false: false, '0': false }[v.toLowerCase()];
      if (b === undefined) return fail(`options.flash_message must be true or false (or 1 / 0), got "${v}"`);
      out.flash_message = b;
    } else if (name === 'webhook' || name === 'webhook.endpoint') {
      out.webhook = { endpoint: v };
    } else {
      out[name] = v;
    }
  }
  return { ok: true, value: out };
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}
