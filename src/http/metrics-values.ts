/**
 * The pieces the metrics modules (src/http/metrics.ts, src/http/metrics-queues.ts) share: histograms kept as plain
 * numbers, and metric objects whose `get()` computes their values when scraped, in the shape prom-client's own
 * metrics give (so its text format and its cluster aggregation apply as they are).
 */
import type { Metric, Registry } from 'prom-client';

/** Buckets of the request and effect durations, in seconds: they fit a 4 s deadline. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 4, 5] as const;

export type Labels = Record<string, string | number>;
export type Value = { labels: Labels; value: number; metricName?: string };

export class Hist {
  /** Observations per bucket (not cumulative), then the ones over the last bound. */
  readonly counts: number[];
  sum = 0;
  constructor(readonly buckets: readonly number[] = DURATION_BUCKETS) {
    this.counts = new Array<number>(buckets.length + 1).fill(0);
  }
  observe(seconds: number): void {
    let i = 0;
    while (i < this.buckets.length && seconds > this.buckets[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
  }
}

/** Registers a metric whose values `values` computes when scraped, in the shape prom-client's own metrics give. */
export function view(
  r: Registry,
  name: string,
  help: string,
  type: 'counter' | 'gauge' | 'histogram',
  aggregator: 'sum' | 'max',
  values: () => Value[] | Promise<Value[]>,
): void {
  const get = async () => ({ name, help, type, aggregator, values: await values() });
  r.registerMetric({ name, help, type, aggregator, get, reset: () => {} } as unknown as Metric);
}

/** A histogram's values as prom-client gives them: cumulative buckets (le first), +Inf, _sum and _count. */
export function histValues(name: string, labels: Labels, h: Hist): Value[] {
  const out: Value[] = [];
  let acc = 0;
  h.buckets.forEach((le, i) => {
    acc += h.counts[i]!;
    out.push({ labels: { le, ...labels }, value: acc, metricName: `${name}_bucket` });
  });
  const count = acc + h.counts[h.buckets.length]!;
  out.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` });
  out.push({ labels, value: h.sum, metricName: `${name}_sum` });
  out.push({ labels, value: count, metricName: `${name}_count` });
  return out;
}
