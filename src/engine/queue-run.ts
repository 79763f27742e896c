/**
 * Carries out a queue step's store operation (the effect `queue`, src/engine/outcome.ts) on the store's lines
 * (src/store/queues.ts): the server's executor (`performQueue`) and the tools' (`performQueueNow`: a scenario's line
 * in memory, the memory store's code) both run it, so a queue behaves alike in every tool. Never throws: a store that
 * fails is the error `UNAVAILABLE` (the step's error way).
 */
import type { QueueEffect, EffectResult } from './outcome.js';
import type { QueueLines, QueueLinesNow, QueuePoll, QueueStatus } from '../store/queues.js';
import type { QueueAnswer } from './queue.js';

/** A caller not heard of for this long (plus the ring time) has left the line: its instance was lost. */
export const QUEUE_STALE_MS = 180_000;

/** The store's poll for a poll effect at `now`: the step's seconds as the store's milliseconds. */
export function pollOf(e: QueueEffect, now: number): QueuePoll {
  const p = e.params;
  return {
    queue: p.queue,
    callid: e.callid,
    now,
    agents: p.agents,
    strategy: p.strategy,
    maxWaitMs: p.max_wait * 1000,
    leaseMs: (p.ring_time + p.max_talk) * 1000,
    staleMs: QUEUE_STALE_MS + p.ring_time * 1000,
    handleMs: p.handle_time * 1000,
  };
}

const failed = (err: unknown): EffectResult => ({
  ok: false,
  error: 'UNAVAILABLE',
  message: err instanceof Error ? err.message : String(err),
});

export async function performQueue(lines: QueueLines | undefined, e: QueueEffect, now: number): Promise<EffectResult> {
  if (!lines) return { ok: false, error: 'UNAVAILABLE', message: 'the call store here keeps no queues' };
  const p = e.params;
  try {
    if (e.op === 'leave') {
      await lines.leave(p.queue, e.callid, now);
      return { ok: true, value: 'left' };
    }
    if (e.op === 'done') {
      await lines.done(p.queue, e.callid, now, p.wrap_up * 1000);
      return { ok: true, value: 'done' };
    }
    const st = await lines.poll(pollOf(e, now));
    return { ok: true, value: st.kind, data: answerOf(st) as never };
  } catch (err) {
    return failed(err);
  }
}

/** performQueue on lines that answer at once (the tools: a scenario's line). */
export function performQueueNow(lines: QueueLinesNow, e: QueueEffect, now: number): EffectResult {
  const p = e.params;
  try {
    if (e.op === 'leave') {
      lines.leaveNow(p.queue, e.callid, now);
      return { ok: true, value: 'left' };
    }
    if (e.op === 'done') {
      lines.doneNow(p.queue, e.callid, now, p.wrap_up * 1000);
      return { ok: true, value: 'done' };
    }
    const st = lines.pollNow(pollOf(e, now));
    return { ok: true, value: st.kind, data: answerOf(st) as never };
  } catch (err) {
    return failed(err);
  }
}

/** What the flow's `save:` variable holds after a poll (seconds). */
export function answerOf(st: QueueStatus): QueueAnswer {
  const a: QueueAnswer = {
    result: st.kind,
    position: st.position,
    expected_wait: Math.round(st.expectedWaitMs / 1000),
    waited: Math.floor(st.waitedMs / 1000),
    agents: st.agents,
    free: st.free,
  };
  if (st.agent !== undefined) a.agent = st.agent;
  return a;
}
