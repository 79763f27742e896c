/**
 * What both queue stores (./memory-queues.ts, ./redis-queues.ts) share of the contract in ./queues.ts: the input
 * made safe (hostile flows), the estimator, the strategies' choice, the bounds in time. The Redis store's Lua
 * scripts (./redis-queues-lua.ts) do the same sums; the contract tests (test/store/queues-contract.ts) hold both
 * to one behaviour.
 */
import { QUEUE_LIMITS, type QueuePoll, type QueueStrategy } from './queues.js';

/** The longest any duration is taken (maxWait, lease, stale, wrap-up, handling time) and the estimate's bound. */
export const QUEUE_MAX_MS = 86_400_000;

/**
 * A queue with no operation for this long is forgotten (its line is stale by then, its claims lapsed): its place
 * among QUEUE_LIMITS.maxQueues goes to a new queue, and Redis lets its keys expire. An agent's state unchanged for
 * this long is dropped too (it is free by then: leases and wrap-ups are bounded by QUEUE_MAX_MS).
 */
export const QUEUE_KEEP_MS = QUEUE_MAX_MS;

/** Handling times a queue keeps for its estimate. */
export const HANDLE_KEEP = 20;

/** An agent's number as the stores keep it: 1 to 64 characters, none of them a control, `|` or `,`. */
const AGENT = /^[^\x00-\x1f\x7f|,]{1,64}$/;

/** A duration in whole ms within [0, QUEUE_MAX_MS] (Infinity: the most; anything not a number: 0). */
export function cleanMs(ms: unknown): number {
  return typeof ms === 'number' && !Number.isNaN(ms) ? Math.min(QUEUE_MAX_MS, Math.max(0, Math.floor(ms))) : 0;
}

/** A time, epoch ms (whole; anything not a finite number: 0). */
export function cleanNow(now: unknown): number {
  return typeof now === 'number' && Number.isFinite(now) ? Math.max(0, Math.floor(now)) : 0;
}

export function cleanAgent(agent: unknown): string | undefined {
  return typeof agent === 'string' && AGENT.test(agent) ? agent : undefined;
}

const STRATEGIES: readonly QueueStrategy[] = ['in_order', 'round_robin', 'longest_idle'];

/**
 * The poll as the stores take it: times whole and bounded, the first QUEUE_LIMITS.maxAgents numbers of the list
 * (those that are no number dropped, a repeated one kept once), an unknown strategy taken as `in_order`.
 */
export function cleanPoll(p: QueuePoll): QueuePoll {
  const agents: string[] = [];
  const seen = new Set<string>();
  const list = Array.isArray(p.agents) ? p.agents.slice(0, QUEUE_LIMITS.maxAgents) : [];
  for (const raw of list) {
    const a = cleanAgent(raw);
    if (a !== undefined && !seen.has(a)) {
      seen.add(a);
      agents.push(a);
    }
  }
  return {
    queue: String(p.queue),
    callid: String(p.callid),
    now: cleanNow(p.now),
    agents,
    strategy: STRATEGIES.includes(p.strategy) ? p.strategy : 'in_order',
    maxWaitMs: cleanMs(p.maxWaitMs),
    leaseMs: cleanMs(p.leaseMs),
    // at least 1 ms: a caller is never stale at its own poll
    staleMs: Math.max(1, cleanMs(p.staleMs)),
    handleMs: cleanMs(p.handleMs),
  };
}

/** The mean of handling times, rounded to the ms; undefined for none. */
export function meanMs(times: readonly number[]): number | undefined {
  if (times.length === 0) return undefined;
  let sum = 0;
  for (const t of times) sum += t;
  return Math.floor(sum / times.length + 0.5);
}

/** ceil(position / max(1, agents)) x the mean handling time (`handleMs` when none), bounded to QUEUE_MAX_MS. */
export function expectedWait(position: number, agents: number, mean: number | undefined, handleMs: number): number {
  return Math.min(QUEUE_MAX_MS, Math.ceil(position / Math.max(1, agents)) * (mean ?? handleMs));
}

/** An agent the caller may take now: its index in the poll's list, and since when it is free (never rung: none). */
export interface Candidate {
  index: number;
  since: number | undefined;
}

/**
 * The strategy's choice among the candidates (in list order, at least one): `in_order` the first; `round_robin`
 * the first after `cursor` (the queue's last claimed agent) in the list, wrapping (from the start when the cursor is
 * not listed); `longest_idle` a never rung one first, else the one free the longest (ties: list order).
 */
export function pick(
  strategy: QueueStrategy,
  cands: readonly Candidate[],
  agents: readonly string[],
  cursor: string | undefined,
): Candidate {
  const first = cands[0] as Candidate;
  if (strategy === 'round_robin') {
    const after = cursor === undefined ? -1 : agents.indexOf(cursor);
    return cands.find((c) => c.index > after) ?? first;
  }
  if (strategy === 'longest_idle') {
    let best = first;
    for (const c of cands) {
      if (best.since === undefined) break;
      if (c.since === undefined || c.since < best.since) best = c;
    }
    return best;
  }
  return first;
}

/** An agent's state, one for the store: the claim (caller, queue, when, lapsing when), or free from `freeAt`. */
export interface AgentRecord {
  callid?: string;
  queue?: string;
  at?: number;
  until?: number;
  /** Free from (the end of a wrap-up, or when its last claim ended). */
  freeAt?: number;
}

/**
 * Busy while a claim holds (until its lease lapses), in wrap-up until `freeAt`, else free: since when (a lapsed
 * claim: its lapse; absent when never rung).
 */
export function agentStatus(
  s: AgentRecord | undefined,
  now: number,
): { state: 'free' | 'busy' | 'wrap_up'; since?: number } {
  if (s === undefined) return { state: 'free' };
  if (s.callid !== undefined) {
    return now < (s.until ?? 0) ? { state: 'busy', since: s.at ?? 0 } : { state: 'free', since: s.until ?? 0 };
  }
  if (s.freeAt === undefined) return { state: 'free' };
  return now < s.freeAt ? { state: 'wrap_up' } : { state: 'free', since: s.freeAt };
}
