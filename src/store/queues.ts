/**
 * Queues (the `queue` step, docs/flow-language.md "Queues"): callers wait in a line per queue for the next free
 * agent, first come first served whichever instance answers their requests. The line and the agents' state live in
 * the store, so every instance sharing it sees one line: the memory store's for one process, Redis for many.
 *
 * The model, in the store's terms (everything keyed by the queue's name, the caller's callid, the agent's number):
 *
 * - **The line**: a caller joins it on its first `poll` (its arrival is that poll's `now`) and stays in it, at the
 *   place its arrival gives, until it is served (`done`), leaves (`leave`: it hung up), times out (a `poll` after
 *   `maxWaitMs` since its arrival answers `timeout` and removes it), or goes stale (no `poll` for `staleMs`: its
 *   instance was lost; removed by any later operation on the queue, bounded work per operation).
 * - **Agents** are phone numbers, one state per number for the whole store: an agent rung for a caller of one queue
 *   is busy for every queue that lists the number. An agent is busy from the `poll` that claims it (answer `ring`)
 *   until the claiming caller's next operation: its next `poll` (the ring ended unanswered: free at once, and this
 *   caller will not be offered that agent again while it waits), `leave` (free at once) or `done` (the call was
 *   bridged and has ended: free after `wrapUpMs`, and the handling time, claim to done, is recorded). A claim the
 *   caller never ends (its instance lost) lapses `leaseMs` after the claim. A caller ahead who already tried every
 *   free agent still counts as ahead of the callers behind it (they wait for another agent, or for it to leave): an
 *   agent who did not answer is most likely away, and nobody overtakes a caller who waits longer.
 * - **Paused** agents (per queue, through the admin API) are offered to nobody in that queue.
 * - **Whose turn**: a caller may claim an agent when the callers ahead of it in the line that are not ringing an
 *   agent are fewer than the agents it could take (listed in its poll, free, not paused, not tried by it). Among
 *   those, `strategy` picks: `in_order` the first in the list, `round_robin` the first after the one this queue
 *   claimed last (in list order, wrapping), `longest_idle` the one free for the longest (never rung: first).
 * - **Expected wait** (documented estimator): ceil(position / max(1, agents not paused)) x the mean handling time of
 *   the queue's last 20 served calls (`handleMs` when it has none), bounded to 24 hours. Position is 1-based among
 *   the callers not ringing, the caller included.
 *
 * All times are the callers' requests' times (`now`, epoch ms): the store never reads a clock for the line, so
 * scenarios and replays drive it with their own.
 */

/** How the next agent is chosen among those a caller may take. */
export type QueueStrategy = 'in_order' | 'round_robin' | 'longest_idle';

export interface QueuePoll {
  queue: string;
  callid: string;
  /** The request's time, epoch ms. */
  now: number;
  /** The numbers this caller may be offered, in the step's order (1..1000, distinct). */
  agents: readonly string[];
  strategy: QueueStrategy;
  /** Time from arrival after which the poll answers `timeout` (and the caller leaves the line). */
  maxWaitMs: number;
  /** A claim lapses this long after it was made if the caller never ends it (ring time + the longest talk). */
  leaseMs: number;
  /** A caller not heard of for this long is dropped from the line. */
  staleMs: number;
  /** The estimator's handling time while the queue has served nobody yet. */
  handleMs: number;
}

/** What a poll answers; `kind` is the queue step's result. */
export interface QueueStatus {
  /**
   * `ring`: an agent is claimed for this caller (`agent`), dial it; `wait`: not this caller's turn, or nobody free;
   * `timeout`: `maxWaitMs` went by (the caller is out of the line); `empty`: none of the caller's agents can ever
   * take it (the list is empty, every agent has been tried by this caller and did not answer, all are paused, or the
   * line is full: QUEUE_LIMITS.maxLine).
   */
  kind: 'ring' | 'wait' | 'timeout' | 'empty';
  /** The agent claimed (kind `ring`). */
  agent?: string;
  /** 1-based place among the callers not ringing (this one included); 0 once out of the line. */
  position: number;
  /** Milliseconds since the caller's arrival. */
  waitedMs: number;
  /** The estimate (see above), ms. */
  expectedWaitMs: number;
  /** Agents of the caller's list not paused in this queue; of them, free now. */
  agents: number;
  free: number;
}

/** One caller in a queue's line, as the admin view shows it. */
export interface LineEntry {
  callid: string;
  /** Epoch ms of its arrival; of its last poll. */
  since: number;
  seen: number;
  /** The agent it is ringing, if any. */
  ringing?: string;
}

export interface AgentView {
  number: string;
  state: 'free' | 'busy' | 'wrap_up';
  /** The caller it was claimed for, and the queue (busy). */
  callid?: string;
  queue?: string;
  /** Epoch ms: busy since (busy), free again at (wrap_up), free since (free; absent when never rung). */
  since?: number;
  until?: number;
  /** Paused in the queue viewed. */
  paused: boolean;
}

export interface QueueView {
  name: string;
  /** The line, oldest first (at most `limit` entries) and its whole length. */
  line: LineEntry[];
  waiting: number;
  /** Agents this queue has seen in polls or pauses (a queue's list lives in its flow, the store knows numbers). */
  agents: AgentView[];
  /** Served calls' mean handling time (ms) over the last 20, if any. */
  handleMs?: number;
  /**
   * Counts while the queue is in use (kept until a day after its last operation; memory: since the process started):
   * answered (done), abandoned (leave), timed out. Counters for Prometheus: a reset reads as a restart.
   */
  answered: number;
  abandoned: number;
  timedOut: number;
}

/** Bounds the store enforces whatever the flow says (hostile flows, hostile clients). */
export const QUEUE_LIMITS = {
  /** Callers in one queue's line: a caller arriving at a full line is not kept and answered `empty`. */
  maxLine: 10_000,
  /** Agents in one poll's list. */
  maxAgents: 1000,
  /** Queues one store keeps. */
  maxQueues: 1000,
  /** Stale entries removed per operation (the rest by later ones). */
  sweepPerOp: 100,
  /** Entries a view lists. */
  viewLimit: 1000,
} as const;

/**
 * The store's queues. Every operation is atomic for the store (Redis: one Lua script), so two instances polling at
 * once never claim one agent twice, and callers are served in their order of arrival.
 */
export interface QueueLines {
  poll(p: QueuePoll): Promise<QueueStatus>;
  /** The caller hung up while waiting or ringing: out of the line, its claim freed at once. Idempotent. */
  leave(queue: string, callid: string, now: number): Promise<void>;
  /**
   * The caller's bridged call has ended: out of the line, its agent free after `wrapUpMs`, the handling time
   * recorded. Idempotent (a second `done` changes nothing).
   */
  done(queue: string, callid: string, now: number, wrapUpMs: number): Promise<void>;
  /** Pauses or resumes an agent in a queue (any number: an agent may be paused before its first call). */
  pause(queue: string, agent: string, paused: boolean, now: number): Promise<void>;
  /** The queues with a line or known agents, by name; one queue when `name` is given (undefined: unknown). */
  view(now: number, name?: string): Promise<QueueView[]>;
}

/**
 * The operations of QueueLines answered at once, for a store that is synchronous inside (the memory store): the tools
 * (`callscript test`, replay) step calls synchronously and run a scenario's line on it, the same code as a server's.
 */
export interface QueueLinesNow {
  pollNow(p: QueuePoll): QueueStatus;
  leaveNow(queue: string, callid: string, now: number): void;
  doneNow(queue: string, callid: string, now: number, wrapUpMs: number): void;
  pauseNow(queue: string, agent: string, paused: boolean, now: number): void;
}
