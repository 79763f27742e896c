/**
 * The checks the service makes on SMS REST arguments, as plain functions that return the
 * first problem (or null). The client runs them before sending; the emulator can run the
 * same ones so that both give the same messages. A message reads "<param>: <reason>",
 * the reasons of the formats coming from src/protocol/formats.ts.
 */
import { checkDatetime, checkE164, checkSmsSender } from '../protocol/formats.js';
import type { SmsOptions } from './types.js';

export interface SmsArgProblem {
  /** The parameter at fault, as named on the wire: "to", "options.nature", ... */
  param: string;
  message: string;
}

const OPTION_KEYS = ['force_encoding', 'nature', 'user_data', 'flash_message', 'webhook'] as const;
export const USER_DATA_MAX = 32;

function problem(param: string, reason: string): SmsArgProblem {
  return { param, message: `${param}: ${reason}` };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** POST /sms and GET /sms/send: from, to, body, options. */
export function checkSendArgs(args: {
  from?: unknown;
  to?: unknown;
  body?: unknown;
  options?: unknown;
}): SmsArgProblem | null {
  const { from, to, body, options } = args;
  if (typeof from !== 'string') return problem('from', 'a string is required ("" for a shared short code)');
  const fromReason = checkSmsSender(from);
  if (fromReason) return problem('from', fromReason);
  if (typeof to !== 'string') return problem('to', 'a string is required');
  const toReason = checkE164(to);
  if (toReason) return problem('to', toReason);
  if (typeof body !== 'string') return problem('body', 'a string is required');
  if (body === '') return problem('body', 'the message body is empty');
  return checkSmsOptions(options);
}

/** SMS.Options: undefined or null for defaults, else an object of known keys. */
export function checkSmsOptions(options: unknown): SmsArgProblem | null {
  if (options === undefined || options === null) return null;
  if (!isRecord(options)) return problem('options', 'an object or null');
  for (const key of Object.keys(options)) {
    if (!(OPTION_KEYS as readonly string[]).includes(key)) {
      return problem(`options.${key}`, `unknown option (known: ${OPTION_KEYS.join(', ')})`);
    }
  }
  const o = options as Record<keyof SmsOptions, unknown>;
  if (o.force_encoding !== undefined && o.force_encoding !== 'GSM' && o.force_encoding !== 'UNICODE') {
    return problem('options.force_encoding', 'GSM or UNICODE');
  }
  if (o.nature !== undefined && o.nature !== 'ALERTING' && o.nature !== 'MARKETING') {
    return problem('options.nature', 'ALERTING or MARKETING');
  }
  if (o.user_data !== undefined) {
    if (typeof o.user_data !== 'string') return problem('options.user_data', 'a string');
    if ([...o.user_data].length > USER_DATA_MAX)
      return problem('options.user_data', `${USER_DATA_MAX} characters at most`);
  }
  if (o.flash_message !== undefined && typeof o.flash_message !== 'boolean') {
    return problem('options.flash_message', 'true or false');
  }
  if (o.webhook !== undefined) {
    if (!isRecord(o.webhook) || typeof o.webhook.endpoint !== 'string') {
      return problem('options.webhook', 'an object {endpoint: "<http(s) URL>"}');
    }
    const reason = checkHttpUrl(o.webhook.endpoint);
    if (reason) return problem('options.webhook.endpoint', reason);
  }
  return null;
}

function checkHttpUrl(v: string): string | null {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'not a URL (e.g. https://example.com/sms-status)';
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'an http: or https: URL';
}

/** GET /sms: type, from, to, all required. */
export function checkListArgs(args: { type?: unknown; from?: unknown; to?: unknown }): SmsArgProblem | null {
  if (args.type !== 'IN' && args.type !== 'OUT') return problem('type', 'IN or OUT');
  for (const param of ['from', 'to'] as const) {
    const v = args[param];
    if (typeof v !== 'string') return problem(param, 'a datetime is required (YYYY-MM-DD HH:MM:SS, UTC)');
    const reason = checkDatetime(v);
    if (reason) return problem(param, reason);
  }
  return null;
}

/** A Date as the API's datetime: YYYY-MM-DD HH:MM:SS in UTC (milliseconds dropped). */
export function toSmsDatetime(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}
