import type { Value } from '../flow/model.js';

/**
 * Counters of the step the call is at: visits since the step was last entered fresh, and
 * retries taken per result key. Only the current step's counters matter (entering a step
 * from another one resets them), so the state keeps one set.
 */
export interface StepCounters {
  /** 1 on a fresh entry, +1 on each retry: picks the n-th media of an escalating list. */
  n: number;
  /** Retries taken so far, per branch key ("TIMEOUT", "default", "/^1/", "error"...). */
  r: Record<string, number>;
}

/**
 * Set while the outstanding command is a branch's `say:` (a play inserted before the
 * transition): where to go once it completes, whatever its result or error.
 */
export interface AfterSay {
  /** The step to enter once the play completes. */
  to: string;
  /** 1: `to` is a retry of the same step: enter it with `counters` (else fresh). */
  keep?: 1;
  /** The result and error that fired the branch: templates after the play still see them. */
  res?: string;
  err?: string;
}

/**
 * A call's snapshot, kept in the CallStore between two requests. Plain JSON, small
 * (under 2 KB serialised for the example flows): it holds no part of the flow model.
 */
export interface CallState {
  v: 1;
  flow: string;
  /** Content hash of the flow version the call started on; the call stays on it. */
  version: string;
  /**
   * The step whose command is outstanding. While a branch's `say:` play is outstanding
   * (`after` set), the step whose branch played it. Once `done`, the last step run.
   */
  step: string;
  after?: AfterSay;
  vars: Record<string, Value>;
  /** Counters of `step` (or of `after.to` when `after.keep`); absent means visit 1, no retries. */
  counters?: StepCounters;
  /** Id of the outstanding command (1, 2, 3, ... per call; base req.command_id on a restart). */
  commandId: number;
  /**
   * The reply last sent, serialised, without its trailing `variables` member (rebuilt from
   * the retried request, which carries the same): sent again byte for byte on a retry.
   */
  reply: string;
  /** Epoch ms when the call started here. */
  started: number;
  /** Commands issued so far. */
  commands: number;
  /** Set once the flow has answered `hangup`: the call is over on our side. */
  done?: boolean;
}

/** One line logged per call when it ends. */
export interface CallSummary {
  callid: string;
  flow: string;
  version: string;
  status: string;
  commands: number;
  durationMs: number;
  lastStep: string;
  vars: Record<string, Value>;
}
