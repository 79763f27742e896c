/**
 * The machine states of subflows (version 2), in a linked flow (link.ts) where each
 * module's steps are states `<module>:<step>`, once per module:
 *
 * - a `subflow` step is a logic state whose one eventless transition pushes a frame (the
 *   caller's vars and the call site: action `enter`) and enters the module's start;
 * - a `return` step is a logic state with one transition per call site of its module,
 *   guarded by `frame` (the top frame is that site): it pops the frame (action `leave`:
 *   the caller's vars back, the returned values saved) and goes where that site's `on:`
 *   sends the result. Transitions grow with call sites, not with paths: a module used
 *   twice by each of 30 nested modules compiles to 30 modules, not 2^30.
 *
 * Coverage keys: `<site>:<result>` (or `<site>:default`) for each way back, and
 * `<return step>:return` when a module run on its own (a scenario) returns to no caller.
 */
import { BUDGET, END_STATE, target, took, type StateConfig, type TransitionConfig } from './machine-config.js';
import type { FlowModel, ReturnStep, SubflowStep } from './model.js';
import { loopTarget } from './loops.js';

const SITES = new WeakMap<FlowModel, Map<string, SubflowStep[]>>();

/** The subflow steps entering each module (by module name), in step order. */
export function callSites(model: FlowModel): Map<string, SubflowStep[]> {
  let m = SITES.get(model);
  if (m) return m;
  m = new Map();
  for (const s of Object.values(model.steps)) {
    if (s.kind !== 'subflow') continue;
    const list = m.get(s.flow) ?? [];
    list.push(s);
    m.set(s.flow, list);
  }
  SITES.set(model, m);
  return m;
}

/** The module a step id belongs to (`pin-check:ask` -> pin-check), or the flow itself. */
export function moduleOf(model: FlowModel, id: string): string {
  const i = id.indexOf(':');
  return i < 0 ? model.name : id.slice(0, i);
}

export function subflowState(model: FlowModel, step: SubflowStep): StateConfig {
  const mod = model.modules?.[`${step.flow}:`];
  const into: TransitionConfig = mod
    ? { target: mod.start, actions: [{ type: 'enter', params: { step: step.id } }] }
    : { target: END_STATE, actions: [{ type: 'enter', params: { step: step.id } }] };
  // the link stage bounds nesting; a stored state claiming more frames ends the call (SUBFLOW_DEPTH)
  const full: TransitionConfig = {
    guard: { type: 'frame', params: { full: true } },
    target: END_STATE,
    actions: [{ type: 'enter', params: { step: step.id } }],
  };
  return { meta: { kind: 'logic', step: step.id, subflow: step.flow }, always: [BUDGET, full, into] };
}

export function returnState(model: FlowModel, step: ReturnStep): StateConfig {
  const sites = callSites(model).get(moduleOf(model, step.id)) ?? [];
  const r = step.result;
  const back: TransitionConfig[] = sites.map((s) => {
    const own = Object.hasOwn(s.on, r);
    return {
      guard: { type: 'frame', params: { site: s.id } },
      target: loopTarget(model, s.id, target(own ? s.on[r] : s.default)),
      actions: [
        { type: 'leave', params: { step: step.id, site: s.id } },
        took(own ? `${s.id}:${r}` : `${s.id}:default`),
      ],
    };
  });
  // no caller: the module runs on its own (a scenario of the module); the flow ends with its result
  const alone: TransitionConfig = {
    target: END_STATE,
    actions: [{ type: 'leave', params: { step: step.id } }, took(`${step.id}:return`)],
  };
  // in a flow that enters modules, a return always has a caller: no way out without one
  const linked = step.id.includes(':');
  return {
    meta: { kind: 'logic', step: step.id, return: r },
    always: linked ? [BUDGET, ...back] : [BUDGET, ...back, alone],
  };
}
