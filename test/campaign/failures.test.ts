/**
 * Whose fault a failed placement is (src/campaign/scheduler.ts, ./streak.ts), with a fake
 * dialer and clock: a problem of every row stops the campaign without spending any row's
 * attempt; a row spends one only when a call was (perhaps) placed or the row was refused;
 * the placements in flight at a stop are waited for, so that no row is left `placing`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/campaign/journal.js';
import { runCampaign, type SchedulerOptions } from '../../src/campaign/scheduler.js';
import { FollowInterrupted, PlaceError, type CampaignEvent } from '../../src/campaign/types.js';
import { FakeClock, FakeDialer, numbers, rowsOf, type Behaviour } from './fakes.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'campaign-fail-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HEADER = 'number,outcome,call_status,last_step,duration_ms,attempts,callid,line,detail';

/** One run of the campaign over `list` (resuming the state of an earlier one, if any). */
async function run(
  list: string[],
  behaviour: Behaviour,
  opts: Partial<SchedulerOptions> = {},
  clock = new FakeClock(),
  earlier: FakeDialer['placed'] = [],
) {
  const o = await Journal.open({
    statePath: join(dir, 'state.json'),
    resultsPath: join(dir, 'results.csv'),
    app: 'APP1',
    csv: { path: '/x/numbers.csv', bytes: 1, sha256: 'ab', rows: list.length },
  });
  if (!o.ok) throw new Error(o.message);
  const j = o.journal;
  await j.fillVars(rowsOf(list));
  const dialer = new FakeDialer(clock, behaviour, earlier);
  const events: CampaignEvent[] = [];
  const outcome = await clock.drive(
    runCampaign({
      dialer,
      journal: j,
      rows: rowsOf(list, (i) => j.known(i)),
      clock,
      rate: 1000,
      concurrency: 5,
      retries: 2,
      retryDelayMs: 300_000,
      stopWaitMs: 10_000,
      onEvent: (e) => events.push(e),
      ...opts,
    }),
  );
  await j.close();
  const results = (await readFile(join(dir, 'results.csv'), 'utf8')).trimEnd().split('\n');
  const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'));
  return { outcome, dialer, events, results, state, clock };
}

const fine: Behaviour = () => ({ afterMs: 1000 });
const completed = (n: string, line: number, attempts = 1) =>
  new RegExp(`^\\${n},completed,HANGUP,bye,1000,${attempts},\\d+,${line},$`);

describe('a problem of every row stops the campaign, no attempt spent', () => {
  it(
    'the server not reached (nothing sent): stops at once; the placements in flight end the same way; the next ' +
      'run calls each row as its first attempt',
    async () => {
      const list = numbers(8);
      const down =
        'cannot reach callscript at http://127.0.0.1:3599 (ECONNREFUSED): is callscript serve running there? ' +
        '(--server, CALLSCRIPT_SERVER); no call was placed';
      const a = await run(list, () => new PlaceError('fatal', down), { retries: 0 });
      expect(a.outcome).toEqual({ status: 'failed', message: down });
      expect(a.results).toEqual([HEADER]);
      expect(a.state.attemptsSpent).toBe(0);
      expect(
        a.state.rows.map((r: { index: number; phase: string; attempts: number }) => [r.index, r.phase, r.attempts]),
      ).toEqual([0, 1, 2, 3, 4].map((i) => [i, 'waiting', 0]));

      const b = await run(list, fine, { retries: 0 }, a.clock);
      expect(b.outcome).toEqual({ status: 'finished' });
      expect(b.dialer.placed.map((p) => [p.number, p.attempt])).toEqual(list.map((n) => [n, 1]));
      list.forEach((n, i) => expect(b.results[i + 1]).toMatch(completed(n, i + 2)));
    },
  );

  it(
    'five refusals in a row across rows (an app or account problem the service words its own way): stop, and ' +
      'each refused row gets its attempt back',
    async () => {
      const list = numbers(8);
      const refusal = 'SERVICE_ERROR: the service refused the call: calls.realtime: application disabled (code 99)';
      const a = await run(list, () => new PlaceError('refused', refusal), { retries: 0, concurrency: 1 });
      expect(a.outcome).toEqual({
        status: 'failed',
        message: `5 calls in a row could not be placed; the last: ${refusal}`,
      });
      expect(a.results).toEqual([HEADER]); // none written `failed`
      expect(a.state.rows.map((r: { phase: string; attempts: number }) => [r.phase, r.attempts])).toEqual(
        Array(5).fill(['waiting', 0]),
      );
      expect(a.state.attemptsSpent).toBe(0);

      const b = await run(list, fine, { retries: 0, concurrency: 1 }, a.clock);
      expect(b.outcome).toEqual({ status: 'finished' });
      list.forEach((n, i) => expect(b.results[i + 1]).toMatch(completed(n, i + 2)));
    },
  );

  it('five passing failures in a row (429, the service unreachable): stop; none counted', async () => {
    const a = await run(numbers(9), () => new PlaceError('transient', 'RATE_LIMITED: slow down'), { concurrency: 1 });
    expect(a.outcome).toEqual({
      status: 'failed',
      message: '5 calls in a row could not be placed; the last: RATE_LIMITED: slow down',
    });
    expect(a.state.rows.map((r: { attempts: number }) => r.attempts)).toEqual([0, 0, 0, 0, 0]);
    expect(a.results).toEqual([HEADER]);
  });
});

describe("a refusal among calls placed is the row's", () => {
  it('counted, tried again after the delay, failed when its tries are spent', async () => {
    const list = numbers(4);
    const refusal = 'SERVICE_ERROR: the service refused the call: number barred (code 31)';
    const { outcome, results, dialer } = await run(
      list,
      (n) => (n === list[1] ? new PlaceError('refused', refusal) : { afterMs: 1000 }),
      { retries: 1, retryDelayMs: 60_000, concurrency: 1 },
    );
    expect(outcome).toEqual({ status: 'finished' });
    expect(dialer.placed.map((p) => p.number)).toEqual([list[0], list[2], list[3]]);
    expect(results).toHaveLength(5);
    expect(results[2]).toBe(`${list[1]},failed,,,,2,,3,${refusal}`);
    for (const i of [0, 2, 3]) expect(results[i + 1]).toMatch(completed(list[i]!, i + 2));
  });

  it('the last row refused on its last attempt: failed, counted once', async () => {
    const list = numbers(2);
    const { outcome, results } = await run(
      list,
      (n) => (n === list[1] ? new PlaceError('refused', 'SERVICE_ERROR: barred (code 31)') : { afterMs: 1000 }),
      { retries: 0 },
    );
    expect(outcome).toEqual({ status: 'finished' });
    expect(results[2]).toBe(`${list[1]},failed,,,,1,,3,SERVICE_ERROR: barred (code 31)`);
  });
});

describe('placements in flight at a stop are waited for', () => {
  it(
    'a server that takes connections and never answers: the rows already being placed are unknown (their ' +
      'requests were sent), no row is started once placements fail, and the next run calls the others',
    async () => {
      const list = numbers(12);
      const lost =
        'cannot reach callscript at http://127.0.0.1:3598 (no answer within 20 s): is callscript serve running ' +
        'there? (--server, CALLSCRIPT_SERVER)';
      const a = await run(list, () => ({ placeMs: 20_000, error: new PlaceError('unknown', lost) }), {
        rate: 1,
        concurrency: 5,
        retries: 2,
      });
      expect(a.outcome).toEqual({
        status: 'failed',
        message: `5 calls in a row could not be placed; the last: ${lost}`,
      });
      // the five placed before the first answer (t = 0..4 s), none after
      expect([
        ...new Set(
          a.events.filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message.split(' ')[2]),
        ),
      ]).toEqual(list.slice(0, 5).map((n) => `${n}:`));
      expect(a.state).toMatchObject({ next: 5, rows: [], attemptsSpent: 5 });
      expect(a.results.slice(1)).toEqual(
        list
          .slice(0, 5)
          .map(
            (n, i) => `${n},unknown,,,,1,,${i + 2},"${lost}: the call may have been placed, so it is not tried again"`,
          ),
      );

      const b = await run(list, fine, { rate: 1, concurrency: 5 }, a.clock);
      expect(b.outcome).toEqual({ status: 'finished' });
      expect(b.dialer.placed.map((p) => p.number)).toEqual(list.slice(5));
      list.slice(5).forEach((n, i) => expect(b.results[i + 6]).toMatch(completed(n, i + 7)));
    },
  );

  it(
    'a stop (SIGINT) waits for the placements in flight past stopWaitMs: those placed are left to be followed, ' +
      'none is left `placing`',
    async () => {
      const list = numbers(6);
      const stop = new AbortController();
      const a = await run(list, (n) => ({ placeMs: n === list[0] ? 10 : 15_000, afterMs: 60_000 }), {
        rate: 1000,
        concurrency: 3,
        stopWaitMs: 1000,
        stop: stop.signal,
        onEvent: (e) => e.type === 'placed' && stop.abort(),
      });
      expect(a.outcome).toEqual({ status: 'stopped' });
      expect(
        a.state.rows.map((r: { index: number; phase: string; attempts: number }) => [r.index, r.phase, r.attempts]),
      ).toEqual([
        [0, 'calling', 1],
        [1, 'calling', 1],
        [2, 'calling', 1],
      ]);
    },
  );

  it(
    'halted (a second SIGINT) while placing: a request that never left is not counted, and the next run calls ' +
      'that row',
    async () => {
      const list = numbers(4);
      const stop = new AbortController();
      const halt = new AbortController();
      const clock = new FakeClock();
      const a = await run(
        list,
        (n) => (n === list[2] ? { placeMs: 1e9, unsent: true } : { afterMs: 100 }),
        {
          rate: 1,
          concurrency: 2,
          stop: stop.signal,
          halt: halt.signal,
          onEvent: (e) => e.type === 'placed' && e.line === 5 && (stop.abort(), halt.abort()),
        },
        clock,
      );
      expect(
        a.state.rows.map((r: { index: number; phase: string; attempts: number }) => [r.index, r.phase, r.attempts]),
      ).toEqual([
        [2, 'waiting', 0], // aborted before its request left
        [3, 'calling', 1], // placed: followed again by the next run
      ]);
      const b = await run(list, () => ({ afterMs: 100 }), { rate: 1, concurrency: 2 }, clock, a.dialer.placed);
      expect(b.outcome).toEqual({ status: 'finished' });
      expect(b.dialer.placed.map((p) => [p.number, p.attempt])).toEqual([[list[2], 1]]);
      expect(b.results[3]).toMatch(new RegExp(`^\\${list[2]},completed,HANGUP,bye,100,1,\\d+,4,$`));
    },
  );
});

describe('the server lost while following calls', () => {
  it('stops the campaign; the calls stay to be followed by the next run, not written unknown', async () => {
    const list = numbers(4);
    const down =
      'could not follow call id1: cannot reach callscript at http://127.0.0.1:3611 (ECONNREFUSED): is ' +
      'callscript serve running there? (--server, CALLSCRIPT_SERVER)';
    const a = await run(
      list,
      (n) => (n === list[0] ? { afterMs: 5000, followError: new FollowInterrupted(down) } : { afterMs: 60_000 }),
      { rate: 1000, concurrency: 2, stopWaitMs: 1000 },
    );
    expect(a.outcome).toEqual({
      status: 'failed',
      message: `${down}; the calls in progress are followed again by the next run`,
    });
    expect(a.results).toEqual([HEADER]);
    expect(a.state.rows.map((r: { index: number; phase: string; id: string }) => [r.index, r.phase, r.id])).toEqual([
      [0, 'calling', 'id1'],
      [1, 'calling', 'id2'],
    ]);

    const b = await run(list, fine, { rate: 1000, concurrency: 2 }, a.clock, a.dialer.placed);
    expect(b.outcome).toEqual({ status: 'finished' });
    expect(b.dialer.followed.slice(0, 2).sort()).toEqual(['id1', 'id2']);
    expect(b.dialer.placed.map((p) => p.number)).toEqual(list.slice(2));
    expect(b.results.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual(
      list.map((n) => `${n},completed`),
    );
  });
});
