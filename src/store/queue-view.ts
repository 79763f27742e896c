/** A queue's admin view (QueueView, ./queues.ts) from what a store holds: the same for memory and Redis. */
import { QUEUE_LIMITS, type AgentView, type LineEntry, type QueueView } from './queues.js';
import { agentStatus, meanMs, type AgentRecord } from './queue-rules.js';
import { cmpText } from './sorted-list.js';

export interface QueueParts {
  name: string;
  /** The line's first entries, oldest first (at most QUEUE_LIMITS.viewLimit), and its length. */
  line: LineEntry[];
  waiting: number;
  /** Its known and paused agents, in any order. */
  agents: AgentView[];
  handle: readonly number[];
  answered: number;
  abandoned: number;
  timedOut: number;
}

/** Agents by number (the first QUEUE_LIMITS.viewLimit); the mean handling time when the queue served any. */
export function queueView(p: QueueParts): QueueView {
  const agents = p.agents.sort((a, b) => cmpText(a.number, b.number)).slice(0, QUEUE_LIMITS.viewLimit);
  const handleMs = meanMs(p.handle);
  return {
    name: p.name,
    line: p.line,
    waiting: p.waiting,
    agents,
    ...(handleMs === undefined ? {} : { handleMs }),
    answered: p.answered,
    abandoned: p.abandoned,
    timedOut: p.timedOut,
  };
}

/** An agent as a view shows it, from its state (AgentRecord). */
export function agentView(number: string, s: AgentRecord | undefined, paused: boolean, now: number): AgentView {
  const st = agentStatus(s, now);
  if (st.state === 'busy')
    return { number, state: 'busy', callid: s?.callid, queue: s?.queue, since: st.since, paused };
  if (st.state === 'wrap_up') return { number, state: 'wrap_up', until: s?.freeAt, paused };
  return { number, state: 'free', ...(st.since === undefined ? {} : { since: st.since }), paused };
}
