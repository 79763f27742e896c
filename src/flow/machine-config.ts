/**
 * The flow model as an xstate machine config: plain JSON data, no functions. Guards and
 * actions are named (`{ type, params }`) and implemented by the engine (src/engine/
 * machine.ts registers them through xstate's `setup()`); this module never imports xstate.
 * `callscript graph --format xstate` writes this config as it is.
 *
 * - one state per step, plus `@end` (the end of the flow: the engine answers hangup) and
 *   one state per destination reached through a branch's `say:` (`<dest>@say`): it plays
 *   the say the branch picked (`pick`), then enters the destination on the play's result;
 * - command (and effect) states build their command on entry (`emit`); a result is the
 *   event `result`, a command_error the event `error`, tried against guarded transitions
 *   in the order the language defines: exact keys, patterns, flow-wide handlers, default;
 * - a branch with `retry` is two transitions: back to the step while the key's retries
 *   are left (guard `match` with `max`), then to `then`;
 * - a step's `valid:` is a guarded transition (`match` with `invalid`) after its exact
 *   keys: a result that fails the condition takes `valid.else` (or the default branch)
 *   without being saved;
 * - set and switch steps are `always` transitions (a set whose assignment fails takes its error way: guard
 *   `setFails`, see setFailure); every `always` list and every
 *   `param.invalid` list starts with the `budget` guard, so a loop of logic steps or of
 *   failing params ends the call instead of spinning;
 * - a param that fails its check at run time raises `param.invalid`: the error branch;
 * - `call.end` (a terminal call_status), from any state, enters the hangup handler; at a command step with `save:`
 *   (not in a module), a terminal request that carries the command's result (a recording's file name: guard `saves`)
 *   saves it first, unless the step's `valid:` rejects it.
 *
 * Each transition names what it covers (`took`): `<step>:<key>`, `<step>:<key>:then`,
 * `handlers.on.<command>:<key>`, `handlers:error`, `<step>:case<i>`, `<step>:default`,
 * `<step>:next`, `<step>:invalid`, a foreach's `<step>:do`, `<step>:next`, `<step>:done`, `<step>:error`
 * (machine-loop.ts): the coverage keys of `callscript test --coverage` and of `paths`.
 */
import { isTemplate } from './expr.js';
import {
  handlersOf,
  type Branch,
  type Branches,
  type CommandCall,
  type FlowModel,
  type LinkedModule,
  type MediaParam,
  type ResultPattern,
  type Step,
  type Value,
} from './model.js';
import { returnState, subflowState } from './machine-subflow.js';
import { loopStates } from './machine-loop.js';
import { queueStates } from './machine-queue.js';
import { loopTarget } from './loops.js';

export const END_STATE = '@end';
export const EV_RESULT = 'result';
export const EV_ERROR = 'error';
export const EV_PARAM_INVALID = 'param.invalid';
export const EV_CALL_END = 'call.end';
/**
 * The call starts: from the end state (where every call is restored before its first request), to the flow's initial
 * state, entering it as xstate's own initial transition does.
 */
export const EV_START = 'call.start';
/**
 * An http lookup that runs past the request's deadline, at a step with a filler: play the filler, wait again after it.
 */
export const EV_PENDING = 'pending';

/** One way a result is matched at a command state, in the order they are tried. */
export interface KeyMeta {
  /** The key as written: an exact result, a pattern's source, `default`. */
  key: string;
  /** Exact result; else `regex` (a pattern); neither: default. */
  exact?: string;
  regex?: string;
  /** The branch comes from handlers.on. */
  inherited?: boolean;
}

export type StateMeta =
  | { kind: 'command'; step: string; command: string; keys: KeyMeta[]; final?: boolean; effect?: boolean }
  | { kind: 'say'; to: string }
  | { kind: 'logic'; step: string; subflow?: string; return?: string; loop?: 'start' | 'next' }
  | { kind: 'end' };

export interface GuardRef {
  type: 'match' | 'budget' | 'when' | 'frame' | 'saves' | 'setFails' | 'loop' | 'queueDue';
  params?: Record<string, unknown>;
}

export interface ActionRef {
  type: string;
  params?: Record<string, unknown>;
}

export interface TransitionConfig {
  target: string;
  guard?: GuardRef;
  reenter?: boolean;
  actions: ActionRef[];
}

export interface StateConfig {
  meta: StateMeta;
  entry?: ActionRef[];
  on?: Record<string, TransitionConfig[]>;
  always?: TransitionConfig[];
}

export interface MachineConfig {
  id: string;
  initial: string;
  /** The flow's initial vars (the engine's context factory starts from them). */
  context: { vars: Record<string, Value> };
  on: Record<string, TransitionConfig[]>;
  states: Record<string, StateConfig>;
}

export const BUDGET: TransitionConfig = { guard: { type: 'budget' }, target: END_STATE, actions: [{ type: 'limit' }] };
const RESULT: ActionRef = { type: 'result' };

/**
 * The say state on the way to `dest`: it plays the `say:` of the branch taken (the branch
 * names it with `pick`), then enters `dest`. One per destination, whatever the branch.
 */
export function sayStateName(dest: string): string {
  return `${dest}@say`;
}

/** The state that holds the flow's states in the xstate machine (see `xstateConfig`). */
export const CALL_STATE = 'call';

/**
 * The config as xstate takes it: the flow's states inside one compound state `call`.
 * xstate checks whether the root's direct children include a final state on every
 * snapshot it makes; one child keeps that check (and so each step) independent of the
 * number of states in the flow. `call.end` is handled on `call`, so entering the hangup
 * handler exits and enters one atomic state, not the whole machine. `call.start` on `call` takes a call restored at
 * the end state to the flow's initial state (the engine starts calls so: a restored snapshot and one transition, not
 * the machine's initial snapshot built anew).
 */
export function xstateConfig(config: MachineConfig): Record<string, unknown> {
  const on = { ...config.on, [EV_START]: [{ target: '.' + config.initial }] };
  return {
    id: config.id,
    initial: CALL_STATE,
    context: config.context,
    states: { [CALL_STATE]: { initial: config.initial, on, states: config.states } },
  };
}

/**
 * What a transition does to the context, as one `take` action: xstate makes a new snapshot
 * for each assign action, so the parts (result, save, pick, retry, fresh, handler) are
 * written as one.
 */
const TAKE_PARTS: Record<string, (p: Record<string, unknown> | undefined) => Record<string, unknown>> = {
  result: () => ({ result: true }),
  save: (p) => ({ save: p!.name }),
  pick: (p) => ({ pick: [p!.step, p!.i] }),
  retry: (p) => ({ retry: p!.key }),
  fresh: (p) => ({ fresh: p?.key ?? true }),
  filler: (p) => ({ filler: p!.n }),
  handler: () => ({ handler: true }),
  groups: (p) => ({ groups: [p!.re, p!.save] }),
};

function mergeTakes(actions: ActionRef[]): ActionRef[] {
  const params: Record<string, unknown> = {};
  const rest: ActionRef[] = [];
  let takes = 0;
  for (const a of actions) {
    const part = TAKE_PARTS[a.type];
    if (part) {
      Object.assign(params, part(a.params));
      takes++;
    } else rest.push(a);
  }
  return takes === 0 ? actions : [{ type: 'take', params }, ...rest];
}

const mergeList = (list: TransitionConfig[] | undefined) =>
  list?.map((t) => (t.actions.length > 0 ? { ...t, actions: mergeTakes(t.actions) } : t));
const mergeOn = (on: Record<string, TransitionConfig[]> | undefined) =>
  on ? Object.fromEntries(Object.entries(on).map(([k, l]) => [k, mergeList(l)!])) : on;

function mergeState(st: StateConfig): void {
  if (st.on) st.on = mergeOn(st.on);
  if (st.always) st.always = mergeList(st.always);
}

/**
 * The machine states of the modules' steps, made once per load and shared (the very same
 * objects) by every flow that may enter the module, by module (the link stage's record of
 * it, made once per load too: link.ts). For each step of the module, the states it adds in
 * order: the `@say`, `@filler` and `@wait` states it is the first to need, then its own.
 * A `return` step's state names its module's call sites, which differ from flow to flow:
 * it is made for each flow.
 */
export type ModuleStates = Map<LinkedModule, Map<string, [string, StateConfig][]>>;

/** The config; with `shared`, the states of the modules' steps are taken from it (made there the first time). */
export function buildMachineConfig(model: FlowModel, shared?: ModuleStates): MachineConfig {
  const mine = new Set<StateConfig>();
  const config = buildRaw(model, shared, mine);
  for (const st of Object.values(config.states)) if (!mine.has(st)) mergeState(st);
  config.on = mergeOn(config.on)!;
  return config;
}

/**
 * The states of a module's steps (`steps`, in order), made with `model` (any flow that enters the module: they do not
 * depend on which).
 */
function moduleBlock(model: FlowModel, steps: [string, Step][]): Map<string, [string, StateConfig][]> {
  const states: Record<string, StateConfig> = {};
  for (const [id, step] of steps) if (step.kind !== 'return') states[id] = stateFor(model, id, step, states);
  // the states a step needs first are added while it is made, just before its own
  const block = new Map<string, [string, StateConfig][]>();
  let group: [string, StateConfig][] = [];
  for (const [name, st] of Object.entries(states)) {
    mergeState(st);
    group.push([name, st]);
    if (!Object.hasOwn(model.steps, name)) continue;
    block.set(name, group);
    group = [];
  }
  return block;
}

function stepsByModule(model: FlowModel): Map<string, [string, Step][]> {
  const out = new Map<string, [string, Step][]>();
  for (const [id, step] of Object.entries(model.steps)) {
    const i = id.indexOf(':');
    if (i < 0) continue;
    const ns = id.slice(0, i + 1);
    (out.get(ns) ?? out.set(ns, []).get(ns)!).push([id, step]);
  }
  return out;
}

function buildRaw(model: FlowModel, shared: ModuleStates | undefined, mine: Set<StateConfig>): MachineConfig {
  const states: Record<string, StateConfig> = {};
  // the steps of each module (by namespace), once a module's states are to be made here
  let byModule: Map<string, [string, Step][]> | undefined;
  for (const [id, step] of Object.entries(model.steps)) {
    const i = shared && model.modules && step.kind !== 'return' ? id.indexOf(':') : -1;
    const ns = i > 0 ? id.slice(0, i + 1) : '';
    const mod = ns ? model.modules![ns] : undefined;
    if (!mod) {
      states[id] = stateFor(model, id, step, states);
      continue;
    }
    let block = shared!.get(mod);
    if (!block) {
      byModule ??= stepsByModule(model);
      shared!.set(mod, (block = moduleBlock(model, byModule.get(ns) ?? [])));
    }
    for (const [name, st] of block.get(id) ?? []) {
      states[name] = st;
      mine.add(st);
    }
  }
  states[END_STATE] = { meta: { kind: 'end' } };
  const handler = model.handlers.hangup;
  return {
    id: 'flow',
    initial: model.start,
    context: { vars: model.vars },
    on: {
      [EV_CALL_END]: [{ target: '.' + target(handler), actions: [RESULT, { type: 'handler' }] }],
      // A result or error that the step has no branch for ends the flow (logged). On the
      // parent of every step: one transition for the whole flow, not one per step.
      [EV_RESULT]: [{ target: '.' + END_STATE, actions: [RESULT, { type: 'unhandled' }] }],
      [EV_ERROR]: [{ target: '.' + END_STATE, actions: [RESULT, { type: 'unhandled' }] }],
    },
    states,
  };
}

export function target(id: string | undefined): string {
  return id === undefined || id === '' ? END_STATE : id;
}

export function took(...keys: string[]): ActionRef {
  return { type: 'took', params: { keys } };
}

function stateFor(model: FlowModel, id: string, step: Step, states: Record<string, StateConfig>): StateConfig {
  // a way from a loop's body back to the loop takes its next item (`<loop>@next`)
  const to = (dest: string | undefined) => loopTarget(model, id, target(dest));
  if (step.kind === 'set') {
    return {
      meta: { kind: 'logic', step: id },
      always: [
        BUDGET,
        setFailure(model, id, states),
        { target: to(step.next), actions: [{ type: 'set', params: { step: id } }, took(`${id}:next`)] },
      ],
    };
  }
  if (step.kind === 'loop') return loopStates(model, step, states);
  if (step.kind === 'switch') {
    // a calendar step's cases and default are its results: open, holiday; closed
    const label = (i: number) => step.calendar?.labels[i] ?? `case${i + 1}`;
    const cases: TransitionConfig[] = step.cases.map((c, i) => ({
      guard: { type: 'when', params: { step: id, i } },
      target: to(c.goto),
      actions: [{ type: 'tick', params: { step: id } }, took(`${id}:${label(i)}`)],
    }));
    return {
      meta: { kind: 'logic', step: id },
      always: [
        BUDGET,
        ...cases,
        {
          target: to(step.default),
          actions: [{ type: 'tick', params: { step: id } }, took(`${id}:${step.calendar?.otherwise ?? 'default'}`)],
        },
      ],
    };
  }
  if (step.kind === 'subflow') return subflowState(model, step);
  if (step.kind === 'return') return returnState(model, step);
  if (step.queue) return queueStates(model, step, states, to);
  const handlers = handlersOf(model, id);
  const ns = model.modules ? id.slice(0, id.lastIndexOf(':') + 1) : '';
  const name = step.command.name;
  const keys: KeyMeta[] = [];
  const meta: StateMeta = { kind: 'command', step: id, command: name, keys };
  if (name === 'hangup') meta.final = true;
  if (name === 'sms' || name === 'http') meta.effect = true;
  const http = name === 'http';
  // Constant params cannot fail: a plain action. Templated ones may: the action that can raise param.invalid.
  const state: StateConfig = {
    meta,
    entry: [{ type: templated(step.command, model.prompts) ? 'emitChecked' : 'emit', params: { step: id } }],
  };
  // A hangup step ends the flow: later results change nothing (the engine says hangup again).
  if (meta.final) return state;

  let says = 0;
  const branch = (
    key: string,
    label: string,
    b: Branch,
    match: Record<string, unknown>,
    pre: ActionRef[],
  ): TransitionConfig[] => {
    let via = (dest: string) => dest;
    let pick: ActionRef[] = [];
    if (b.say && b.say.length > 0) {
      pick = [{ type: 'pick', params: { step: id, i: says++ } }];
      via = (dest) => sayState(states, dest, b.say!, model.prompts);
    }
    const guarded = (extra: Record<string, unknown>): GuardRef | undefined => {
      const p = { ...match, ...extra };
      return Object.keys(p).length > 0 ? { type: 'match', params: p } : undefined;
    };
    const t = (to: string, g: GuardRef | undefined, actions: ActionRef[]): TransitionConfig =>
      g ? { guard: g, target: to, reenter: true, actions } : { target: to, reenter: true, actions };
    if (b.retry !== undefined) {
      const then = to(b.then);
      return [
        t(via(id), guarded({ key, max: b.retry }), [...pre, ...pick, { type: 'retry', params: { key } }, took(label)]),
        t(via(then), guarded({}), [...pre, ...pick, { type: 'fresh', params: { key } }, took(label, `${label}:then`)]),
      ];
    }
    return [t(via(to(b.goto)), guarded({}), [...pre, ...pick, { type: 'fresh' }, took(label)])];
  };

  const onResult: ActionRef[] =
    step.save !== undefined ? [RESULT, { type: 'save', params: { name: step.save } }] : [RESULT];
  const result: TransitionConfig[] = [];
  const seen = new Set<string>();
  const add = (km: KeyMeta, b: Branch, label: string, save?: ActionRef): void => {
    if (seen.has(km.key)) return;
    seen.add(km.key);
    keys.push(km);
    const match: Record<string, unknown> = km.exact !== undefined ? { exact: km.exact } : { re: km.regex };
    // a pattern whose groups are saved is matched again for them: its guard charges both matches
    if (save) match.cap = true;
    result.push(...branch(km.key, label, b, match, save ? [...onResult, save] : onResult));
  };
  /** A pattern's branch that saves its named groups: the action that saves them (variable <- group). */
  const groups = (p: ResultPattern): ActionRef | undefined =>
    p.branch.save ? { type: 'groups', params: { re: p.regex, save: Object.entries(p.branch.save) } } : undefined;
  const own = step.on;
  for (const [k, b] of Object.entries(own.exact))
    if (!http || (k !== 'ok' && k !== 'timeout')) add({ key: k, exact: k }, b, `${id}:${k}`);
  // http: `ok` is any 2xx, after the exact status codes
  if (http && own.exact.ok) {
    keys.push({ key: 'ok', regex: '^2[0-9][0-9]$' });
    result.push(...branch('ok', `${id}:ok`, own.exact.ok, { ok: true }, onResult));
  }
  // valid: checked once the step's exact keys are tried, before anything else (spliced in below)
  const validAt = result.length;
  for (const p of own.patterns) add({ key: p.source, regex: p.regex }, p.branch, `${id}:${p.source}`, groups(p));
  const h = step.inheritHandlers ? handlers.on[name] : undefined;
  if (h) {
    const owner = `${ns}handlers.on.${name}`;
    for (const [k, b] of Object.entries(h.exact)) add({ key: k, exact: k, inherited: true }, b, `${owner}:${k}`);
    for (const p of h.patterns)
      add({ key: p.source, regex: p.regex, inherited: true }, p.branch, `${owner}:${p.source}`, groups(p));
  }
  if (own.default) {
    keys.push({ key: 'default' });
    result.push(...branch('default', `${id}:default`, own.default, {}, onResult));
  } else if (step.save !== undefined) {
    // No branch: the flow ends (the parent's transition), but the result is saved first.
    result.push({ target: END_STATE, actions: [...onResult, { type: 'unhandled' }] });
  }

  const errorTransitions = (pre: ActionRef[]): TransitionConfig[] => {
    const e = errorBranchOf(handlers, own, ns);
    if (!e) return []; // the parent's transition: the flow ends
    return branch('error', e.label(id), e.branch, {}, pre);
  };
  // A failed command and a templated param that fails its check take the same branch
  // (constant params were checked when the flow loaded: they cannot fail).
  const error = errorTransitions([RESULT]);
  // http: `timeout` is the TIMEOUT error, before the error branch
  if (http && own.exact.timeout)
    error.unshift(...branch('timeout', `${id}:timeout`, own.exact.timeout, { err: 'TIMEOUT' }, [RESULT]));
  if (step.valid) {
    // Numbered after every other say of the step (src/engine/tables.ts builds them in that order).
    // Exempt: the step's exact keys (tried before), the flow-wide exact keys it inherits, a read's TIMEOUT.
    const skip = [
      ...keys.filter((k) => k.inherited && k.exact !== undefined).map((k) => k.exact!),
      ...(name === 'read' ? ['TIMEOUT'] : []),
    ];
    const b = step.valid.else ?? own.default!;
    const invalid = branch(step.valid.else ? 'valid' : 'default', `${id}:invalid`, b, { invalid: id, skip }, [RESULT]);
    result.splice(validAt, 0, ...invalid);
  }
  state.on = { [EV_RESULT]: result };
  if (error.length > 0) state.on[EV_ERROR] = error;
  // the caller hung up during the command, and the terminal request carries its result: saved before the handler runs
  // (in a module, the handler runs with the flow's vars: the module's are left, its save: with them)
  if (step.save !== undefined && !meta.effect && ns === '') {
    const skip = [
      ...keys.filter((k) => k.exact !== undefined).map((k) => k.exact!),
      ...(name === 'read' ? ['TIMEOUT'] : []),
    ];
    const guard: GuardRef = { type: 'saves', params: step.valid ? { step: id, skip } : {} };
    const actions = [RESULT, { type: 'save', params: { name: step.save } }, { type: 'handler' }];
    state.on[EV_CALL_END] = [{ guard, target: target(model.handlers.hangup), actions }];
  }
  if (templated(step.command, model.prompts) || http)
    state.on[EV_PARAM_INVALID] = [
      BUDGET,
      ...(error.length > 0 ? error : [{ target: END_STATE, actions: [RESULT, { type: 'unhandled' }] }]),
    ];
  if (http) {
    state.entry = [{ type: 'emitChecked', params: { step: id } }];
    if (step.http?.filler) httpWaitStates(id, state, states);
  }
  return state;
}

/** The say state on the way to `dest` (made once per destination), playing the say of a branch; its name. */
export function sayState(
  states: Record<string, StateConfig>,
  dest: string,
  media: MediaParam,
  prompts: FlowModel['prompts'],
): string {
  const name = sayStateName(dest);
  const say = (states[name] ??= {
    meta: { kind: 'say', to: dest },
    entry: [{ type: 'say', params: { state: name } }],
    on: { [EV_RESULT]: [{ target: dest, actions: [] }], [EV_ERROR]: [{ target: dest, actions: [] }] },
  });
  // A templated say that fails to render is skipped.
  if (templated(media, prompts)) say.on![EV_PARAM_INVALID] ??= [BUDGET, { target: dest, actions: [] }];
  return name;
}

/**
 * A set step whose assignment fails (an `expr:` or a template that cannot be evaluated: guard `setFails`) keeps none
 * of its assignments and takes its error way: the flow's (or its module's) `handlers.error`, with `error` the failure's
 * code; without one, the flow ends. A `retry` there goes to its `then` at once (the same values would fail again); a
 * `say:` plays first.
 */
function setFailure(model: FlowModel, id: string, states: Record<string, StateConfig>): TransitionConfig {
  const e = handlersOf(model, id).error;
  const fails = (way: string): GuardRef => ({ type: 'setFails', params: { step: id, way } });
  if (!e) return { guard: fails('end'), target: END_STATE, actions: [{ type: 'setError', params: { step: id } }] };
  const ns = model.modules ? id.slice(0, id.lastIndexOf(':') + 1) : '';
  // inside a loop's body, a way back to the loop takes its next item
  const dest = loopTarget(model, id, target(e.retry !== undefined ? e.then : e.goto));
  const actions: ActionRef[] = [{ type: 'setError', params: { step: id } }];
  let to = dest;
  if (e.say && e.say.length > 0) {
    to = sayState(states, dest, e.say, model.prompts);
    actions.push({ type: 'pick', params: { step: id, i: 0 } });
  }
  actions.push(took(`${ns}handlers:error`));
  return { guard: fails('handlers.error'), target: to, actions };
}

/**
 * The states of an http step with a filler: the lookup's state (`<id>`) goes on `pending`
 * to `<id>@filler`, which plays the filler (a say-like state) and on its result enters
 * `<id>@wait`: the same lookup, waited for again (the same branches; `pending` again plays
 * the next filler of the list).
 */
export function httpWaitStates(id: string, state: StateConfig, states: Record<string, StateConfig>): void {
  const filler = `${id}@filler`;
  const wait = `${id}@wait`;
  state.on![EV_PENDING] = [{ target: filler, actions: [{ type: 'take', params: { filler: 1 } }] }];
  states[filler] = {
    meta: { kind: 'say', to: wait },
    entry: [{ type: 'filler', params: { step: id, state: filler } }],
    on: { [EV_RESULT]: [{ target: wait, actions: [] }], [EV_ERROR]: [{ target: wait, actions: [] }] },
  };
  states[wait] = {
    meta: { ...(state.meta as Extract<StateMeta, { kind: 'command' }>) },
    entry: [{ type: 'emitChecked', params: { step: id, state: wait } }],
    on: { ...state.on, [EV_PENDING]: [{ target: filler, actions: [{ type: 'take', params: { filler: 'next' } }] }] },
  };
}

/** A command's params or a media list hold a template (rendered at run time, so they may fail their check). */
/**
 * Whether rendering `v` may fail: it holds a template, or names a prompt (`{ prompt: name }`) of which an entry, in
 * any language, holds one.
 */
function templated(v: CommandCall | MediaParam | Value, prompts: FlowModel['prompts']): boolean {
  if (typeof v === 'string') return isTemplate(v);
  if (Array.isArray(v)) return v.some((x) => templated(x as Value, prompts));
  if (!v || typeof v !== 'object') return false;
  const spec = v as { kind?: unknown; name?: unknown };
  if (spec.kind === 'prompt' && typeof spec.name === 'string') {
    const entries = prompts?.[spec.name];
    return entries !== undefined && Object.values(entries).some((m) => templated(m, undefined));
  }
  return Object.values(v).some((x) => templated(x as Value, prompts));
}

function errorBranchOf(
  handlers: FlowModel['handlers'],
  own: Branches,
  ns: string,
): { branch: Branch; label: (id: string) => string } | undefined {
  if (own.error) return { branch: own.error, label: (id) => `${id}:error` };
  if (handlers.error) return { branch: handlers.error, label: () => `${ns}handlers:error` };
  return undefined;
}
