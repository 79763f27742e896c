/**
 * A queue step in the flow's transition graph (transitions.ts): its waiting loop drawn as the machine has it
 * (src/flow/machine-queue.ts). The step's own state polls the line; `<q>@hold` and `<q>@announce` play while the
 * caller waits, `<q>@ring` dials the agent claimed. Each edge is one coverage key:
 *
 * | edge | key |
 * |---|---|
 * | poll -> hold (`wait`), poll -> announce (`wait (announcement due)`) | `<q>:wait` |
 * | hold -> poll (`held`), announce -> poll (`announced`) | `<q>:held`, `<q>:announce` |
 * | poll -> ring (`ring`), ring -> poll (`NOANSWER`) | `<q>:ring`, `<q>:noanswer` |
 * | ring -> the bridged branch (`bridged (call ends)`) | `<q>:bridged` |
 * | hold -> the hangup handler (`abandoned (caller hangs up)`) | `<q>:abandoned` |
 * | poll -> the timeout, empty and error branches | `<q>:timeout`, `<q>:empty`, `<q>:error` |
 *
 * A poll answer with no branch (no `timeout:` nor `next:`) ends the flow: an `unhandled` edge, as at any command.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { END_STATE, EV_ERROR, EV_RESULT, type StateConfig } from '../flow/machine-config.js';
import { QUEUE_ANNOUNCE, QUEUE_DONE, QUEUE_HOLD, QUEUE_LEAVE, QUEUE_RING } from '../flow/machine-queue.js';
import type { Pos, Step } from '../flow/model.js';
import { dest, tookKeys } from './machine-read.js';
import type { FlowEdge } from './transitions.js';

/** The parts of a queue step drawn as nodes of their own: the machine state's suffix, and what it is called. */
export const QUEUE_PARTS = [
  { part: QUEUE_HOLD, name: 'hold' },
  { part: QUEUE_ANNOUNCE, name: 'announce' },
  { part: QUEUE_RING, name: 'ring' },
] as const;

/** The queue step `step` of the flow, if it is one. */
export function queueStep(flow: CompiledFlow, step: string): Extract<Step, { kind: 'command' }> | undefined {
  const s = flow.model.steps[step];
  return s?.kind === 'command' && s.queue ? s : undefined;
}

/**
 * A queue step's coverage keys of its own (the waiting loop), in the order the machine goes through them, written
 * at the step: its result keys (`on:`) are added with their branches.
 */
export function queueKeys(id: string, pos: Pos, add: (k: string, p: Pos) => void): void {
  for (const k of ['ring', 'wait', 'announce', 'held', 'noanswer']) add(`${id}:${k}`, pos);
}

/** The keys written after the step's branches: the ways out when the call ends. */
export function queueEndKeys(id: string, pos: Pos, add: (k: string, p: Pos) => void): void {
  for (const k of ['bridged', 'abandoned']) add(`${id}:${k}`, pos);
}

/** The first transition of `list` and its first coverage key. */
const first = (sc: StateConfig | undefined, ev: string) => {
  const t = sc?.on?.[ev]?.[0];
  return t ? { t, key: tookKeys(t)[0] } : undefined;
};

/** Every edge of the queue step `id`: its waiting loop, its branches, the ways out when the call ends. */
export function queueEdges(flow: CompiledFlow, id: string): FlowEdge[] {
  const states = flow.config.states;
  const own = states[id];
  const edges: FlowEdge[] = [];
  const queue = (key: string, cover: string | undefined, from: string, to: string) => {
    if (cover !== undefined) edges.push({ id: cover, kind: 'queue', from, to, key });
  };
  const answered = new Set<string>();
  for (const t of own?.on?.[EV_RESULT] ?? []) {
    const cover = tookKeys(t)[0];
    const exact = t.guard?.params?.exact;
    if (t.guard?.type === 'queueDue') queue('wait (announcement due)', cover, id, id + QUEUE_ANNOUNCE);
    else if (exact === 'ring') queue('ring', cover, id, id + QUEUE_RING);
    else if (exact === 'wait') queue('wait', cover, id, id + QUEUE_HOLD);
    else if (typeof exact === 'string' && cover !== undefined) {
      answered.add(exact);
      const d = dest(flow, t.target);
      edges.push({ id: cover, kind: 'key', from: id, to: d.to, key: exact, ...(d.say ? { say: true } : {}) });
    }
  }
  // a poll answer with no branch: the machine's catch-all ends the flow
  for (const k of ['timeout', 'empty'])
    if (!answered.has(k)) edges.push({ id: `${id}:${k}`, kind: 'unhandled', from: id, to: END_STATE, key: k });
  const error = first(own, EV_ERROR);
  if (error?.key !== undefined) {
    const d = dest(flow, error.t.target);
    edges.push({
      id: error.key,
      kind: 'key',
      from: id,
      to: d.to,
      key: 'error',
      ...(d.say ? { say: true } : {}),
      ...(error.key.startsWith('handlers') ? { flowWide: true } : {}),
    });
  } else edges.push({ id: `${id}:error`, kind: 'unhandled', from: id, to: END_STATE, key: 'error' });
  queue('held', first(states[id + QUEUE_HOLD], EV_RESULT)?.key, id + QUEUE_HOLD, id);
  queue('announced', first(states[id + QUEUE_ANNOUNCE], EV_RESULT)?.key, id + QUEUE_ANNOUNCE, id);
  queue('NOANSWER', first(states[id + QUEUE_RING], EV_RESULT)?.key, id + QUEUE_RING, id);
  const done = first(states[id + QUEUE_DONE], EV_RESULT);
  if (done) queue('bridged (call ends)', done.key, id + QUEUE_RING, dest(flow, done.t.target).to);
  const leave = first(states[id + QUEUE_LEAVE], EV_RESULT);
  if (leave) queue('abandoned (caller hangs up)', leave.key, id + QUEUE_HOLD, dest(flow, leave.t.target).to);
  return edges;
}
