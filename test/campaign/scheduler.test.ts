/**
 * The campaign's scheduler with a fake dialer and a fake clock: rate, concurrency, retries,
 * stop and resume, checked on the order and counts of what happened, never on real time.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/campaign/journal.js';
import { runCampaign, type SchedulerOptions } from '../../src/campaign/scheduler.js';
import { PlaceError, type CampaignEvent } from '../../src/campaign/types.js';
import { FakeClock, FakeDialer, numbers, rowsOf, type Behaviour } from './fakes.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'campaign-sched-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function journal(rows: number): Promise<Journal> {
  const o = await Journal.open({
    statePath: join(dir, 'state.json'),
    resultsPath: join(dir, 'results.csv'),
    app: 'APP1',
    csv: { path: '/x/numbers.csv', bytes: 1, sha256: 'ab', rows },
  });
  if (!o.ok) throw new Error(o.message);
  return o.journal;
}

async function run(
  list: string[],
  behaviour: Behaviour,
  opts: Partial<SchedulerOptions> = {},
  clock = new FakeClock(),
  earlier: FakeDialer['placed'] = [],
) {
  const j = await journal(list.length);
  const dialer = new FakeDialer(clock, behaviour, earlier);
  const events: CampaignEvent[] = [];
  const outcome = await clock.drive(
    runCampaign({
      dialer,
      journal: j,
      rows: rowsOf(list, (i) => j.known(i)),
      clock,
      rate: 1000,
      concurrency: 100,
      retries: 2,
      retryDelayMs: 300_000,
      stopWaitMs: 10_000,
      onEvent: (e) => events.push(e),
      ...opts,
    }),
  );
  await j.close();
  const results = await readFile(join(dir, 'results.csv'), 'utf8');
  const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'));
  return { outcome, dialer, events, results, state, clock };
}

describe('rate', () => {
  for (const rate of [2, 0.5, 7]) {
    it(`places no more than 1 + rate × t calls by time t (rate ${rate})`, async () => {
      const { outcome, dialer, results } = await run(numbers(25), () => ({ afterMs: 50 }), { rate });
      expect(outcome.status).toBe('finished');
      expect(dialer.placed).toHaveLength(25);
      const t0 = dialer.placed[0]!.at;
      dialer.placed.forEach((p, k) => expect(p.at - t0).toBeGreaterThanOrEqual(Math.floor((k * 1000) / rate)));
      expect(results.trim().split('\n')).toHaveLength(26);
    });
  }

  it('places rows in the CSV order', async () => {
    const list = numbers(10);
    const { dialer } = await run(list, () => ({}), { rate: 3 });
    expect(dialer.placed.map((p) => p.number)).toEqual(list);
    expect(dialer.placed.map((p) => p.vars)).toEqual(list.map((_, i) => ({ n: String(i) })));
  });
});

describe('concurrency', () => {
  for (const concurrency of [1, 3, 8]) {
    it(`never has more than ${concurrency} calls in progress, and reaches it`, async () => {
      const { dialer, outcome } = await run(
        numbers(30),
        (n) => ({ afterMs: 10_000 + (Number(n.slice(-2)) % 7) * 1000 }),
        { concurrency, rate: 1000 },
      );
      expect(outcome.status).toBe('finished');
      expect(dialer.placed).toHaveLength(30);
      expect(dialer.maxInFlight).toBe(concurrency);
    });
  }
});

describe('retries', () => {
  const [busy, late, silent, fine, refused] = numbers(5);
  const behaviour: Behaviour = (n, attempt) => {
    if (n === busy)
      return { afterMs: 20, view: { outcome: 'abandoned', callStatus: 'BUSY', lastStep: null, durationMs: 20 } };
    if (n === late)
      return attempt === 1
        ? {
            afterMs: 30_000,
            view: { outcome: 'abandoned', callStatus: 'NOANSWER', lastStep: null, durationMs: 30_000 },
          }
        : { afterMs: 5000 };
    if (n === silent) return { afterMs: 120_000, view: { status: 'placed', callid: null } };
    if (n === refused)
      return attempt === 1
        ? new PlaceError('transient', 'HTTP 502 SERVICE_ERROR: the service did not answer')
        : { afterMs: 2000 };
    return { afterMs: 4000 };
  };

  it('tries busy, unanswered and never connected numbers again after the delay, up to --retries', async () => {
    const { dialer, results, outcome, state } = await run([busy!, late!, silent!, fine!, refused!], behaviour, {
      retries: 2,
      retryDelayMs: 300_000,
    });
    expect(outcome.status).toBe('finished');
    expect(state.finished).toBe(true);
    const times = (n: string) => dialer.placed.filter((p) => p.number === n).map((p) => p.at);
    expect(times(busy!)).toHaveLength(3);
    expect(times(late!)).toHaveLength(2);
    expect(times(silent!)).toHaveLength(3);
    expect(times(fine!)).toHaveLength(1);
    // placed once: the first try failed before placing, not counted as an attempt
    expect(times(refused!)).toHaveLength(1);
    // each try waits the delay after the previous one ended (the call's length, and the place's 10 ms)
    const gaps = (n: string, len: number) =>
      times(n)
        .slice(1)
        .map((t, i) => t - times(n)[i]! - len - 10);
    for (const g of gaps(busy!, 20)) expect(g).toBeGreaterThanOrEqual(300_000);
    for (const g of gaps(silent!, 120_000)) expect(g).toBeGreaterThanOrEqual(300_000);
    expect(results).toBe(
      [
        'number,outcome,call_status,last_step,duration_ms,attempts,callid,line,detail',
        `${busy},abandoned,BUSY,,20,3,1009,2,`,
        `${late},completed,HANGUP,bye,5000,2,1007,3,`,
        `${silent},not_connected,,,,3,,4,the service never connected the call`,
        `${fine},completed,HANGUP,bye,4000,1,1004,5,`,
        `${refused},completed,HANGUP,bye,2000,1,1005,6,`,
        '',
      ].join('\n'),
    );
  });

  it('--retries 0 calls each number once', async () => {
    const { dialer, results } = await run([busy!, silent!], behaviour, { retries: 0 });
    expect(dialer.placed.map((p) => p.number)).toEqual([busy, silent]);
    expect(results.split('\n').slice(1, 3)).toEqual([
      `${busy},abandoned,BUSY,,20,1,1001,2,`,
      `${silent},not_connected,,,,1,,3,the service never connected the call`,
    ]);
  });

  it('does not try again a call that was answered, whatever its outcome, nor one still live at --timeout', async () => {
    const { dialer, results } = await run(numbers(3), (n, _a) =>
      n.endsWith('0')
        ? { view: { outcome: 'error', callStatus: 'HANGUP' } }
        : n.endsWith('1')
          ? { view: { status: 'live', step: 'menu' } }
          : { view: { outcome: 'abandoned', callStatus: 'HANGUP', lastStep: 'menu' } },
    );
    expect(dialer.placed).toHaveLength(3);
    expect(
      results
        .split('\n')
        .slice(1, 4)
        .map((l) => l.split(',').slice(1, 4).join(',')),
    ).toEqual(['error,HANGUP,bye', 'timeout,,menu', 'abandoned,HANGUP,menu']);
  });

  it('a row the server refuses fails at once, without retries; a fatal error stops the campaign', async () => {
    const list = numbers(4);
    const a = await run(list, (n) =>
      n === list[1] ? new PlaceError('row', 'BAD_ADMIN_BODY: vars.x is too long') : {},
    );
    expect(a.outcome.status).toBe('finished');
    expect(a.results.split('\n')[2]).toBe(`${list[1]},failed,,,,1,,3,BAD_ADMIN_BODY: vars.x is too long`);
    const b = await (async () => {
      await rm(join(dir, 'results.csv'));
      await rm(join(dir, 'state.json'));
      return run(
        list,
        (n) => (n === list[1] ? new PlaceError('fatal', 'the admin credentials were refused') : { afterMs: 100_000 }),
        { rate: 1, concurrency: 1 },
      );
    })();
    expect(b.outcome).toEqual({ status: 'failed', message: 'the admin credentials were refused' });
    expect(b.dialer.placed.map((p) => p.number)).toEqual([list[0]]);
    // the row refused waits to be tried again by the resumed campaign, as its first attempt
    expect(b.state.rows).toEqual([expect.objectContaining({ index: 1, phase: 'waiting', attempts: 0 })]);
  });

  it('a call that may have been placed (no answer in time) is never tried again: outcome unknown', async () => {
    const list = numbers(3);
    const { dialer, results, outcome } = await run(
      list,
      (n) => (n === list[1] ? new PlaceError('unknown', 'SERVICE_TIMEOUT: no answer from the service') : {}),
      { retries: 3 },
    );
    expect(outcome.status).toBe('finished');
    expect(dialer.attemptsOf(list[1]!)).toBe(0);
    expect(results.split('\n')[2]).toBe(
      `${list[1]},unknown,,,,1,,3,"SERVICE_TIMEOUT: no answer from the service: the call may have been ` +
        `placed, so it is not tried again"`,
    );
  });

  it('stops after 5 places in a row fail for a passing reason (the server down), the state saved', async () => {
    const { outcome, state, dialer } = await run(
      numbers(20),
      () => new PlaceError('transient', 'cannot reach callscript (ECONNREFUSED)'),
      { concurrency: 1, rate: 1 },
    );
    expect(outcome).toEqual({
      status: 'failed',
      message: '5 calls in a row could not be placed; the last: cannot reach callscript (ECONNREFUSED)',
    });
    expect(dialer.placed).toHaveLength(0);
    expect(state.rows.map((r: { phase: string }) => r.phase)).toEqual([
      'waiting',
      'waiting',
      'waiting',
      'waiting',
      'waiting',
    ]);
  });
});

describe('stop (SIGINT) and resume', () => {
  it('stop: no call placed after it, the calls in progress followed to their end, then stopped', async () => {
    const list = numbers(20);
    const stop = new AbortController();
    const clock = new FakeClock();
    let placedAtStop = -1;
    const j = await journal(list.length);
    const dialer = new FakeDialer(clock, () => ({ afterMs: 3000 }));
    const outcome = await clock.drive(
      runCampaign({
        dialer,
        journal: j,
        rows: rowsOf(list),
        clock,
        rate: 1,
        concurrency: 3,
        retries: 2,
        retryDelayMs: 1000,
        stopWaitMs: 60_000,
        stop: stop.signal,
        onEvent: (e) => {
          if (e.type === 'result' && e.result.line === 5 && !stop.signal.aborted) {
            stop.abort();
            placedAtStop = dialer.placed.length;
          }
        },
      }),
    );
    await j.close();
    expect(outcome.status).toBe('stopped');
    expect(dialer.placed.length).toBe(placedAtStop);
    expect(dialer.inFlight).toBe(0);
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'));
    expect(state.finished).toBe(false);
    expect(state.next).toBe(placedAtStop);
    expect(state.rows).toEqual([]);
  });

  it(
    'a stop whose calls outlast the wait leaves them to the next run, which follows them instead of calling ' + 'again',
    async () => {
      const list = numbers(12);
      const behaviour: Behaviour = (n) => ({ afterMs: n === list[2] || n === list[3] ? 600_000 : 5000 });
      const stop = new AbortController();
      const clock = new FakeClock();
      const j = await journal(list.length);
      const first = new FakeDialer(clock, behaviour);
      const outcome = await clock.drive(
        runCampaign({
          dialer: first,
          journal: j,
          rows: rowsOf(list, (i) => j.known(i)),
          clock,
          rate: 1,
          concurrency: 4,
          retries: 1,
          retryDelayMs: 1000,
          stopWaitMs: 10_000,
          stop: stop.signal,
          onEvent: (e) => e.type === 'placed' && e.line === 8 && stop.abort(),
        }),
      );
      await j.close();
      expect(outcome.status).toBe('stopped');
      const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'));
      const calling = state.rows
        .filter((r: { phase: string }) => r.phase === 'calling')
        .map((r: { number: string }) => r.number);
      expect(calling).toEqual([list[2], list[3]]);
      expect(state.rows.some((r: { vars?: unknown }) => 'vars' in r)).toBe(false);

      // the next run, same files
      const again = await Journal.open({
        statePath: join(dir, 'state.json'),
        resultsPath: join(dir, 'results.csv'),
        app: 'APP1',
        csv: { path: '/x/numbers.csv', bytes: 1, sha256: 'ab', rows: list.length },
      });
      if (!again.ok) throw new Error(again.message);
      expect(again.resumed).toBe(true);
      const second = new FakeDialer(clock, behaviour, first.placed);
      const j2 = again.journal;
      const o2 = await clock.drive(
        runCampaign({
          dialer: second,
          journal: j2,
          rows: rowsOf(list, (i) => j2.known(i)),
          clock,
          rate: 1,
          concurrency: 4,
          retries: 1,
          retryDelayMs: 1000,
          stopWaitMs: 10_000,
        }),
      );
      await j2.close();
      expect(o2.status).toBe('finished');
      const all = [...first.placed, ...second.placed].map((p) => p.number);
      expect(all.sort()).toEqual([...list].sort()); // each number once
      expect(second.followed).toEqual(expect.arrayContaining([first.placed[2]!.id, first.placed[3]!.id]));
      const results = (await readFile(join(dir, 'results.csv'), 'utf8')).trim().split('\n');
      expect(results.slice(1).map((l) => l.split(',')[0])).toEqual(list);
      expect(results.slice(1).every((l) => l.split(',')[1] === 'completed')).toBe(true);
    },
  );

  it('a run killed while placing a call (the halt): that row is not called again, its outcome unknown', async () => {
    const list = numbers(6);
    const stop = new AbortController();
    const halt = new AbortController();
    const clock = new FakeClock();
    const j = await journal(list.length);
    const behaviour: Behaviour = (n) => (n === list[3] ? 'hang' : { afterMs: 100 });
    const first = new FakeDialer(clock, behaviour);
    await clock.drive(
      runCampaign({
        dialer: first,
        journal: j,
        rows: rowsOf(list, (i) => j.known(i)),
        clock,
        rate: 1,
        concurrency: 2,
        retries: 1,
        retryDelayMs: 1000,
        stopWaitMs: 10_000,
        stop: stop.signal,
        halt: halt.signal,
        onEvent: (e) => e.type === 'result' && e.result.line === 6 && (stop.abort(), halt.abort()),
      }),
    );
    await j.close();
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'));
    expect(state.rows.find((r: { index: number }) => r.index === 3)).toMatchObject({ phase: 'placing', attempts: 1 });
    const again = await Journal.open({
      statePath: join(dir, 'state.json'),
      resultsPath: join(dir, 'results.csv'),
      app: 'APP1',
      csv: { path: '/x/numbers.csv', bytes: 1, sha256: 'ab', rows: list.length },
    });
    if (!again.ok) throw new Error(again.message);
    const second = new FakeDialer(clock, () => ({ afterMs: 100 }), first.placed);
    const j2 = again.journal;
    expect(
      await clock.drive(
        runCampaign({
          dialer: second,
          journal: j2,
          rows: rowsOf(list, (i) => j2.known(i)),
          clock,
          rate: 1,
          concurrency: 2,
          retries: 1,
          retryDelayMs: 1000,
          stopWaitMs: 10_000,
        }),
      ),
    ).toEqual({ status: 'finished' });
    await j2.close();
    expect(second.placed.map((p) => p.number)).not.toContain(list[3]);
    const lines = (await readFile(join(dir, 'results.csv'), 'utf8')).trim().split('\n');
    expect(lines[4]).toBe(
      `${list[3]},unknown,,,,1,,5,"the campaign stopped while placing this call: it may have been placed, so ` +
        `it is not called again"`,
    );
    expect(new Set([...first.placed, ...second.placed].map((p) => p.number)).size).toBe(
      first.placed.length + second.placed.length,
    );
  });

  it('a resumed row waiting for its retry is retried at its time, with its attempts counted', async () => {
    const list = numbers(3);
    const stop = new AbortController();
    const clock = new FakeClock();
    const j = await journal(list.length);
    const behaviour: Behaviour = (n, a) =>
      n === list[0] && a === 1 ? { afterMs: 50, view: { outcome: 'abandoned', callStatus: 'BUSY' } } : { afterMs: 50 };
    const first = new FakeDialer(clock, behaviour);
    await clock.drive(
      runCampaign({
        dialer: first,
        journal: j,
        rows: rowsOf(list, (i) => j.known(i)),
        clock,
        rate: 1,
        concurrency: 3,
        retries: 2,
        retryDelayMs: 60_000,
        stopWaitMs: 1000,
        stop: stop.signal,
        onEvent: (e) => e.type === 'retry' && stop.abort(),
      }),
    );
    await j.close();
    const again = await Journal.open({
      statePath: join(dir, 'state.json'),
      resultsPath: join(dir, 'results.csv'),
      app: 'APP1',
      csv: { path: '/x/numbers.csv', bytes: 1, sha256: 'ab', rows: list.length },
    });
    if (!again.ok) throw new Error(again.message);
    const j2 = again.journal;
    await j2.fillVars(rowsOf(list));
    const second = new FakeDialer(clock, behaviour, first.placed);
    await clock.drive(
      runCampaign({
        dialer: second,
        journal: j2,
        rows: rowsOf(list, (i) => j2.known(i)),
        clock,
        rate: 1,
        concurrency: 3,
        retries: 2,
        retryDelayMs: 60_000,
        stopWaitMs: 1000,
      }),
    );
    await j2.close();
    const retry = second.placed.find((p) => p.number === list[0])!;
    expect(retry.attempt).toBe(2);
    expect(retry.vars).toEqual({ n: '0' });
    expect(retry.at - first.placed[0]!.at).toBeGreaterThanOrEqual(60_000);
    const lines = (await readFile(join(dir, 'results.csv'), 'utf8')).trim().split('\n');
    expect(lines[1]!.split(',').slice(0, 6)).toEqual([list[0], 'completed', 'HANGUP', 'bye', '50', '2']);
  });
});

describe('bounded memory', () => {
  it('reads no further than the window past a row waiting for its retry', async () => {
    const list = numbers(40);
    let maxWindow = 0;
    const clock = new FakeClock();
    const j = await journal(list.length);
    const dialer = new FakeDialer(clock, (n, a) =>
      n === list[0] && a === 1 ? { afterMs: 10, view: { callStatus: 'BUSY', outcome: 'abandoned' } } : { afterMs: 10 },
    );
    const o = await clock.drive(
      runCampaign({
        dialer,
        journal: j,
        rows: rowsOf(list),
        clock,
        rate: 1000,
        concurrency: 5,
        retries: 1,
        retryDelayMs: 3_600_000,
        stopWaitMs: 1000,
        windowMax: 8,
        onEvent: () => (maxWindow = Math.max(maxWindow, j.window)),
      }),
    );
    await j.close();
    expect(o.status).toBe('finished');
    expect(maxWindow).toBeLessThanOrEqual(9);
    expect(dialer.placed).toHaveLength(41);
  });
});
