/**
 * Metrics across the workers of `callscript serve --workers N` (node:cluster IPC): a scrape
 * of /metrics on any worker answers the sum of all of them.
 *
 * The worker that is scraped asks the primary (`gather`); the primary asks every worker
 * serving, the asking one included, for its metrics as JSON (prom-client's
 * getMetricsAsJSON), and hands the parts back; the worker sums them (prom-client's
 * AggregatorRegistry.aggregate) and answers. The primary only relays: it never loads
 * prom-client. Nothing waits forever: the primary answers with the parts it has after
 * PART_WAIT_MS (a worker that died meanwhile is not waited for at all, one that hangs is
 * left out), and a worker that hears nothing from the primary within GATHER_WAIT_MS answers
 * with its own metrics alone (the answer's `callscript_processes` says how many processes
 * it sums).
 *
 * Messages (all carry `callscript`, so they never mix with other IPC):
 *   worker → primary  { callscript: 'metrics-gather', id, only? }
 *   primary → worker  { callscript: 'metrics-collect', id: rid, only? }
 *   worker → primary  { callscript: 'metrics-part', id: rid, metrics }
 *   primary → worker  { callscript: 'metrics-gathered', id, parts, expected }
 */
import type { Worker } from 'node:cluster';

/** One process's metrics: what prom-client's Registry.getMetricsAsJSON gives (a plain-JSON array). */
export type MetricsPart = unknown[];

export interface Gathered {
  /** Every process's part that came in time (this one's included, when the primary answered). */
  parts: MetricsPart[];
  /** The processes asked (the workers serving). */
  expected: number;
}

/** A worker's link to the others, given to the plugin (`metrics.cluster`) by `callscript serve`. */
export interface MetricsCluster {
  /** Every serving worker's metrics, `only` the metrics named (all when absent). */
  gather(only?: readonly string[]): Promise<Gathered | undefined>;
  /** Answers the primary's collect requests with `collect`; returns the function that stops it. */
  answer(collect: (only?: readonly string[]) => Promise<MetricsPart>): () => void;
}

/** How long the primary waits for the workers' parts; how long a worker waits for the primary. */
export const PART_WAIT_MS = 1500;
export const GATHER_WAIT_MS = 2000;

interface Msg {
  callscript: string;
  id: number;
  only?: string[];
  metrics?: MetricsPart;
  parts?: MetricsPart[];
  expected?: number;
}

const isMsg = (m: unknown, kind: string): m is Msg =>
  typeof m === 'object' && m !== null && (m as Msg).callscript === kind && typeof (m as Msg).id === 'number';

/** The link of this worker process (over process.send); undefined when this process has no IPC channel. */
export function workerMetricsLink(proc: NodeJS.Process = process, waitMs = GATHER_WAIT_MS): MetricsCluster | undefined {
  if (!proc.send) return undefined;
  let next = 0;
  const waiting = new Map<number, (g: Gathered | undefined) => void>();
  let listening = 0;
  const onAnswer = (m: unknown) => {
    if (!isMsg(m, 'metrics-gathered')) return;
    waiting.get(m.id)?.({ parts: m.parts ?? [], expected: m.expected ?? 0 });
  };
  return {
    gather(only) {
      const id = next++;
      return new Promise((resolve) => {
        if (listening++ === 0) proc.on('message', onAnswer);
        const done = (g: Gathered | undefined) => {
          if (!waiting.delete(id)) return;
          clearTimeout(timer);
          if (--listening === 0) proc.off('message', onAnswer);
          resolve(g);
        };
        const timer = setTimeout(() => done(undefined), waitMs);
        waiting.set(id, done);
        proc.send!(
          { callscript: 'metrics-gather', id, ...(only ? { only: [...only] } : {}) },
          undefined,
          {},
          (err) => err && done(undefined),
        );
      });
    },
    answer(collect) {
      const onCollect = (m: unknown) => {
        if (!isMsg(m, 'metrics-collect')) return;
        void collect(m.only).then(
          (metrics) => proc.connected && proc.send!({ callscript: 'metrics-part', id: m.id, metrics }),
          () => proc.connected && proc.send!({ callscript: 'metrics-part', id: m.id, metrics: [] }),
        );
      };
      proc.on('message', onCollect);
      return () => void proc.off('message', onCollect);
    },
  };
}

/** What the primary needs of node:cluster: its message and exit events. */
export interface ClusterEvents {
  on(event: 'message', fn: (w: Worker, m: unknown) => void): unknown;
  on(event: 'exit', fn: (w: Worker) => void): unknown;
  off(event: 'message', fn: (w: Worker, m: unknown) => void): unknown;
  off(event: 'exit', fn: (w: Worker) => void): unknown;
}

/**
 * The primary's side: relays a worker's gather to every worker `serving()` lists and hands
 * back the parts. Returns the function that stops relaying.
 */
export function relayMetrics(
  events: ClusterEvents,
  serving: () => Iterable<Worker>,
  waitMs = PART_WAIT_MS,
): () => void {
  let next = 0;
  const pending = new Map<number, { asked: Set<number>; expected: number; parts: MetricsPart[]; finish: () => void }>();
  const onMessage = (from: Worker, m: unknown) => {
    if (isMsg(m, 'metrics-part')) {
      const p = pending.get(m.id);
      if (!p || !p.asked.delete(from.id)) return;
      p.parts.push(Array.isArray(m.metrics) ? m.metrics : []);
      if (p.asked.size === 0) p.finish();
      return;
    }
    if (!isMsg(m, 'metrics-gather')) return;
    const rid = next++;
    const asked = new Set<number>();
    const p = {
      asked,
      expected: 0,
      parts: [] as MetricsPart[],
      finish: () => {
        if (!pending.delete(rid)) return;
        clearTimeout(timer);
        if (from.isConnected())
          from.send({ callscript: 'metrics-gathered', id: m.id, parts: p.parts, expected: p.expected });
      },
    };
    pending.set(rid, p);
    const timer = setTimeout(p.finish, waitMs);
    for (const w of serving()) {
      if (!w.isConnected()) continue;
      asked.add(w.id);
      w.send({ callscript: 'metrics-collect', id: rid, ...(m.only ? { only: m.only } : {}) });
    }
    p.expected = asked.size;
    if (p.expected === 0) p.finish();
  };
  // a worker that dies is not waited for
  const onExit = (w: Worker) => {
    for (const p of pending.values()) if (p.asked.delete(w.id) && p.asked.size === 0) p.finish();
  };
  events.on('message', onMessage);
  events.on('exit', onExit);
  return () => {
    events.off('message', onMessage);
    events.off('exit', onExit);
    for (const p of [...pending.values()]) p.finish();
  };
}
