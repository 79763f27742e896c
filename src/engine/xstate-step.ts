/**
 * The same call step as `advance`, decided by the xstate machine instead of the fast
 * program: a reference implementation for the equivalence test and for tooling (path
 * generation, a simulator that shows the machine's state). Transitions go through xstate's
 * pure functions (initialTransition, transition, resolveState), via src/flow/machine.ts.
 * Correct rather than fast; it has no protocol concerns (ids, replays, policies): it is
 * given results and says which command comes next.
 *
 * Caveat: xstate runs `always` transitions without a bound, so a flow with a loop of logic
 * steps (refused by the checker) must not be run here.
 */
import type { CompiledFlow } from '../flow/compile.js';
import {
  activeMeta,
  activeState,
  contextOf,
  EV_CALL_END,
  EV_DEFAULT,
  EV_ERROR,
  EV_SAY_DONE,
  machineRestore,
  machineSend,
  machineStart,
  sayStateOf,
  type FlowSnapshot,
  type MachineContext,
  type MachineEvent,
} from '../flow/machine.js';
import type { Value } from '../flow/model.js';
import type { ActionName } from '../flow/actions.js';
import type { RtRequest } from '../protocol/rt.js';
import type { Params } from './params.js';
import { branchByKey } from './program.js';
import { callFields } from './scope.js';
import type { CallState, StepCounters } from './types.js';

export interface XStep {
  snapshot: FlowSnapshot;
  /** The machine's active state. */
  state: string;
  /** The step whose command is outstanding (for a say play: the step whose branch plays it); undefined once over. */
  step: string | undefined;
  /** The command to send, or the effect (sms) to perform. */
  command: ActionName;
  params: Params;
  /** The flow is over (hangup sent, or the call ended). */
  done: boolean;
  vars: Record<string, Value>;
  counters: StepCounters;
}

const TERMINAL = new Set(['HANGUP', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED']);

function scopeOf(c: MachineContext) {
  return { vars: c.vars, call: c.call, result: c.result, error: c.error };
}

/** What the machine's active state asks the service to do. */
export function describeSnapshot(flow: CompiledFlow, snapshot: FlowSnapshot): XStep {
  const meta = activeMeta(snapshot);
  const ctx = contextOf(snapshot);
  const base = { snapshot, state: activeState(snapshot), vars: ctx.vars, counters: ctx.c };
  const hangup = { ...base, step: undefined, command: 'hangup' as const, params: {}, done: true };
  if (snapshot.status === 'done') return hangup;
  switch (meta.kind) {
    case 'command': {
      const step = flow.program.steps.get(meta.step);
      if (!step || step.kind !== 'command') return hangup;
      return { ...base, step: meta.step, command: step.command, params: step.builder.build(() => scopeOf(ctx), ctx.c.n), done: false };
    }
    case 'say': {
      const step = flow.program.steps.get(meta.step);
      const b = step && step.kind === 'command' ? branchByKey(step, meta.key) : undefined;
      if (!b?.say) return hangup;
      return { ...base, step: meta.step, command: 'play', params: b.say.build(() => scopeOf(ctx), ctx.sayK), done: false };
    }
    default:
      return hangup;
  }
}

/** The event a request is to the machine in its active state. */
export function eventFor(snapshot: FlowSnapshot, req: RtRequest): MachineEvent {
  const call = callFields(req);
  if (TERMINAL.has(req.call_status)) return { type: EV_CALL_END, result: req.command_result, error: req.command_error, call };
  const meta = activeMeta(snapshot);
  if (meta.kind === 'say') return { type: EV_SAY_DONE, call };
  if (req.command_error !== '') return { type: EV_ERROR, result: req.command_result, error: req.command_error, call };
  let type = EV_DEFAULT;
  if (meta.kind === 'command') {
    const r = req.command_result;
    const hit = meta.keys.find((k) => (k.exact !== undefined ? k.exact === r : new RegExp(k.regex!).test(r)));
    if (hit) type = hit.event;
  }
  return { type, result: req.command_result, error: '', call };
}

/** Starts the flow: the first command. */
export function xstateStart(flow: CompiledFlow, req: RtRequest): XStep {
  return describeSnapshot(flow, machineStart(flow.machine, { call: callFields(req) }));
}

/** Feeds one request (a result, an error, or a terminal status) and describes the next command. */
export function xstateFeed(flow: CompiledFlow, snapshot: FlowSnapshot, req: RtRequest): XStep {
  return describeSnapshot(flow, machineSend(flow.machine, snapshot, eventFor(snapshot, req)));
}

/** The machine snapshot equivalent to an engine CallState (via machine.resolveState). */
export function snapshotOfState(flow: CompiledFlow, state: CallState, req: RtRequest): FlowSnapshot {
  const context: MachineContext = {
    vars: state.vars,
    c: state.counters ?? { n: 1, r: {} },
    result: state.after?.res ?? '',
    error: state.after?.err ?? '',
    call: callFields(req),
    sayK: 1,
  };
  const value = state.done ? '@end' : state.after ? (sayStateOf(flow.machine, state.step, state.after.to || '@end') ?? '@end') : state.step;
  return machineRestore(flow.machine, value, context);
}
