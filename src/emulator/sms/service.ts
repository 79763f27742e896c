/** The account's SMS operations, shared by the REST API, JSON-RPC and the control API. */
import { checkDatetime } from '../../protocol/formats.js';
import type { EmulatorContext, SmsFailure } from '../context.js';
import { parseDatetime } from '../time.js';
import { newInboundSms, newOutboundSms, smsObject } from './record.js';
import type { Checked, SmsToSend } from './validate.js';

export const HASH = /^[A-Z0-9]{8}$/;

export type Sent = { ok: true; hash: string } | { ok: false; failure: SmsFailure };

/**
 * Stores and sends an SMS, unless a failure was injected for its recipient. An SMS sent
 * for a live call is noted in its transcript: the call named by `callid` (callscript's
 * sms steps send it in the x-callscript-callid header), else the only call whose request
 * the customer server is answering at that moment (none is guessed among several).
 */
export function sendSms(ctx: EmulatorContext, sms: SmsToSend, callid?: string): Sent {
  const failure = ctx.smsFailures.get(sms.to);
  if (failure) return { ok: false, failure };
  const hash = ctx.store.newHash();
  const record = newOutboundSms(hash, sms, ctx.clock.now(), ctx.sms);
  ctx.store.putSms(record);
  ctx.webhooks.smsCreated(record);
  const named = callid !== undefined ? ctx.live.get(callid) : undefined;
  const answering = named ? [named] : [...ctx.live.values()].filter((c) => c.answering > 0);
  const call = answering.length === 1 ? answering[0]! : undefined;
  if (call) {
    call.sms.push({
      request: call.answering,
      hash,
      from: record.from,
      to: record.to,
      text: record.text,
      encoding: record.encoding,
      parts: record.parts,
      matched_by: named ? 'header' : 'timing',
    });
  }
  return { ok: true, hash };
}

export function receiveSms(ctx: EmulatorContext, from: string, to: string, body: string): string {
  const hash = ctx.store.newHash();
  const record = newInboundSms(hash, from, to, body, ctx.clock.now());
  ctx.store.putSms(record);
  ctx.webhooks.smsReceived(record);
  return hash;
}

export type Found = { ok: true; value: Record<string, unknown> } | { ok: false; notFound: boolean; message: string };

export function getSms(ctx: EmulatorContext, hash: unknown): Found {
  if (typeof hash !== 'string')
    return {
      ok: false,
      notFound: false,
      message: `hash must be a string, got ${hash === null ? 'null' : typeof hash}`,
    };
  if (!HASH.test(hash))
    return {
      ok: false,
      notFound: false,
      message: `"${hash}" is not an SMS hash (8 upper-case letters and digits, e.g. 8242D945)`,
    };
  const r = ctx.store.sms.get(hash);
  if (!r) return { ok: false, notFound: true, message: `no SMS with hash ${hash}` };
  return { ok: true, value: smsObject(r, ctx.clock.now()) };
}

/** GET /sms and sms.get_list: type IN|OUT and a period [from, to] (UTC), all required. */
export function listSms(
  ctx: EmulatorContext,
  type: unknown,
  from: unknown,
  to: unknown,
): Checked<Record<string, unknown>[]> {
  const named: [string, unknown][] = [
    ['type', type],
    ['from', from],
    ['to', to],
  ];
  for (const [k, v] of named) {
    if (v === undefined || v === null || v === '')
      return {
        ok: false,
        message: `${k} is required (${k === 'type' ? 'IN or OUT' : 'a datetime YYYY-MM-DD HH:MM:SS, UTC'})`,
      };
    if (typeof v !== 'string')
      return {
        ok: false,
        message: `${k} must be a string, got ${Array.isArray(v) ? 'an array (given more than once?)' : typeof v}`,
      };
  }
  if (type !== 'IN' && type !== 'OUT') return { ok: false, message: `type must be IN or OUT, got "${type}"` };
  for (const [k, v] of named.slice(1)) {
    const bad = checkDatetime(v as string);
    if (bad) return { ok: false, message: `${k} "${v}" is not a datetime: ${bad}` };
  }
  const lo = parseDatetime(from as string);
  const hi = parseDatetime(to as string);
  if (lo > hi) return { ok: false, message: `from (${from}) is after to (${to})` };
  const now = ctx.clock.now();
  const out: Record<string, unknown>[] = [];
  for (const r of ctx.store.sms.values()) {
    // Dates are whole seconds: compare at second precision.
    const t = Math.floor(r.created / 1000) * 1000;
    if (r.type === type && t >= lo && t <= hi) out.push(smsObject(r, now));
  }
  return { ok: true, value: out };
}
