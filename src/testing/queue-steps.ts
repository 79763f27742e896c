/**
 * A queue operation as a step of a scenario (docs/testing.md "Queues"): `expect: { queue: { op, name, ... } }` (its
 * params as the scenario names them) and its `answer:` (a poll's answer, leave's, done's, or an error), parsed over
 * the positioned YAML tree with the key meant, and the result it gives the operation when the case runs.
 */
import { closest } from '../flow/check-context.js';
import { QUEUE_SECONDS } from '../flow/check-queue.js';
import type { Loc, YMap, YNode } from '../flow/yaml.js';
import { describe } from '../flow/yaml.js';
import type { EffectResult, QueueEffect } from '../engine/outcome.js';
import type { QueueAnswer } from '../engine/queue.js';
import { checkE164 } from '../protocol/formats.js';
import { QUEUE_LIMITS } from '../store/queues.js';
import { meantKey } from './suggest-key.js';
import type { Report } from './scenario-queues.js';

/** The operations of a queue step (the effect's `op`). */
export const QUEUE_OPS = ['poll', 'leave', 'done'] as const;
/** A queue operation's params as a scenario names them (`name` is the queue's). */
export const QUEUE_OP_KEYS = ['op', 'name', 'agents', 'strategy', ...QUEUE_SECONDS, 'waited'] as const;
/** What a queue step's `answer:` may give: a poll's answer (the save: value's fields), leave's or done's. */
export const QUEUE_ANSWER_KEYS = [
  'result',
  'error',
  'agent',
  'position',
  'waited',
  'expected_wait',
  'agents',
  'free',
] as const;
export const QUEUE_RESULTS = ['ring', 'wait', 'timeout', 'empty', 'left', 'done'] as const;
export type QueueResult = (typeof QUEUE_RESULTS)[number];
/** The result each op answers with. */
const RESULTS_OF: Record<(typeof QUEUE_OPS)[number], readonly QueueResult[]> = {
  poll: ['ring', 'wait', 'timeout', 'empty'],
  leave: ['left'],
  done: ['done'],
};

const get = (m: YMap, key: string) => m.entries.find((e) => e.key === key)?.value;

/** A queue step's answer (recordings, `paths`), given instead of the case's line. */
export interface QueueReply {
  pos: Loc;
  result?: QueueResult;
  error?: string;
  agent?: string;
  position?: number;
  waited?: number;
  expected_wait?: number;
  agents?: number;
  free?: number;
}

/** A queue effect's params as a scenario sees them: `op`, the queue's `name`, then the rest (agents of a poll). */
export function queueOpParams(e: QueueEffect): Record<string, unknown> {
  const { queue, op, agents, ...rest } = e.params;
  return { op, name: queue, ...(op === 'poll' ? { agents } : {}), ...rest };
}

/** `expect: { queue: {...} }`: the params named are a queue operation's (the op one of poll, leave, done). */
export function checkQueueParams(n: YMap, report: Report): void {
  for (const e of n.entries) {
    if ((QUEUE_OP_KEYS as readonly string[]).includes(e.key)) continue;
    const near = meantKey(e.key, QUEUE_OP_KEYS, { queue: 'name', operation: 'op', numbers: 'agents' });
    report(
      e.keyNode,
      `unknown key "${e.key}" in expect.queue${near !== undefined ? `: did you mean "${near}"?` : ''} (a queue ` +
        `operation's params: ${QUEUE_OP_KEYS.join(', ')})`,
    );
  }
  const op = get(n, 'op');
  if (op && !(op.kind === 'scalar' && (QUEUE_OPS as readonly unknown[]).includes(op.value))) {
    const text = op.kind === 'scalar' ? String(op.value) : '';
    const near = closest(text, QUEUE_OPS);
    report(
      op,
      `expect.queue.op: "${text.slice(0, 40)}" is not an op of a queue step` +
        `${near ? ` (did you mean "${near}"?)` : ''}` +
        `: ${QUEUE_OPS.join(', ')}`,
    );
  }
}

const BOUNDS: Record<string, number> = {
  position: QUEUE_LIMITS.maxLine,
  waited: 86_400,
  expected_wait: 86_400,
  agents: QUEUE_LIMITS.maxAgents,
  free: QUEUE_LIMITS.maxAgents,
};

/**
 * A queue step's `answer:`: `{ result: wait, position: 2, waited: 40 }` (a poll's answer: ring with its `agent`,
 * wait, timeout, empty; leave's `left`, done's `done`), or `{ error: UNAVAILABLE }`; `op` is the step's expected op,
 * when it names one.
 */
export function parseQueueAnswer(n: YNode, op: string | undefined, report: Report): QueueReply | undefined {
  if (n.kind !== 'map') {
    report(
      n,
      `a queue step's answer is { result: wait, position: 2, ... } or { error: UNAVAILABLE }, not ${describe(n)}`,
    );
    return undefined;
  }
  const a: QueueReply = { pos: n.pos };
  let ok = true;
  for (const e of n.entries) {
    if ((QUEUE_ANSWER_KEYS as readonly string[]).includes(e.key)) continue;
    ok = false;
    const near = meantKey(e.key, QUEUE_ANSWER_KEYS, { status: 'result', kind: 'result', number: 'agent' });
    report(
      e.keyNode,
      `unknown key "${e.key}" in a queue step's answer${near !== undefined ? `: did you mean "${near}"?` : ''} ` +
        `(allowed: ${QUEUE_ANSWER_KEYS.join(', ')})`,
    );
  }
  const result = get(n, 'result');
  const error = get(n, 'error');
  if ((result === undefined) === (error === undefined)) {
    report(n, "a queue step's answer has either `result:` (ring, wait, timeout, empty, left, done) or `error:`");
    return undefined;
  }
  if (error) {
    const k = error.kind === 'scalar' && typeof error.value === 'string' ? error.value : undefined;
    if (k === undefined || !/^[A-Z][A-Z0-9_]{0,31}$/.test(k)) {
      report(error, `answer.error is an error kind in capitals (UNAVAILABLE), not ${describe(error)}`);
      return undefined;
    }
    for (const key of QUEUE_ANSWER_KEYS.slice(2))
      if (get(n, key)) report(get(n, key)!, `answer.${key} goes with a result, not with an error`);
    a.error = k;
    return ok ? a : undefined;
  }
  const r = result!;
  const text = r.kind === 'scalar' ? String(r.value) : '';
  if (!(QUEUE_RESULTS as readonly string[]).includes(text)) {
    const near = closest(text, QUEUE_RESULTS);
    report(
      r,
      `answer.result: "${text.slice(0, 40)}" is not what a queue operation answers` +
        `${near ? ` (did you mean "${near}"?)` : ''}: ${QUEUE_RESULTS.join(', ')}`,
    );
    return undefined;
  }
  a.result = text as QueueResult;
  const fits = op !== undefined && op in RESULTS_OF ? RESULTS_OF[op as keyof typeof RESULTS_OF] : undefined;
  if (fits && !fits.includes(a.result)) {
    report(r, `answer.result: ${a.result} does not answer a ${op} (a ${op} answers ${fits.join(', ')})`);
    ok = false;
  }
  const agent = get(n, 'agent');
  if (a.result === 'ring') {
    const s = agent?.kind === 'scalar' && agent.type === 'string' ? String(agent.value) : undefined;
    const bad = s === undefined ? 'missing' : checkE164(s);
    if (bad !== null) {
      report(
        agent ?? n,
        agent
          ? `answer.agent: ${bad}`
          : 'answer: a ring names the agent claimed (agent: "+442079460001"): the dialout rings it',
      );
      ok = false;
    } else a.agent = s;
  } else if (agent) {
    report(agent, `answer.agent goes with result: ring (the agent claimed), not ${a.result}`);
    ok = false;
  }
  const poll = RESULTS_OF.poll.includes(a.result);
  for (const key of ['position', 'waited', 'expected_wait', 'agents', 'free'] as const) {
    const v = get(n, key);
    if (!v) continue;
    if (!poll) {
      report(v, `answer.${key} goes with a poll's answer (ring, wait, timeout, empty), not ${a.result}`);
      ok = false;
      continue;
    }
    const num = v.kind === 'scalar' && v.type === 'int' ? Number(v.value) : undefined;
    const max = BOUNDS[key]!;
    if (num === undefined || num < 0 || num > max) {
      report(v, `answer.${key} is a whole number, 0 to ${max.toLocaleString('en-US')}, not ${describe(v)}`);
      ok = false;
    } else a[key] = num;
  }
  if (a.free !== undefined && a.agents !== undefined && a.free > a.agents) {
    report(get(n, 'free')!, `answer.free (${a.free}) is more than answer.agents (${a.agents})`);
    ok = false;
  }
  return ok ? a : undefined;
}

/**
 * The result a queue step's `answer:` gives its operation (the save: value of a poll: the answer's fields, the
 * others by default: position 1 for ring and wait, else 0; waited and expected_wait 0; agents the poll's number of
 * agents; free 0), or why it cannot answer it (a poll's answer to a leave...).
 */
export function queueReplyResult(a: QueueReply, e: QueueEffect): EffectResult | { mismatch: string } {
  if (a.error !== undefined) return { ok: false, error: a.error, message: `answered ${a.error}` };
  const result = a.result!;
  const fits = RESULTS_OF[e.op];
  if (!fits.includes(result))
    return { mismatch: `answer: ${result} does not answer the flow's ${e.op} (a ${e.op} answers ${fits.join(', ')})` };
  if (e.op !== 'poll') return { ok: true, value: result };
  const data: QueueAnswer = {
    result,
    position: a.position ?? (result === 'ring' || result === 'wait' ? 1 : 0),
    expected_wait: a.expected_wait ?? 0,
    waited: a.waited ?? 0,
    agents: a.agents ?? e.params.agents.length,
    free: a.free ?? 0,
  };
  if (a.agent !== undefined) data.agent = a.agent;
  return { ok: true, value: result, data: data as never };
}
