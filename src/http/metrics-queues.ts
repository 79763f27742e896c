/**
 * The queues' metrics (docs/operations.md "Queues"): what the call store's queues hold, read from `view()` when
 * scraped (one read per scrape, shared by the series), and the time callers waited, observed by the engine's wiring
 * through `observeWait` (CallMetrics.observeQueueWait).
 *
 * Cardinality: at most MAX_QUEUE_LABELS queue names become label values per metric (the store's queues by name; the
 * waits in the order first observed); the others are summed under queue="other" (a real queue named "other" is
 * summed with them). Wait outcomes past MAX_WAIT_OUTCOMES distinct ones count as "other".
 *
 * A read that fails or takes longer than VIEW_TIMEOUT_MS leaves the store's series out of that scrape (the rest of
 * it is answered), counts in callscript_queue_view_failures_total and logs METRICS_QUEUES_UNAVAILABLE (at most once
 * per WARN_EVERY_MS).
 */
import type { Registry } from 'prom-client';
import type { QueueLines, QueueView } from '../store/queues.js';
import { Hist, histValues, view, type Value } from './metrics-values.js';
import { agentCounts, type AgentCounts } from './queues.js';

export const MAX_QUEUE_LABELS = 100;
export const OTHER_QUEUE = 'other';
const MAX_WAIT_OUTCOMES = 16;
/** Buckets of the waits, in seconds: from a few seconds to an hour. */
export const WAIT_BUCKETS = [1, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600] as const;
export const VIEW_TIMEOUT_MS = 1000;
const WARN_EVERY_MS = 60_000;

export interface QueueMetricsDeps {
  queues: QueueLines;
  /** The scrape's time (epoch ms): the store's `now`. */
  now: () => number;
  log?: { warn(obj: object, msg: string): void };
}

/** One queue's series (or the sum of those past the cap). */
interface Row {
  waiting: number;
  longestMs: number;
  agents: AgentCounts;
  answered: number;
  abandoned: number;
  timedOut: number;
}

const STATES: [keyof AgentCounts, string][] = [
  ['free', 'free'],
  ['busy', 'busy'],
  ['wrapUp', 'wrap_up'],
  ['paused', 'paused'],
];

/** The queues' rows by label: the first MAX_QUEUE_LABELS by name, the rest summed under OTHER_QUEUE. */
export function queueRows(views: readonly QueueView[], now: number): Map<string, Row> {
  const rows = new Map<string, Row>();
  const sorted = [...views].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  sorted.forEach((v, i) => {
    const label = i < MAX_QUEUE_LABELS ? v.name : OTHER_QUEUE;
    const oldest = v.line[0]?.since;
    const r: Row = {
      waiting: Math.max(v.waiting, v.line.length),
      longestMs: oldest !== undefined && Number.isFinite(oldest) ? Math.max(0, now - oldest) : 0,
      agents: agentCounts(v.agents),
      answered: v.answered,
      abandoned: v.abandoned,
      timedOut: v.timedOut,
    };
    const had = rows.get(label);
    if (!had) rows.set(label, r);
    else {
      had.waiting += r.waiting;
      had.longestMs = Math.max(had.longestMs, r.longestMs);
      for (const [k] of STATES) had.agents[k] += r.agents[k];
      had.answered += r.answered;
      had.abandoned += r.abandoned;
      had.timedOut += r.timedOut;
    }
  });
  return rows;
}

export class QueueMetrics {
  /** Waits observed: queue label → outcome → histogram. */
  private readonly waits = new Map<string, Map<string, Hist>>();
  private readonly outcomes = new Set<string>();
  private failures = 0;
  private lastWarn = -Infinity;
  /** The read of the scrape under way, shared by its series. */
  private pending: Promise<Map<string, Row> | undefined> | undefined;

  constructor(
    private readonly deps: QueueMetricsDeps,
    r: Registry,
  ) {
    const each = (fn: (queue: string, row: Row) => Value[]) => async () =>
      [...((await this.snapshot()) ?? [])].flatMap(([queue, row]) => fn(queue, row));
    view(
      r,
      'callscript_queue_waiting',
      'Callers waiting in each queue of the call store (ringing an agent included), read when scraped; with a ' +
        'shared store every instance reports the same.',
      'gauge',
      'max',
      each((queue, row) => [{ labels: { queue }, value: row.waiting }]),
    );
    view(
      r,
      'callscript_queue_longest_wait_seconds',
      "Time since the arrival of each queue's oldest caller (0 when nobody waits), read when scraped.",
      'gauge',
      'max',
      each((queue, row) => [{ labels: { queue }, value: row.longestMs / 1000 }]),
    );
    view(
      r,
      'callscript_queue_agents',
      "Agents each queue knows, by state (free, busy, wrap_up; paused: paused in the queue, whatever it's doing).",
      'gauge',
      'max',
      each((queue, row) => STATES.map(([k, state]) => ({ labels: { queue, state }, value: row.agents[k] }))),
    );
    const count = (name: string, what: string, k: 'answered' | 'abandoned' | 'timedOut') =>
      view(
        r,
        name,
        `Callers ${what}, per queue, as the call store counts them (since it started, memory; ever, Redis).`,
        'counter',
        'max',
        each((queue, row) => [{ labels: { queue }, value: row[k] }]),
      );
    count('callscript_queue_answered_total', 'served by an agent (their bridged call ended)', 'answered');
    count('callscript_queue_abandoned_total', 'who hung up while waiting', 'abandoned');
    count('callscript_queue_timed_out_total', 'who waited as long as their queue step allows (timed out)', 'timedOut');
    view(
      r,
      'callscript_queue_wait_seconds',
      'Time callers waited in a queue, by queue and outcome (how the wait ended), observed by this process.',
      'histogram',
      'sum',
      () =>
        [...this.waits].flatMap(([queue, byOutcome]) =>
          [...byOutcome].flatMap(([outcome, h]) => histValues('callscript_queue_wait_seconds', { queue, outcome }, h)),
        ),
    );
    view(
      r,
      'callscript_queue_view_failures_total',
      "Scrapes whose read of the store's queues failed or timed out: their callscript_queue_* store series were " +
        'left out (METRICS_QUEUES_UNAVAILABLE in the log).',
      'counter',
      'sum',
      // after this scrape's read: counted in the scrape it failed
      async () => (await this.snapshot(), [{ labels: {}, value: this.failures }]),
    );
  }

  /** A caller's wait ended (`outcome`: how), after `seconds`. */
  observeWait(queue: string, outcome: string, seconds: number): void {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return;
    const label = this.waits.has(queue) || this.waits.size < MAX_QUEUE_LABELS ? queue : OTHER_QUEUE;
    if (!this.outcomes.has(outcome) && this.outcomes.size < MAX_WAIT_OUTCOMES) this.outcomes.add(outcome);
    const o = this.outcomes.has(outcome) ? outcome : OTHER_QUEUE;
    let byOutcome = this.waits.get(label);
    if (!byOutcome) this.waits.set(label, (byOutcome = new Map()));
    let h = byOutcome.get(o);
    if (!h) byOutcome.set(o, (h = new Hist(WAIT_BUCKETS)));
    h.observe(Math.max(0, seconds));
  }

  /** The rows of this scrape: one read of the store, shared by every series asking while it runs. */
  private snapshot(): Promise<Map<string, Row> | undefined> {
    if (!this.pending)
      this.pending = this.read().finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  private async read(): Promise<Map<string, Row> | undefined> {
    const at = this.deps.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${VIEW_TIMEOUT_MS} ms`)), VIEW_TIMEOUT_MS);
      timer.unref();
    });
    try {
      const views = await Promise.race([Promise.resolve().then(() => this.deps.queues.view(at)), late]);
      return queueRows(views, at);
    } catch (err) {
      this.failures++;
      if (at - this.lastWarn >= WARN_EVERY_MS) {
        this.lastWarn = at;
        const why = err instanceof Error ? err.message : String(err);
        this.deps.log?.warn(
          { code: 'METRICS_QUEUES_UNAVAILABLE', err: why },
          `metrics: the queues could not be read from the call store (${why}): their series are left out`,
        );
      }
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
