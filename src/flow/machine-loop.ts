/**
 * The machine states of a `foreach` step (version 2), two logic states:
 *
 * - `<loop>` starts the loop: `in:` is evaluated, and the first item (index 0) goes into
 *   the body (`do:`), or an empty list to `next:`;
 * - `<loop>@next` takes the next item: the body's ways back to the loop enter it (the link
 *   is made where each transition is built: loops.ts `loopTarget`), any other way into the
 *   loop enters `<loop>` and starts it afresh.
 *
 * Both run the guard `loop` (the list and the position, evaluated once per visit) and the
 * action `loop` (the item and index into their variables, the position into the context's
 * `l`; at the end, the position dropped), and start with the `budget` guard: every visit
 * counts as a logic step of the request (ITERATION_LIMIT), so a body without a command runs
 * a bounded number of items per request. A value that is not a list goes to `error:` when
 * the step has one, else to `next:` as an empty list (logged); a list longer than `max:`
 * stops there (logged).
 *
 * Coverage keys: `<loop>:do` (the first item), `<loop>:next` (each next one), `<loop>:done`
 * (the list is over: empty, all taken, or `max:` reached) and `<loop>:error`.
 */
import { BUDGET, target, took, type StateConfig, type TransitionConfig } from './machine-config.js';
import type { FlowModel, LoopStep } from './model.js';
import { loopTarget, nextStateName } from './loops.js';

export function loopStates(model: FlowModel, step: LoopStep, states: Record<string, StateConfig>): StateConfig {
  const id = step.id;
  const to = (dest: string | undefined) => loopTarget(model, id, target(dest));
  const state = (first: boolean): StateConfig => {
    const always: TransitionConfig[] = [BUDGET];
    if (step.error !== undefined)
      always.push({
        guard: { type: 'loop', params: { step: id, first, is: 'error' } },
        target: to(step.error),
        actions: [{ type: 'loop', params: { step: id, first, end: 'error' } }, took(`${id}:error`)],
      });
    always.push(
      {
        guard: { type: 'loop', params: { step: id, first, is: 'item' } },
        target: to(step.do),
        actions: [{ type: 'loop', params: { step: id, first } }, took(`${id}:${first ? 'do' : 'next'}`)],
      },
      {
        target: to(step.next),
        actions: [{ type: 'loop', params: { step: id, first, end: 'done' } }, took(`${id}:done`)],
      },
    );
    return { meta: { kind: 'logic', step: id, loop: first ? 'start' : 'next' }, always };
  };
  states[nextStateName(id)] = state(false);
  return state(true);
}
