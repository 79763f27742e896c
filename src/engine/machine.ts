/**
 * The xstate adapter: THE one module that imports xstate (a test checks it). It makes a
 * flow's machine from its config (plain data, src/flow/machine-config.ts) with the engine's
 * guards and actions (src/engine/behaviour.ts) registered through `setup()`, and steps it.
 *
 * Speed: xstate's pure `transition()` builds a throw-away actor on every call. Here one
 * actor scope is made per compiled machine and reused: `machine.transition(snapshot,
 * event, scope)` and `machine.getInitialSnapshot(scope, input)` are the machine's
 * ActorLogic methods (xstate's public interface for actor logic). The scope's action
 * executor runs the engine's custom actions at once (logs, counts, coverage hooks), in
 * the order xstate resolves them; builtin actions (assign, raise, enqueueActions) are
 * resolved by xstate itself. xstate's version is pinned exactly in package.json.
 */
import {
  createActor,
  enqueueActions,
  setup,
  type ActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
} from 'xstate';
import {
  CALL_STATE,
  END_STATE,
  EV_PARAM_INVALID,
  EV_START,
  xstateConfig,
  type MachineConfig,
} from '../flow/machine-config.js';
import type { Value } from '../flow/model.js';
import { behaviour, FRESH, type Ctx, type Ev, type Run } from './behaviour.js';
import type { FlowTables } from './tables.js';

export type FlowSnapshot = AnyMachineSnapshot;

/** What a call keeps of the machine's context between requests (the rest is the request's). */
export type Persisted = Pick<Ctx, 'vars' | 'c' | 'res' | 'err' | 'k' | 'h'> & Pick<Partial<Ctx>, 'f' | 'l' | 'q'>;

export interface FlowMachine {
  /** The xstate machine itself (for tools and tests of the public API). */
  readonly machine: AnyStateMachine;
  /** The initial snapshot: the start state entered, logic steps run, its command built into `rt.out`. */
  start(vars: Record<string, Value>, rt: Run): FlowSnapshot;
  /** The snapshot of a stored call, at state `value`, running the request `rt`. */
  restore(value: string, p: Persisted, rt: Run): FlowSnapshot;
  /** One macrostep: the event, then every eventless and raised transition it leads to. */
  send(snapshot: FlowSnapshot, event: Ev): FlowSnapshot;
  /** The flow state a snapshot is in (a key of the config's `states`). */
  stateOf(snapshot: FlowSnapshot): string;
}

interface Input {
  vars: Record<string, Value>;
  rt: Run;
}

type Args = { context: Ctx; event: Ev };

const START: Ev = Object.freeze({ type: EV_START });
type P<T> = T & Record<string, unknown>;

export function createFlowMachine(config: MachineConfig, tables: FlowTables): FlowMachine {
  const b = behaviour(tables);
  const build = (kind: 'emit' | 'say') =>
    enqueueActions(
      ({ context, enqueue }: Args & { enqueue: { raise(e: Ev): void } }, p: P<{ step?: string; state?: string }>) => {
        if (kind === 'emit') {
          if (!b.builds.emit(context, p.state ?? p.step!, p as { step: string }))
            enqueue.raise({ type: EV_PARAM_INVALID, result: '', error: 'INVALID_PARAM' });
        } else if (!b.builds.say(context, p.state!)) {
          enqueue.raise({ type: EV_PARAM_INVALID });
        }
      },
    );
  const logic = setup({
    types: {} as { context: Ctx; events: Ev; input: Input },
    guards: {
      match: ({ context, event }: Args, p: P<{ exact?: string; re?: string; key?: string; max?: number }>) =>
        b.guards.match(context, event, p),
      budget: ({ context }: Args) => b.guards.budget(context),
      when: ({ context }: Args, p: P<{ step: string; i: number }>) => b.guards.when(context, p),
      frame: ({ context }: Args, p: P<{ site?: string; full?: boolean }>) => b.guards.frame(context, p),
      saves: ({ context, event }: Args, p: P<{ step?: string; skip?: string[] }>) => b.guards.saves(context, event, p),
      setFails: ({ context }: Args, p: P<{ step: string; way: string }>) => b.guards.setFails(context, p),
      loop: ({ context }: Args, p: P<{ step: string; first: boolean; is: 'item' | 'error' }>) =>
        b.guards.loop(context, p),
      queueDue: ({ context, event }: Args, p: P<{ step: string }>) => b.guards.queueDue(context, event, p),
    },
    actions: {
      take: write(
        (
          { context, event }: Args,
          p: P<{
            result?: boolean;
            save?: string;
            pick?: [string, number];
            retry?: string;
            fresh?: string | true;
            handler?: boolean;
          }>,
        ) => b.assigns.take(context, event, p),
      ),
      set: write(({ context }: Args, p: P<{ step: string }>) => b.assigns.set(context, p)),
      setError: write(({ context }: Args, p: P<{ step: string }>) => b.assigns.setError(context, p)),
      enter: write(({ context }: Args, p: P<{ step: string }>) => b.assigns.enter(context, p)),
      leave: write(({ context }: Args, p: P<{ step: string; site?: string }>) => b.assigns.leave(context, p)),
      loop: write(({ context }: Args, p: P<{ step: string; first: boolean; end?: 'done' | 'error' }>) =>
        b.assigns.loop(context, p),
      ),
      queue: write(({ context, event }: Args, p: P<{ step: string; on: 'ring' | 'announce' | 'hold' }>) =>
        b.assigns.queue(context, event, p),
      ),
      queueEffect: enqueueActions(
        (
          { context, enqueue }: Args & { enqueue: { raise(e: Ev): void } },
          p: P<{ step: string; state: string; op: 'poll' | 'leave' | 'done' }>,
        ) => {
          if (!b.builds.queueEffect(context, p.state, p))
            enqueue.raise({ type: EV_PARAM_INVALID, result: '', error: 'INVALID_PARAM' });
        },
      ),
      queueCommand: enqueueActions(
        (
          { context, enqueue }: Args & { enqueue: { raise(e: Ev): void } },
          p: P<{ step: string; state: string; what: 'hold' | 'announce' | 'ring' }>,
        ) => {
          if (!b.builds.queueCommand(context, p.state, p)) enqueue.raise({ type: EV_PARAM_INVALID });
        },
      ),
      emitChecked: build('emit'),
      emit: ({ context }: Args, p: P<{ step: string }>) => {
        if (!b.builds.emit(context, p.step, p))
          throw new Error(`constant params of step "${p.step}" failed their check`);
      },
      say: build('say'),
      filler: ({ context }: Args, p: P<{ step: string; state: string }>) => {
        if (!b.builds.filler(context, p.state, p.step))
          throw new Error(`the filler of step "${p.step}" went over the request's budget`);
      },
      tick: ({ context }: Args, p: P<{ step?: string }> | undefined) => b.effects.tick(context, p),
      took: ({ context }: Args, p: P<{ keys: string[] }>) => b.effects.took(context, p),
      limit: ({ context }: Args) => b.effects.limit(context),
      unhandled: ({ context, event }: Args) => b.effects.unhandled(context, event),
    } as never,
  } as never) as unknown as { createMachine(c: unknown): AnyStateMachine };

  const machine = logic.createMachine({
    ...xstateConfig(config),
    context: ({ input }: { input: Input }): Ctx => newCtx(input.vars, FRESH, '', '', 1, 0, input.rt),
  });

  // One actor scope for every step of this machine. The actor is never started: it only
  // lends the scope its `self` and `system`; restoring it at @end runs no flow code.
  const self = createActor(machine, {
    snapshot: machine.resolveState({ value: { [CALL_STATE]: END_STATE }, context: {} }),
  });
  const scope = {
    self,
    system: self.system,
    id: '',
    sessionId: '',
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    actionExecutor: (a: { exec?: (info: unknown, params: unknown) => void; info: unknown; params: unknown }) => {
      if (a.exec) a.exec(a.info, a.params);
    },
  } as unknown as ActorScope<FlowSnapshot, Ev>;

  /**
   * A state's snapshot, resolved once (xstate's `resolveState`: the state nodes, the value, the tags) and kept for the
   * machine's life: a call is restored as a copy of it with its own context. Keyed by state name; only states that
   * resolve are kept (a name that is no state throws), so the map holds at most the machine's states.
   */
  const templates = new Map<string, FlowSnapshot>();
  const templateOf = (value: string): FlowSnapshot => {
    let t = templates.get(value);
    if (!t) {
      t = machine.resolveState({ value: { [CALL_STATE]: value }, context: {} }) as FlowSnapshot;
      templates.set(value, t);
    }
    return t;
  };

  return {
    machine,
    start(vars, rt) {
      // as the machine's initial snapshot, entered by a transition from the end state's template: no initial snapshot
      // (its state nodes resolved, its context assigned) built for every call
      const context = newCtx(vars, FRESH, '', '', 1, 0, rt);
      return machine.transition(withContext(templateOf(END_STATE), context), START, scope) as FlowSnapshot;
    },
    restore(value, p, rt) {
      return withContext(templateOf(value), newCtx(p.vars, p.c, p.res, p.err, p.k, p.h, rt, p.f, p.l, p.q));
    },
    send(snapshot, event) {
      // the actions write the context in place (see write): on a copy, so the snapshot given is never changed
      return machine.transition(withContext(snapshot, { ...(snapshot.context as Ctx) }), event, scope) as FlowSnapshot;
    },
    stateOf(snapshot) {
      const v = snapshot.value as Record<string, string> | string;
      return typeof v === 'string' ? v : (v[CALL_STATE] ?? END_STATE);
    },
  };
}

/**
 * A context update as a plain action: `fn`'s partial context is written into the macrostep's own context (a copy made
 * by `send`, or the initial snapshot's), where xstate's `assign` would make a new snapshot for each update (the state
 * nodes' value and tags computed again). What the update returns is new objects for what it changes (vars, counters),
 * so nothing outside the context object is written.
 */
function write<P>(fn: (args: Args, p: P) => Partial<Ctx>) {
  return (args: Args, p: P): void => {
    const c = args.context as unknown as Record<string, unknown>;
    const u = fn(args, p) as Record<string, unknown>;
    for (const k in u) c[k] = u[k];
  };
}

/**
 * A context with every field there from the start, in one order: the writes of the actions then change values, never
 * the object's shape (an object that gains properties one by one goes slow in V8).
 */
function newCtx(
  vars: Ctx['vars'],
  c: Ctx['c'],
  res: string,
  err: string,
  k: number,
  h: Ctx['h'],
  rt: Run,
  f?: Ctx['f'],
  l?: Ctx['l'],
  q?: Ctx['q'],
): Ctx {
  return { vars, c, res, err, k, h, sy: undefined, f, ret: undefined, l, q, rt };
}

/**
 * A snapshot like `t` with `context`: a shallow copy, as xstate's own snapshot copies are (its state nodes, value, tags
 * and history are shared, never changed in place).
 */
function withContext(t: FlowSnapshot, context: Ctx): FlowSnapshot {
  return { ...t, context } as FlowSnapshot;
}
