/**
 * What the call step tells its observers (metrics, traces, call history): one StepEvent per
 * request handled by CallHandler, once its work is over (a request answered by a deadline
 * fallback gives its event when the late step lands, marked `late`). Sensitive values are
 * masked before they get here (the request's result when it is a sensitive input, the
 * reply's params, the vars of an ended call, effect values of sensitive steps), so an
 * observer may store or export what it is given.
 *
 * Observers run on the request path: `step` must be cheap and must not throw (a throw is
 * caught and logged, the call is not affected); slow work (store writes) is theirs to run
 * in the background.
 */
import type { AnswerKind } from './answer.js';
import type { CallSummary } from './types.js';

/** The most of a request's command, result and error an observer is given (UTF-8 bytes, the cut's mark included). */
export const REQUEST_TEXT_BYTES = 256;

export type RequestOutcome =
  /** A new command answered (the call advanced or ended). */
  | 'ok'
  /** A retried request: the stored reply sent again. */
  | 'replay'
  /** STALE_REQUEST (a stale answer). */
  | 'stale'
  /** Refused by the engine (UNKNOWN_CALL under `reject`, FLOW_VERSION_MISMATCH...). */
  | 'rejected'
  /** No route, or the routed flow is not loaded (not_found). */
  | 'no_route'
  /** CALL_LIMIT: a new call refused (unavailable). */
  | 'call_limit'
  /** STORE_UNAVAILABLE (unavailable). */
  | 'store_unavailable'
  /** The step failed (FLOW_VERSION_GONE, INTERNAL...). */
  | 'error';

/** How a call ended, for metrics and history. */
export type CallOutcome =
  /** The flow ran to its `hangup` (or its end) and the service then reported the call over. */
  | 'completed'
  /** The call ended (the caller hung up, NOANSWER, BUSY...) before the flow finished. */
  | 'abandoned'
  /**
   * The call ended (HANGUP) while a `dialout` was its command: the target answered, the legs were bridged, and the call
   * ended when one side hung up (the normal end of a transfer). The service's request does not tell it from a caller
   * who hangs up while the targets ring (a dialout nobody answers ends with its NOANSWER result instead).
   */
  | 'transferred'
  /** The flow went its error way to the end (an engine error ended it). */
  | 'error'
  /** Ended from the admin API (DELETE /admin/calls/:callid). */
  | 'ended_by_admin';

export interface EffectEvent {
  kind: 'sms' | 'http' | 'queue';
  /** The flow step that asked for it. */
  step: string;
  /**
   * ok; `pending` (an http lookup runs on past the deadline); else the error kind (TIMEOUT, UNAVAILABLE,
   * HTTP_ERROR...).
   */
  outcome: string;
  /** The SMS hash or the HTTP status (*** for a sensitive step); absent on failure. */
  value?: string;
  ms: number;
  /** A queue step's operation: the queue, the op, and for a poll the caller's wait so far (seconds). */
  queue?: { name: string; op: 'poll' | 'leave' | 'done'; waited?: number };
}

export interface StepEvent {
  callid: string;
  /** The flow version that served the request; absent when none did (no route, store down before the load). */
  flow?: string;
  version?: string;
  outcome: RequestOutcome;
  /**
   * What the step came to (src/engine/answer.ts), and the error code of any kind but `answered`. A late step
   * (`late`: the fallback was sent in its place) reports its own outcome here.
   */
  answer: AnswerKind;
  code?: string;
  /** A deadline fallback was answered in its place (the step landed after it). */
  late: boolean;
  /** Epoch ms the request arrived; its handling time in ms (queueing behind the call's previous request included). */
  at: number;
  ms: number;
  /**
   * The request as reported: its command, result (*** when sensitive), error, status and command_id. The command,
   * result and error are cut to REQUEST_TEXT_BYTES (src/engine/size.ts clipText): a client's request of 64 KiB is
   * not what observers keep (history, traces).
   */
  request: { command: string; result: string; error: string; callStatus: string; commandId: number };
  /** The step whose command the request reports (absent for a new call). */
  from?: string;
  /** The step of the command answered (the call's step now); when the call ended, its last step. */
  step?: string;
  /** The command answered, and its params (sensitive values masked); absent when none was built (replay, errors). */
  reply?: { command: string; commandId: number; params: Record<string, unknown> };
  /** The request started the call. */
  isNew: boolean;
  /** The call ended with this request (its state dropped). */
  ended: boolean;
  /** Set when `ended`: how, and the call's summary (vars masked). */
  callOutcome?: CallOutcome;
  summary?: CallSummary;
  /**
   * The transitions the machine took, as coverage keys (src/testing/transitions.ts); only for observers with
   * `transitions: true`.
   */
  transitions: readonly string[];
  effects: readonly EffectEvent[];
  /** Engine log entries of level error this request produced (their codes). */
  errors: readonly string[];
  /** The trace id of the request's span, when one is recording (given to CallHandler.handle). */
  traceId?: string;
}

export interface StepObserver {
  /** Ask the engine for the transitions taken (a little work per request). */
  readonly transitions?: boolean;
  step(e: StepEvent): void;
}

/** Several observers as one (an observer that throws does not stop the others). */
export function observers(
  list: readonly (StepObserver | undefined)[],
  onError: (err: unknown) => void,
): StepObserver | undefined {
  const all = list.filter((o): o is StepObserver => o !== undefined);
  if (all.length === 0) return undefined;
  if (all.length === 1) {
    const [one] = all;
    return { transitions: one!.transitions === true, step: (e) => safe(one!, e, onError) };
  }
  return { transitions: all.some((o) => o.transitions), step: (e) => all.forEach((o) => safe(o, e, onError)) };
}

function safe(o: StepObserver, e: StepEvent, onError: (err: unknown) => void): void {
  try {
    o.step(e);
  } catch (err) {
    onError(err);
  }
}

/**
 * How a call ended, from the request that ended it and the state before it: `flowDone`, the flow had answered hangup;
 * `transferred`, the call ended (HANGUP) while its command was a dialout (isTransferEnd).
 */
export function callOutcomeOf(flowDone: boolean, errors: readonly string[], transferred = false): CallOutcome {
  if (errors.length > 0 && !flowDone) return 'error';
  if (flowDone) return 'completed';
  return transferred ? 'transferred' : 'abandoned';
}

/**
 * The terminal request ends a call whose outstanding command (`command`, the call's last reply) is a dialout: its
 * target answered and the bridged call ended. Only a HANGUP: a dialout nobody answers reports its NOANSWER result.
 */
export function isTransferEnd(command: string, callStatus: string): boolean {
  return callStatus === 'HANGUP' && command === 'dialout';
}
