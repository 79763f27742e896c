/**
 * Prometheus metrics of the real-time route (prom-client's text format), from the step
 * observer's events (src/engine/observe.ts), the live calls and the reloads.
 *
 * The request path only counts: each StepEvent moves plain numbers in maps keyed by flow,
 * version, outcome, step and transition (a few map look-ups, no strings built). prom-client
 * reads them when scraped, through metric objects whose `get()` answers what prom-client's
 * own metrics answer; so its text format, its cluster aggregation and its default process
 * metrics are used as they are. (prom-client's Counter and Histogram hash their labels on
 * every update: about 0.5 and 1 µs, measured, for the 5 to 10 updates of a request.)
 *
 * Label values only ever come from loaded flows: `flow` and `version` are the flow version
 * that served (the engine's CompiledFlow), "" when none did (no route, an unknown flow in
 * the URL, a refused request): what a caller sends never becomes a label value. Effect
 * outcomes are error kinds; past MAX_EFFECT_OUTCOMES distinct ones they count as OTHER.
 * The queues' series (read from the store when scraped, and the waits) are src/http/metrics-queues.ts's.
 */
import type { FastifyInstance, onRequestHookHandler, RouteHandlerMethod } from 'fastify';
import { AggregatorRegistry, Registry, collectDefaultMetrics } from 'prom-client';
import type { EffectEvent, StepEvent, StepObserver } from '../engine/observe.js';
import type { ReloadSummary } from '../registry/reloader.js';
import type { MetricsCluster, MetricsPart } from './metrics-cluster.js';
import { DURATION_BUCKETS, Hist, histValues, view, type Value } from './metrics-values.js';
import { QueueMetrics } from './metrics-queues.js';
import type { QueueLines } from '../store/queues.js';

export { DURATION_BUCKETS };

/** Where the console reads the traffic of a flow's transitions: per version, per coverage key, the times taken. */
export interface TrafficSource {
  traffic(flow: string): Promise<Record<string, Record<string, number>>>;
}

const MAX_EFFECT_OUTCOMES = 64;
const TRANSITIONS = 'callscript_transitions_total';

export interface MetricsDeps {
  /** Live calls here per flow, [flow, count] (counted when scraped). */
  liveCalls(): Iterable<[string, number]>;
  /** The flows loaded (live_calls says 0 for each that has no call). */
  flows(): Iterable<string>;
  /** Files whose last edit was refused (checked when scraped). */
  refusedEdits(): number;
  /** With `callscript serve --workers N`: the other workers, whose metrics are summed with these. */
  cluster?: MetricsCluster;
  log?: { warn(obj: object, msg: string): void };
  /** The call store's queues (its `queues` capability): their series read when scraped (src/http/metrics-queues.ts). */
  queues?: QueueLines;
  /** The scrape's time, epoch ms (default Date.now). */
  now?: () => number;
}

interface VersionTally {
  requests: Map<string, number>;
  started: number;
  ended: Map<string, number>;
  transitions: Map<string, number>;
}

interface FlowTally {
  versions: Map<string, VersionTally>;
  steps: Map<string, Hist>;
  fallbacks: number;
}

const add = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);

/**
 * The metrics of one plugin instance: a step observer, the reload counts, and a Registry of
 * its own (never prom-client's global one: several apps may run in one process).
 */
export class CallMetrics implements StepObserver, TrafficSource {
  readonly transitions = true;
  readonly registry = new Registry();
  private readonly flows = new Map<string, FlowTally>();
  private readonly effects = new Map<string, { outcomes: Map<string, number>; hist: Hist }>();
  private readonly reloads = new Map<string, number>();
  private readonly queues: QueueMetrics | undefined;
  private storeErrors = 0;
  /** The webhook route's counts (src/http/webhooks.ts), once it is on. */
  private webhookCounts: (() => { type: string; result: string; count: number }[]) | undefined;

  constructor(private readonly deps: MetricsDeps) {
    // the process's collectors start with the first app (GC and event loop lag count from then)
    processRegistry();
    const r = this.registry;
    const each = <T>(fn: (flow: string, f: FlowTally) => T[]) => [...this.flows].flatMap(([flow, f]) => fn(flow, f));
    const perVersion = (fn: (flow: string, version: string, v: VersionTally) => Value[]) =>
      each((flow, f) => [...f.versions].flatMap(([version, v]) => fn(flow, version, v)));
    view(
      r,
      'callscript_requests_total',
      'Requests handled on the real-time route, by the flow version that served them ("" when none did) and ' +
        'outcome (ok, replay, stale, rejected, no_route, call_limit, store_unavailable, error).',
      'counter',
      'sum',
      () =>
        perVersion((flow, version, v) =>
          [...v.requests].map(([outcome, n]) => ({ labels: { flow, version, outcome }, value: n })),
        ),
    );
    view(r, 'callscript_calls_started_total', 'Calls started, by flow version.', 'counter', 'sum', () =>
      perVersion((flow, version, v) => (v.started > 0 ? [{ labels: { flow, version }, value: v.started }] : [])),
    );
    view(
      r,
      'callscript_calls_ended_total',
      'Calls ended, by flow version and outcome (completed, transferred, abandoned, error, ended_by_admin).',
      'counter',
      'sum',
      () =>
        perVersion((flow, version, v) =>
          [...v.ended].map(([outcome, n]) => ({ labels: { flow, version, outcome }, value: n })),
        ),
    );
    view(
      r,
      'callscript_request_duration_seconds',
      "Time to handle a request (queueing behind the call's previous request included), by flow and the " +
        'step answered ("" when none).',
      'histogram',
      'sum',
      () =>
        each((flow, f) =>
          [...f.steps].flatMap(([step, h]) => histValues('callscript_request_duration_seconds', { flow, step }, h)),
        ),
    );
    view(
      r,
      'callscript_deadline_fallbacks_total',
      'Requests answered with the fallback command because their step missed the deadline, by flow.',
      'counter',
      'sum',
      () => each((flow, f) => (f.fallbacks > 0 ? [{ labels: { flow }, value: f.fallbacks }] : [])),
    );
    view(
      r,
      'callscript_effects_total',
      'Effects performed (sms, http, queue), by kind and outcome (ok, pending, or the error kind).',
      'counter',
      'sum',
      () =>
        [...this.effects].flatMap(([kind, e]) =>
          [...e.outcomes].map(([outcome, n]) => ({ labels: { kind, outcome }, value: n })),
        ),
    );
    view(r, 'callscript_effect_duration_seconds', 'Time an effect took, by kind.', 'histogram', 'sum', () =>
      [...this.effects].flatMap(([kind, e]) => histValues('callscript_effect_duration_seconds', { kind }, e.hist)),
    );
    view(
      r,
      'callscript_live_calls',
      'Live calls in this process (summed over the workers), by flow.',
      'gauge',
      'sum',
      () => {
        const n = new Map<string, number>();
        for (const f of this.deps.flows()) n.set(f, 0);
        for (const [f, c] of this.deps.liveCalls()) add(n, f, c);
        return [...n].map(([flow, value]) => ({ labels: { flow }, value }));
      },
    );
    view(
      r,
      'callscript_reloads_total',
      'Reloads of the flows directory, by result: ok, or refused (at least one edit refused, or the ' +
        'directory could not be read). With workers, the most any worker counted.',
      'counter',
      'max',
      () => [...this.reloads].map(([result, value]) => ({ labels: { result }, value })),
    );
    view(
      r,
      'callscript_refused_edits',
      'Flow files whose last edit is refused now (the flow serves its previous version). With workers, the ' +
        'most any worker has.',
      'gauge',
      'max',
      () => [{ labels: {}, value: this.deps.refusedEdits() }],
    );
    view(
      r,
      'callscript_store_errors_total',
      'Requests answered 503 STORE_UNAVAILABLE: the call store could not be reached in time.',
      'counter',
      'sum',
      () => [{ labels: {}, value: this.storeErrors }],
    );
    view(
      r,
      TRANSITIONS,
      'Transitions the flows took, by flow version and coverage key (as in callscript test --coverage): the ' +
        "traffic of each edge of the flow's graph.",
      'counter',
      'sum',
      () =>
        perVersion((flow, version, v) =>
          [...v.transitions].map(([transition, n]) => ({ labels: { flow, version, transition }, value: n })),
        ),
    );
    view(
      r,
      'callscript_webhooks_total',
      'Events the webhook route took (docs/webhooks.md), by type (sms.mt.status_update, sms.mo, other; ' +
        'unknown before an event could be trusted) and result (ok, duplicate, ignored, bad_signature, ' +
        'bad_event, bad_json, bad_time, unsupported_type, too_large, store_unavailable).',
      'counter',
      'sum',
      () =>
        (this.webhookCounts?.() ?? []).map(({ type, result, count }) => ({ labels: { type, result }, value: count })),
    );
    this.queues = deps.queues
      ? new QueueMetrics({ queues: deps.queues, now: deps.now ?? Date.now, ...(deps.log ? { log: deps.log } : {}) }, r)
      : undefined;
    view(
      r,
      'callscript_processes',
      'Processes whose metrics this answer sums: 1, or with --workers N the workers that answered the scrape in time.',
      'gauge',
      'sum',
      () => [{ labels: {}, value: 1 }],
    );
  }

  step(e: StepEvent): void {
    const f = this.flow(e.flow ?? '');
    const v = this.version(f, e.version ?? '');
    add(v.requests, e.outcome);
    if (e.isNew && e.outcome === 'ok') v.started++;
    if (e.callOutcome) add(v.ended, e.callOutcome);
    for (const t of e.transitions) add(v.transitions, t);
    const step = e.step ?? '';
    let h = f.steps.get(step);
    if (!h) f.steps.set(step, (h = new Hist()));
    h.observe(e.ms / 1000);
    if (e.late) f.fallbacks++;
    if (e.outcome === 'store_unavailable') this.storeErrors++;
    for (const x of e.effects) {
      this.effect(x.kind, x.outcome, x.ms);
      if (x.queue) this.queueWait(x.queue, x.value);
    }
  }

  /**
   * A queue operation that ends a caller's wait feeds the wait histogram: done (the agent who answered was claimed
   * after `waited`: answered), leave (abandoned), a poll answered timeout or empty.
   */
  private queueWait(q: NonNullable<EffectEvent['queue']>, value: string | undefined): void {
    if (q.waited === undefined) return;
    const outcome =
      q.op === 'done'
        ? 'answered'
        : q.op === 'leave'
          ? 'abandoned'
          : value === 'timeout'
            ? 'timed_out'
            : value === 'empty'
              ? 'empty'
              : undefined;
    if (outcome) this.observeQueueWait(q.name, outcome, q.waited);
  }

  /** The webhook route is on: its counts are read at each scrape. */
  countWebhooks(counts: () => { type: string; result: string; count: number }[]): void {
    this.webhookCounts = counts;
  }

  /** A reload ended (counted once per reload run). */
  reloaded(s: ReloadSummary): void {
    add(this.reloads, s.ok && s.refused.length === 0 ? 'ok' : 'refused');
  }

  /** The Prometheus text: this process's, or every worker's summed. */
  async text(): Promise<string> {
    const cluster = this.deps.cluster;
    if (!cluster) return `${await this.registry.metrics()}\n${await processRegistry().metrics()}`;
    const g = await cluster.gather();
    const parts = this.partial(g) ? [await this.part()] : g!.parts;
    return AggregatorRegistry.aggregate(parts as never).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** This process's metrics as JSON (what a worker sends the primary). */
  async part(only?: readonly string[]): Promise<MetricsPart> {
    const all = [
      ...(await this.registry.getMetricsAsJSON()),
      ...(only ? [] : await processRegistry().getMetricsAsJSON()),
    ];
    return only ? all.filter((m) => only.includes(m.name)) : all;
  }

  async traffic(flow: string): Promise<Record<string, Record<string, number>>> {
    const out: Record<string, Record<string, number>> = {};
    if (!this.deps.cluster) {
      for (const [version, v] of this.flows.get(flow)?.versions ?? [])
        if (v.transitions.size > 0) out[version] = Object.fromEntries(v.transitions);
      return out;
    }
    const g = await this.deps.cluster.gather([TRANSITIONS]);
    const parts = this.partial(g) ? [await this.part([TRANSITIONS])] : g!.parts;
    for (const part of parts) {
      for (const m of part as { name: string; values: Value[] }[]) {
        if (m.name !== TRANSITIONS) continue;
        for (const { labels, value } of m.values) {
          if (labels.flow !== flow) continue;
          const keys = (out[String(labels.version)] ??= {});
          keys[String(labels.transition)] = (keys[String(labels.transition)] ?? 0) + value;
        }
      }
    }
    return out;
  }

  /** Answers the primary's collect requests (a worker); returns the function that stops it. */
  serveCluster(): (() => void) | undefined {
    return this.deps.cluster?.answer((only) => this.part(only));
  }

  private partial(g: Awaited<ReturnType<MetricsCluster['gather']>>): boolean {
    if (g && g.parts.length > 0 && g.parts.length >= g.expected) return false;
    this.deps.log?.warn(
      { code: 'METRICS_PARTIAL', answered: g?.parts.length ?? 0, expected: g?.expected ?? null },
      g
        ? `metrics: ${g.parts.length} of ${g.expected} workers answered in ` +
            `time${g.parts.length === 0 ? ": this worker's metrics alone" : ''}`
        : "metrics: the primary did not answer in time: this worker's metrics alone",
    );
    return !g || g.parts.length === 0;
  }

  /**
   * A caller's wait in a queue ended after `seconds`: `outcome` says how (docs/operations.md names answered,
   * abandoned, timed_out, empty). Called by the engine's wiring; a no-op when the store has no queues.
   */
  observeQueueWait(queue: string, outcome: string, seconds: number): void {
    this.queues?.observeWait(queue, outcome, seconds);
  }

  /** A call ended from the admin API (no request ends it: DELETE /admin/calls/:callid). */
  endedByAdmin(flow: string, version: string): void {
    add(this.version(this.flow(flow), version).ended, 'ended_by_admin');
  }

  private version(f: FlowTally, version: string): VersionTally {
    let v = f.versions.get(version);
    if (!v)
      f.versions.set(version, (v = { requests: new Map(), started: 0, ended: new Map(), transitions: new Map() }));
    return v;
  }

  private flow(name: string): FlowTally {
    let f = this.flows.get(name);
    if (!f) this.flows.set(name, (f = { versions: new Map(), steps: new Map(), fallbacks: 0 }));
    return f;
  }

  private effect(kind: string, outcome: string, ms: number): void {
    let e = this.effects.get(kind);
    if (!e) this.effects.set(kind, (e = { outcomes: new Map(), hist: new Hist() }));
    add(e.outcomes, e.outcomes.has(outcome) || e.outcomes.size < MAX_EFFECT_OUTCOMES ? outcome : 'OTHER');
    // a lookup still running is timed once it ends (its whole run, on the request that takes its result)
    if (outcome !== 'pending') e.hist.observe(ms / 1000);
  }
}

/** GET `path`: the Prometheus text (with --workers, the workers' sum); 405 for other methods. */
export function registerMetrics(
  app: FastifyInstance,
  metrics: CallMetrics,
  o: { path: string; guards: onRequestHookHandler[]; notAllowed(allow: string, what: string): RouteHandlerMethod },
): void {
  app.route({
    method: 'GET',
    url: o.path,
    onRequest: o.guards,
    handler: async (_req, reply) =>
      reply
        .header('content-type', metrics.contentType)
        .header('cache-control', 'no-store')
        .send(await metrics.text()),
  });
  app.route({
    method: ['DELETE', 'PATCH', 'POST', 'PUT'],
    url: o.path,
    handler: o.notAllowed('GET, HEAD', 'metrics only take GET'),
  });
  const stop = metrics.serveCluster();
  if (stop) app.addHook('onClose', async () => stop());
}

/**
 * prom-client's default process metrics (CPU, memory, event loop lag, GC, handles), named
 * `callscript_...`. One Registry per process, shared by the plugin instances of the process:
 * they describe the process, not an app, and their collectors (a GC observer, an event loop
 * delay monitor) cannot be stopped, so one app each would pile them up. The one piece of
 * module state here, made with the first CallMetrics.
 */
let processMetrics: Registry | undefined;
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, prefix: 'callscript_' });
  }
  return processMetrics;
}
