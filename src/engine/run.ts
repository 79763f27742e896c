/**
 * The step loop of one request: enter a step, run logic steps (set, switch) until a step
 * emits a command, take branches (goto, retry with counters, say before going on), and
 * stop at the end of the flow with `hangup`. Bounded by maxLogicSteps; never throws on
 * flow content (templates, conditions and params fail into logs and error branches).
 */
import type { CommandName } from '../protocol/commands.js';
import { isEffect } from '../flow/actions.js';
import type { Effect, EffectResult } from './outcome.js';
import { evaluate, test } from '../flow/expr.js';
import { ParamFailure, type Params } from './params.js';
import { END, matchResult, type PBranch, type PCommand, type PSet, type PSwitch, type Program } from './program.js';
import { frozenParams } from './serialize.js';
import { addLog, scopeOf, setVar, type RunCtx } from './scope.js';
import type { AfterSay, StepCounters } from './types.js';

/** What a request ends with: one command to send, and where the call then stands. */
export interface Emit {
  command: CommandName;
  params: Params;
  /** state.step */
  step: string;
  after?: AfterSay;
  counters?: StepCounters;
  /** The flow is over on our side (hangup sent). */
  done?: boolean;
}

/** The run stopped at an effect step: perform `effect`, then `resumeEffect`. */
export interface Suspend {
  suspend: true;
  effect: Effect;
  step: PCommand;
  counters?: StepCounters;
  handler: boolean;
}

export type RunOut = Emit | Suspend;

interface Next {
  id: string;
  counters?: StepCounters;
}

const HANGUP_PARAMS: Params = frozenParams({});

export function endOfFlow(ctx: RunCtx): Emit {
  return { command: 'hangup', params: HANGUP_PARAMS, step: ctx.lastStep, done: true };
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

/** Applies a branch taken at `from`: a retry, a goto, or the end; with its `say:` play if any. */
export function takeBranch(ctx: RunCtx, from: PCommand, b: PBranch | undefined, counters: StepCounters | undefined): Emit | Next {
  if (!b) return { id: END };
  let next: Next;
  let k: number;
  if (b.retry !== undefined) {
    const used = counters?.r[b.key] ?? 0;
    k = used + 1;
    if (used < b.retry) {
      const r: Record<string, number> = Object.assign({}, counters?.r);
      r[b.key] = k;
      next = { id: from.id, counters: { n: (counters?.n ?? 1) + 1, r } };
    } else {
      next = { id: b.then ?? END };
    }
  } else {
    k = 1;
    next = { id: b.goto ?? END };
  }
  if (!b.say) return next;
  let params: Params;
  try {
    params = b.say.build(() => scopeOf(ctx), k);
  } catch (err) {
    const f = err instanceof ParamFailure ? err : undefined;
    addLog(ctx, { level: 'warn', code: f?.code ?? 'RUNTIME_PARAM', msg: `say of "${b.key}" at ${from.id} skipped: ${message(err)}`, step: from.id });
    return next;
  }
  const after: AfterSay = { to: next.id };
  if (next.counters) after.keep = 1;
  if (ctx.result !== '') after.res = ctx.result;
  if (ctx.error !== '') after.err = ctx.error;
  const emit: Emit = { command: 'play', params, step: from.id, after };
  if (next.counters) emit.counters = next.counters;
  return emit;
}

function runSet(ctx: RunCtx, step: PSet): void {
  for (const a of step.assign) {
    if (a.kind === 'literal') {
      if (a.value.c) {
        setVar(ctx, a.name, a.value.v);
        continue;
      }
      try {
        setVar(ctx, a.name, a.value.f(() => scopeOf(ctx)));
      } catch (err) {
        addLog(ctx, { level: 'warn', code: 'RUNTIME_TEMPLATE', msg: `set ${a.name} at ${step.id}: ${message(err)}`, step: step.id });
      }
      continue;
    }
    try {
      setVar(ctx, a.name, evaluate(a.expr, scopeOf(ctx)));
    } catch (err) {
      addLog(ctx, { level: 'warn', code: 'RUNTIME_EXPRESSION', msg: `set ${a.name} = ${a.expr} at ${step.id}: ${message(err)}`, step: step.id });
    }
  }
}

function runSwitch(ctx: RunCtx, step: PSwitch): string {
  for (const c of step.cases) {
    let ok = false;
    try {
      ok = test(c.when, scopeOf(ctx));
    } catch (err) {
      addLog(ctx, { level: 'warn', code: 'RUNTIME_CONDITION', msg: `${c.when} at ${step.id}: ${message(err)} (counted as false)`, step: step.id });
    }
    if (ok) return c.goto;
  }
  return step.default;
}

/**
 * Runs from `id` (entered with `counters`, or fresh) until a command is emitted.
 * `handler`: the hangup handler's run: logic steps only, and no command is ever emitted
 * (the returned Emit is the end of flow).
 */
export function runFrom(program: Program, ctx: RunCtx, id: string, counters: StepCounters | undefined, handler = false): RunOut {
  for (;;) {
    if (id === END) return endOfFlow(ctx);
    const step = program.steps.get(id);
    if (!step) {
      addLog(ctx, { level: 'error', code: 'STATE_INVALID', msg: `no step "${id}" in the flow`, step: id });
      return endOfFlow(ctx);
    }
    if (step.kind === 'command' && handler && !isEffect(step.command)) {
      addLog(ctx, { level: 'warn', code: 'HANDLER_COMMAND', msg: `the hangup handler reached command step ${id} (${step.command}); not issued`, step: id });
      return endOfFlow(ctx);
    }
    if (ctx.iterations >= ctx.maxIterations) {
      addLog(ctx, { level: 'error', code: 'ITERATION_LIMIT', msg: `${ctx.maxIterations} logic steps ran without a command (at ${id}); hanging up`, step: id });
      return endOfFlow(ctx);
    }
    ctx.lastStep = id;
    switch (step.kind) {
      case 'set':
        ctx.iterations++;
        runSet(ctx, step);
        id = step.next;
        counters = undefined;
        continue;
      case 'switch':
        ctx.iterations++;
        id = runSwitch(ctx, step);
        counters = undefined;
        continue;
      case 'command': {
        let params: Params;
        try {
          params = step.builder.build(() => scopeOf(ctx), counters?.n ?? 1);
        } catch (err) {
          ctx.iterations++;
          const f = err instanceof ParamFailure ? err : undefined;
          if (f?.code === 'RUNTIME_TEMPLATE') addLog(ctx, { level: 'warn', code: 'RUNTIME_TEMPLATE', msg: `${step.command} at ${id}: ${f.message}`, step: id });
          addLog(ctx, { level: 'warn', code: 'RUNTIME_PARAM', msg: `${step.command} at ${id}: ${message(err)}; taking the error branch (INVALID_PARAM)`, step: id });
          ctx.result = '';
          ctx.error = 'INVALID_PARAM';
          const r = takeBranch(ctx, step, step.error, counters);
          if (!step.error) addLog(ctx, { level: 'info', code: 'UNHANDLED_ERROR_AT_RUNTIME', msg: `no error branch at ${id}: hanging up`, step: id });
          if ('command' in r) return r;
          id = r.id;
          counters = r.counters;
          continue;
        }
        if (isEffect(step.command)) {
          ctx.iterations++;
          const out: Suspend = { suspend: true, effect: { kind: step.command, step: id, params: params as Effect['params'] }, step, handler };
          if (counters) out.counters = counters;
          return out;
        }
        const emit: Emit = { command: step.command, params, step: id };
        if (counters && (counters.n !== 1 || Object.keys(counters.r).length > 0)) emit.counters = counters;
        if (step.final) emit.done = true;
        return emit;
      }
    }
  }
}

/** Feeds the outstanding command's result (or error) at `step` and runs to the next command. */
export function feedResult(program: Program, ctx: RunCtx, step: PCommand, counters: StepCounters | undefined, handler = false): RunOut {
  let b: PBranch | undefined;
  if (ctx.error !== '') {
    b = step.error;
    if (!b) addLog(ctx, { level: 'info', code: 'UNHANDLED_ERROR_AT_RUNTIME', msg: `${step.command} failed at ${step.id} (${ctx.error}) and no error branch applies: hanging up`, step: step.id });
  } else {
    if (step.save !== undefined) setVar(ctx, step.save, ctx.result);
    b = matchResult(step, ctx.result);
    if (!b && !step.final) addLog(ctx, { level: 'info', code: 'UNHANDLED_RESULT_AT_RUNTIME', msg: `result "${ctx.result}" of ${step.command} at ${step.id} has no branch: end of flow`, step: step.id });
  }
  const r = takeBranch(ctx, step, b, counters);
  if ('command' in r) {
    if (!handler) return r;
    addLog(ctx, { level: 'warn', code: 'HANDLER_COMMAND', msg: `the hangup handler reached a say at ${step.id}; not issued`, step: step.id });
    return endOfFlow(ctx);
  }
  return runFrom(program, ctx, r.id, r.counters, handler);
}

/** Goes on after an effect: its value is the step's result, its failure the step's error. */
export function resumeEffect(program: Program, ctx: RunCtx, s: Suspend, res: EffectResult): RunOut {
  if (res.ok) {
    ctx.result = res.value;
    ctx.error = '';
  } else {
    ctx.result = '';
    ctx.error = res.error;
    addLog(ctx, { level: 'warn', code: 'EFFECT_FAILED', msg: `${s.effect.kind} at ${s.step.id} failed: ${res.error}${res.message ? ` (${res.message})` : ''}`, step: s.step.id });
  }
  return feedResult(program, ctx, s.step, s.counters, s.handler);
}
