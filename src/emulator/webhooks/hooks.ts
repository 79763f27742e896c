/**
 * Webhook subscriptions (webhooks.subscribe [type, endpoint, options]): the event types
 * the emulator sends, the checks of a subscription, and how the API shows one (never its
 * secret).
 */
import { isHttpUrl, type Checked } from '../sms/validate.js';
import { formatDatetime } from '../time.js';

/** The event types the emulator sends: delivery reports of SMS sent, and SMS received. */
export const HOOK_TYPES = ['sms.mt.status_update', 'sms.mo'] as const;
export type HookType = (typeof HOOK_TYPES)[number];

/** HMAC algorithms of `hmac_algo` (the service's default is SHA256). */
export const HMAC_ALGOS = ['SHA256', 'SHA1', 'SHA512'] as const;
export type HmacAlgo = (typeof HMAC_ALGOS)[number];

/** Longest secret taken (a secret is a key: 1 to 256 characters). */
export const MAX_SECRET_CHARS = 256;

export interface HookRecord {
  hash: string;
  type: HookType;
  endpoint: string;
  options: { format: 'JSON'; hmac_algo: HmacAlgo; hmac_secret?: string };
  date_creation: string;
  /** Made by `callscript emulator --webhook` (not stored, not removed by a reset). */
  configured?: boolean;
}

/** Checks webhooks.subscribe's params [type, endpoint, options]. */
export function checkSubscription(
  type: unknown,
  endpoint: unknown,
  options: unknown,
): Checked<Omit<HookRecord, 'hash' | 'date_creation'>> {
  if (typeof type !== 'string') return fail(`params[0] (type) must be a string, e.g. "sms.mt.status_update"`);
  if (!(HOOK_TYPES as readonly string[]).includes(type))
    return fail(
      `params[0] (type): "${type.slice(0, 60)}" is not emulated; the emulator sends ${HOOK_TYPES.join(' and ')}`,
    );
  if (typeof endpoint !== 'string' || !isHttpUrl(endpoint))
    return fail(
      `params[1] (endpoint) must be the http:// or https:// URL of your webhook receiver, ` +
        `got ${JSON.stringify(endpoint ?? null)?.slice(0, 80)}`,
    );
  if (endpoint.length > 2048) return fail(`params[1] (endpoint) is ${endpoint.length} characters long; at most 2048`);
  const o = options ?? {};
  if (typeof o !== 'object' || Array.isArray(o))
    return fail('params[2] (options) must be an object {format, hmac_secret, hmac_algo} or null');
  const opts = o as Record<string, unknown>;
  const extra = Object.keys(opts).find((k) => !['format', 'hmac_secret', 'hmac_algo'].includes(k));
  if (extra) return fail(`params[2].${extra} is not an option; the options are format, hmac_secret and hmac_algo`);
  if (opts.format !== undefined && opts.format !== null && opts.format !== 'JSON')
    return fail(`params[2].format must be "JSON" (the only format emulated), got ${JSON.stringify(opts.format)}`);
  const algo = opts.hmac_algo ?? 'SHA256';
  if (typeof algo !== 'string' || !(HMAC_ALGOS as readonly string[]).includes(algo))
    return fail(`params[2].hmac_algo must be one of ${HMAC_ALGOS.join(', ')}, got ${JSON.stringify(opts.hmac_algo)}`);
  const secret = opts.hmac_secret;
  if (secret !== undefined && secret !== null) {
    const bad = secretProblem(secret);
    if (bad) return fail(`params[2].hmac_secret ${bad}`);
  }
  const out: Omit<HookRecord, 'hash' | 'date_creation'> = {
    type: type as HookType,
    endpoint,
    options: { format: 'JSON', hmac_algo: algo as HmacAlgo },
  };
  if (typeof secret === 'string') out.options.hmac_secret = secret;
  return { ok: true, value: out };
}

/** Why `secret` is not a usable HMAC secret (null when it is). */
export function secretProblem(secret: unknown): string | null {
  if (typeof secret !== 'string') return 'must be a string';
  if (secret === '') return 'is empty: give a secret, or none for unsigned events';
  if (secret.length > MAX_SECRET_CHARS) return `is ${secret.length} characters long; at most ${MAX_SECRET_CHARS}`;
  return null;
}

export function newHook(hash: string, h: Omit<HookRecord, 'hash' | 'date_creation'>, now: number): HookRecord {
  return { hash, ...h, date_creation: formatDatetime(now) };
}

/** A subscription as the API shows it: the secret is never shown, only whether there is one. */
export function hookView(h: HookRecord): Record<string, unknown> {
  return {
    hash: h.hash,
    type: h.type,
    endpoint: h.endpoint,
    options: { format: h.options.format, hmac_algo: h.options.hmac_algo, signed: h.options.hmac_secret !== undefined },
    date_creation: h.date_creation,
    ...(h.configured ? { configured: true } : {}),
  };
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}
