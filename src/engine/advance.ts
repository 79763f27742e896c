/**
 * The call step, a pure function: given a compiled flow, the call's prior state and one
 * RT.Request, decide the reply and the next state. The flow's xstate machine takes every
 * decision: the request becomes one event (`result`, `error` or `call.end`), the machine
 * runs to the next state that emits a command (or an effect), and this module turns that
 * state into the reply and the stored snapshot. No I/O, no clock (opts.now), no throwing:
 * every failure is an Outcome (see outcome.ts) with its log entries.
 *
 * Order of decisions (protocol-notes.md):
 * 1. no prior state: a first request starts the flow, or, terminal (a call never answered: NOANSWER, BUSY...), runs
 *    the hangup handler with the vars the call was placed with; another terminal request is answered hangup; any
 *    other follows opts.unknownCall (restart | hangup | reject);
 * 2. a terminal status runs the hangup handler's logic steps, answers hangup, drops the call;
 * 3. command_id one before the latest: replay the stored reply; any other but the latest: stale;
 * 4. the latest: feed the result (or error) and run to the next command.
 */
import { END_STATE, EV_CALL_END, EV_ERROR, EV_PENDING, EV_RESULT } from '../flow/machine-config.js';
import type { Value } from '../flow/model.js';
import { isCommandResult, TERMINAL_STATUSES, type CommandName } from '../protocol/commands.js';
import type { RtRequest, RtResponse } from '../protocol/rt.js';
import { errorWayLimits } from '../flow/budget.js';
import { addLog, FRESH, newRun, type Abort, type Ctx, type Run } from './behaviour.js';
import { metaOf, type CompiledFlow } from './compile.js';
import type { FlowSnapshot, Persisted } from './machine.js';
import {
  DEFAULT_MAX_LOGIC_STEPS,
  type Effect,
  type EffectResult,
  type EngineOptions,
  type LogEntry,
  type Outcome,
} from './outcome.js';
import type { Params } from './params.js';
import { frozenParams, serializeReply } from './serialize.js';
import type { CallState, CallSummary } from './types.js';
import { DEFAULT_MAX_STATE_BYTES, textOver } from './size.js';
import type { QueueParams } from './queue.js';

export type { EngineOptions, LogEntry, Outcome } from './outcome.js';

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);
const HANGUP_PARAMS: Params = frozenParams({});

export function isTerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

export function isFirstRequest(req: RtRequest): boolean {
  return req.command === '' && req.command_id === 0;
}

/** A say state (`<dest>@say`): the outstanding command is a branch's `say:` play. */
export function isSayState(s: string): boolean {
  return s.endsWith('@say');
}

export function advance(
  flow: CompiledFlow,
  prior: CallState | undefined,
  req: RtRequest,
  opts: EngineOptions,
): Outcome {
  return guarded(prior, req, () => step(flow, prior, req, opts));
}

/** Runs `fn`, turning a thrown bug into a hangup (never a crash). */
function guarded(prior: CallState | undefined, req: RtRequest, fn: () => Outcome): Outcome {
  try {
    return fn();
  } catch (err) {
    // A bug, not flow content: answer hangup rather than crash, and drop the call.
    const reply = response('hangup', {}, (prior?.commandId ?? req.command_id) + 1, req);
    return {
      kind: 'reply',
      reply,
      replyJson: serializeReply(reply),
      state: null,
      log: [
        {
          level: 'error',
          code: 'ENGINE_INTERNAL',
          msg: err instanceof Error ? err.message : String(err),
          stack: err instanceof Error ? err.stack : undefined,
        },
      ],
    };
  }
}

function response(command: CommandName, params: Params, commandId: number, req: RtRequest): RtResponse {
  return { command, command_id: commandId, params: params as RtResponse['params'], variablesRaw: req.variablesRaw };
}

function summaryOf(prior: CallState, req: RtRequest, opts: EngineOptions, vars: Record<string, Value>): CallSummary {
  return {
    callid: req.callid,
    flow: prior.flow,
    version: prior.version,
    status: req.call_status,
    commands: prior.commands,
    durationMs: Math.max(0, opts.now - prior.started),
    lastStep: prior.step,
    vars,
    ...(prior.fail !== undefined ? { error: prior.fail } : {}),
  };
}

/** Answer hangup and forget the call. */
function dropWithHangup(
  req: RtRequest,
  commandId: number,
  log: LogEntry[] | undefined,
  summary?: CallSummary,
): Outcome {
  const reply = response('hangup', {}, commandId, req);
  const out: Outcome = { kind: 'reply', reply, replyJson: serializeReply(reply), state: null };
  if (summary) out.summary = summary;
  if (log && log.length > 0) out.log = log;
  return out;
}

function persisted(s: CallState): Persisted {
  const p: Persisted = { vars: s.vars, c: s.c ?? FRESH, res: s.res ?? '', err: s.err ?? '', k: s.k ?? 1, h: 0 };
  if (s.f) p.f = s.f;
  if (s.l) p.l = s.l;
  if (s.q) p.q = s.q;
  return p;
}

function resultEvent(result: string, error: string) {
  return error !== '' ? { type: EV_ERROR, result, error } : { type: EV_RESULT, result, error: '' };
}

function step(flow: CompiledFlow, prior: CallState | undefined, req: RtRequest, opts: EngineOptions): Outcome {
  const terminal = TERMINAL.has(req.call_status);
  if (!prior) {
    if (!isFirstRequest(req))
      return terminal ? dropWithHangup(req, req.command_id + 1, undefined) : unknownCall(flow, req, opts);
    return terminal ? neverAnswered(flow, req, opts) : start(flow, req, opts, 0, undefined);
  }
  if (prior.version !== flow.version || prior.flow !== flow.name) return versionMismatch(flow, prior, req, opts);
  if (terminal) return hangupHandler(flow, prior, req, opts);
  return notLatest(prior, req) ?? feed(flow, prior, req, opts);
}

/**
 * A call whose first request is terminal: never answered (an outbound call to a number that does not answer, is busy,
 * or refused it). The flow's start is not run; its hangup handler is, from the vars the call starts with (the flow's,
 * with those it was placed with: opts.vars), and the call ends with its summary (no step was reached: lastStep "").
 */
function neverAnswered(flow: CompiledFlow, req: RtRequest, opts: EngineOptions): Outcome {
  const rt = runOf(flow, req, opts, '');
  const vars = opts.vars ? Object.assign({}, flow.tables.initialVars, opts.vars) : flow.tables.initialVars;
  let snap = flow.machine.restore(END_STATE, { vars, c: FRESH, res: '', err: '', k: 1, h: 0 }, rt);
  snap = flow.machine.send(snap, { type: EV_CALL_END, result: req.command_result, error: req.command_error });
  return settle(flow, rt, snap, undefined, (_e, ctx) =>
    dropWithHangup(req, req.command_id + 1, rt.log, {
      callid: req.callid,
      flow: flow.name,
      version: flow.version,
      status: req.call_status,
      commands: 0,
      durationMs: 0,
      lastStep: '',
      vars: ctx.vars,
    }),
  );
}

/** A request other than the first for a call with no state: opts.unknownCall says what to do. */
function unknownCall(flow: CompiledFlow, req: RtRequest, opts: EngineOptions): Outcome {
  const msg = `no state for call ${req.callid} (command ${req.command || '""'}, command_id ${req.command_id})`;
  switch (opts.unknownCall) {
    case 'reject':
      return { kind: 'rejected', code: 'UNKNOWN_CALL', message: msg };
    case 'hangup':
      return dropWithHangup(req, req.command_id + 1, [
        { level: 'warn', code: 'UNKNOWN_CALL', msg: `${msg}: hanging up` },
      ]);
    case 'restart':
      return start(flow, req, opts, req.command_id, {
        level: 'warn',
        code: 'UNKNOWN_CALL',
        msg: `${msg}: restarting the flow`,
      });
  }
}

/** The call runs another flow version than the one given: refused (a terminal request drops the call). */
function versionMismatch(flow: CompiledFlow, prior: CallState, req: RtRequest, opts: EngineOptions): Outcome {
  const given = `${flow.name}@${flow.version}`;
  const msg = `call ${req.callid} runs ${prior.flow}@${prior.version}, the engine was given ${given}`;
  if (!TERMINAL.has(req.call_status)) return { kind: 'rejected', code: 'FLOW_VERSION_MISMATCH', message: msg };
  const log: LogEntry[] = [{ level: 'error', code: 'FLOW_VERSION_MISMATCH', msg }];
  return dropWithHangup(req, prior.commandId + 1, log, summaryOf(prior, req, opts, prior.vars));
}

/** A request that does not report the call's latest command: a retry (the stored reply again) or stale. */
function notLatest(prior: CallState, req: RtRequest): Outcome | undefined {
  if (req.command_id === prior.commandId - 1) return { kind: 'replay', replyJson: fullReply(prior.reply, req) };
  if (req.command_id !== prior.commandId) {
    const message =
      req.command_id > prior.commandId
        ? `command_id ${req.command_id} is ahead of the call's latest command ${prior.commandId}: no such ` +
          `command was sent`
        : `command_id ${req.command_id} is stale: the call's latest command is ${prior.commandId}`;
    return { kind: 'stale', message, latest: prior.commandId };
  }
  const sent = replyCommand(prior.reply);
  if (req.command === sent) return undefined;
  const message =
    `the request reports command "${req.command}" #${req.command_id}, but command #${prior.commandId} of ` +
    `this call is "${sent}"`;
  return { kind: 'stale', message, latest: prior.commandId };
}

/** The latest command's result (or error), fed to the machine, which runs to the next command. */
function feed(flow: CompiledFlow, prior: CallState, req: RtRequest, opts: EngineOptions): Outcome {
  const rt = runOf(flow, req, opts, prior.step);
  const p = persisted(prior);
  if (prior.done) {
    // We already hung up: say it again.
    const hangup: Emit = { command: 'hangup', params: HANGUP_PARAMS, state: prior.s, step: prior.step, done: true };
    return finish(flow, rt, p, hangup, prior.commandId, prior.started, prior.commands, prior.fail);
  }
  let snap: FlowSnapshot;
  try {
    snap = flow.machine.restore(prior.s, p, rt);
  } catch {
    return invalidState(flow, prior, req, opts);
  }
  snap = flow.machine.send(snap, resultEvent(req.command_result, req.command_error));
  return settle(flow, rt, snap, prior, (e, ctx) => {
    const out = finish(flow, rt, ctx, e, prior.commandId, prior.started, prior.commands);
    const bound = overBound(rt, out);
    return bound ? overflowed(flow, prior, req, opts, rt, bound) : out;
  });
}

/** The stored state names no state of the machine: the call is dropped with hangup. */
function invalidState(flow: CompiledFlow, prior: CallState, req: RtRequest, opts: EngineOptions): Outcome {
  const log: LogEntry[] = [
    {
      level: 'error',
      code: 'STATE_INVALID',
      msg: `the call is at "${prior.s}", not a state of ${flow.name}`,
      step: prior.step,
    },
  ];
  return dropWithHangup(req, prior.commandId + 1, log, summaryOf(prior, req, opts, prior.vars));
}

function runOf(flow: CompiledFlow, req: RtRequest, opts: EngineOptions, last: string): Run {
  const rt = newRun(
    req,
    opts.maxLogicSteps ?? DEFAULT_MAX_LOGIC_STEPS,
    last,
    opts.hooks,
    opts.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES,
    opts.evalLimits,
  );
  if (flow.tables.ext) {
    rt.ext = flow.tables.ext;
    rt.extRun = { now: opts.now };
  }
  if (opts.secret) rt.secret = opts.secret;
  if (opts.environ) rt.environ = opts.environ;
  return rt;
}

/** What the request went over, if anything: a bound hit on the way (rt.abort), or the stored state over the cap. */
function overBound(rt: Run, out: Outcome): Abort | undefined {
  if (rt.abort) return rt.abort;
  if (out.kind === 'reply' && out.stateJson !== undefined && textOver(out.stateJson, rt.maxState))
    return { code: 'STATE_TOO_LARGE', step: rt.last, what: 'the call state' };
  return undefined;
}

/** The log of a run that went over a bound, up to the bound: the rest followed from it. */
function keptLog(rt: Run, bound: Abort): LogEntry[] {
  return (rt.log ?? []).slice(0, bound.logAt);
}

/** The log line of a bound gone over. */
function boundText(a: Abort, rt: Run): string {
  return a.code === 'STATE_TOO_LARGE'
    ? `went over the call state cap of ${rt.maxState} bytes`
    : `went over the request's evaluation budget (${rt.budget.spent ?? 'spent'})`;
}

/**
 * The request went over a bound (the call state cap, or its evaluation budget): none of
 * its changes are kept. The command's result is replaced by the error (STATE_TOO_LARGE or
 * EVALUATION_LIMIT), so the step that issued it takes its error branch (else
 * handlers.error, else the flow ends), from the state before the request, with a quarter
 * of a request's evaluation budget. If that way goes over a bound too, the call is hung up and dropped.
 */
function overflowed(
  flow: CompiledFlow,
  prior: CallState,
  req: RtRequest,
  opts: EngineOptions,
  first: Run,
  bound: Abort,
): Outcome {
  // The error way gets a quarter of a request's evaluation budget: both together stay bounded.
  const rt = runOf(flow, req, { ...opts, evalLimits: errorWayLimits(opts.evalLimits) }, prior.step);
  const what = bound.what === 'the call state' ? bound.what : `${bound.what} at ${bound.step}`;
  rt.log = [
    ...keptLog(first, bound),
    {
      level: 'error',
      code: bound.code,
      msg:
        `${what} ${boundText(bound, first)}: this request's changes are dropped and ${prior.step} takes its ` +
        `error branch (${bound.code})`,
      step: prior.step,
    },
  ];
  let snap: FlowSnapshot = flow.machine.restore(prior.s, persisted(prior), rt);
  snap = flow.machine.send(snap, resultEvent('', bound.code));
  return settle(flow, rt, snap, prior, (e, ctx) => {
    const out = finish(flow, rt, ctx, e, prior.commandId, prior.started, prior.commands);
    const again = overBound(rt, out);
    if (!again) return out;
    const log: LogEntry[] = [
      ...(rt.log ?? []),
      {
        level: 'error',
        code: again.code,
        msg: `the error branch ${boundText(again, rt)} too: hanging up`,
        step: rt.last,
      },
    ];
    return dropWithHangup(req, prior.commandId + 1, log, summaryOf(prior, req, opts, prior.vars));
  });
}

/** What a settled machine sends: a command, or the end of the flow (hangup). */
interface Emit {
  command: CommandName;
  params: Params;
  /** The machine state. */
  state: string;
  /** The step it belongs to (state.step). */
  step: string;
  done?: boolean;
}

/**
 * The machine has settled (no more eventless or raised transitions): answer what its
 * state emits. An effect suspends the request; its `resume` sends the effect's result
 * to the machine and settles again (through further effects, if any) to the same `tail`.
 */
function settle(
  flow: CompiledFlow,
  rt: Run,
  snap: FlowSnapshot,
  prior: CallState | undefined,
  tail: (e: Emit, ctx: Ctx) => Outcome,
): Outcome {
  const state = flow.machine.stateOf(snap);
  const ctx = snap.context as Ctx;
  const meta = metaOf(flow, state);
  const end = (): Outcome => tail({ command: 'hangup', params: HANGUP_PARAMS, state, step: rt.last, done: true }, ctx);
  if (meta.kind === 'end' || meta.kind === 'logic') return end();
  const out = rt.out;
  if (!out || out.state !== state) throw new Error(`the machine settled in "${state}" without building its command`);
  if (meta.kind === 'command' && meta.effect) {
    // A request going over a bound is redone from the prior state: its effects must not happen.
    if (rt.abort) return end();
    if (rt.i >= rt.max) {
      const msg = `${rt.max} logic steps and effects ran without a command (at ${meta.step}); hanging up`;
      addLog(rt, { level: 'error', code: 'ITERATION_LIMIT', msg, step: meta.step });
      return end();
    }
    rt.i++;
    return suspend(flow, rt, snap, prior, tail, effectOf(flow, rt, out, ctx, state));
  }
  if (ctx.h === 1) {
    const what = meta.kind === 'say' ? `a say at ${out.step}` : `command step ${out.step} (${out.command})`;
    const msg = `the hangup handler reached ${what}; not issued`;
    addLog(rt, { level: 'warn', code: 'HANDLER_COMMAND', msg, step: out.step });
    return end();
  }
  const e: Emit = { command: out.command as CommandName, params: out.params, state, step: out.step };
  if (meta.kind === 'command' && meta.final) e.done = true;
  return tail(e, ctx);
}

/** The effect the settled machine asks for (src/engine/effects.ts: data, carried out by the driver's executor). */
function effectOf(flow: CompiledFlow, rt: Run, out: NonNullable<Run['out']>, ctx: Ctx, state: string): Effect {
  if (out.command === 'queue') {
    const params = out.params as unknown as QueueParams;
    return { kind: 'queue', step: out.step, callid: rt.req.callid, op: params.op, params };
  }
  if (out.command !== 'http')
    return {
      kind: 'sms',
      step: out.step,
      callid: rt.req.callid,
      params: out.params as Record<string, string | boolean>,
    };
  const secrets = flow.model.secrets;
  return {
    kind: 'http',
    step: out.step,
    callid: rt.req.callid,
    params: out.params as Record<string, unknown>,
    ...(secrets && secrets.length > 0 ? { secrets } : {}),
    filler: ctx.h !== 1 && flow.config.states[`${out.step}@filler`] !== undefined,
    wait: state.endsWith('@wait'),
  };
}

/**
 * The request suspends on `effect`: its `resume` (once) sends the effect's result to the
 * machine and settles again (through further effects, if any) to the same `tail`.
 */
function suspend(
  flow: CompiledFlow,
  rt: Run,
  snap: FlowSnapshot,
  prior: CallState | undefined,
  tail: (e: Emit, ctx: Ctx) => Outcome,
  effect: Effect,
): Outcome {
  let resumed = false;
  const resume = (res: EffectResult): Outcome => {
    if (resumed) throw new Error('an effect outcome was resumed twice');
    resumed = true;
    return guarded(prior, rt.req, () => {
      rt.out = undefined;
      if ('pending' in res) return settle(flow, rt, flow.machine.send(snap, { type: EV_PENDING }), prior, tail);
      if (!res.ok) {
        const msg = `${effect.kind} at ${effect.step} failed: ${res.error}${res.message ? ` (${res.message})` : ''}`;
        addLog(rt, { level: 'warn', code: 'EFFECT_FAILED', msg, step: effect.step });
      }
      const event = res.ok
        ? { ...resultEvent(res.value, ''), ...(res.data !== undefined ? { data: res.data } : {}) }
        : resultEvent('', res.error);
      return settle(flow, rt, flow.machine.send(snap, event), prior, tail);
    });
  };
  return { kind: 'effect', effect, resume };
}

/**
 * The stored reply is the reply without its `variables` (the request's, echoed): a retried
 * request carries the same variables, so the reply is rebuilt byte for byte, and the
 * snapshot stays small whatever the size of the service's variables map.
 */
function replyHead(replyJson: string, req: RtRequest): string {
  return replyJson.slice(0, replyJson.length - variablesText(req).length - 1);
}

function fullReply(head: string, req: RtRequest): string {
  return head + variablesText(req) + '}';
}

function variablesText(req: RtRequest): string {
  return req.variablesRaw === '' ? '{}' : req.variablesRaw;
}

/** The command name of a stored reply (it starts with {"command":"<name>"). */
export function replyCommand(head: string): string {
  return head.slice(12, head.indexOf('"', 12));
}

function start(
  flow: CompiledFlow,
  req: RtRequest,
  opts: EngineOptions,
  base: number,
  warn: LogEntry | undefined,
): Outcome {
  const rt = runOf(flow, req, opts, flow.model.start);
  if (warn) rt.log = [warn];
  const vars = opts.vars ? Object.assign({}, flow.tables.initialVars, opts.vars) : flow.tables.initialVars;
  const snap = flow.machine.start(vars, rt);
  return settle(flow, rt, snap, undefined, (e, ctx) => {
    const out = finish(flow, rt, ctx, e, base, opts.now, 0);
    const bound = overBound(rt, out);
    if (!bound) return out;
    const log: LogEntry[] = [
      ...keptLog(rt, bound),
      {
        level: 'error',
        code: bound.code,
        msg: `the call's first steps ${boundText(bound, rt)}: hanging up`,
        step: rt.last,
      },
    ];
    return dropWithHangup(req, base + 1, log);
  });
}

function finish(
  flow: CompiledFlow,
  rt: Run,
  ctx: Persisted,
  emit: Emit,
  base: number,
  started: number,
  commands: number,
  failed?: string,
): Outcome {
  const reply = response(emit.command, emit.params, base + 1, rt.req);
  const replyJson = serializeReply(reply);
  const state: CallState = {
    v: 2,
    flow: flow.name,
    version: flow.version,
    s: emit.state,
    step: emit.step,
    vars: ctx.vars,
    commandId: base + 1,
    reply: replyHead(replyJson, rt.req),
    started,
    commands: commands + 1,
  };
  if (ctx.c.n !== 1 || hasKeys(ctx.c.r)) state.c = ctx.c;
  if (ctx.res !== '') state.res = ctx.res;
  if (ctx.err !== '') state.err = ctx.err;
  if (ctx.k !== 1) state.k = ctx.k;
  if (emit.done) {
    state.done = true;
    // the flow ends in a request that logged an engine error: that error ended it (the call's summary says so)
    const fail = failed ?? rt.log?.find((l) => l.level === 'error')?.code;
    if (fail !== undefined) state.fail = fail;
  }
  if (ctx.f && ctx.f.length > 0) state.f = ctx.f;
  if (ctx.l && hasKeys(ctx.l)) state.l = ctx.l;
  if (ctx.q) state.q = ctx.q;
  const ret = (ctx as Partial<Ctx>).ret;
  if (ret) state.ret = ret;
  const out: Outcome = { kind: 'reply', reply, replyJson, state, stateJson: JSON.stringify(state) };
  if (rt.log) out.log = rt.log;
  return out;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * The terminal request carries a result of the command the call is waiting for (protocol-notes.md: the interrupted
 * command's result, "if any"): a recording's file name when the caller hangs up during `record`. Its step's `save:`
 * keeps it before the hangup handler runs (guard `saves`).
 */
function carriesResult(prior: CallState, req: RtRequest): boolean {
  return (
    prior.done !== true &&
    req.command_error === '' &&
    req.command_id === prior.commandId &&
    req.command === replyCommand(prior.reply) &&
    isCommandResult(req.command, req.command_result)
  );
}

function hangupHandler(flow: CompiledFlow, prior: CallState, req: RtRequest, opts: EngineOptions): Outcome {
  const rt = runOf(flow, req, opts, prior.step);
  const done = (ctx: Ctx): Outcome =>
    dropWithHangup(req, prior.commandId + 1, rt.log, summaryOf(prior, req, opts, ctx.vars));
  let snap: FlowSnapshot;
  try {
    snap = flow.machine.restore(prior.s, persisted(prior), rt);
  } catch {
    return invalidState(flow, prior, req, opts);
  }
  const ev = { type: EV_CALL_END, result: req.command_result, error: req.command_error };
  snap = flow.machine.send(snap, carriesResult(prior, req) ? { ...ev, real: true } : ev);
  return settle(flow, rt, snap, prior, (_e, ctx) => done(ctx));
}
