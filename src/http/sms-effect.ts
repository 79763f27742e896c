/**
 * The `sms` effect of flows, sent with the SMS REST client (src/sms/client.ts) within the
 * time left before the reply deadline; the client's errors become the error kinds a flow
 * branches on (see effects.ts).
 */
import { SmsApiError, SmsClient, SmsNetworkError, SmsTimeoutError, SmsValidationError } from '../sms/index.js';
import { EffectError, type SmsSender } from './effects.js';
import { CALLID_HEADER } from '../sms/index.js';

export interface SmsAccount {
  /** The REST address of version 1.1, e.g. http://127.0.0.1:4010/rest/v1.1 (the emulator). */
  baseUrl: string;
  login: string;
  password: string;
  /** At most this long per SMS (and never past the reply deadline). */
  timeoutMs: number;
}

export function smsSender(account: SmsAccount): SmsSender {
  return async (msg, budgetMs, callid) => {
    // the call the SMS belongs to, for the emulator's transcript (the service ignores the header)
    const headers = callid === undefined ? undefined : { [CALLID_HEADER]: callid };
    const client = new SmsClient({
      ...account,
      timeoutMs: Math.max(1, Math.min(account.timeoutMs, budgetMs)),
      ...(headers ? { headers } : {}),
    });
    try {
      return await client.send({ from: msg.from ?? '', to: msg.to, body: msg.body, options: msg.options ?? null });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof SmsTimeoutError) throw new EffectError('TIMEOUT', message);
      if (err instanceof SmsNetworkError) throw new EffectError('NETWORK', message);
      if (err instanceof SmsValidationError) throw new EffectError('REJECTED', message);
      if (err instanceof SmsApiError)
        throw new EffectError(
          err.status >= 400 && err.status < 500 ? 'REJECTED' : 'FAILED',
          `${err.status} ${err.code}: ${err.message}`,
        );
      throw new EffectError('FAILED', message);
    }
  };
}
