/**
 * The queues' contract (src/store/queues.ts): one suite run against every store's QueueLines (memory, Redis). Times
 * are the callers' (`now`), never a clock: each test drives them.
 */
import { describe, expect, it } from 'vitest';
import { QUEUE_LIMITS, type QueueLines, type QueuePoll, type QueueStatus } from '../../src/store/queues.js';
import { QUEUE_KEEP_MS } from '../../src/store/queue-rules.js';

export interface QueuesUnderTest {
  queues: QueueLines;
  /** Another handle on the same lines (Redis: a second store on the same prefix; memory: the same). */
  other: QueueLines;
  close(): Promise<void>;
}

const T0 = 1_700_000_000_000;

/** A poll of `sales` by agents 101 (in order), with bounds the test changes. */
export function poll(q: QueueLines, callid: string, now: number, more: Partial<QueuePoll> = {}): Promise<QueueStatus> {
  return q.poll({
    queue: 'sales',
    callid,
    now,
    agents: ['101'],
    strategy: 'in_order',
    maxWaitMs: 600_000,
    leaseMs: 120_000,
    staleMs: 60_000,
    handleMs: 30_000,
    ...more,
  });
}

const ring = (agent: string, more: Partial<QueueStatus> = {}): QueueStatus => ({
  kind: 'ring',
  agent,
  position: 1,
  waitedMs: 0,
  expectedWaitMs: 0,
  agents: 1,
  free: 0,
  ...more,
});
const wait = (position: number, more: Partial<QueueStatus> = {}): QueueStatus => ({
  kind: 'wait',
  position,
  waitedMs: 0,
  expectedWaitMs: Math.min(86_400_000, position * 30_000),
  agents: 1,
  free: 0,
  ...more,
});

export function queuesContract(name: string, make: () => Promise<QueuesUnderTest>, opts: { skip?: string } = {}): void {
  const d = opts.skip ? describe.skip : describe;
  d(`QueueLines contract: ${name}${opts.skip ? ` (skipped: ${opts.skip})` : ''}`, () => {
    const withQueues = (fn: (u: QueuesUnderTest) => Promise<void>) => async () => {
      const u = await make();
      try {
        await fn(u);
      } finally {
        await u.close();
      }
    };

    it(
      'first come, first served: of 3 callers and 1 agent the first rings, the others wait at places 1 and 2',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, 'c1', T0)).toEqual(ring('101'));
        expect(await poll(q, 'c2', T0 + 1)).toEqual(wait(1));
        expect(await poll(q, 'c3', T0 + 2)).toEqual(wait(2));
        expect(await poll(q, 'c3', T0 + 1000)).toEqual(wait(2, { waitedMs: 998 }));
        expect(await poll(q, 'c2', T0 + 1000)).toEqual(wait(1, { waitedMs: 999 }));
      }),
    );

    it(
      "a ringing caller's next poll frees its agent, never offered to it again; every agent tried: empty",
      withQueues(async ({ queues: q }) => {
        const agents = ['101', '102'];
        expect(await poll(q, 'c1', T0, { agents })).toEqual(ring('101', { agents: 2, free: 1 }));
        // the ring ended unanswered: 101 is free, and c1 gets the next one
        expect(await poll(q, 'c1', T0 + 1000, { agents })).toEqual(ring('102', { agents: 2, free: 1, waitedMs: 1000 }));
        expect(await poll(q, 'c2', T0 + 1001, { agents })).toEqual(ring('101', { agents: 2, free: 0 }));
        expect(await poll(q, 'c1', T0 + 2000, { agents })).toEqual({
          kind: 'empty',
          position: 0,
          waitedMs: 2000,
          expectedWaitMs: 0,
          agents: 2,
          free: 1,
        });
        const [v] = await q.view(T0 + 2000, 'sales');
        expect(v!.line).toEqual([{ callid: 'c2', since: T0 + 1001, seen: T0 + 1001, ringing: '101' }]);
      }),
    );

    it(
      'an empty list answers empty and keeps nothing',
      withQueues(async ({ queues: q }) => {
        const empty = { kind: 'empty', position: 0, waitedMs: 0, expectedWaitMs: 0, agents: 0, free: 0 };
        expect(await poll(q, 'c1', T0, { agents: [] })).toEqual(empty);
        expect(await q.view(T0)).toEqual([]);
        // numbers that are no numbers are dropped, a repeated one counted once
        expect(await poll(q, 'c1', T0, { agents: ['', 'a|b', 'x,y', '\n'] })).toEqual(empty);
        expect(await poll(q, 'c1', T0, { agents: ['101', '101'] })).toEqual(ring('101'));
      }),
    );

    it(
      'paused agents are offered to nobody in that queue and are not counted in `agents`; all paused: empty',
      withQueues(async ({ queues: q }) => {
        const agents = ['101', '102'];
        await q.pause('sales', '101', true, T0); // before any call
        expect(await poll(q, 'c1', T0, { agents })).toEqual(ring('102'));
        await q.pause('sales', '102', true, T0 + 1);
        expect(await poll(q, 'c2', T0 + 2, { agents })).toEqual({
          kind: 'empty',
          position: 0,
          waitedMs: 0,
          expectedWaitMs: 0,
          agents: 0,
          free: 0,
        });
        await q.pause('sales', '101', false, T0 + 3);
        expect(await poll(q, 'c3', T0 + 4, { agents })).toEqual(ring('101'));
        // paused in sales only: support may take it (it is busy for c3 meanwhile)
        expect(await poll(q, 's1', T0 + 5, { agents, queue: 'support' })).toEqual(
          wait(1, { agents: 2, free: 0, expectedWaitMs: 30_000 }),
        );
        const [v] = await q.view(T0 + 5, 'sales');
        expect(v!.agents.map((a) => [a.number, a.state, a.paused])).toEqual([
          ['101', 'busy', false],
          ['102', 'busy', true],
        ]);
      }),
    );

    it(
      'round_robin takes the first after the last claimed, in list order, wrapping; busy ones skipped',
      withQueues(async ({ queues: q }) => {
        const rr = { agents: ['a', 'b', 'c'], strategy: 'round_robin' as const };
        const got: string[] = [];
        for (const [i, id] of ['c1', 'c2', 'c3'].entries()) got.push((await poll(q, id, T0 + i, rr)).agent!);
        for (const id of ['c1', 'c2', 'c3']) await q.done('sales', id, T0 + 10, 0);
        for (const [i, id] of ['c4', 'c5'].entries()) got.push((await poll(q, id, T0 + 20 + i, rr)).agent!);
        // the cursor at c: a (wrapping), then b
        await q.done('sales', 'c4', T0 + 30, 0);
        // a freed again (c4 done), b busy: the cursor at b gives c, then at c a (wrapping past busy b)
        got.push((await poll(q, 'c6', T0 + 31, rr)).agent!);
        got.push((await poll(q, 'c7', T0 + 32, rr)).agent!);
        expect(got).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a']);
      }),
    );

    it(
      'longest_idle takes a never rung agent first (list order), then the one free the longest',
      withQueues(async ({ queues: q }) => {
        const li = { agents: ['a', 'b', 'c'], strategy: 'longest_idle' as const };
        expect((await poll(q, 'c1', T0, li)).agent).toBe('a');
        expect((await poll(q, 'c2', T0 + 1, li)).agent).toBe('b');
        await q.done('sales', 'c1', T0 + 10, 0); // a free since T0 + 10
        expect((await poll(q, 'c3', T0 + 11, li)).agent).toBe('c'); // never rung beats a
        await q.done('sales', 'c2', T0 + 20, 0); // b free since T0 + 20
        await q.done('sales', 'c3', T0 + 15, 0); // c free since T0 + 15
        expect((await poll(q, 'c4', T0 + 30, li)).agent).toBe('a');
        expect((await poll(q, 'c5', T0 + 31, li)).agent).toBe('c');
        expect((await poll(q, 'c6', T0 + 32, li)).agent).toBe('b');
      }),
    );

    it(
      'an agent rung for one queue is busy for every queue that lists it',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, 'c1', T0)).toEqual(ring('101'));
        expect(await poll(q, 's1', T0 + 1, { queue: 'support' })).toEqual(wait(1));
        const [v] = await q.view(T0 + 1, 'support');
        expect(v!.agents).toEqual([
          { number: '101', state: 'busy', callid: 'c1', queue: 'sales', since: T0, paused: false },
        ]);
        await q.leave('sales', 'c1', T0 + 2);
        expect(await poll(q, 's1', T0 + 3, { queue: 'support' })).toEqual(ring('101', { waitedMs: 2 }));
      }),
    );

    it(
      'done: the agent is in wrap-up until now + wrapUpMs, then free; the handling time (claim to done) is kept',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, 'c1', T0)).toEqual(ring('101'));
        expect(await poll(q, 'c2', T0 + 1)).toEqual(wait(1));
        await q.done('sales', 'c1', T0 + 40_000, 10_000);
        expect(await poll(q, 'c2', T0 + 45_000)).toEqual(wait(1, { waitedMs: 44_999, expectedWaitMs: 40_000 }));
        const [v] = await q.view(T0 + 45_000, 'sales');
        expect(v!.agents).toEqual([{ number: '101', state: 'wrap_up', until: T0 + 50_000, paused: false }]);
        expect(v!.handleMs).toBe(40_000);
        expect(await poll(q, 'c2', T0 + 49_999)).toEqual(wait(1, { waitedMs: 49_998, expectedWaitMs: 40_000 }));
        expect(await poll(q, 'c2', T0 + 50_000)).toEqual(ring('101', { waitedMs: 49_999 }));
      }),
    );

    it(
      'the estimate: ceil(position / agents not paused) x the mean of the last 20 handling times, at most 24 h',
      withQueues(async ({ queues: q }) => {
        const agents = ['101', '102'];
        // handling times 1000..21000 ms: the last 20 (2000..21000) average 11500
        for (let i = 1; i <= 21; i++) {
          expect((await poll(q, `h${i}`, T0 + i * 100_000, { agents })).kind).toBe('ring');
          await q.done('sales', `h${i}`, T0 + i * 100_000 + i * 1000, 0);
        }
        const t = T0 + 10_000_000;
        expect((await poll(q, 'r1', t, { agents })).kind).toBe('ring');
        expect((await poll(q, 'r2', t, { agents })).kind).toBe('ring');
        const est = (position: number, agentsNotPaused = 2) =>
          wait(position, { agents: agentsNotPaused, expectedWaitMs: Math.ceil(position / agentsNotPaused) * 11_500 });
        expect(await poll(q, 'w1', t + 1, { agents })).toEqual(est(1));
        expect(await poll(q, 'w2', t + 2, { agents })).toEqual(est(2));
        expect(await poll(q, 'w3', t + 3, { agents })).toEqual(est(3));
        await q.pause('sales', '102', true, t + 4);
        expect(await poll(q, 'w3', t + 5, { agents })).toEqual({ ...est(3, 1), waitedMs: 2 }); // 3 x 11500
        const [v] = await q.view(t + 5, 'sales');
        expect(v!.handleMs).toBe(11_500);
        // bounded: 25 places x 1 h
        const long = { queue: 'long', handleMs: 3_600_000, agents: ['901'] };
        expect(await poll(q, 'l0', t, long)).toEqual(ring('901'));
        for (let i = 1; i <= 25; i++) await poll(q, `l${i}`, t + i, long);
        expect(await poll(q, 'l24', t + 30, long)).toEqual(wait(24, { waitedMs: 6, expectedWaitMs: 86_400_000 }));
        expect(await poll(q, 'l25', t + 30, long)).toEqual(wait(25, { waitedMs: 5, expectedWaitMs: 86_400_000 }));
        expect(await poll(q, 'l23', t + 30, long)).toEqual(wait(23, { waitedMs: 7, expectedWaitMs: 82_800_000 }));
      }),
    );

    it(
      'a poll maxWaitMs after arrival answers timeout and leaves the line: the next caller moves up',
      withQueues(async ({ queues: q }) => {
        const mw = { maxWaitMs: 60_000 };
        expect(await poll(q, 'c1', T0, mw)).toEqual(ring('101'));
        expect(await poll(q, 'c2', T0, mw)).toEqual(wait(1));
        expect(await poll(q, 'c3', T0 + 1, mw)).toEqual(wait(2));
        expect(await poll(q, 'c2', T0 + 59_999, mw)).toEqual(wait(1, { waitedMs: 59_999 }));
        expect(await poll(q, 'c2', T0 + 60_000, mw)).toEqual({
          kind: 'timeout',
          position: 0,
          waitedMs: 60_000,
          expectedWaitMs: 0,
          agents: 1,
          free: 0,
        });
        expect(await poll(q, 'c3', T0 + 60_000, mw)).toEqual(wait(1, { waitedMs: 59_999 }));
        const [v] = await q.view(T0 + 60_000, 'sales');
        expect([v!.waiting, v!.timedOut, v!.answered, v!.abandoned]).toEqual([2, 1, 0, 0]);
        // the timed-out caller polling again joins at the back
        expect(await poll(q, 'c2', T0 + 60_000, mw)).toEqual(wait(2));
      }),
    );

    it(
      'a caller not heard of for staleMs is removed by a later operation; a ringing one is not stale',
      withQueues(async ({ queues: q }) => {
        const st = { staleMs: 30_000 };
        expect(await poll(q, 'c1', T0, st)).toEqual(ring('101'));
        expect(await poll(q, 'c2', T0 + 1, st)).toEqual(wait(1));
        expect(await poll(q, 'c3', T0 + 2, st)).toEqual(wait(2));
        expect(await poll(q, 'c3', T0 + 20_000, st)).toEqual(wait(2, { waitedMs: 19_998 }));
        // c2 last polled at T0 + 1: stale from T0 + 30_001
        expect(await poll(q, 'c3', T0 + 30_000, st)).toEqual(wait(2, { waitedMs: 29_998 }));
        expect(await poll(q, 'c3', T0 + 30_001, st)).toEqual(wait(1, { waitedMs: 29_999 }));
        const [v] = await q.view(T0 + 30_001, 'sales');
        expect(v!.line).toEqual([
          { callid: 'c1', since: T0, seen: T0, ringing: '101' },
          { callid: 'c3', since: T0 + 2, seen: T0 + 30_001 },
        ]);
        expect([v!.abandoned, v!.timedOut]).toEqual([0, 0]);
      }),
    );

    it(
      'a claim never ended lapses leaseMs after it: the agent is free, its caller stale from its last poll',
      withQueues(async ({ queues: q }) => {
        const ls = { leaseMs: 50_000, staleMs: 30_000 };
        expect(await poll(q, 'c1', T0, ls)).toEqual(ring('101'));
        expect(await poll(q, 'c2', T0 + 1, ls)).toEqual(wait(1));
        expect(await poll(q, 'c2', T0 + 49_999, ls)).toEqual(wait(1, { waitedMs: 49_998 }));
        let [v] = await q.view(T0 + 49_999, 'sales');
        expect(v!.agents[0]).toMatchObject({ state: 'busy', callid: 'c1' });
        [v] = await q.view(T0 + 50_000, 'sales');
        expect(v!.agents).toEqual([{ number: '101', state: 'free', since: T0 + 50_000, paused: false }]);
        expect(v!.line.map((e) => e.callid)).toEqual(['c2']);
        expect(await poll(q, 'c2', T0 + 50_001, ls)).toEqual(ring('101', { waitedMs: 50_000 }));
        // the lost caller's late done changes nothing: its claim is gone
        await q.done('sales', 'c1', T0 + 60_000, 5000);
        [v] = await q.view(T0 + 60_000, 'sales');
        expect(v!.agents[0]).toMatchObject({ state: 'busy', callid: 'c2' });
        expect([v!.answered, v!.handleMs]).toEqual([0, undefined]);
      }),
    );

    it(
      'a lapsed claim whose caller is not stale yet: the caller waits in its place again, the agent tried',
      withQueues(async ({ queues: q }) => {
        const ls = { leaseMs: 20_000, staleMs: 30_000, agents: ['101', '102'] };
        expect(await poll(q, 'c1', T0, ls)).toEqual(ring('101', { agents: 2, free: 1 }));
        expect(await poll(q, 'c2', T0 + 1, { ...ls, leaseMs: 100_000 })).toEqual(ring('102', { agents: 2 }));
        expect(await poll(q, 'c3', T0 + 2, ls)).toEqual(wait(1, { agents: 2, expectedWaitMs: 30_000 }));
        // at T0 + 20_000 c1's claim lapses: 101 is free, c1 waits ahead of c3 (until T0 + 30_000)
        const w2 = wait(2, { agents: 2, free: 1, waitedMs: 19_998, expectedWaitMs: 30_000 });
        expect(await poll(q, 'c3', T0 + 20_000, ls)).toEqual(w2);
        // c1 is not offered 101 again: it waits for 102; c3 behind it may not take 101 meanwhile
        expect(await poll(q, 'c1', T0 + 20_002, ls)).toEqual({
          kind: 'wait',
          position: 1,
          waitedMs: 20_002,
          expectedWaitMs: 30_000,
          agents: 2,
          free: 1,
        });
        expect(await poll(q, 'c3', T0 + 20_003, ls)).toEqual({ ...w2, waitedMs: 20_001 });
        await q.leave('sales', 'c1', T0 + 20_004);
        expect(await poll(q, 'c3', T0 + 20_005, ls)).toEqual(ring('101', { agents: 2, waitedMs: 20_003 }));
      }),
    );

    it(
      'leave and done are idempotent; leave frees the agent at once and counts an abandon',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, 'c1', T0)).toEqual(ring('101'));
        await q.leave('sales', 'c1', T0 + 10);
        await q.leave('sales', 'c1', T0 + 11);
        await q.done('sales', 'c1', T0 + 12, 5000);
        await q.leave('nowhere', 'c1', T0 + 12);
        await q.done('nowhere', 'c1', T0 + 12, 5000);
        let [v] = await q.view(T0 + 12, 'sales');
        expect([v!.abandoned, v!.answered, v!.handleMs, v!.waiting]).toEqual([1, 0, undefined, 0]);
        expect(v!.agents).toEqual([{ number: '101', state: 'free', since: T0 + 10, paused: false }]);
        expect(await poll(q, 'c2', T0 + 13)).toEqual(ring('101'));
        await q.done('sales', 'c2', T0 + 1013, 0);
        await q.done('sales', 'c2', T0 + 5000, 60_000);
        await q.leave('sales', 'c2', T0 + 5001);
        [v] = await q.view(T0 + 5001, 'sales');
        expect([v!.abandoned, v!.answered, v!.handleMs]).toEqual([1, 1, 1000]);
        expect(v!.agents).toEqual([{ number: '101', state: 'free', since: T0 + 1013, paused: false }]);
        expect(await q.view(T0, 'nowhere')).toEqual([]);
      }),
    );

    it(
      'view: the line oldest first, agents by number (free, busy, wrap_up, paused), counts and handling time',
      withQueues(async ({ queues: q }) => {
        const agents = ['103', '101', '102'];
        await q.pause('sales', '104', true, T0);
        expect((await poll(q, 'c1', T0 + 1, { agents })).agent).toBe('103');
        expect((await poll(q, 'c2', T0 + 2, { agents })).agent).toBe('101');
        await q.done('sales', 'c2', T0 + 3002, 60_000);
        expect((await poll(q, 'c3', T0 + 3003, { agents })).agent).toBe('102');
        expect((await poll(q, 'c4', T0 + 3004, { agents })).kind).toBe('wait');
        expect((await poll(q, 'c5', T0 + 3005, { agents, maxWaitMs: 0 })).kind).toBe('timeout');
        expect((await poll(q, 'c6', T0 + 3006, { agents })).kind).toBe('wait');
        await q.leave('sales', 'c6', T0 + 3007);
        expect(await poll(q, 'c4', T0 + 4000, { agents })).toEqual(
          wait(1, { agents: 3, waitedMs: 996, expectedWaitMs: 3000 }),
        );
        await poll(q, 's1', T0 + 4001, { queue: 'support', agents: ['201'] });
        const views = await q.view(T0 + 4001);
        expect(views.map((v) => v.name)).toEqual(['sales', 'support']);
        expect(views[0]).toEqual({
          name: 'sales',
          line: [
            { callid: 'c1', since: T0 + 1, seen: T0 + 1, ringing: '103' },
            { callid: 'c3', since: T0 + 3003, seen: T0 + 3003, ringing: '102' },
            { callid: 'c4', since: T0 + 3004, seen: T0 + 4000 },
          ],
          waiting: 3,
          agents: [
            { number: '101', state: 'wrap_up', until: T0 + 63_002, paused: false },
            { number: '102', state: 'busy', callid: 'c3', queue: 'sales', since: T0 + 3003, paused: false },
            { number: '103', state: 'busy', callid: 'c1', queue: 'sales', since: T0 + 1, paused: false },
            { number: '104', state: 'free', paused: true },
          ],
          handleMs: 3000,
          answered: 1,
          abandoned: 1,
          timedOut: 1,
        });
        expect(await q.view(T0 + 4001, 'support')).toEqual([views[1]]);
        expect(views[1]!.agents).toEqual([
          { number: '201', state: 'busy', callid: 's1', queue: 'support', since: T0 + 4001, paused: false },
        ]);
      }),
    );

    it(
      'stale callers go sweepPerOp at a time: each operation removes at most that many',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, 'c0', T0)).toEqual(ring('101'));
        const ids = Array.from({ length: 250 }, (_, i) => `s${String(i).padStart(3, '0')}`);
        await Promise.all(ids.map((id) => poll(q, id, T0 + 1, { staleMs: 1000 })));
        const n = QUEUE_LIMITS.sweepPerOp;
        expect((await poll(q, 'late', T0 + 5000)).position).toBe(250 - n + 1);
        expect((await poll(q, 'late', T0 + 5001)).position).toBe(250 - 2 * n + 1);
        expect((await poll(q, 'late', T0 + 5002)).position).toBe(1);
      }),
    );

    it(
      'bad input is data: odd times, strategies, numbers and callids never throw',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, '', T0)).toEqual({
          kind: 'empty',
          position: 0,
          waitedMs: 0,
          expectedWaitMs: 0,
          agents: 1,
          free: 1,
        });
        const odd = { strategy: 'bogus' as never, agents: ['101', 7 as never, '102'], leaseMs: Infinity };
        expect(await poll(q, 'c1', T0, odd)).toEqual(ring('101', { agents: 2, free: 1 }));
        expect(await poll(q, 'c2', Number.NaN, { queue: 'odd', maxWaitMs: -5, agents: ['301'] })).toEqual({
          kind: 'timeout',
          position: 0,
          waitedMs: 0,
          expectedWaitMs: 0,
          agents: 1,
          free: 1,
        });
        await q.pause('sales', 'a|b', true, T0);
        await q.done('sales', 'zz', Number.NaN, Number.NaN);
        await q.leave('sales', 'c1', T0 + 1);
        const [v] = await q.view(T0 + 1, 'sales');
        expect(v!.agents.map((a) => a.number)).toEqual(['101', '102']);
        expect([v!.abandoned, v!.waiting]).toEqual([1, 0]);
      }),
    );

    it(
      "an agent's state unchanged for a day is forgotten: longest_idle takes it as never rung",
      withQueues(async ({ queues: q }) => {
        const li = { agents: ['a', 'b'], strategy: 'longest_idle' as const };
        expect((await poll(q, 'c1', T0, li)).agent).toBe('a');
        expect((await poll(q, 'c2', T0 + 1, li)).agent).toBe('b');
        await q.done('sales', 'c2', T0 + 50, 0);
        await q.done('sales', 'c1', T0 + 70, 0);
        const [v] = await q.view(T0 + 80, 'sales');
        expect(v!.agents.map((a) => a.since)).toEqual([T0 + 70, T0 + 50]);
        const later = T0 + 70 + QUEUE_KEEP_MS;
        const [w] = await q.view(later, 'sales');
        expect(w!.agents).toEqual([
          { number: 'a', state: 'free', paused: false },
          { number: 'b', state: 'free', paused: false },
        ]);
        expect((await poll(q, 'c3', later, li)).agent).toBe('a');
      }),
    );

    it(
      '50 callers polling at once through two handles: exactly one ring per free agent, the rest in order',
      withQueues(async ({ queues, other }) => {
        const agents = ['101', '102', '103'];
        const ids = Array.from({ length: 50 }, (_, i) => `c${String(i).padStart(2, '0')}`);
        const got = await Promise.all(ids.map((id, i) => poll(i % 2 ? other : queues, id, T0, { agents })));
        const rings = got.filter((s) => s.kind === 'ring').map((s) => s.agent);
        expect(rings.sort()).toEqual(agents);
        expect(got.filter((s) => s.kind === 'wait').length).toBe(47);
        // again, one at a time: the 47 waiting are at places 1..47 in their order of arrival (same time: callid)
        const waiting = ids.filter((_, i) => got[i]!.kind === 'wait');
        const places: number[] = [];
        for (const id of waiting) places.push((await poll(queues, id, T0 + 1, { agents })).position);
        expect(places).toEqual(Array.from({ length: 47 }, (_, i) => i + 1));
        // a freed agent raced for by every waiting caller at once: one ring
        const ringer = ids.find((_, i) => got[i]!.kind === 'ring')!;
        await queues.leave('sales', ringer, T0 + 2);
        const again = await Promise.all(waiting.map((id, i) => poll(i % 2 ? other : queues, id, T0 + 3, { agents })));
        expect(again.filter((s) => s.kind === 'ring').length).toBe(1);
      }),
    );

    it(
      'hostile: a line of 10,000 callers stays correct, the 10,001st is refused (empty)',
      withQueues(async ({ queues: q }) => {
        expect(await poll(q, 'c0', T0)).toEqual(ring('101'));
        for (let b = 1; b < QUEUE_LIMITS.maxLine; b += 500) {
          const batch = Array.from({ length: Math.min(500, QUEUE_LIMITS.maxLine - b) }, (_, i) => b + i);
          const got = await Promise.all(batch.map((i) => poll(q, `c${i}`, T0 + i)));
          expect(got.every((s) => s.kind === 'wait')).toBe(true);
        }
        expect(await poll(q, 'late', T0 + 20_000)).toEqual({
          kind: 'empty',
          position: 0,
          waitedMs: 0,
          expectedWaitMs: 0,
          agents: 1,
          free: 0,
        });
        expect(await poll(q, 'c1', T0 + 20_000)).toEqual(wait(1, { waitedMs: 19_999 }));
        expect(await poll(q, 'c5000', T0 + 20_000)).toEqual(wait(5000, { waitedMs: 15_000 }));
        expect(await poll(q, 'c9999', T0 + 20_000)).toEqual(wait(9999, { waitedMs: 10_001 }));
        await q.leave('sales', 'c1', T0 + 20_001);
        expect(await poll(q, 'c9999', T0 + 20_002)).toEqual(wait(9998, { waitedMs: 10_003 }));
        expect(await poll(q, 'late', T0 + 20_003)).toEqual(wait(9999));
        const [v] = await q.view(T0 + 20_003, 'sales');
        expect([v!.waiting, v!.line.length, v!.line[0]!.callid, v!.line[999]!.callid]).toEqual([
          10_000,
          QUEUE_LIMITS.viewLimit,
          'c0',
          'c1000',
        ]);
      }),
    );

    it(
      'hostile: a list of 1,500 agents: the first 1,000 are used, the rest never offered',
      withQueues(async ({ queues: q }) => {
        const agents = Array.from({ length: 1500 }, (_, i) => `+1555${String(i).padStart(7, '0')}`);
        expect(await poll(q, 'c0', T0, { agents })).toEqual(ring(agents[0]!, { agents: 1000, free: 999 }));
        for (let b = 1; b < 1000; b += 111) {
          const batch = Array.from({ length: 111 }, (_, i) => b + i);
          const got = await Promise.all(batch.map((i) => poll(q, `c${i}`, T0 + i, { agents })));
          expect(got.every((s) => s.kind === 'ring')).toBe(true);
        }
        expect(await poll(q, 'c1000', T0 + 1000, { agents })).toEqual(
          wait(1, { agents: 1000, free: 0, expectedWaitMs: 30_000 }),
        );
        const [v] = await q.view(T0 + 1000, 'sales');
        expect(v!.agents.length).toBe(1000);
        expect(v!.agents.every((a) => a.state === 'busy')).toBe(true);
        expect(new Set(v!.agents.map((a) => a.number))).toEqual(new Set(agents.slice(0, 1000)));
      }),
    );

    it(
      'hostile: the store keeps 1,000 queues: the 1,001st is refused (empty) until one is idle for a day',
      withQueues(async ({ queues: q }) => {
        for (let b = 0; b < QUEUE_LIMITS.maxQueues; b += 100) {
          const got = await Promise.all(
            Array.from({ length: 100 }, (_, i) => poll(q, 'c1', T0, { queue: `q${b + i}`, agents: [`a${b + i}`] })),
          );
          expect(got.every((s) => s.kind === 'ring')).toBe(true);
        }
        const refused = { kind: 'empty', position: 0, waitedMs: 0, expectedWaitMs: 0, agents: 1, free: 1 };
        expect(await poll(q, 'c1', T0 + 1, { queue: 'one-too-many' })).toEqual(refused);
        await q.pause('paused-too-many', '101', true, T0 + 1);
        expect((await q.view(T0 + 1)).length).toBe(1000);
        expect(await q.view(T0 + 1, 'one-too-many')).toEqual([]);
        // a day later the queues untouched since are forgotten, 100 at a time
        expect(await poll(q, 'c1', T0 + QUEUE_KEEP_MS + 1, { queue: 'one-too-many' })).toEqual(ring('101'));
        expect(await q.view(T0 + QUEUE_KEEP_MS + 1, 'q0')).toEqual([]);
        expect((await q.view(T0 + QUEUE_KEEP_MS + 1, 'q999'))[0]!.name).toBe('q999');
      }),
    );
  });
}
