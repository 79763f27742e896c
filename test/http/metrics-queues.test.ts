/**
 * The queues' metrics (src/http/metrics-queues.ts, docs/operations.md "Queues"): the exact series of a fake store's
 * view, one read per scrape at the scrape's time, the cap of 100 queue labels (the rest under queue="other"), the
 * waits observed by observeQueueWait, a view that fails or hangs (the scrape answered without the store's series,
 * counted and logged), the workers' sum, and the plugin wiring the store's queues in.
 */
import Fastify from 'fastify';
import { AggregatorRegistry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallMetrics } from '../../src/http/metrics.js';
import { callscript } from '../../src/http/plugin.js';
import type { QueueView } from '../../src/store/queues.js';
import { FakeQueues, QueuesStore, sampleViews, T } from './queues-fake.js';

afterEach(() => {
  vi.useRealTimers();
});

function metrics(fake: FakeQueues, now = () => T) {
  const warnings: [Record<string, unknown>, string][] = [];
  const m = new CallMetrics({
    liveCalls: () => [],
    flows: () => [],
    refusedEdits: () => 0,
    queues: fake,
    now,
    log: { warn: (o, msg) => warnings.push([o as Record<string, unknown>, msg]) },
  });
  return { m, warnings };
}

/** The samples (no HELP/TYPE) of the queue metrics. */
const samples = (text: string, prefix = 'callscript_queue_') => text.split('\n').filter((l) => l.startsWith(prefix));

const STORE_SERIES = [
  'callscript_queue_waiting{queue="sales"} 3',
  'callscript_queue_waiting{queue="support"} 0',
  'callscript_queue_longest_wait_seconds{queue="sales"} 83',
  'callscript_queue_longest_wait_seconds{queue="support"} 0',
  'callscript_queue_agents{queue="sales",state="free"} 1',
  'callscript_queue_agents{queue="sales",state="busy"} 1',
  'callscript_queue_agents{queue="sales",state="wrap_up"} 1',
  'callscript_queue_agents{queue="sales",state="paused"} 1',
  'callscript_queue_agents{queue="support",state="free"} 1',
  'callscript_queue_agents{queue="support",state="busy"} 0',
  'callscript_queue_agents{queue="support",state="wrap_up"} 0',
  'callscript_queue_agents{queue="support",state="paused"} 0',
  'callscript_queue_answered_total{queue="sales"} 12',
  'callscript_queue_answered_total{queue="support"} 0',
  'callscript_queue_abandoned_total{queue="sales"} 3',
  'callscript_queue_abandoned_total{queue="support"} 0',
  'callscript_queue_timed_out_total{queue="sales"} 1',
  'callscript_queue_timed_out_total{queue="support"} 0',
];

describe('the queues in /metrics', () => {
  it('a scrape: the series of the view, exactly, read once at the scrape time', async () => {
    const fake = new FakeQueues(sampleViews());
    const { m } = metrics(fake);
    m.observeQueueWait('sales', 'ring', 12.5);
    m.observeQueueWait('sales', 'ring', 0.4);
    const text = await m.text();
    expect(fake.calls).toEqual([['view', T]]);
    const wait = (le: string, n: number) =>
      `callscript_queue_wait_seconds_bucket{le="${le}",queue="sales",outcome="ring"} ${n}`;
    expect(samples(text)).toEqual([
      ...STORE_SERIES,
      wait('1', 1),
      wait('5', 1),
      wait('10', 1),
      wait('20', 2),
      wait('30', 2),
      wait('60', 2),
      wait('120', 2),
      wait('300', 2),
      wait('600', 2),
      wait('1200', 2),
      wait('1800', 2),
      wait('3600', 2),
      wait('+Inf', 2),
      'callscript_queue_wait_seconds_sum{queue="sales",outcome="ring"} 12.9',
      'callscript_queue_wait_seconds_count{queue="sales",outcome="ring"} 2',
      'callscript_queue_view_failures_total 0',
    ]);
    expect(text).toContain('# TYPE callscript_queue_waiting gauge\n');
    expect(text).toContain('# TYPE callscript_queue_answered_total counter\n');
    expect(text).toContain('# TYPE callscript_queue_wait_seconds histogram\n');
  });

  it('labels 100 queues at most, by name: the others are summed under queue="other"', async () => {
    const views: QueueView[] = Array.from({ length: 104 }, (_, i) => ({
      name: `q${String(103 - i).padStart(3, '0')}`, // given out of order: labelled by name
      line: [{ callid: String(i + 1), since: T - (i + 1) * 1000, seen: T }],
      waiting: 1,
      agents: [{ number: '+33612345678', state: 'free' as const, paused: i % 2 === 0 }],
      answered: 1,
      abandoned: 0,
      timedOut: 2,
    }));
    const { m } = metrics(new FakeQueues(views));
    for (let i = 0; i < 102; i++) m.observeQueueWait(`q${i}`, 'ring', 1);
    for (let i = 0; i < 17; i++) m.observeQueueWait('q0', `outcome${i}`, 1);
    const text = await m.text();
    const waiting = samples(text, 'callscript_queue_waiting{');
    expect(waiting).toHaveLength(101);
    expect(waiting[0]).toBe('callscript_queue_waiting{queue="q000"} 1');
    expect(waiting[99]).toBe('callscript_queue_waiting{queue="q099"} 1');
    expect(waiting[100]).toBe('callscript_queue_waiting{queue="other"} 4');
    // q100..q103: their oldest callers waited 4 s down to 1 s (the longest of them), half their agents paused
    expect(samples(text, 'callscript_queue_longest_wait_seconds{queue="other"}')).toEqual([
      'callscript_queue_longest_wait_seconds{queue="other"} 4',
    ]);
    expect(samples(text, 'callscript_queue_agents{queue="other"')).toEqual([
      'callscript_queue_agents{queue="other",state="free"} 2',
      'callscript_queue_agents{queue="other",state="busy"} 0',
      'callscript_queue_agents{queue="other",state="wrap_up"} 0',
      'callscript_queue_agents{queue="other",state="paused"} 2',
    ]);
    expect(samples(text, 'callscript_queue_timed_out_total{queue="other"}')).toEqual([
      'callscript_queue_timed_out_total{queue="other"} 8',
    ]);
    // the waits: the first 100 queues observed, then "other"; 16 outcomes, then "other"
    const counts = samples(text, 'callscript_queue_wait_seconds_count');
    expect(counts).toHaveLength(100 + 1 + 15 + 1);
    expect(counts).toContain('callscript_queue_wait_seconds_count{queue="other",outcome="ring"} 2');
    expect(counts).toContain('callscript_queue_wait_seconds_count{queue="q0",outcome="other"} 2');
    expect(counts).toContain('callscript_queue_wait_seconds_count{queue="q0",outcome="outcome14"} 1');
    expect(counts).not.toContain('callscript_queue_wait_seconds_count{queue="q0",outcome="outcome15"} 1');
  });

  it('takes no wait that is not a number of seconds; a negative one counts as 0', async () => {
    const { m } = metrics(new FakeQueues());
    m.observeQueueWait('sales', 'ring', Number.NaN);
    m.observeQueueWait('sales', 'ring', Number.POSITIVE_INFINITY);
    m.observeQueueWait('sales', 'ring', -3);
    const text = await m.text();
    expect(samples(text, 'callscript_queue_wait_seconds_sum')).toEqual([
      'callscript_queue_wait_seconds_sum{queue="sales",outcome="ring"} 0',
    ]);
    expect(samples(text, 'callscript_queue_wait_seconds_count')).toEqual([
      'callscript_queue_wait_seconds_count{queue="sales",outcome="ring"} 1',
    ]);
  });

  it('a view that fails leaves the store series out, answers the rest, counts and logs (once a minute)', async () => {
    const fake = new FakeQueues(sampleViews());
    fake.fail = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'STORE_UNAVAILABLE' });
    let now = T;
    const { m, warnings } = metrics(fake, () => now);
    const text = await m.text();
    expect(samples(text)).toEqual(['callscript_queue_view_failures_total 1']);
    expect(text).toContain('# TYPE callscript_queue_waiting gauge\n');
    expect(text).toContain('\ncallscript_processes 1\n');
    expect(warnings).toEqual([
      [
        { code: 'METRICS_QUEUES_UNAVAILABLE', err: 'connect ECONNREFUSED 127.0.0.1:6379' },
        'metrics: the queues could not be read from the call store (connect ECONNREFUSED 127.0.0.1:6379): their ' +
          'series are left out',
      ],
    ]);
    now += 59_999;
    expect(samples(await m.text())).toEqual(['callscript_queue_view_failures_total 2']);
    expect(warnings).toHaveLength(1);
    now += 1;
    await m.text();
    expect(warnings).toHaveLength(2);
    // the store back: the series are back
    fake.fail = undefined;
    expect(samples(await m.text(), 'callscript_queue_waiting')).toEqual(STORE_SERIES.slice(0, 2));
  });

  it('a view that does not answer within 1 s is given up: the scrape is answered without it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const fake = new FakeQueues(sampleViews());
    fake.hang = new Promise<never>(() => {});
    const { m, warnings } = metrics(fake);
    const scrape = m.text();
    await vi.advanceTimersByTimeAsync(1000);
    expect(samples(await scrape)).toEqual(['callscript_queue_view_failures_total 1']);
    expect(warnings.map(([o]) => o)).toEqual([{ code: 'METRICS_QUEUES_UNAVAILABLE', err: 'no answer within 1000 ms' }]);
  });

  it("with workers, the store's series are the most a worker read (not their sum); waits are summed", async () => {
    const a = metrics(new FakeQueues(sampleViews())).m;
    const b = metrics(new FakeQueues(sampleViews())).m;
    a.observeQueueWait('sales', 'ring', 2);
    b.observeQueueWait('sales', 'ring', 3);
    const text = await AggregatorRegistry.aggregate([await a.part(), await b.part()] as never).metrics();
    expect(samples(text, 'callscript_queue_waiting')).toEqual(STORE_SERIES.slice(0, 2));
    expect(samples(text, 'callscript_queue_answered_total')).toEqual(STORE_SERIES.slice(12, 14));
    expect(samples(text, 'callscript_queue_wait_seconds_sum')).toEqual([
      'callscript_queue_wait_seconds_sum{queue="sales",outcome="ring"} 5',
    ]);
  });

  it("the plugin reads the store's queues when scraped; a store without queues has no queue series", async () => {
    const fake = new FakeQueues(sampleViews());
    for (const [store, expected] of [
      [new QueuesStore(fake), STORE_SERIES.slice(0, 2)],
      [new QueuesStore(undefined), []],
    ] as const) {
      const app = Fastify({ logger: false });
      await app.register(callscript, { flowsDir: new URL('../fixtures/history', import.meta.url).pathname, store });
      const r = await app.inject({ method: 'GET', url: '/metrics' });
      expect(r.statusCode).toBe(200);
      expect(samples(r.body, 'callscript_queue_waiting')).toEqual(expected);
      if (expected.length === 0) expect(r.body).not.toContain('callscript_queue_');
      await app.close();
    }
    expect(fake.calls).toHaveLength(1);
  });
});
