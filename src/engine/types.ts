import type { LookupRecord } from './http-wait.js';
import type { Value } from '../flow/model.js';
import type { Frame } from './subflow.js';
import type { QueueMemo } from './queue.js';

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
 * A call's snapshot, kept in the CallStore between two requests. Plain JSON, small (a few
 * hundred bytes for the example flows): the machine's state and the persisted part of its
 * context; no part of the flow model.
 */
export interface CallState {
  v: 2;
  flow: string;
  /** Content hash of the flow version the call started on; the call stays on it. */
  version: string;
  /** The machine state the call is at (a step id, a say state `<dest>@say`, or `@end`). */
  s: string;
  /**
   * The step whose command is outstanding (for a say play: the step whose branch plays
   * it); once the flow is over, the last step run.
   */
  step: string;
  vars: Record<string, Value>;
  /** Counters of the current step; absent means visit 1, no retries. */
  c?: StepCounters;
  /** The result and error last fed (absent when empty): templates after a say still see them. */
  res?: string;
  err?: string;
  /** Escalation index of an outstanding say play (absent: 1). */
  k?: number;
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
  /** An http lookup still running while its filler plays (src/engine/http-wait.ts). */
  lk?: LookupRecord;
  /** http lookups started in this call so far (bounded per call). */
  hn?: number;
  /** Set once the flow has answered `hangup`: the call is over on our side. */
  done?: boolean;
  /** The code of the engine error (a log entry of level error) logged by the request that answered that hangup. */
  fail?: string;
  /**
   * Sensitive vars and result, sealed (AES-256-GCM) when a key is configured; they show `***` in `vars`/`res`
   * (src/engine/seal.ts).
   */
  x?: string;
  /**
   * Frames of the modules the call is in (version 2 subflows), the innermost last: each the call site and the caller's
   * vars.
   */
  f?: Frame[];
  /** What a module run on its own returned (a scenario of a module): its result and values. */
  ret?: { result: string; values: Record<string, Value> };
  /** The items each running foreach has taken, by loop step (version 2; src/engine/loop.ts). */
  l?: Record<string, number>;
  /** A queue step's memo while the call waits in its line (src/engine/queue.ts). */
  q?: QueueMemo;
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
  /** The flow ended on an engine error: its code (RUNTIME_MEDIA, ITERATION_LIMIT...). */
  error?: string;
}
