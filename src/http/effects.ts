/**
 * Performing the flow's effects (steps that act outside the call, such as `sms`) for the
 * real-time route, within the time left before the reply's deadline. An effect never
 * throws: every failure becomes an error kind the flow can branch on (`on: { error: ... }`):
 *
 * | error        | when |
 * |---|---|
 * | UNAVAILABLE  | no SMS account is configured |
 * | TIMEOUT      | no answer within the time left (the reply must go out in time) |
 * | NETWORK      | the SMS API could not be reached |
 * | REJECTED     | the SMS API refused the message (4xx: bad number, sender, credentials) |
 * | FAILED       | the SMS API failed (5xx, or an answer that is not its envelope) |
 */
import type { EffectResult, SmsEffect } from '../engine/outcome.js';

/** One SMS to send, as the flow's sms step gave it. */
export interface SmsMessage {
  to: string;
  body: string;
  from?: string;
  options?: {
    force_encoding?: 'GSM' | 'UNICODE';
    nature?: 'ALERTING' | 'MARKETING';
    user_data?: string;
    flash_message?: boolean;
    webhook?: { endpoint: string };
  };
}

/** Sends an SMS within `timeoutMs` for the call `callid` and returns its hash; throws an error with `kind`. */
export type SmsSender = (msg: SmsMessage, timeoutMs: number, callid?: string) => Promise<string>;

export interface Effects {
  sms?: SmsSender;
}

/** An error of an effect, with the kind the flow sees as `error`. */
export class EffectError extends Error {
  constructor(
    readonly kind: 'TIMEOUT' | 'NETWORK' | 'REJECTED' | 'FAILED',
    message: string,
  ) {
    super(message);
  }
}

export function smsMessage(params: SmsEffect['params']): SmsMessage {
  const msg: SmsMessage = { to: String(params.to), body: String(params.body) };
  if (params.from !== undefined) msg.from = String(params.from);
  const options: NonNullable<SmsMessage['options']> = {};
  if (params.force_encoding !== undefined) options.force_encoding = params.force_encoding as 'GSM' | 'UNICODE';
  if (params.nature !== undefined) options.nature = params.nature as 'ALERTING' | 'MARKETING';
  if (params.user_data !== undefined) options.user_data = String(params.user_data);
  if (params.flash_message !== undefined) options.flash_message = params.flash_message === true;
  if (params.webhook !== undefined) options.webhook = { endpoint: String(params.webhook) };
  if (Object.keys(options).length > 0) msg.options = options;
  return msg;
}

/** Sends an sms step's SMS within `budgetMs` (http lookups are the live executor's: src/http/live-executor.ts). */
export async function performEffect(effects: Effects, effect: SmsEffect, budgetMs: number): Promise<EffectResult> {
  if (budgetMs <= 0) return { ok: false, error: 'TIMEOUT', message: 'no time left before the reply deadline' };
  if (!effects.sms)
    return {
      ok: false,
      error: 'UNAVAILABLE',
      message: 'no SMS account configured (sms: in callscript.yaml, or SMS_LOGIN and SMS_PASSWORD)',
    };
  try {
    return { ok: true, value: await effects.sms(smsMessage(effect.params), budgetMs, effect.callid) };
  } catch (err) {
    if (err instanceof EffectError) return { ok: false, error: err.kind, message: err.message };
    return { ok: false, error: 'FAILED', message: err instanceof Error ? err.message : String(err) };
  }
}
