/**
 * The agents' states of the memory store's queues (./memory-queues.ts): one per number for the whole store, so an
 * agent claimed in one queue is busy in all. Kept in order of their last change: a state unchanged for
 * QUEUE_KEEP_MS (free by then: leases and wrap-ups are bounded by QUEUE_MAX_MS) is dropped, sweepPerOp at a time.
 */
import { QUEUE_LIMITS } from './queues.js';
import { QUEUE_KEEP_MS, type AgentRecord } from './queue-rules.js';
import { SortedList, cmpText } from './sorted-list.js';

interface AgentState extends AgentRecord {
  number: string;
  changed: number;
}

const byChange = (a: AgentState, b: AgentState) => a.changed - b.changed || cmpText(a.number, b.number);

export class MemoryAgents {
  private readonly states = new Map<string, AgentState>();
  private readonly order = new SortedList<AgentState>(byChange);

  get(number: string): AgentRecord | undefined {
    return this.states.get(number);
  }

  claim(number: string, callid: string, queue: string, now: number, leaseMs: number): void {
    this.set(number, { callid, queue, at: now, until: now + leaseMs }, now);
  }

  /** Ends `callid`'s claim of the agent in `queue` (if it still holds it): free at once, or from its lapse. */
  release(number: string, callid: string, queue: string, now: number): void {
    const s = this.claimOf(number, callid, queue);
    if (s) this.set(number, { freeAt: Math.min(now, s.until ?? now) }, now);
  }

  /**
   * `done` of `callid`'s claim: the agent in wrap-up until now + wrapUpMs and the handling time (claim to now)
   * returned, if the claim still holds; a lapsed claim just ends (free from its lapse).
   */
  served(number: string, callid: string, queue: string, now: number, wrapUpMs: number): number | undefined {
    const s = this.claimOf(number, callid, queue);
    if (!s) return undefined;
    if (now < (s.until ?? 0)) {
      this.set(number, { freeAt: now + wrapUpMs }, now);
      return Math.max(0, now - (s.at ?? now));
    }
    this.set(number, { freeAt: s.until ?? now }, now);
    return undefined;
  }

  /** Drops states unchanged for QUEUE_KEEP_MS, at most sweepPerOp. */
  prune(now: number): void {
    for (let n = 0; n < QUEUE_LIMITS.sweepPerOp; n++) {
      const s = this.order.at(0);
      if (!s || s.changed > now - QUEUE_KEEP_MS) break;
      this.order.remove(s);
      this.states.delete(s.number);
    }
  }

  private claimOf(number: string, callid: string, queue: string): AgentState | undefined {
    const s = this.states.get(number);
    return s && s.callid === callid && s.queue === queue ? s : undefined;
  }

  private set(number: string, record: AgentRecord, now: number): void {
    const old = this.states.get(number);
    if (old) this.order.remove(old);
    const s: AgentState = { ...record, number, changed: now };
    this.states.set(number, s);
    this.order.insert(s);
  }
}
