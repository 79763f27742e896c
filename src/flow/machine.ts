/**
 * The xstate adapter: THE one module that imports xstate. It turns a flow model into an
 * xstate v5 machine, the formal model of the flow for tooling (diagrams, path generation)
 * and for the equivalence test against the fast program that `advance` runs:
 *
 * - one state per step, plus `@end` (the end of the flow: hangup) and one synthetic state
 *   per branch `say:` and destination (`<step>@say:<i>><dest>`), left on `say.done`;
 * - command steps take one event per branch key (`on:<key>` for exact results and
 *   patterns, `default`, `error`); `hangup` steps and `@end` are final;
 * - retries are guarded transitions on the counters in context (`c.n` visits, `c.r[key]`
 *   retries); any other branch resets them;
 * - set and switch steps are `always` transitions (switch cases as guards);
 * - a command step whose params may fail at run time has a guarded `always` transition
 *   into its error branch (a rendered value that fails its check);
 * - `call.end` (a terminal call_status), from any state, goes to the hangup handler.
 *
 * Pure helpers wrap xstate's pure functions (initialTransition, transition, resolveState).
 */
import { assign, createMachine, initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import { evaluate, test, type Scope } from './expr.js';
import type { Branch, FlowModel, Step, Value } from './model.js';
import { branchByKey, type PCommand, type PSet, type Program } from '../engine/program.js';
import type { StepCounters } from '../engine/types.js';

export type FlowMachine = AnyStateMachine;
export type FlowSnapshot = AnyMachineSnapshot;

export interface MachineContext {
  vars: Record<string, Value>;
  /** Counters of the current command step. */
  c: StepCounters;
  result: string;
  error: string;
  call: Record<string, Value>;
  /** Escalation index of the outstanding branch `say:` play. */
  sayK: number;
}

export interface MachineInput {
  vars?: Record<string, Value>;
  call: Record<string, Value>;
}

export interface MachineEvent {
  type: string;
  result?: string;
  error?: string;
  call?: Record<string, Value>;
}

/** One way a result is matched at a command state, in the order they are tried. */
export interface KeyMeta {
  key: string;
  event: string;
  /** Exact result; else `regex` (a pattern). */
  exact?: string;
  regex?: string;
}

export type StateMeta =
  | { kind: 'command'; step: string; command: string; keys: KeyMeta[] }
  | { kind: 'final-command'; step: string; command: 'hangup' }
  | { kind: 'say'; step: string; key: string; to: string }
  | { kind: 'logic'; step: string }
  | { kind: 'end' };

export const END_STATE = '@end';
export const EV_DEFAULT = 'default';
export const EV_ERROR = 'error';
export const EV_SAY_DONE = 'say.done';
export const EV_CALL_END = 'call.end';

/** The event of a result key (encoded: xstate treats `*` and `.*` as wildcards). */
export function eventForKey(key: string): string {
  return 'on:' + encodeURIComponent(key).replace(/\*/g, '%2A').replace(/\./g, '%2E');
}

type Ctx = MachineContext;
type Args = { context: Ctx; event: MachineEvent };
type Guard = (a: Args) => boolean;
type Action = ReturnType<typeof assign<Ctx, MachineEvent, undefined, MachineEvent, never>>;
interface TransitionCfg {
  target: string;
  guard?: Guard;
  reenter?: boolean;
  actions: Action[];
}

const scopeOf = (c: Ctx): Scope => ({ vars: c.vars, call: c.call, result: c.result, error: c.error });

const setResult: Action = assign(({ event, context }) => ({
  result: event.result ?? '',
  error: event.error ?? '',
  call: event.call ?? context.call,
}));
const setCall: Action = assign(({ event, context }) => ({ call: event.call ?? context.call }));
const fresh: Action = assign({ c: () => ({ n: 1, r: {} }) });
const paramError: Action = assign({ result: () => '', error: () => 'INVALID_PARAM' });

function save(name: string): Action {
  return assign(({ context }) => ({ vars: { ...context.vars, [name]: context.result } }));
}
function sayK(key: string, retry: boolean): Action {
  return assign(({ context }) => ({ sayK: retry ? (context.c.r[key] ?? 0) + 1 : 1 }));
}
function retryOnce(key: string): Action {
  return assign(({ context }) => ({ c: { n: context.c.n + 1, r: { ...context.c.r, [key]: (context.c.r[key] ?? 0) + 1 } } }));
}

function runSet(step: PSet): Action {
  return assign(({ context }) => {
    const vars = { ...context.vars };
    const scope = (): Scope => ({ ...scopeOf(context), vars });
    for (const a of step.assign) {
      try {
        if (a.kind === 'expr') vars[a.name] = evaluate(a.expr, scope());
        else vars[a.name] = a.value.c ? a.value.v : a.value.f(scope);
      } catch {
        // left unchanged, as the engine does (it logs)
      }
    }
    return { vars };
  });
}

function condition(when: string): Guard {
  return ({ context }) => {
    try {
      return test(when, scopeOf(context));
    } catch {
      return false;
    }
  };
}

export function buildMachine(model: FlowModel, program: Program): FlowMachine {
  const states: Record<string, unknown> = {};
  const target = (id: string | undefined): string => (id === undefined || id === '' ? END_STATE : id);

  for (const [id, step] of Object.entries(model.steps)) {
    const p = program.steps.get(id)!;
    states[id] = stateFor(model, program, id, step, p, states, target);
  }
  states[END_STATE] = { type: 'final', meta: { kind: 'end' } satisfies StateMeta };

  const handler = model.handlers.hangup;
  const config = {
    id: 'flow',
    initial: model.start,
    context: ({ input }: { input: MachineInput }): Ctx => ({
      vars: input.vars ?? model.vars,
      c: { n: 1, r: {} },
      result: '',
      error: '',
      call: input.call,
      sayK: 1,
    }),
    on: { [EV_CALL_END]: { target: '.' + target(handler), actions: [setResult] } },
    states,
  };
  return createMachine(config as unknown as Parameters<typeof createMachine>[0]) as FlowMachine;
}

function stateFor(
  model: FlowModel,
  program: Program,
  id: string,
  step: Step,
  p: NonNullable<ReturnType<Program['steps']['get']>>,
  states: Record<string, unknown>,
  target: (id: string | undefined) => string,
): unknown {
  if (step.kind === 'set') {
    return { meta: { kind: 'logic', step: id } satisfies StateMeta, always: { target: target(step.next), actions: [runSet(p as PSet)] } };
  }
  if (step.kind === 'switch') {
    return {
      meta: { kind: 'logic', step: id } satisfies StateMeta,
      always: [...step.cases.map((c) => ({ guard: condition(c.when), target: target(c.goto) })), { target: target(step.default) }],
    };
  }
  const pc = p as PCommand;
  if (step.command.name === 'hangup') return { type: 'final', meta: { kind: 'final-command', step: id, command: 'hangup' } satisfies StateMeta };

  let sayIndex = 0;
  const branchTransitions = (key: string, b: Branch, pre: Action[], extraGuard?: Guard): TransitionCfg[] => {
    const i = sayIndex++;
    const via = (dest: string): string => {
      if (!b.say || b.say.length === 0) return dest;
      const name = `${id}@say:${i}>${dest}`;
      const say = branchByKey(pc, key)?.say;
      // A say whose media fails to render is skipped, as the engine does (it logs).
      const sayFails: Guard = ({ context }) => {
        try {
          say?.build(() => scopeOf(context), context.sayK);
          return false;
        } catch {
          return true;
        }
      };
      states[name] = {
        meta: { kind: 'say', step: id, key, to: dest } satisfies StateMeta,
        ...(say && !say.constant ? { always: { guard: sayFails, target: dest } } : {}),
        on: { [EV_SAY_DONE]: { target: dest, actions: [setCall] } },
      };
      return name;
    };
    const g = (guard?: Guard): Guard | undefined => (extraGuard && guard ? (a) => extraGuard(a) && guard(a) : extraGuard ?? guard);
    const withGuard = (t: TransitionCfg, guard?: Guard): TransitionCfg => {
      const gg = g(guard);
      return gg ? { ...t, guard: gg } : t;
    };
    if (b.retry !== undefined) {
      const retry = b.retry;
      return [
        withGuard({ target: via(id), reenter: true, actions: [...pre, sayK(key, true), retryOnce(key)] }, ({ context }) => (context.c.r[key] ?? 0) < retry),
        withGuard({ target: via(target(b.then)), reenter: true, actions: [...pre, sayK(key, true), fresh] }),
      ];
    }
    return [withGuard({ target: via(target(b.goto)), reenter: true, actions: [...pre, sayK(key, false), fresh] })];
  };

  const onResult: Action[] = step.save !== undefined ? [setResult, save(step.save)] : [setResult];
  const keys: KeyMeta[] = [];
  const on: Record<string, TransitionCfg[]> = {};
  const add = (key: string, b: Branch, km: Omit<KeyMeta, 'key' | 'event'>): void => {
    const event = eventForKey(key);
    if (on[event]) return;
    keys.push({ key, event, ...km });
    on[event] = branchTransitions(key, b, onResult);
  };
  for (const [k, b] of Object.entries(step.on.exact)) add(k, b, { exact: k });
  for (const pat of step.on.patterns) add(pat.source, pat.branch, { regex: pat.regex });
  const h = step.inheritHandlers ? model.handlers.on[step.command.name] : undefined;
  if (h) {
    for (const [k, b] of Object.entries(h.exact)) if (!(k in step.on.exact)) add(k, b, { exact: k });
    for (const pat of h.patterns) add(pat.source, pat.branch, { regex: pat.regex });
  }
  on[EV_DEFAULT] = step.on.default ? branchTransitions('default', step.on.default, onResult) : [{ target: END_STATE, actions: onResult }];
  const errorBranch = step.on.error ?? model.handlers.error;
  on[EV_ERROR] = errorBranch ? branchTransitions('error', errorBranch, [setResult]) : [{ target: END_STATE, actions: [setResult] }];

  const state: Record<string, unknown> = { meta: { kind: 'command', step: id, command: step.command.name, keys } satisfies StateMeta, on };
  if (!pc.builder.constant) {
    // A rendered param that fails its check takes the error branch (INVALID_PARAM).
    const invalid: Guard = ({ context }) => {
      try {
        pc.builder.build(() => scopeOf(context), context.c.n);
        return false;
      } catch {
        return true;
      }
    };
    state.always = errorBranch ? branchTransitions('error', errorBranch, [paramError], invalid) : [{ guard: invalid, target: END_STATE, actions: [paramError] }];
  }
  return state;
}

/** The initial snapshot (start state, logic steps run). */
export function machineStart(machine: FlowMachine, input: MachineInput): FlowSnapshot {
  return initialTransition(machine, input)[0];
}

/** The next snapshot on an event (pure). */
export function machineSend(machine: FlowMachine, snapshot: FlowSnapshot, event: MachineEvent): FlowSnapshot {
  return transition(machine, snapshot, event)[0];
}

/** A snapshot from a stored position: the state key and the context. */
export function machineRestore(machine: FlowMachine, state: string, context: MachineContext): FlowSnapshot {
  return machine.resolveState({ value: state, context });
}

/** The key of the active state (the machine is flat). */
export function activeState(snapshot: FlowSnapshot): string {
  return String(snapshot.value);
}

export function activeMeta(snapshot: FlowSnapshot): StateMeta {
  const key = activeState(snapshot);
  const meta = snapshot.getMeta() as Record<string, StateMeta | undefined>;
  return meta[`flow.${key}`] ?? { kind: 'end' };
}

export function contextOf(snapshot: FlowSnapshot): MachineContext {
  return snapshot.context as MachineContext;
}

/** The synthetic say state of `step` leading to `to` (the first one, if several). */
export function sayStateOf(machine: FlowMachine, step: string, to: string): string | undefined {
  for (const [key, node] of Object.entries(machine.states)) {
    const m = node.meta as StateMeta | undefined;
    if (m && m.kind === 'say' && m.step === step && m.to === to) return key;
  }
  return undefined;
}
