import type { Value } from '../flow/model.js';

/** Per-step counters: attempts (visits since the step was last entered fresh) and retries per result key. */
export interface StepCounters {
  /** 1 on a fresh entry, +1 on each retry: picks the n-th media of an escalating list. */
  n: number;
  /** Retries taken so far, per branch key ("TIMEOUT", "default", "/^1/"...). */
  r: Record<string, number>;
}

/**
 * A call's snapshot, kept in the CallStore between two requests. Plain JSON, small
 * (target: under 2 KB serialised).
 */
export interface CallState {
  v: 1;
  flow: string;
  /** Content hash of the flow version the call started on; the call stays on it. */
  version: string;
  /** The step whose command is outstanding. */
  step: string;
  /**
   * Set when the outstanding command is a branch's `say:` (a play inserted before the
   * transition): where to go once it completes, whatever its result.
   */
  after?: { to: string; retryOf?: string; key?: string };
  vars: Record<string, Value>;
  counters: Record<string, StepCounters>;
  /** Id of the outstanding command (1, 2, 3, ... per call). */
  commandId: number;
  /** The reply last sent, serialised: sent again, byte for byte, to a retried request. */
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
