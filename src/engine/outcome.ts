/** The contract of `advance`: its options and what it answers. */
import type { Value } from '../flow/model.js';
import type { RtResponse } from '../protocol/rt.js';
import type { RunHooks } from './behaviour.js';
import type { CallState, CallSummary } from './types.js';
import type { EvalLimits } from '../flow/budget.js';
import type { QueueParams } from './queue.js';

export interface EngineOptions {
  /** Epoch ms of the request (the engine never reads the clock). */
  now: number;
  /** Logic steps allowed within one request before ITERATION_LIMIT; default 100. */
  maxLogicSteps?: number;
  /**
   * The cap on a call's stored state (its variables included), in bytes; default 32 KB.
   * A request that would go over it takes the error way (STATE_TOO_LARGE, see advance.ts).
   */
  maxStateBytes?: number;
  /** What one request's templates and expressions may spend (src/flow/budget.ts); default DEFAULT_EVAL_LIMITS. */
  evalLimits?: EvalLimits;
  /** What to do with a non-first request for a call that has no state. */
  unknownCall: 'restart' | 'hangup' | 'reject';
  /** A new call starts with these vars instead of the flow's (scenario cases). */
  vars?: Record<string, Value>;
  /** Observers of the run: transitions taken, steps entered (coverage, paths). */
  hooks?: RunHooks;
  /** Reads a secret a flow declares (`secrets:`), for its http steps; absent: secrets are empty. */
  secret?: (name: string) => string | undefined;
  /**
   * Reads a variable of the server's environment, for the `from_env:` values of a flow's environments that are not
   * secrets; absent: `secret` reads them (the server reads both from its environment).
   */
  environ?: (name: string) => string | undefined;
}

export const DEFAULT_MAX_LOGIC_STEPS = 100;

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  /** A code of src/errors/engine-codes.ts. */
  code?: string;
  step?: string;
  [k: string]: unknown;
}

/** Work outside the call that the engine suspends on; the server performs it and resumes. */
export interface SmsEffect {
  kind: 'sms';
  /** The step that asked for it. */
  step: string;
  /** The call it is done for (sent along with the SMS, so the emulator can show it in the call's transcript). */
  callid: string;
  /**
   * Rendered and checked: to (E.164), body, and from, force_encoding, nature, user_data, flash_message, webhook when
   * given.
   */
  params: Readonly<Record<string, string | boolean>>;
}
/**
 * An http lookup (version 2): the rendered request; `wait`: the lookup began on an earlier request, take its result.
 */
export interface HttpEffect {
  kind: 'http';
  step: string;
  callid: string;
  /**
   * The rendered request (HttpRequestSpec of src/engine/http-params.ts): it may hold secrets, never store or log it
   * whole.
   */
  params: Readonly<Record<string, unknown>>;
  /**
   * The names of the secrets the flow declares (`secrets:`), when it has any: their values are masked in what the
   * lookup's outcome says (a refusal names the URL's host, which may hold one).
   */
  secrets?: readonly string[];
  /** The step has a filler: a lookup still running at the deadline may answer `pending`. */
  filler: boolean;
  /** The lookup was started by an earlier request (its filler's result brought this one). */
  wait: boolean;
}
/**
 * A queue step's store operation (version 2, src/store/queues.ts): `poll` (join, or ask for the caller's turn),
 * `leave` (the caller hung up while waiting), `done` (the call bridged with the agent has ended).
 */
export interface QueueEffect {
  kind: 'queue';
  step: string;
  callid: string;
  op: QueueParams['op'];
  params: QueueParams;
}
export type Effect = SmsEffect | HttpEffect | QueueEffect;

/**
 * How an effect went: its value (the SMS hash, the HTTP status) with what `save:` keeps
 * (`data`: an http lookup's { status, body }), an error kind with a message for the log,
 * or, for an http step with a filler, `pending`: the lookup runs on past the deadline.
 */
export type EffectResult =
  { ok: true; value: string; data?: Value } | { ok: false; error: string; message?: string } | { pending: true };

export type Outcome =
  /**
   * The flow reached an effect: perform it, then call `resume` with its result (once) to
   * get the request's Outcome (which may be another effect).
   */
  | { kind: 'effect'; effect: Effect; resume(result: EffectResult): Outcome }
  /** Answer `replyJson` (HTTP 200); store `state` (serialised: `stateJson`), or delete the call when it is null. */
  | {
      kind: 'reply';
      reply: RtResponse;
      replyJson: string;
      state: CallState | null;
      stateJson?: string;
      summary?: CallSummary;
      log?: LogEntry[];
    }
  /** A retried request: answer `replyJson` (the stored reply, same bytes); store nothing. */
  | { kind: 'replay'; replyJson: string }
  /** A request from further back than the previous command: HTTP 409; store nothing. */
  | { kind: 'stale'; message: string; latest: number }
  /** Refused (UNKNOWN_CALL with policy reject, FLOW_VERSION_MISMATCH): 4xx; store nothing. */
  | { kind: 'rejected'; code: string; message: string };
