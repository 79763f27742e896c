/**
 * One effect model for every tool. An effect (an http lookup, an SMS, a queue operation) is data
 * the step returns: `advance` suspends on it (Outcome kind `effect`) and goes on once given
 * its result. Who carries it out is an Executor, chosen by whoever drives the step:
 *
 * | driver                 | executor                                                              |
 * |---|---|
 * | the server             | live: the SMS API, the http lookups, the store's queues (src/http/live-executor.ts) |
 * | `callscript test`      | the scenario's mocks, its queues on the memory store's lines (src/testing/executors.ts) |
 * | `callscript simulate`  | mock routes (--mocks), or the person asked (src/testing/sim-executor.ts) |
 * | `callscript paths`     | each branch an effect can take, one at a time (src/testing/branch-executor.ts) |
 * | replay of a recording  | the recorded answers (src/testing/executors.ts)                       |
 *
 * The tools drive the step through one driver (src/testing/drive.ts): the call's state, memo and clock.
 *
 * The loop is the same for all of them: perform the effect, resume the step with its result,
 * until the step answers (a reply, a replay, stale, rejected). What an executor keeps between
 * requests of a call (an http lookup still running while its filler plays, the number of
 * lookups the call started) is the call's EffectMemo, stored with the call's record.
 */
import { MAX_BODY_DEPTH, type LookupError, type LookupRecord } from './http-wait.js';
import type { Effect, EffectResult, Outcome } from './outcome.js';
import { nestedDeeper } from '../protocol/json-depth.js';

/** What a call keeps between requests for its effects (fields of its stored record). */
export interface EffectMemo {
  /** An http lookup still running while its filler plays (src/engine/http-wait.ts). */
  lk?: LookupRecord;
  /** http lookups the call started so far (bounded per call). */
  hn?: number;
}

/** What an executor is given with each effect. */
export interface EffectContext {
  /** The call's effect memory, as stored with its record: the executor updates it. */
  readonly memo: EffectMemo;
  /** Milliseconds left to perform it before the reply must go out (tools give a fixed, virtual budget). */
  budgetMs(): number;
  /** The call's clock for this request (epoch ms): the request's time, a scenario's mocks.now, --now. */
  readonly now: number;
}

/** Carries out effects: never throws (a failure is an EffectResult error kind the flow branches on). */
export interface Executor {
  perform(effect: Effect, ctx: EffectContext): Promise<EffectResult>;
}

/** An executor that answers at once (the tools' executors: mocks, the explorer, replay). */
export interface SyncExecutor {
  perform(effect: Effect, ctx: EffectContext): EffectResult;
}

/** One effect performed during a request, with its result and how long it took (ms). */
export interface EffectDone {
  effect: Effect;
  result: EffectResult;
  ms: number;
}

/** What a request's step answers once its effects are done. */
export type Settled = Exclude<Outcome, { kind: 'effect' }>;

export interface Ran {
  outcome: Settled;
  /** The effects performed, in order. */
  effects: EffectDone[];
}

/** The clocks an effect's duration is read on: a fine one, and the epoch (a lookup begun by an earlier request). */
export interface EffectTimer {
  /** Milliseconds, fine-grained (performance.now()). */
  fine(): number;
  /** Epoch milliseconds (Date.now()). */
  epoch(): number;
}

const REAL_TIME: EffectTimer = { fine: () => performance.now(), epoch: () => Date.now() };

/**
 * An effect's result as the step takes it, whoever answered it (the server, mocks, a person in `simulate`, a
 * recording): data nested deeper than a lookup's answer may be (MAX_BODY_DEPTH, in its { status, body }) is the error
 * TOO_DEEP, before anything serialises or walks it.
 */
export function boundedResult(r: EffectResult): EffectResult {
  if (!('ok' in r) || !r.ok || r.data === undefined || !nestedDeeper(r.data, MAX_BODY_DEPTH + 1)) return r;
  return {
    ok: false,
    error: 'TOO_DEEP' satisfies LookupError,
    message: `the answer nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`,
  };
}

/** Performs the step's effects with `executor`, one after the other, until it answers. */
export async function runEffects(
  outcome: Outcome,
  executor: Executor,
  ctx: EffectContext,
  timer: EffectTimer = REAL_TIME,
): Promise<Ran> {
  const effects: EffectDone[] = [];
  while (outcome.kind === 'effect') {
    const effect = outcome.effect;
    // a lookup an earlier request started (its filler's result brought this one): timed from its start
    const begun = effect.kind === 'http' && effect.wait ? ctx.memo.lk?.started : undefined;
    const t0 = timer.fine();
    const result = boundedResult(await executor.perform(effect, ctx));
    const whole = begun !== undefined && !('pending' in result);
    effects.push({ effect, result, ms: whole ? Math.max(0, timer.epoch() - begun) : timer.fine() - t0 });
    outcome = outcome.resume(result);
  }
  return { outcome, effects };
}

/** runEffects for an executor that answers at once: the step stays synchronous (the tools). */
export function runEffectsSync(outcome: Outcome, executor: SyncExecutor, ctx: EffectContext): Ran {
  const effects: EffectDone[] = [];
  while (outcome.kind === 'effect') {
    const result = boundedResult(executor.perform(outcome.effect, ctx));
    effects.push({ effect: outcome.effect, result, ms: 0 });
    outcome = outcome.resume(result);
  }
  return { outcome, effects };
}
