import type { RtRequest } from '../protocol/rt.js';
import { serializeReply } from './serialize.js';

/**
 * What the call step answers a request, as kinds: the HTTP stage maps them to statuses
 * (src/http/rt-route.ts), the observers count them. No HTTP here.
 */
export type StepAnswer =
  /** The reply to send (a new command, a replayed reply, a hangup, or the deadline fallback: `late`). */
  | { kind: 'answered'; body: string; late?: true }
  /** No flow for the request (NO_ROUTE, UNKNOWN_FLOW), or a call the engine does not know (UNKNOWN_CALL, `reject`). */
  | { kind: 'not_found'; code: string; message: string }
  /** A request from further back than the previous command (STALE_REQUEST): nothing changed. */
  | { kind: 'stale'; code: string; message: string }
  /** Not now, retry: the store is unreachable (STORE_UNAVAILABLE), too many live calls (CALL_LIMIT). */
  | { kind: 'unavailable'; code: string; message: string }
  /** The step cannot be done (FLOW_VERSION_GONE, FLOW_VERSION_MISMATCH, INTERNAL): the call stays where it was. */
  | { kind: 'failed'; code: string; message: string };

export type AnswerKind = StepAnswer['kind'];

export function answered(body: string): StepAnswer {
  return { kind: 'answered', body };
}

/** `hangup`, numbered after the request's command: a call that is over, or was never known. */
export function hangupAnswer(req: RtRequest): StepAnswer {
  return answered(
    serializeReply({ command: 'hangup', command_id: req.command_id + 1, params: {}, variablesRaw: req.variablesRaw }),
  );
}

/** What a step that threw answers: a store out of reach is `unavailable` (the service retries), else `failed`. */
export function failureAnswer(err: unknown): Exclude<StepAnswer, { kind: 'answered' }> {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (code !== 'STORE_UNAVAILABLE')
    return { kind: 'failed', code: 'INTERNAL', message: 'the step failed; the call state was not changed' };
  const message = `the call store is unavailable (${(err as Error).message}); nothing was changed, retry`;
  return { kind: 'unavailable', code: 'STORE_UNAVAILABLE', message };
}
