/**
 * The call step, a pure function: given a compiled flow, the call's prior state and one
 * RT.Request, decide the reply and the next state. No I/O, no clock (opts.now), no
 * throwing: every failure is an Outcome (see outcome.ts) with its log entries.
 *
 * Order of decisions (protocol-notes.md):
 * 1. no prior state: a terminal status is answered hangup; a first request starts the
 *    flow; any other follows opts.unknownCall (restart | hangup | reject);
 * 2. a terminal status runs the hangup handler's logic steps, answers hangup, drops the call;
 * 3. command_id one before the latest: replay the stored reply; any other but the latest: stale;
 * 4. the latest: feed the result (or error) and run to the next command.
 */
import type { CompiledFlow } from '../flow/compile.js';
import type { Value } from '../flow/model.js';
import { TERMINAL_STATUSES, type CommandName } from '../protocol/commands.js';
import type { RtRequest, RtResponse } from '../protocol/rt.js';
import { DEFAULT_MAX_LOGIC_STEPS, type EngineOptions, type LogEntry, type Outcome } from './outcome.js';
import type { Params } from './params.js';
import { END } from './program.js';
import { endOfFlow, feedResult, resumeEffect, runFrom, type Emit, type RunOut } from './run.js';
import { newCtx, type RunCtx } from './scope.js';
import { serializeReply } from './serialize.js';
import type { CallState, CallSummary } from './types.js';

export type { EngineOptions, LogEntry, Outcome } from './outcome.js';

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

export function isTerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

export function isFirstRequest(req: RtRequest): boolean {
  return req.command === '' && req.command_id === 0;
}

export function advance(flow: CompiledFlow, prior: CallState | undefined, req: RtRequest, opts: EngineOptions): Outcome {
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
      log: [{ level: 'error', code: 'ENGINE_INTERNAL', msg: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined }],
    };
  }
}

function response(command: CommandName, params: Params, commandId: number, req: RtRequest): RtResponse {
  return { command, command_id: commandId, params: params as RtResponse['params'], variablesRaw: req.variablesRaw };
}

function summaryOf(flow: CompiledFlow, prior: CallState, req: RtRequest, opts: EngineOptions, vars: Record<string, Value>): CallSummary {
  return {
    callid: req.callid,
    flow: prior.flow,
    version: prior.version,
    status: req.call_status,
    commands: prior.commands,
    durationMs: Math.max(0, opts.now - prior.started),
    lastStep: prior.step,
    vars,
  };
}

/** Answer hangup and forget the call. */
function dropWithHangup(req: RtRequest, commandId: number, log: LogEntry[] | undefined, summary?: CallSummary): Outcome {
  const reply = response('hangup', {}, commandId, req);
  const out: Outcome = { kind: 'reply', reply, replyJson: serializeReply(reply), state: null };
  if (summary) out.summary = summary;
  if (log && log.length > 0) out.log = log;
  return out;
}

function step(flow: CompiledFlow, prior: CallState | undefined, req: RtRequest, opts: EngineOptions): Outcome {
  const max = opts.maxLogicSteps ?? DEFAULT_MAX_LOGIC_STEPS;
  const terminal = TERMINAL.has(req.call_status);

  if (!prior) {
    if (terminal) return dropWithHangup(req, req.command_id + 1, undefined);
    if (isFirstRequest(req)) return start(flow, req, opts, 0, undefined);
    const msg = `no state for call ${req.callid} (command ${req.command || '""'}, command_id ${req.command_id})`;
    switch (opts.unknownCall) {
      case 'reject':
        return { kind: 'rejected', code: 'UNKNOWN_CALL', message: msg };
      case 'hangup':
        return dropWithHangup(req, req.command_id + 1, [{ level: 'warn', code: 'UNKNOWN_CALL', msg: `${msg}: hanging up` }]);
      case 'restart':
        return start(flow, req, opts, req.command_id, { level: 'warn', code: 'UNKNOWN_CALL', msg: `${msg}: restarting the flow` });
    }
  }

  if (prior.version !== flow.version || prior.flow !== flow.name) {
    const msg = `call ${req.callid} runs ${prior.flow}@${prior.version}, the engine was given ${flow.name}@${flow.version}`;
    if (terminal) return dropWithHangup(req, prior.commandId + 1, [{ level: 'error', code: 'FLOW_VERSION_MISMATCH', msg }], summaryOf(flow, prior, req, opts, prior.vars));
    return { kind: 'rejected', code: 'FLOW_VERSION_MISMATCH', message: msg };
  }

  if (terminal) return hangupHandler(flow, prior, req, opts, max);

  if (req.command_id === prior.commandId - 1) return { kind: 'replay', replyJson: fullReply(prior.reply, req) };
  if (req.command_id !== prior.commandId) {
    const ahead = req.command_id > prior.commandId;
    return {
      kind: 'stale',
      message: ahead
        ? `command_id ${req.command_id} is ahead of the call's latest command ${prior.commandId}: no such command was sent`
        : `command_id ${req.command_id} is stale: the call's latest command is ${prior.commandId}`,
      latest: prior.commandId,
    };
  }
  const sent = replyCommand(prior.reply);
  if (req.command !== sent) {
    return {
      kind: 'stale',
      message: `the request reports command "${req.command}" #${req.command_id}, but command #${prior.commandId} of this call is "${sent}"`,
      latest: prior.commandId,
    };
  }

  const ctx = newCtx(req, prior.vars, max, prior.step);
  let emit: RunOut;
  if (prior.done) {
    emit = endOfFlow(ctx); // we already hung up: say it again
  } else if (prior.after) {
    ctx.result = prior.after.res ?? '';
    ctx.error = prior.after.err ?? '';
    emit = runFrom(flow.program, ctx, prior.after.to, prior.after.keep ? prior.counters : undefined);
  } else {
    const at = flow.program.steps.get(prior.step);
    if (!at || at.kind !== 'command') {
      return dropWithHangup(req, prior.commandId + 1, [{ level: 'error', code: 'STATE_INVALID', msg: `the call is at "${prior.step}", not a command step of ${flow.name}`, step: prior.step }], summaryOf(flow, prior, req, opts, prior.vars));
    }
    ctx.result = req.command_result;
    ctx.error = req.command_error;
    emit = feedResult(flow.program, ctx, at, prior.counters);
  }
  return settle(flow, ctx, prior, emit, (e) => finish(flow, ctx, e, prior.commandId, prior.started, prior.commands));
}

/**
 * Ends a run: a command goes to `tail`; an effect suspends the request, and its `resume`
 * goes on from there (through further effects, if any) to the same `tail`.
 */
function settle(flow: CompiledFlow, ctx: RunCtx, prior: CallState | undefined, out: RunOut, tail: (e: Emit) => Outcome): Outcome {
  if (!('suspend' in out)) return tail(out);
  let resumed = false;
  return {
    kind: 'effect',
    effect: out.effect,
    resume: (res) => {
      if (resumed) throw new Error('an effect outcome was resumed twice');
      resumed = true;
      return guarded(prior, ctx.req, () => settle(flow, ctx, prior, resumeEffect(flow.program, ctx, out, res), tail));
    },
  };
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

function start(flow: CompiledFlow, req: RtRequest, opts: EngineOptions, base: number, warn: LogEntry | undefined): Outcome {
  const ctx = newCtx(req, flow.program.initialVars, opts.maxLogicSteps ?? DEFAULT_MAX_LOGIC_STEPS, flow.program.start);
  ctx.vars = Object.assign({}, ctx.vars); // the new call's own object, never the model's
  ctx.varsOwned = true;
  if (warn) ctx.log = [warn];
  const emit = runFrom(flow.program, ctx, flow.program.start, undefined);
  return settle(flow, ctx, undefined, emit, (e) => finish(flow, ctx, e, base, opts.now, 0));
}

function finish(flow: CompiledFlow, ctx: RunCtx, emit: Emit, base: number, started: number, commands: number): Outcome {
  const reply = response(emit.command, emit.params, base + 1, ctx.req);
  const replyJson = serializeReply(reply);
  const state: CallState = {
    v: 1,
    flow: flow.name,
    version: flow.version,
    step: emit.step,
    vars: ctx.vars,
    commandId: base + 1,
    reply: replyHead(replyJson, ctx.req),
    started,
    commands: commands + 1,
  };
  if (emit.after) state.after = emit.after;
  if (emit.counters) state.counters = emit.counters;
  if (emit.done) state.done = true;
  const out: Outcome = { kind: 'reply', reply, replyJson, state };
  if (ctx.log) out.log = ctx.log;
  return out;
}

function hangupHandler(flow: CompiledFlow, prior: CallState, req: RtRequest, opts: EngineOptions, max: number): Outcome {
  const ctx = newCtx(req, prior.vars, max, prior.step);
  ctx.result = req.command_result;
  ctx.error = req.command_error;
  const h = flow.program.hangupHandler;
  const done = () => dropWithHangup(req, prior.commandId + 1, ctx.log, summaryOf(flow, prior, req, opts, ctx.vars));
  if (h === undefined || h === END) return done();
  return settle(flow, ctx, prior, runFrom(flow.program, ctx, h, undefined, true), done);
}
