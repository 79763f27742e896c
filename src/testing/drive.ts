/**
 * The tools' driver of the call step: one call stepped by the engine's `advance`, its
 * effects carried out by the executor the tool chooses (src/testing/executors.ts), the way
 * the server steps a call (src/engine/call.ts): the call's state, its EffectMemo (an http
 * lookup still running while its filler plays, the lookups started) and its clock are kept
 * between requests, and each request is built as the telephony service builds it (the
 * first request; the result, error or terminal status of the last command; the terminal
 * request after the flow's own hangup).
 *
 * `callscript test` (runner.ts), `simulate` (simulate.ts), `paths` (explore.ts) and replay
 * (replay.ts) all step calls through here; the differences between them are their
 * executors. One clock per call: `now` is what the request's calendars, templates and
 * conditions read (a scenario's mocks.now then its steps' `now:`, simulate's --now, the
 * recorded time of each request in a replay).
 */
import { advance } from '../engine/advance.js';
import type { RunHooks } from '../engine/behaviour.js';
import type { CompiledFlow } from '../engine/compile.js';
import {
  runEffectsSync,
  type EffectDone,
  type EffectMemo,
  type Settled,
  type SyncExecutor,
} from '../engine/effects.js';
import { MASK } from '../engine/mask.js';
import type { Effect, EngineOptions } from '../engine/outcome.js';
import type { CallState } from '../engine/types.js';
import type { Value } from '../flow/model.js';
import type { CallStatus } from '../protocol/commands.js';
import type { RtRequest, RtResponse } from '../protocol/rt.js';
import { TOOL_BUDGET_MS } from './executors.js';

/**
 * What the service reports on the last command: its result, its error, or a terminal call status (which may carry the
 * interrupted command's result or error: a recording's file name when the caller hangs up while recording).
 */
export type Input = { result: string } | { error: string } | { status: CallStatus; result?: string; error?: string };

/** Secrets read `***` in the tools (what recordings show of them): the flow's http steps render that. */
export const toolSecret = (_name: string): string => MASK;

/** The tools read an environment's `from_env:` values from their own process's environment, as the server does. */
export const processEnviron = (name: string): string | undefined => process.env[name];

export interface CallSetup {
  /** The call's request fields (command, command_id, result, error and status are set per request). */
  base: RtRequest;
  /** The clock of the first request (epoch ms). */
  now: number;
  /** The vars the call starts with over the flow's (a case's vars:, an outbound call's start vars). */
  vars?: Record<string, Value>;
  hooks?: RunHooks;
  /** What the engine does with a request for a call it has no state for (default reject). */
  unknownCall?: EngineOptions['unknownCall'];
  maxLogicSteps?: number;
  /** Reads the flow's secrets (default: each reads ***). */
  secret?: (name: string) => string | undefined;
  /** Reads the server's environment for the flow's `from_env:` values (default: this process's environment). */
  environ?: (name: string) => string | undefined;
  /** What a request may wait for its effects (default TOOL_BUDGET_MS). */
  budgetMs?: number;
}

/** One request stepped: what was asked, at what time, what the step answered and the effects it performed. */
export interface Stepped {
  kind: 'stepped';
  request: RtRequest;
  now: number;
  outcome: Settled;
  effects: EffectDone[];
}

/**
 * The executor could not answer an effect yet (the simulator asks the person at the
 * terminal): nothing of the request was kept; `again()` runs it once more when answered.
 */
export interface Asked {
  kind: 'asked';
  request: RtRequest;
  now: number;
  /** The effect waiting for an answer. */
  effect: Effect;
  /** The effects performed before it in this run. */
  effects: EffectDone[];
}

/**
 * An executor that may lack an answer (the person at the terminal): it answers a stand-in
 * and names the effect in `asking`; the driver drops that run (the step is pure) and runs
 * the request again once the answer is given (`begin(true)`: the same request again).
 */
export interface AskingExecutor extends SyncExecutor {
  readonly asking: Effect | undefined;
  /** A request's run begins: `again` when it is the same request run once more. */
  begin(again: boolean): void;
}

function isAsking(e: SyncExecutor): e is AskingExecutor {
  return 'begin' in e && typeof (e as AskingExecutor).begin === 'function';
}

/** A request of the call: the first one (`last` absent), or one reporting `input` on the last command. */
export function requestFor(
  base: RtRequest,
  last: { command: string; command_id: number } | undefined,
  input?: Input,
  firstStatus: CallStatus = 'UP',
): RtRequest {
  if (!last)
    return {
      ...base,
      command: '',
      command_id: 0,
      command_result: '',
      command_error: '',
      call_status: firstStatus,
    };
  const req: RtRequest = {
    ...base,
    command: last.command,
    command_id: last.command_id,
    command_result: '',
    command_error: '',
    call_status: 'UP',
  };
  if (!input) return req;
  const i: { status?: CallStatus; result?: string; error?: string } = input;
  if (i.status !== undefined) req.call_status = i.status;
  if (i.error !== undefined) req.command_error = i.error;
  else if (i.result !== undefined) req.command_result = i.result;
  return req;
}

/** The engine options of one request of a call set up as `s`, at `now`. */
export function engineOf(s: CallSetup, now: number, hooks = true): EngineOptions {
  return {
    now,
    unknownCall: s.unknownCall ?? 'reject',
    secret: s.secret ?? toolSecret,
    // an environment's from_env values (not secrets) are read as the server reads them
    environ: s.environ ?? processEnviron,
    ...(s.vars && Object.keys(s.vars).length > 0 ? { vars: s.vars } : {}),
    ...(hooks && s.hooks ? { hooks: s.hooks } : {}),
    ...(s.maxLogicSteps !== undefined ? { maxLogicSteps: s.maxLogicSteps } : {}),
  };
}

/**
 * One request, stepped and its effects performed by `executor` (the memo is the call's, updated in place): the
 * pure core every tool shares. The explorer calls it from any call state; CallDriver for one call after another.
 */
export function stepRequest(
  flow: CompiledFlow,
  prior: CallState | undefined,
  req: RtRequest,
  engine: EngineOptions,
  executor: SyncExecutor,
  memo: EffectMemo,
  budgetMs = TOOL_BUDGET_MS,
): { outcome: Settled; effects: EffectDone[] } {
  // the start vars are read when the call starts (its first request) only
  return runEffectsSync(advance(flow, prior, req, engine), executor, {
    memo,
    budgetMs: () => budgetMs,
    now: engine.now,
  });
}

const copyMemo = (m: EffectMemo): EffectMemo => ({
  ...(m.lk ? { lk: { ...m.lk } } : {}),
  ...(m.hn !== undefined ? { hn: m.hn } : {}),
});

/** One call, stepped request after request. */
export class CallDriver {
  /** The call's state after the last request (undefined: not started, or over). */
  state: CallState | undefined;
  /** The call's effect memory, kept between requests as the server keeps it with the call's record. */
  memo: EffectMemo = {};
  /** The call's clock for its next request. */
  now: number;
  /** The last reply answered. */
  reply: RtResponse | undefined;
  /** Requests stepped so far. */
  requests = 0;
  private pending: RtRequest | undefined;

  constructor(
    readonly flow: CompiledFlow,
    private readonly executor: SyncExecutor,
    readonly setup: CallSetup,
  ) {
    this.now = setup.now;
  }

  /** The first request (call_status `status`, UP by default). */
  start(status: CallStatus = 'UP'): Stepped | Asked {
    return this.run(requestFor(this.setup.base, undefined, undefined, status), false);
  }

  /** The request reporting `input` on the last command. */
  report(input: Input): Stepped | Asked {
    return this.run(requestFor(this.setup.base, this.reply, input), false);
  }

  /** The same request once more, once the executor has the answer it asked for. */
  again(): Stepped | Asked {
    if (!this.pending) throw new Error('no request is waiting for an answer');
    return this.run(this.pending, true);
  }

  /**
   * What reporting `input` would do, run with `executor` (a copy of the call's): nothing of the call changes and no
   * hook hears it (the runner's choice of a stand-in for a masked input).
   */
  trial(input: Input, executor: SyncExecutor): { outcome: Settled; effects: EffectDone[] } {
    const req = requestFor(this.setup.base, this.reply, input);
    return stepRequest(
      this.flow,
      this.state,
      req,
      engineOf(this.setup, this.now, false),
      executor,
      copyMemo(this.memo),
      this.setup.budgetMs,
    );
  }

  private run(req: RtRequest, again: boolean): Stepped | Asked {
    const memo = copyMemo(this.memo);
    const exec = this.executor;
    if (isAsking(exec)) exec.begin(again);
    const now = this.now;
    const ran = stepRequest(this.flow, this.state, req, engineOf(this.setup, now), exec, memo, this.setup.budgetMs);
    if (isAsking(exec) && exec.asking) {
      this.pending = req;
      const at = ran.effects.findIndex((d) => d.effect === exec.asking);
      return {
        kind: 'asked',
        request: req,
        now,
        effect: exec.asking,
        effects: at < 0 ? ran.effects : ran.effects.slice(0, at),
      };
    }
    this.pending = undefined;
    this.requests++;
    this.memo = memo;
    const out = ran.outcome;
    if (out.kind === 'reply') {
      this.state = out.state ?? undefined;
      this.reply = out.reply;
    }
    return { kind: 'stepped', request: req, now, outcome: out, effects: ran.effects };
  }
}
