/**
 * A queue step in the simulator (`callscript simulate`, docs/simulate.md): its poll is a question (ring which agent,
 * wait, timeout, empty, the store failing), answered as a store answers (the caller first in line, its wait so far
 * on the call's clock); its leave and done are answered at once, as a store does. A caller script rings each agent
 * offered once, in turn, then finds the queue empty (as a store does once every agent tried has not answered).
 */
import type { EffectResult, QueueEffect } from '../engine/outcome.js';
import type { QueueAnswer } from '../engine/queue.js';
import type { Option, Question } from './sim-questions.js';

/** The agents a poll question offers to ring, at most (a queue may list 1,000). */
export const MAX_RING_OPTIONS = 9;

/** The error a store that fails answers with. */
const STORE_ERROR = 'UNAVAILABLE';

/** A poll's answer as a store gives it: the caller first in line, `waited` seconds since it joined. */
function answer(e: QueueEffect, result: string, waited: number, agent?: string): EffectResult {
  const n = e.params.agents.length;
  const inLine = result === 'ring' || result === 'wait';
  const data: QueueAnswer = {
    result,
    position: inLine ? 1 : 0,
    // the estimate of a queue that has served nobody yet: its handle_time
    expected_wait: result === 'wait' ? e.params.handle_time : 0,
    waited,
    agents: n,
    free: result === 'ring' ? n - 1 : 0,
  };
  if (agent !== undefined) data.agent = agent;
  return { ok: true, value: result, data: data as never };
}

/** The question of a poll: ring each agent offered (the first MAX_RING_OPTIONS), wait, timeout, empty, error. */
export function queueQuestion(e: QueueEffect, waited: number): Question {
  const options: Option[] = [];
  const add = (label: string, result: EffectResult, agent?: string) =>
    options.push({
      key: String(options.length + 1),
      label,
      answer: { kind: 'queue', result, ...(agent !== undefined ? { agent } : {}) },
    });
  for (const a of e.params.agents.slice(0, MAX_RING_OPTIONS)) add(`ring ${a}`, answer(e, 'ring', waited, a), a);
  add('wait', answer(e, 'wait', waited));
  add(`timeout (max_wait ${e.params.max_wait} s)`, answer(e, 'timeout', waited));
  add('empty (no agent can take the call)', answer(e, 'empty', waited));
  add(`error ${STORE_ERROR} (the store fails)`, {
    ok: false,
    error: STORE_ERROR,
    message: `answered ${STORE_ERROR}`,
  });
  return { kind: 'queue', queue: e.params.queue, waited, options };
}

/** What a queue operation's answer shows: `ring +44...`, `wait (1st in line, waited 20 s)`, `left`, `failed X`. */
export function queueOutcome(r: EffectResult): string {
  if ('pending' in r) return 'pending';
  if (!r.ok) return `failed ${r.error}`;
  const d = r.data as Partial<QueueAnswer> | undefined;
  if (r.value === 'ring') return `ring ${d?.agent ?? ''}`.trim();
  if (r.value === 'wait' && d) return `wait (position ${d.position}, waited ${d.waited} s)`;
  return r.value;
}

/** The wait option of a poll question (a caller who hangs up while the poll is asked waits, then hangs up). */
export function waitOption(q: Extract<Question, { kind: 'queue' }>): Option {
  return q.options.find((o) => o.label === 'wait')!;
}

/** A caller script's choice at a poll: the first agent it has not rung yet; none left, empty. */
export function scriptedChoice(q: Extract<Question, { kind: 'queue' }>, rung: Set<string>): Option {
  const next = q.options.find((o) => o.answer.kind === 'queue' && o.answer.agent && !rung.has(o.answer.agent));
  return next ?? q.options.find((o) => o.label.startsWith('empty'))!;
}
