/**
 * The queues of the memory store (the contract: ./queues.ts), for one process: synchronous inside, so every
 * operation is atomic; the methods return settled promises, and their `...Now` twins answer at once (QueueLinesNow:
 * the tools run a scenario's line on this very code).
 *
 * Per queue, the callers are in sorted lists (./sorted-list.ts): the line by arrival, the ringing ones by arrival
 * (a caller's position is its rank in the line less the ringing ahead of it: two binary searches), the waiting ones
 * by when they go stale, the ringing ones by when their lease lapses. Each operation on a queue first ends at most
 * QUEUE_LIMITS.sweepPerOp lapsed claims and removes as many stale callers, from the fronts of those lists. The
 * agents' states are the store's (./memory-agents.ts). Work per poll: O(log n) in the line, plus the caller's list
 * of agents (at most maxAgents).
 */
import {
  QUEUE_LIMITS,
  type QueueLines,
  type QueueLinesNow,
  type QueuePoll,
  type QueueStatus,
  type QueueView,
} from './queues.js';
import { cmpText } from './sorted-list.js';
import {
  HANDLE_KEEP,
  QUEUE_KEEP_MS,
  agentStatus,
  cleanAgent,
  cleanMs,
  cleanNow,
  cleanPoll,
  expectedWait,
  meanMs,
  pick,
  type Candidate,
} from './queue-rules.js';
import { agentView, queueView } from './queue-view.js';
import { MemoryAgents } from './memory-agents.js';
import { know, newQueue, noteList, trimKnown, type Caller, type Queue } from './memory-line.js';

const { maxLine, maxQueues, maxAgents, sweepPerOp } = QUEUE_LIMITS;

export class MemoryQueues implements QueueLines, QueueLinesNow {
  private readonly queues = new Map<string, Queue>();
  private readonly agents = new MemoryAgents();

  async poll(raw: QueuePoll): Promise<QueueStatus> {
    return this.pollNow(raw);
  }

  async leave(queue: string, callid: string, now: number): Promise<void> {
    this.leaveNow(queue, callid, now);
  }

  async done(queue: string, callid: string, now: number, wrapUpMs: number): Promise<void> {
    this.doneNow(queue, callid, now, wrapUpMs);
  }

  async pause(queue: string, agent: string, paused: boolean, now: number): Promise<void> {
    this.pauseNow(queue, agent, paused, now);
  }

  /** `poll`, answered at once (QueueLinesNow: the tools' scenario lines). */
  pollNow(raw: QueuePoll): QueueStatus {
    const p = cleanPoll(raw);
    const now = p.now;
    let q = this.queues.get(p.queue);
    let c = p.callid === '' ? undefined : q?.callers.get(p.callid);
    if (q && c) {
      if (c.claim) c.tried.add(this.release(q, c, now));
      else q.stale.remove(c);
      c.seen = now;
      c.staleAt = now + p.staleMs;
      q.stale.insert(c);
    }
    if (q) this.sweep(q, now);
    this.agents.prune(now);
    const { notPaused, free, any, cands } = this.look(q, p, c?.tried);
    const status = (kind: QueueStatus['kind'], position = 0, waitedMs = 0, expectedWaitMs = 0): QueueStatus => ({
      kind,
      position,
      waitedMs,
      expectedWaitMs,
      agents: notPaused,
      free,
    });
    if (!c) {
      if (!any || p.callid === '') return status('empty');
      q ??= this.admit(p.queue, now);
      if (!q || q.line.length >= maxLine) return status('empty');
      c = { callid: p.callid, arrival: now, seen: now, staleAt: now + p.staleMs, tried: new Set() };
      q.callers.set(c.callid, c);
      q.line.insert(c);
      q.stale.insert(c);
    }
    q = q as Queue;
    q.lastOp = now;
    noteList(q, p.agents, now);
    const waited = now - c.arrival;
    if (waited >= p.maxWaitMs) {
      this.drop(q, c);
      q.timedOut++;
      return status('timeout', 0, waited);
    }
    if (!any) {
      this.drop(q, c);
      return status('empty', 0, waited);
    }
    const position = q.line.rank(c) - q.ringing.rank(c) + 1;
    if (position - 1 < cands.length) {
      const agent = p.agents[pick(p.strategy, cands, p.agents, q.rr).index] as string;
      this.agents.claim(agent, c.callid, q.name, now, p.leaseMs);
      q.stale.remove(c);
      c.claim = { agent, until: now + p.leaseMs };
      q.ringing.insert(c);
      q.leases.insert(c);
      q.rr = agent;
      return { ...status('ring', position, waited), agent, free: free - 1 };
    }
    return status('wait', position, waited, expectedWait(position, notPaused, meanMs(q.handle), p.handleMs));
  }

  leaveNow(queue: string, callid: string, now: number): void {
    this.end(queue, callid, cleanNow(now), undefined);
  }

  doneNow(queue: string, callid: string, now: number, wrapUpMs: number): void {
    this.end(queue, callid, cleanNow(now), cleanMs(wrapUpMs));
  }

  pauseNow(queue: string, agent: string, paused: boolean, now: number): void {
    const a = cleanAgent(agent);
    const t = cleanNow(now);
    let q = this.queues.get(queue);
    if (a === undefined || (!q && !paused)) return;
    q ??= this.admit(queue, t);
    if (!q) return;
    if (!paused) q.paused.delete(a);
    else if (q.paused.size < maxAgents || q.paused.has(a)) {
      q.paused.add(a);
      know(q, a, t);
      trimKnown(q);
    }
    q.lastOp = t;
    this.sweep(q, t);
    this.agents.prune(t);
  }

  async view(now: number, name?: string): Promise<QueueView[]> {
    const t = cleanNow(now);
    this.agents.prune(t);
    const names = name === undefined ? [...this.queues.keys()].sort(cmpText) : this.queues.has(name) ? [name] : [];
    const out: QueueView[] = [];
    for (const n of names) {
      const q = this.queues.get(n) as Queue;
      this.sweep(q, t);
      const numbers = new Set([...q.known.keys(), ...q.paused]);
      if (q.line.length === 0 && numbers.size === 0) continue;
      out.push(
        queueView({
          name: n,
          line: q.line.first(QUEUE_LIMITS.viewLimit).map((c) => ({
            callid: c.callid,
            since: c.arrival,
            seen: c.seen,
            ...(c.claim ? { ringing: c.claim.agent } : {}),
          })),
          waiting: q.line.length,
          agents: [...numbers].map((n) => agentView(n, this.agents.get(n), q.paused.has(n), t)),
          handle: q.handle,
          answered: q.answered,
          abandoned: q.abandoned,
          timedOut: q.timedOut,
        }),
      );
    }
    return out;
  }

  /** `leave` (wrapUpMs undefined) or `done`. */
  private end(queue: string, callid: string, now: number, wrapUpMs: number | undefined): void {
    const q = this.queues.get(queue);
    if (!q) return;
    const c = q.callers.get(callid);
    if (c) {
      if (c.claim && wrapUpMs !== undefined) this.served(q, c, now, wrapUpMs);
      else if (c.claim) this.release(q, c, now);
      this.drop(q, c);
      if (wrapUpMs === undefined) q.abandoned++;
      else q.answered++;
    }
    q.lastOp = now;
    this.sweep(q, now);
    this.agents.prune(now);
  }

  /** Ends the caller's claim, its agent free at once (at its lapse if it lapsed before); returns the agent. */
  private release(q: Queue, c: Caller, now: number): string {
    const agent = this.unclaim(q, c);
    this.agents.release(agent, c.callid, q.name, now);
    return agent;
  }

  /** `done` of a ringing caller: its agent in wrap-up and the handling time recorded, if the claim still holds. */
  private served(q: Queue, c: Caller, now: number, wrapUpMs: number): void {
    const handled = this.agents.served(this.unclaim(q, c), c.callid, q.name, now, wrapUpMs);
    if (handled === undefined) return;
    q.handle.push(handled);
    if (q.handle.length > HANDLE_KEEP) q.handle.shift();
  }

  private unclaim(q: Queue, c: Caller): string {
    const agent = c.claim?.agent ?? '';
    q.ringing.remove(c);
    q.leases.remove(c);
    c.claim = undefined;
    return agent;
  }

  /** A caller not ringing out of the line. */
  private drop(q: Queue, c: Caller): void {
    q.line.remove(c);
    q.stale.remove(c);
    q.callers.delete(c.callid);
  }

  /** Ends lapsed claims, then removes stale callers: at most sweepPerOp of each. */
  private sweep(q: Queue, now: number): void {
    for (let n = 0; n < sweepPerOp; n++) {
      const c = q.leases.at(0);
      if (!c || (c.claim?.until ?? 0) > now) break;
      c.tried.add(this.release(q, c, now));
      q.stale.insert(c);
    }
    for (let n = 0; n < sweepPerOp; n++) {
      const c = q.stale.at(0);
      if (!c || c.staleAt > now) break;
      this.drop(q, c);
    }
  }

  /** The caller's list seen from this queue: not paused, free, may be taken (not tried), free candidates. */
  private look(q: Queue | undefined, p: QueuePoll, tried: Set<string> | undefined) {
    let notPaused = 0;
    let free = 0;
    let any = false;
    const cands: Candidate[] = [];
    p.agents.forEach((number, index) => {
      if (q?.paused.has(number)) return;
      notPaused++;
      const st = agentStatus(this.agents.get(number), p.now);
      if (st.state === 'free') free++;
      if (tried?.has(number)) return;
      any = true;
      if (st.state === 'free') cands.push({ index, since: st.since });
    });
    return { notPaused, free, any, cands };
  }

  /** A new queue, unless the store keeps maxQueues already (those idle for QUEUE_KEEP_MS are forgotten first). */
  private admit(name: string, now: number): Queue | undefined {
    if (this.queues.size >= maxQueues) {
      const idle = [...this.queues.values()]
        .filter((q) => q.lastOp <= now - QUEUE_KEEP_MS)
        .sort((a, b) => a.lastOp - b.lastOp || cmpText(a.name, b.name));
      for (const q of idle.slice(0, sweepPerOp)) this.queues.delete(q.name);
      if (this.queues.size >= maxQueues) return undefined;
    }
    const q = newQueue(name, now);
    this.queues.set(name, q);
    return q;
  }
}
