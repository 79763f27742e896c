/**
 * The engine's guards and actions, as plain functions of the machine's context and event.
 * src/engine/machine.ts registers them with xstate's `setup()` under the names the machine
 * config uses (src/flow/machine-config.ts); xstate decides which run, in which order.
 *
 * Context: what a call keeps between requests (vars, counters of the current step, the
 * last result and error, the say escalation index, whether the hangup handler runs) and
 * `rt`, the request's run: never stored, set again on every request. Flow content never
 * throws out of here: templates, conditions and params fail into logs and error branches.
 */
import { evaluate, test, type Scope } from '../flow/expr.js';
import { EvalBudget, EvaluationLimit, type EvalLimits } from '../flow/budget.js';
import type { Value } from '../flow/model.js';
import type { RtRequest } from '../protocol/rt.js';
import type { LogEntry } from './outcome.js';
import { ParamFailure, type Params } from './params.js';
import { NEVER, type FlowTables } from './tables.js';
import { matchCost, type LinearRegex } from '../flow/pattern.js';
import type { StepCounters } from './types.js';
import type { ActionName } from '../flow/actions.js';
import { clipText, DEFAULT_MAX_STATE_BYTES, jsonSize } from './size.js';
import { REQUEST_TEXT_BYTES } from './observe.js';
import { calendarAt, envOf, secretEnv, languageOf, type ExtRun, type FlowExt } from './v2-scope.js';
import { atSite, enter, leave, unwind, type Frame } from './subflow.js';
import { loopGuard, loopTake, type LoopMemo } from './loop.js';
import { announceDue, queueMemo, type QueueMemo } from './queue.js';

/** What the settled state asks for: built on entry by `emit` or `say`. */
export interface Out {
  /** The machine state that built it. */
  state: string;
  /** The step it belongs to (a say's: the step whose branch plays it). */
  step: string;
  command: ActionName;
  params: Params;
}

/** Observes the run (coverage, paths, traces): each transition's keys, each step entered. */
export interface RunHooks {
  took?(key: string): void;
  entered?(step: string): void;
}

/** One request's run: mutable, never stored. */
export interface Run {
  req: RtRequest;
  /** Logic steps (and failed builds, effects) run so far in this request. */
  i: number;
  max: number;
  scope: Scope | undefined;
  log: LogEntry[] | undefined;
  out: Out | undefined;
  /** The last step entered. */
  last: string;
  hooks: RunHooks | undefined;
  /** The cap on the call's stored state, in bytes (a `set` value over it is refused). */
  maxState: number;
  /**
   * Set when this request went over a bound: advance then redoes it from the prior state, the step taking its error way
   * with `code`.
   */
  abort?: Abort;
  /** What the request's templates and expressions may still spend. */
  budget: EvalBudget;
  /** The flow's environment, calendars and language (version 2), and their per-request part. */
  ext?: FlowExt;
  extRun?: ExtRun;
  /** Reads a declared secret (http steps only); absent: every secret is empty. */
  secret?: (name: string) => string | undefined;
  /** Reads the server's environment for `from_env:` values that are not secrets; absent: `secret` does. */
  environ?: (name: string) => string | undefined;
  /** What the visit of a foreach state under way decided (src/engine/loop.ts). */
  loop?: LoopMemo;
  /** A set step's assignments, evaluated by its `setFails` guard, applied by its `set` (or `setError`) action. */
  setRun?: SetRun;
}

/** A set step evaluated: its vars with every assignment made, or the failure that stopped it. */
export interface SetRun {
  step: string;
  vars: Record<string, Value>;
  /** The code of the assignment that failed (RUNTIME_EXPRESSION, RUNTIME_TEMPLATE): none of them is kept. */
  failed?: string;
}

/** A bound the request went over: the call state cap, or its evaluation budget. */
export interface Abort {
  code: 'STATE_TOO_LARGE' | 'EVALUATION_LIMIT';
  step: string;
  /** What went over, e.g. "set total at sum". */
  what: string;
  /** How many log entries the run had then: what it logged after is a consequence, not kept. */
  logAt?: number;
}

export interface Ctx {
  vars: Record<string, Value>;
  c: StepCounters;
  res: string;
  err: string;
  /** Escalation index of the outstanding `say:` play. */
  k: number;
  /** 1 once the hangup handler runs. */
  h: 0 | 1;
  /** The say the branch taken picked: its step and index (read by the say state's entry). */
  sy?: [string, number];
  /** Frames of the modules the call is in (version 2 subflows); absent: none. */
  f?: Frame[];
  /** What a module run on its own returned (scenarios of a module). */
  ret?: { result: string; values: Record<string, Value> };
  /** The items each running foreach has taken, by loop step (version 2); absent: none runs. */
  l?: Record<string, number>;
  /** A queue step's memo while the call waits in its line (src/engine/queue.ts); absent: none. */
  q?: QueueMemo;
  rt: Run;
}

export interface Ev {
  type: string;
  result?: string;
  error?: string;
  /** What `save:` keeps instead of the result (an http lookup's { status, body }). */
  data?: Value;
  /** `call.end`: the terminal request carries a result of the command it interrupted (guard `saves`). */
  real?: boolean;
}

export const FRESH: StepCounters = Object.freeze({ n: 1, r: Object.freeze({}) }) as StepCounters;

export function newRun(
  req: RtRequest,
  max: number,
  last: string,
  hooks: RunHooks | undefined,
  maxState = DEFAULT_MAX_STATE_BYTES,
  limits?: EvalLimits,
): Run {
  return {
    req,
    i: 0,
    max,
    scope: undefined,
    log: undefined,
    out: undefined,
    last,
    hooks,
    maxState,
    budget: new EvalBudget(limits),
  };
}

/**
 * An evaluation ran out of the request's budget: the request is marked for its error way
 * (EVALUATION_LIMIT) and the first such failure logged. False for any other error.
 */
export function limitHit(rt: Run, err: unknown, step: string, what: string): boolean {
  if (!(err instanceof EvaluationLimit)) return false;
  if (!rt.abort) {
    addLog(rt, { level: 'error', code: 'EVALUATION_LIMIT', msg: `${what} at ${step}: ${err.message}`, step });
    rt.abort = { code: 'EVALUATION_LIMIT', step, what, logAt: rt.log!.length };
  }
  return true;
}

/** The `call.*` fields of templates and conditions. */
export function callFields(req: RtRequest): Record<string, Value> {
  return {
    callid: req.callid,
    caller: req.cli_number,
    caller_name: req.cli_name,
    called: req.number,
    app: req.app,
    cdr_field: req.cdr_field,
    request_hash: req.request_hash,
    date_started: req.date_started,
    status: req.call_status,
    variables: req.variables as Record<string, Value>,
  };
}

/** The template and condition scope, built once per request and kept up to date. */
export function scopeOf(ctx: Ctx): Scope {
  let s = ctx.rt.scope;
  if (!s) {
    s = { vars: ctx.vars, call: callFields(ctx.rt.req), result: ctx.res, error: ctx.err, budget: ctx.rt.budget };
    ctx.rt.scope = s;
    if (ctx.rt.ext) extendScope(s, ctx.rt);
  } else {
    s.vars = ctx.vars;
    s.result = ctx.res;
    s.error = ctx.err;
  }
  // inside a module, the language is still the served flow's: its variable is read in the outermost frame's vars
  if (ctx.rt.ext?.language)
    s.call.language = languageOf(
      ctx.rt.ext,
      ctx.rt.extRun!,
      ctx.f && ctx.f.length > 0 ? ctx.f[0]!.v : ctx.vars,
      ctx.rt.req.cli_number,
    );
  return s;
}

/** env.*, open()/holiday() at the request's time (version 2). */
function extendScope(s: Scope, rt: Run): void {
  const ext = rt.ext!;
  const run = rt.extRun!;
  if (ext.envFrom) s.env = envOf(ext, run, rt.environ ?? rt.secret);
  else if (ext.env) s.env = ext.env;
  if (ext.calendars) s.calendar = (name) => calendarAt(ext, run, name);
}

/** How to speak a variable's text where a media is expected (the hint of RUNTIME_MEDIA). */
export const RUNTIME_MEDIA_HINT =
  'To speak the text, write { say: "{{ vars.x }}" } (or text around the template); to play a media, make the ' +
  'variable a media id or TTS|voice|text';

/** An http request's scope: the flow's secrets, and the environment's values that are secrets. */
function httpScope(s: Scope, secrets: Record<string, string>, rt: Run): Scope {
  const env = rt.ext?.envFrom ? secretEnv(rt.ext, s.env ?? {}, rt.secret) : s.env;
  return Object.assign({}, s, env ? { secrets, env } : { secrets });
}

export function addLog(rt: Run, entry: LogEntry): void {
  (rt.log ??= []).push(entry);
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

export function behaviour(t: FlowTables) {
  const regexOf = (source: string): LinearRegex => t.regexes.get(source) ?? NEVER;
  /** The step's `valid:` condition is false for `input` (one that fails to evaluate rejects it, logged). */
  const rejects = (ctx: Ctx, step: string, input: string): boolean => {
    const when = t.valids.get(step);
    if (when === undefined) return false;
    const scope = scopeOf(ctx);
    const [result, error] = [scope.result, scope.error];
    scope.result = input;
    scope.error = '';
    try {
      return !test(when, scope);
    } catch (err) {
      if (limitHit(ctx.rt, err, step, `valid ${when}`)) return false;
      addLog(ctx.rt, {
        level: 'warn',
        code: 'RUNTIME_CONDITION',
        msg: `valid ${when} at ${step}: ${message(err)} (the input is rejected)`,
        step,
      });
      return true;
    } finally {
      scope.result = result;
      scope.error = error;
    }
  };
  /**
   * Runs a set step's assignments in order on a copy of the vars. A value over the state cap is not assigned and one
   * over the request's budget neither (the request is then redone: rt.abort); any other failure stops the step: its
   * error way (`way`: handlers.error, or the end of the flow) takes over, with none of its assignments kept.
   */
  const evalSet = (ctx: Ctx, step: string, way: string): SetRun => {
    const rt = ctx.rt;
    const vars = Object.assign({}, ctx.vars);
    const view: Ctx = { ...ctx, vars };
    for (const a of t.sets.get(step) ?? []) {
      try {
        const v =
          a.kind === 'expr' ? evaluate(a.expr, scopeOf(view)) : a.value.c ? a.value.v : a.value.f(() => scopeOf(view));
        // A value over the state cap is refused here, before a chain of steps can grow it further.
        const size = jsonSize(v, rt.maxState);
        if (size > rt.maxState) {
          addLog(rt, {
            level: 'error',
            code: 'STATE_TOO_LARGE',
            msg:
              `set ${a.name} at ${step}: the value is over the call state cap of ${rt.maxState} bytes; ` +
              `not assigned`,
            step,
          });
          rt.abort ??= { code: 'STATE_TOO_LARGE', step, what: `set ${a.name}`, logAt: rt.log!.length };
          continue;
        }
        vars[a.name] = v;
      } catch (err) {
        if (limitHit(rt, err, step, `set ${a.name}`)) continue;
        const what = a.kind === 'expr' ? `set ${a.name} = ${a.expr}` : `set ${a.name}`;
        const code = a.kind === 'expr' ? 'RUNTIME_EXPRESSION' : 'RUNTIME_TEMPLATE';
        const then =
          way === 'end'
            ? 'none of its assignments is kept, and with no handlers.error the flow ends'
            : `none of its assignments is kept: ${way} (error ${code})`;
        addLog(rt, { level: 'warn', code, msg: `${what} at ${step}: ${message(err)}; ${then}`, step });
        return { step, vars: ctx.vars, failed: code };
      }
    }
    return { step, vars };
  };
  return {
    guards: {
      /**
       * The result matches (`exact` or `re`; neither: any) and, with `max`, the key has retries left.
       * With `invalid` (a step id): the result is not in `skip` and fails the step's `valid:` condition.
       * With `err`: the command failed with that error; with `ok`: an http lookup's 2xx status.
       */
      match(
        ctx: Ctx,
        ev: Ev,
        p: {
          exact?: string;
          re?: string;
          key?: string;
          max?: number;
          invalid?: string;
          skip?: string[];
          ok?: boolean;
          err?: string;
          cap?: boolean;
        },
      ): boolean {
        const r = ev.result ?? '';
        if (p.invalid !== undefined) {
          if (p.skip?.includes(r) || !rejects(ctx, p.invalid, r)) return false;
        } else if (p.err !== undefined) {
          if (ev.error !== p.err) return false;
        } else if (p.ok) {
          if (!/^2[0-9][0-9]$/.test(r)) return false;
        } else if (p.exact !== undefined) {
          if (r !== p.exact) return false;
        } else if (p.re !== undefined) {
          const re = regexOf(p.re);
          // a match costs the result's length times the pattern's size: charged to the request's budget first
          try {
            ctx.rt.budget.spend(
              matchCost(re, r) * (p.cap ? 2 : 1),
              `the result pattern ${p.key ?? p.re} on ${r.length.toLocaleString('en-US')} characters`,
            );
          } catch (err) {
            if (limitHit(ctx.rt, err, ctx.rt.last, `result key ${p.key ?? p.re}`)) return false;
            throw err;
          }
          if (!re.test(r)) return false;
        }
        return p.max === undefined || (ctx.c.r[p.key!] ?? 0) < p.max;
      },
      /**
       * `call.end` at a step with `save:`: the terminal request carries a real result of the step's command, which the
       * step's `valid:` (with `step`; results in `skip` are exempt, as they are at the step) does not reject.
       */
      saves(ctx: Ctx, ev: Ev, p: { step?: string; skip?: string[] }): boolean {
        if (ev.real !== true) return false;
        const r = ev.result ?? '';
        const rt = ctx.rt;
        if (jsonSize(r, rt.maxState) > rt.maxState) {
          // as a live result that big would be (STATE_TOO_LARGE): the call ends without it
          const msg =
            `the result the call ended with at ${rt.last} is over the call state cap of ${rt.maxState} bytes; ` +
            'not saved';
          addLog(rt, { level: 'warn', code: 'STATE_TOO_LARGE', msg, step: rt.last });
          return false;
        }
        return p.step === undefined || p.skip?.includes(r) === true || !rejects(ctx, p.step, r);
      },
      /**
       * A set step's assignment fails (the step is evaluated here, once: its `set` or `setError` action takes the
       * outcome); `way` says where the call goes then (for the log line).
       */
      setFails(ctx: Ctx, p: { step: string; way: string }): boolean {
        const run = ctx.rt.setRun?.step === p.step ? ctx.rt.setRun : evalSet(ctx, p.step, p.way);
        ctx.rt.setRun = run;
        return run.failed !== undefined;
      },
      /** The call is in a module entered from this call site (the top frame's). */
      frame(ctx: Ctx, p: { site?: string; full?: boolean }): boolean {
        return atSite(ctx, p);
      },
      /** A foreach visit takes an item, or meets a value that is not a list. */
      loop(ctx: Ctx, p: { step: string; first: boolean; is: 'item' | 'error' }): boolean {
        return loopGuard(t.loops, ctx, p);
      },
      /** A queue step's poll answered `wait` and an announcement is due (src/engine/queue.ts). */
      queueDue(ctx: Ctx, ev: Ev, p: { step: string }): boolean {
        const q = t.queue(p.step);
        return q !== undefined && announceDue(q.spec, ctx.q, ev.result ?? '', ev.data);
      },
      /** The request's budget of logic steps is spent. */
      budget(ctx: Ctx): boolean {
        return ctx.rt.i >= ctx.rt.max;
      },
      /** A switch case's condition; one that fails to evaluate counts as false (logged). */
      when(ctx: Ctx, p: { step: string; i: number }): boolean {
        const when = t.cases.get(p.step)?.[p.i];
        if (when === undefined) return false;
        try {
          return test(when, scopeOf(ctx));
        } catch (err) {
          if (limitHit(ctx.rt, err, p.step, `when ${when}`)) return false;
          addLog(ctx.rt, {
            level: 'warn',
            code: 'RUNTIME_CONDITION',
            msg: `${when} at ${p.step}: ${message(err)} (counted as false)`,
            step: p.step,
          });
          return false;
        }
      },
    },
    /** Context updates (xstate `assign`). */
    assigns: {
      /** A transition's context update in one: see `take` in src/flow/machine-config.ts. */
      take(
        ctx: Ctx,
        ev: Ev,
        p: {
          result?: boolean;
          save?: string;
          pick?: [string, number];
          retry?: string;
          fresh?: string | true;
          handler?: boolean;
          filler?: 1 | 'next';
          groups?: [string, [string, string][]];
        },
      ): Partial<Ctx> {
        const u: Partial<Ctx> = {};
        if (p.result) {
          u.res = ev.result ?? '';
          u.err = ev.error ?? '';
        }
        if (p.save !== undefined)
          u.vars = Object.assign({}, ctx.vars, { [p.save]: ev.data !== undefined ? ev.data : (ev.result ?? '') });
        if (p.groups) {
          // the pattern took the result (its guard charged this match): each variable gets its group's text
          const [re, save] = p.groups;
          const got = regexOf(re).groups?.(ev.result ?? '');
          const vars = (u.vars ??= Object.assign({}, ctx.vars));
          for (const [name, group] of save) vars[name] = got?.[group] ?? '';
        }
        // the filler's escalation index (no say is outstanding while a lookup runs)
        if (p.filler !== undefined) u.k = p.filler === 1 ? 1 : ctx.k + 1;
        if (p.pick) u.sy = p.pick;
        if (p.retry !== undefined) {
          const used = ctx.c.r[p.retry] ?? 0;
          const r: Record<string, number> = Object.assign({}, ctx.c.r);
          r[p.retry] = used + 1;
          u.c = { n: ctx.c.n + 1, r };
          u.k = used + 1;
        } else if (p.fresh !== undefined) {
          u.c = FRESH;
          u.k = typeof p.fresh === 'string' ? (ctx.c.r[p.fresh] ?? 0) + 1 : 1;
        }
        // leaving a step: a queue's memo (its announcement slot, hold chunk) is not the next visit's
        if (p.fresh !== undefined && ctx.q) u.q = undefined;
        if (p.handler) {
          u.h = 1;
          if (ctx.f) Object.assign(u, unwind(ctx));
        }
        return u;
      },
      enter(ctx: Ctx, p: { step: string }): Partial<Ctx> {
        return enter(t.subflows, ctx, p);
      },
      /** A queue step's poll answered: the agent claimed, the announcement slot, the hold chunk (engine/queue.ts). */
      queue(ctx: Ctx, ev: Ev, p: { step: string; on: 'ring' | 'announce' | 'hold' }): Partial<Ctx> {
        const q = t.queue(p.step);
        return q ? { q: queueMemo(q.spec, ctx.q, p.on, ev.data) } : {};
      },
      leave(ctx: Ctx, p: { step: string; site?: string }): Partial<Ctx> {
        return leave(t.subflows, ctx, p);
      },
      loop(ctx: Ctx, p: { step: string; first: boolean; end?: 'done' | 'error' }): Partial<Ctx> {
        return loopTake(t.loops, ctx, p);
      },
      set(ctx: Ctx, p: { step: string }): Partial<Ctx> {
        const rt = ctx.rt;
        rt.i++;
        rt.last = p.step;
        rt.hooks?.entered?.(p.step);
        const run = rt.setRun?.step === p.step ? rt.setRun : evalSet(ctx, p.step, 'end');
        rt.setRun = undefined;
        return { vars: run.vars };
      },
      /** A set step failed (guard setFails): none of its assignments is kept; `error` is the failure's code. */
      setError(ctx: Ctx, p: { step: string }): Partial<Ctx> {
        const rt = ctx.rt;
        rt.i++;
        rt.last = p.step;
        rt.hooks?.entered?.(p.step);
        const code = rt.setRun?.failed ?? 'RUNTIME_EXPRESSION';
        rt.setRun = undefined;
        return { res: '', err: code };
      },
    },
    /**
     * Entry of a command (or effect) state, and of a say state: builds what it sends.
     * False: a value failed its check (logged); the adapter raises `param.invalid`.
     */
    builds: {
      emit(ctx: Ctx, state: string, p: { step: string }): boolean {
        const rt = ctx.rt;
        rt.last = p.step;
        rt.hooks?.entered?.(p.step);
        const cmd = t.command(p.step);
        if (!cmd) throw new Error(`no command step "${p.step}"`);
        try {
          const scope = cmd.secrets ? () => httpScope(scopeOf(ctx), cmd.secrets!(rt.secret), rt) : () => scopeOf(ctx);
          rt.out = { state, step: p.step, command: cmd.command, params: cmd.builder.build(scope, ctx.c.n) };
          return true;
        } catch (err) {
          rt.i++;
          if (limitHit(rt, err, p.step, cmd.command)) return false;
          const f = err instanceof ParamFailure ? err : undefined;
          if (f?.code === 'RUNTIME_MEDIA') {
            // the call ends here unless the step (or handlers.error) has an error way: say why, with the fix
            addLog(rt, {
              level: 'error',
              code: 'RUNTIME_MEDIA',
              msg: `${cmd.command} at ${p.step}: ${f.reason}; taking the error branch (INVALID_PARAM)`,
              step: p.step,
              hint: RUNTIME_MEDIA_HINT,
            });
            return false;
          }
          if (f?.code === 'RUNTIME_TEMPLATE' || f?.code === 'RUNTIME_EXPRESSION')
            addLog(rt, {
              level: 'warn',
              code: f.code,
              msg: `${cmd.command} at ${p.step}: ${f.message}`,
              step: p.step,
            });
          addLog(rt, {
            level: 'warn',
            code: 'RUNTIME_PARAM',
            msg: `${cmd.command} at ${p.step}: ${message(err)}; taking the error branch (INVALID_PARAM)`,
            step: p.step,
          });
          return false;
        }
      },
      /**
       * The filler of an http step whose lookup runs on: the k-th entry; one that fails to render is a 1-second wait.
       */
      filler(ctx: Ctx, state: string, step: string): boolean {
        const rt = ctx.rt;
        const f = t.command(step)?.filler;
        if (!f) throw new Error(`no filler at step "${step}"`);
        try {
          rt.out = { state, step, ...f(() => scopeOf(ctx), ctx.k) };
        } catch (err) {
          if (!limitHit(rt, err, step, 'filler'))
            addLog(rt, {
              level: 'warn',
              code: 'RUNTIME_PARAM',
              msg: `filler at ${step}: ${message(err)}; waiting 1 s instead`,
              step,
            });
          rt.out = { state, step, command: 'wait', params: { wait: 1 } };
        }
        return true;
      },
      /**
       * A queue step's store operation (the effect `queue`): its params; false when the agents fail to render (logged:
       * the error way).
       */
      queueEffect(ctx: Ctx, state: string, p: { step: string; op: 'poll' | 'leave' | 'done' }): boolean {
        const rt = ctx.rt;
        rt.last = p.step;
        if (p.op === 'poll') rt.hooks?.entered?.(p.step);
        const q = t.queue(p.step);
        if (!q) throw new Error(`no queue step "${p.step}"`);
        try {
          const params = q.params(() => scopeOf(ctx), p.op, ctx.q?.w);
          rt.out = { state, step: p.step, command: 'queue', params: params as never };
          return true;
        } catch (err) {
          rt.i++;
          if (limitHit(rt, err, p.step, 'queue')) return false;
          const f = err instanceof ParamFailure ? err : undefined;
          const msg = `queue at ${p.step}: ${message(err)}; taking the error branch (INVALID_PARAM)`;
          addLog(rt, { level: 'warn', code: f?.code ?? 'RUNTIME_PARAM', msg, step: p.step });
          return false;
        }
      },
      /** A queue step's hold chunk (looped), its announcement, or its dialout to the agent claimed. */
      queueCommand(ctx: Ctx, state: string, p: { step: string; what: 'hold' | 'announce' | 'ring' }): boolean {
        const rt = ctx.rt;
        const q = t.queue(p.step);
        if (!q) throw new Error(`no queue step "${p.step}"`);
        const scope = () => scopeOf(ctx);
        if (p.what === 'ring') {
          const r = q.ring(scope, ctx.q?.a ?? '');
          if (r.warning) addLog(rt, { level: 'warn', code: 'RUNTIME_PARAM', msg: `queue at ${p.step}: ${r.warning}` });
          rt.out = { state, step: p.step, command: 'dialout', params: r.params };
          return true;
        }
        try {
          rt.out =
            p.what === 'hold'
              ? { state, step: p.step, ...q.hold(scope, ctx.q?.i ?? 0) }
              : { state, step: p.step, command: 'play', params: q.announce(scope) };
          return true;
        } catch (err) {
          rt.i++;
          if (limitHit(rt, err, p.step, p.what)) return false;
          const f = err instanceof ParamFailure ? err : undefined;
          // a hold chunk that fails to render is a 1-second wait (as a filler is); an announcement is skipped
          const then = p.what === 'hold' ? 'waiting 1 s instead' : 'skipped';
          const msg = `${p.what} at ${p.step}: ${message(err)}; ${then}`;
          addLog(rt, { level: 'warn', code: f?.code ?? 'RUNTIME_PARAM', msg, step: p.step });
          if (p.what !== 'hold') return false;
          rt.out = { state, step: p.step, command: 'wait', params: { wait: 1 } };
          return true;
        }
      },
      say(ctx: Ctx, state: string): boolean {
        const rt = ctx.rt;
        const [step, i] = ctx.sy ?? ['', -1];
        const say = (t.command(step)?.says ?? t.setSays.get(step))?.[i];
        if (!say) throw new Error(`no say ${i} at step "${step}"`);
        try {
          rt.out = { state, step, command: 'play', params: say.build(() => scopeOf(ctx), ctx.k) };
          return true;
        } catch (err) {
          rt.i++;
          if (limitHit(rt, err, step, 'say')) return false;
          const f = err instanceof ParamFailure ? err : undefined;
          addLog(rt, {
            level: 'warn',
            code: f?.code ?? 'RUNTIME_PARAM',
            msg: `say at ${step} skipped: ${message(err)}`,
            step,
          });
          return false;
        }
      },
    },
    /** Side effects on the request's run only (logs, counts, hooks). */
    effects: {
      tick(ctx: Ctx, p: { step?: string } | undefined): void {
        ctx.rt.i++;
        if (p?.step !== undefined) {
          ctx.rt.last = p.step;
          ctx.rt.hooks?.entered?.(p.step);
        }
      },
      took(ctx: Ctx, p: { keys: string[] }): void {
        const took = ctx.rt.hooks?.took;
        if (took) for (const k of p.keys) took(k);
      },
      limit(ctx: Ctx): void {
        addLog(ctx.rt, {
          level: 'error',
          code: 'ITERATION_LIMIT',
          msg: `${ctx.rt.max} logic steps ran without a command (after ${ctx.rt.last}); hanging up`,
          step: ctx.rt.last,
        });
      },
      /** A result or error with no branch at the step the call is at (`rt.last`): the flow ends. */
      unhandled(ctx: Ctx, ev: Ev): void {
        const step = ctx.rt.last;
        const cmd = t.command(step)?.command ?? 'command';
        if (ev.type === 'result') {
          addLog(ctx.rt, {
            level: 'info',
            code: 'UNHANDLED_RESULT_AT_RUNTIME',
            // a client's text, cut: a log line does not carry a request of 64 KiB
            msg:
              `result "${clipText(ev.result ?? '', REQUEST_TEXT_BYTES)}" of ${cmd} at ${step} has no branch: end of ` +
              'flow',
            step,
          });
        } else {
          addLog(ctx.rt, {
            level: 'info',
            code: 'UNHANDLED_ERROR_AT_RUNTIME',
            msg:
              `${cmd} failed at ${step} (${clipText(ev.error ?? ctx.err, REQUEST_TEXT_BYTES)}) and no error ` +
              'branch applies: hanging up',
            step,
          });
        }
      },
    },
  };
}

export type Behaviour = ReturnType<typeof behaviour>;
