/**
 * A scenario case's queues (docs/testing.md "Queues"): the memory store's own lines (src/store/memory-queues.ts,
 * the code a server without Redis runs), driven by the case's clock, with the state the case and its steps give.
 *
 * - Callers ahead (`ahead: n`) join the line before the call starts, one millisecond apart and before the case's
 *   clock; they wait for an agent of their own that is always busy, so that they keep their places without taking
 *   the case's agents (the store gives the caller its turn only when fewer callers wait ahead of it than agents are
 *   free to it). `served: n` serves the first n still waiting (done), in their order.
 * - Agents busy (`busy:`) are claimed by callers of a queue of the tools' own (`scenario:busy`); `free:` ends those
 *   claims (the agents are free at once). Agents busy for one queue are busy for every queue, as in a store.
 * - `paused:` and `resumed:` pause and resume agents in the queue named, as the admin API does.
 *
 * The callers and claims of the tools hold for 24 hours of the case's clock (the longest a store keeps anything).
 */
import type { EffectResult, QueueEffect } from '../engine/outcome.js';
import { performQueueNow } from '../engine/queue-run.js';
import { MemoryQueues } from '../store/memory-queues.js';
import { QUEUE_MAX_MS } from '../store/queue-rules.js';
import type { QueuePoll } from '../store/queues.js';
import type { QueueChange } from './scenario-queues.js';

/** The queue of the tools' own callers who hold agents busy (not a queue name a flow can write: it has a colon). */
export const BUSY_QUEUE = 'scenario:busy';
/** The agent the callers ahead wait for: always busy (not a number a flow can write). */
export const HOLDING_AGENT = 'scenario:held';

export class CaseLine {
  private readonly lines = new MemoryQueues();
  /** The callers ahead still waiting, per queue, in their order. */
  private readonly ahead = new Map<string, string[]>();
  private holding = false;
  private joined = 0;

  /** A queue step's operation, on the case's lines at the call's clock. */
  perform(e: QueueEffect, now: number): EffectResult {
    return performQueueNow(this.lines, e, now);
  }

  /** Applies what a case (before its first request) or a step (before the request after it) says of its queues. */
  apply(changes: readonly QueueChange[], now: number): void {
    for (const c of changes) {
      for (const b of c.busy ?? []) this.claim(b.number, `busy ${b.number}`, now);
      for (const f of c.free ?? []) this.lines.leaveNow(BUSY_QUEUE, `busy ${f.number}`, now);
      for (const p of c.paused ?? []) this.lines.pauseNow(c.queue, p.number, true, now);
      for (const r of c.resumed ?? []) this.lines.pauseNow(c.queue, r.number, false, now);
      if (c.ahead && c.ahead.n > 0) this.join(c.queue, c.ahead.n, now);
      if (c.served) {
        const waiting = this.ahead.get(c.queue) ?? [];
        for (const callid of waiting.splice(0, c.served.n)) this.lines.doneNow(c.queue, callid, now, 0);
      }
    }
  }

  /** `n` callers join `queue` before `now`, one ms apart, waiting for the holding agent. */
  private join(queue: string, n: number, now: number): void {
    const first = now - n;
    if (!this.holding) {
      this.claim(HOLDING_AGENT, 'holding', first - 1);
      this.holding = true;
    }
    const list = this.ahead.get(queue) ?? [];
    this.ahead.set(queue, list);
    for (let i = 0; i < n; i++) {
      const callid = `ahead ${++this.joined}`;
      list.push(callid);
      this.lines.pollNow(this.poll(queue, callid, HOLDING_AGENT, first + i));
    }
  }

  /**
   * A caller of the tools' queue claims `agent`. An agent the case's caller is ringing is busy already: the claim
   * is not made (and the tools' caller leaves at once, so that it keeps no place ahead of the next one).
   */
  private claim(agent: string, callid: string, now: number): void {
    if (this.lines.pollNow(this.poll(BUSY_QUEUE, callid, agent, now)).kind !== 'ring')
      this.lines.leaveNow(BUSY_QUEUE, callid, now);
  }

  private poll(queue: string, callid: string, agent: string, now: number): QueuePoll {
    return {
      queue,
      callid,
      now,
      agents: [agent],
      strategy: 'in_order',
      maxWaitMs: QUEUE_MAX_MS,
      leaseMs: QUEUE_MAX_MS,
      staleMs: QUEUE_MAX_MS,
      handleMs: 0,
    };
  }
}
