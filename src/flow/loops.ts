/**
 * The body of a `foreach` step (version 2): the steps the call can reach only through the
 * loop's `do:`. Every way from the flow's roots (its start, its hangup handler; a module's
 * start) to a body step goes from the loop step into `do:`, so when a body step leads back
 * to the loop, the loop is running and that way takes the next item; any other way into the
 * loop step (from before it, or from a step the rest of the flow reaches too) starts it
 * afresh. Leaving the body (a way to a step outside it) leaves the loop early.
 *
 * One breadth-first walk from the roots with the loop's way into `do:` cut (what the flow
 * reaches without the body), one from `do:` (what the body reaches, less that): linear in
 * the steps of the flow (or module) per loop. The checker bounds the loops of a file
 * (MAX_LOOPS), so that a flow of many steps and many loops stays quick to check and compile.
 */
import { successors } from './check-graph.js';
import { handlersOf, type FlowModel, type LoopStep, type Step } from './model.js';

/** The most `foreach` steps one flow file may have (TOO_MANY_ENTRIES). */
export const MAX_LOOPS = 100;

/** The state a body step's way back to its loop enters: the next item (`<loop>@next`). */
export function nextStateName(loop: string): string {
  return `${loop}@next`;
}

/**
 * The body of `loop` in a graph of `steps` whose successors are `next`, reached from `roots`.
 * The loop's own `do:` is not followed from the loop step; steps not in `steps` are ignored.
 */
export function loopBody(
  steps: Readonly<Record<string, Step>>,
  loop: LoopStep,
  roots: readonly string[],
  next: (id: string) => readonly string[],
): Set<string> {
  const has = (id: string) => Object.hasOwn(steps, id);
  const outside = new Set(roots.filter(has));
  const queue = [...outside];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    const to = id === loop.id ? [loop.next, loop.error].filter((x): x is string => x !== undefined) : next(id);
    for (const t of to)
      if (has(t) && !outside.has(t)) {
        outside.add(t);
        queue.push(t);
      }
  }
  const body = new Set<string>();
  if (!has(loop.do) || loop.do === loop.id || outside.has(loop.do)) return body;
  body.add(loop.do);
  const work = [loop.do];
  for (let i = 0; i < work.length; i++)
    for (const t of next(work[i]!))
      if (t !== loop.id && has(t) && !outside.has(t) && !body.has(t)) {
        body.add(t);
        work.push(t);
      }
  return body;
}

/** The steps of a body that lead back to its loop (the ways to the next item). */
export function waysBack(body: ReadonlySet<string>, loop: string, next: (id: string) => readonly string[]): string[] {
  return [...body].filter((id) => next(id).includes(loop));
}

const BODIES = new WeakMap<object, Map<string, Set<string>>>();

/**
 * The body of loop step `id` of a compiled (possibly linked) flow, computed once per flow
 * and loop: a module's loop within its module (its steps, from its start), the flow's own
 * from its start and hangup handler.
 */
export function bodyOf(model: FlowModel, id: string): Set<string> {
  let cache = BODIES.get(model);
  if (!cache) BODIES.set(model, (cache = new Map()));
  let body = cache.get(id);
  if (body) return body;
  const loop = model.steps[id];
  if (!loop || loop.kind !== 'loop') return new Set();
  const i = model.modules ? id.indexOf(':') : -1;
  const mod = i > 0 ? model.modules![id.slice(0, i + 1)] : undefined;
  const roots = mod ? [mod.start] : [model.start, ...(model.handlers.hangup ? [model.handlers.hangup] : [])];
  const next = (s: string) => {
    const step = model.steps[s];
    return step ? successors(step, handlersOf(model, s)) : [];
  };
  body = loopBody(model.steps, loop, roots, next);
  cache.set(id, body);
  return body;
}

/**
 * The machine state a way from step `from` to `to` enters: `<to>@next` when `to` is a loop
 * whose body holds `from` (the next item), else `to` itself (a loop started afresh, or any
 * other step).
 */
export function loopTarget(model: FlowModel, from: string, to: string): string {
  const s = Object.hasOwn(model.steps, to) ? model.steps[to] : undefined;
  if (s?.kind !== 'loop') return to;
  return bodyOf(model, to).has(from) ? nextStateName(to) : to;
}
