/**
 * The machine states of a `queue` step (version 2): the waiting loop is states and transitions of the flow's machine,
 * covered like any other.
 *
 * - `<q>` asks the store for the caller's turn (the effect `queue`, op `poll`: it joins the line the first time). Its
 *   result: `ring` (an agent is claimed) enters `<q>@ring`; `wait` enters `<q>@announce` when an announcement is
 *   due (guard `queueDue`: every `announce.every` seconds of waiting, the first at once), else `<q>@hold`;
 *   `timeout` and `empty` take the step's branches; a failure (the store) takes `error`.
 * - `<q>@hold` plays the next hold chunk (looped), `<q>@announce` the announcement; either's result asks again.
 * - `<q>@ring` dials the agent; its result (NOANSWER) asks again (the store frees the agent, and offers this caller
 *   another).
 * - The call ends (`call.end`) while waiting: `<q>@leave` (op `leave`: out of the line) then the hangup handler;
 *   while ringing or bridged with the agent: `<q>@done` (op `done`: the agent free after wrap_up) then `bridged`
 *   (logic steps only: the call is over), or the hangup handler.
 *
 * Coverage keys: `<q>:wait` (a poll answered wait: hold or announcement), `<q>:held` (a hold chunk played),
 * `<q>:announce` (an announcement played; only with `announce:`), `<q>:ring` (an agent claimed), `<q>:noanswer` (the
 * ring ended unanswered), `<q>:timeout`, `<q>:empty`, `<q>:error` (or `handlers:error`) as written, `<q>:bridged`,
 * `<q>:abandoned`.
 */
import {
  BUDGET,
  END_STATE,
  EV_CALL_END,
  EV_ERROR,
  EV_PARAM_INVALID,
  EV_RESULT,
  sayState,
  target,
  took,
  type ActionRef,
  type StateConfig,
  type TransitionConfig,
} from './machine-config.js';
import { handlersOf, type Branch, type FlowModel, type Step } from './model.js';

type QueueStep = Extract<Step, { kind: 'command' }>;

export const QUEUE_HOLD = '@hold';
export const QUEUE_ANNOUNCE = '@announce';
export const QUEUE_RING = '@ring';
export const QUEUE_LEAVE = '@leave';
export const QUEUE_DONE = '@done';

/** The step a queue state belongs to, and which of its states it is ('' for the step's own). */
export function queuePart(state: string): { step: string; part: string } {
  for (const p of [QUEUE_HOLD, QUEUE_ANNOUNCE, QUEUE_RING, QUEUE_LEAVE, QUEUE_DONE])
    if (state.endsWith(p)) return { step: state.slice(0, -p.length), part: p };
  return { step: state, part: '' };
}

/**
 * The says of a queue step's branches, in the order their `pick` indexes them (src/engine/tables.ts builds them in
 * the same order): timeout, empty, error.
 */
export function queueSays(model: FlowModel, step: QueueStep): (Branch | undefined)[] {
  return [step.on.exact.timeout, step.on.exact.empty, step.on.error ?? handlersOf(model, step.id).error];
}

export function queueStates(
  model: FlowModel,
  step: QueueStep,
  states: Record<string, StateConfig>,
  to: (dest: string | undefined) => string,
): StateConfig {
  const id = step.id;
  const hangup = target(model.handlers.hangup);
  // merged into one `take` with the branch's other parts (machine-config.ts mergeTakes)
  const taken: ActionRef[] =
    step.save !== undefined
      ? [{ type: 'result' }, { type: 'save', params: { name: step.save } }]
      : [{ type: 'result' }];
  const [timeout, empty, error] = queueSays(model, step);
  let says = 0;
  const branch = (key: string, b: Branch | undefined, guard?: TransitionConfig['guard']): TransitionConfig[] => {
    const i = says++;
    if (!b) return [];
    const dest = to(b.goto);
    const actions: ActionRef[] = [...taken];
    let via = dest;
    if (b.say && b.say.length > 0) {
      via = sayState(states, dest, b.say, model.prompts);
      actions.push({ type: 'pick', params: { step: id, i } });
    }
    actions.push({ type: 'fresh' }, took(`${id}:${key}`));
    return [guard ? { guard, target: via, reenter: true, actions } : { target: via, reenter: true, actions }];
  };
  const exact = (r: string) => ({ type: 'match' as const, params: { exact: r } });
  const queueAct = (on: string): ActionRef => ({ type: 'queue', params: { step: id, on } });
  const again = (key: string): TransitionConfig => ({ target: id, reenter: true, actions: [took(`${id}:${key}`)] });
  const result: TransitionConfig[] = [
    { guard: exact('ring'), target: id + QUEUE_RING, actions: [...taken, queueAct('ring'), took(`${id}:ring`)] },
    // without an announcement, no state plays one (and no coverage key `<q>:announce` waits to be covered)
    ...(step.queue?.announce
      ? [
          {
            guard: { type: 'queueDue' as const, params: { step: id } },
            target: id + QUEUE_ANNOUNCE,
            actions: [...taken, queueAct('announce'), took(`${id}:wait`)],
          },
        ]
      : []),
    { guard: exact('wait'), target: id + QUEUE_HOLD, actions: [...taken, queueAct('hold'), took(`${id}:wait`)] },
    ...branch('timeout', timeout, exact('timeout')),
    ...branch('empty', empty, exact('empty')),
  ];
  const errorWay = branch(step.on.error ? 'error' : 'handlers.error', error);
  if (!step.on.error && errorWay[0]) {
    // handlers.error's coverage key is the flow's (or its module's), as at any step
    const ns = model.modules ? id.slice(0, id.lastIndexOf(':') + 1) : '';
    const acts = errorWay[0].actions;
    acts[acts.length - 1] = took(`${ns}handlers:error`);
  }
  const ended = (part: string): TransitionConfig[] => [
    { target: id + part, actions: [{ type: 'result' }, { type: 'handler' }] },
  ];
  const waitState = (what: 'hold' | 'announce', part: string): StateConfig => ({
    meta: { kind: 'say', to: id },
    entry: [{ type: 'queueCommand', params: { step: id, state: id + part, what } }],
    on: {
      [EV_RESULT]: [again(part === QUEUE_HOLD ? 'held' : 'announce')],
      [EV_ERROR]: [again(part === QUEUE_HOLD ? 'held' : 'announce')],
      [EV_PARAM_INVALID]: [BUDGET, { target: id + QUEUE_HOLD, actions: [queueAct('hold')] }],
      [EV_CALL_END]: ended(QUEUE_LEAVE),
    },
  });
  states[id + QUEUE_HOLD] = waitState('hold', QUEUE_HOLD);
  if (step.queue?.announce) states[id + QUEUE_ANNOUNCE] = waitState('announce', QUEUE_ANNOUNCE);
  states[id + QUEUE_RING] = {
    meta: { kind: 'command', step: id, command: 'dialout', keys: [{ key: 'NOANSWER', exact: 'NOANSWER' }] },
    entry: [{ type: 'queueCommand', params: { step: id, state: id + QUEUE_RING, what: 'ring' } }],
    on: { [EV_RESULT]: [again('noanswer')], [EV_ERROR]: [again('noanswer')], [EV_CALL_END]: ended(QUEUE_DONE) },
  };
  const effectState = (part: string, dest: string, key: string): StateConfig => {
    const out: TransitionConfig[] = [{ target: dest, actions: [took(`${id}:${key}`)] }];
    return {
      meta: { kind: 'command', step: id, command: 'queue', keys: [], effect: true },
      entry: [
        { type: 'queueEffect', params: { step: id, state: id + part, op: part === QUEUE_LEAVE ? 'leave' : 'done' } },
      ],
      on: { [EV_RESULT]: out, [EV_ERROR]: out, [EV_PARAM_INVALID]: out },
    };
  };
  states[id + QUEUE_LEAVE] = effectState(QUEUE_LEAVE, hangup, 'abandoned');
  const bridged = step.on.exact.bridged;
  states[id + QUEUE_DONE] = effectState(QUEUE_DONE, bridged ? to(bridged.goto) : hangup, 'bridged');
  const own: StateConfig = {
    meta: { kind: 'command', step: id, command: 'queue', keys: [], effect: true },
    entry: [{ type: 'queueEffect', params: { step: id, state: id, op: 'poll' } }],
    on: {
      [EV_RESULT]: result,
      [EV_PARAM_INVALID]: [BUDGET, ...(errorWay.length > 0 ? errorWay : [{ target: END_STATE, actions: [] }])],
    },
  };
  if (errorWay.length > 0) own.on![EV_ERROR] = errorWay;
  return own;
}
