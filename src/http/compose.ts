/**
 * The composition root of the plugin: every part of a running callscript, made and wired in
 * one place, each with its closing hook. The flows (registry, reloader, live calls), the call
 * store and what its capabilities allow (shared versions, the live-call check), the sealer,
 * the effect executor (SMS, http lookups), the call history, metrics, traces and the
 * observers, outbound calls, and the call handler itself. The routes (src/http/plugin.ts)
 * only use what this returns.
 */
import { basename } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Diagnostic } from '../errors/diagnostic.js';
import { CallHandler } from '../engine/call.js';
import { Lookups } from '../engine/http-wait.js';
import { LiveKeeper } from '../engine/live-check.js';
import { observers, type StepObserver } from '../engine/observe.js';
import type { FlowVersions } from '../engine/ports.js';
import { parseKey, Sealer } from '../engine/seal.js';
import { LiveCalls } from '../registry/live.js';
import { Registry, type LoadReport } from '../registry/registry.js';
import { Reloader, type ReloadSummary } from '../registry/reloader.js';
import { SharedVersions } from '../registry/shared-versions.js';
import { watchFlows } from '../registry/watch.js';
import { ServiceClient } from '../service/jsonrpc.js';
import { MemoryStore } from '../store/memory.js';
import type { QueueLines } from '../store/queues.js';
import { capabilitiesOf, type CallStore } from '../store/types.js';
import { pendingView } from './admin.js';
import { HistoryWriter, historySettings, historyStore } from './history.js';
import { liveExecutor } from './live-executor.js';
import { DEFAULT_MAX_LOOKUPS_PER_CALL, httpRunner } from './lookup-client.js';
import { CallMetrics } from './metrics.js';
import type { CallscriptPluginOptions, MetricsOptions, RtOptions } from './options.js';
import { OutboundCalls } from './outbound.js';
import { RtTracing } from './tracing.js';
import { tracingMismatch } from './tracing-check.js';

/** What the routes of the plugin are given. */
export interface Parts {
  registry: Registry;
  report: LoadReport | undefined;
  store: CallStore;
  /** The store for the admin API: its history methods ensured (a store of one's own without them keeps none). */
  adminStore: CallStore;
  live: LiveCalls;
  handler: CallHandler;
  sync: SharedVersions | undefined;
  history: HistoryWriter | undefined;
  metrics: CallMetrics | undefined;
  metricsOpts: MetricsOptions | undefined;
  tracing: RtTracing;
  outbound: OutboundCalls | undefined;
  serviceClient: ServiceClient | undefined;
  /** Every reload goes through here (file changes, SIGHUP, the admin API), counted once per run. */
  reload(reason: string): Promise<ReloadSummary>;
  /** Files whose edit is refused now: their flows serve the previous version (/health, metrics). */
  refusedNow(): { file: string; diagnostics: ReturnType<typeof pendingView> }[];
}

export async function compose(app: FastifyInstance, options: CallscriptPluginOptions, opts: RtOptions): Promise<Parts> {
  const flows = await loadFlows(app, options, opts);
  const { registry, report, live, reloader } = flows;
  const store = options.store ?? new MemoryStore();
  if (!options.store) app.addHook('onClose', async () => store.close());
  const caps = capabilitiesOf(store);
  const sync = await sharedVersions(app, store, registry, live, opts);
  const sealer = sealerOf(app, options.sensitiveKeys, caps.shared, registry);
  const { withHistory, history } = callHistory(app, store, options, opts);
  const refusedNow = () =>
    registry.reloaded
      ? [...registry.pendingErrors().entries()].map(([file, ds]) => ({
          file: basename(file),
          diagnostics: pendingView(ds),
        }))
      : (report?.refused ?? []).map((file) => ({
          file: basename(file),
          diagnostics: pendingView(
            (report?.diagnostics ?? []).filter((d) => d.file === file && d.severity === 'error'),
          ),
        }));
  const metricsOpts: MetricsOptions | undefined = options.metrics === false ? undefined : (options.metrics ?? {});
  const metrics = metricsOpts ? callMetrics(app, registry, report, live, metricsOpts, caps.queues?.()) : undefined;
  const tracing = new RtTracing();
  warnTracingMismatch(app);
  // Outbound calls placed by the admin API: kept in the store, read by the first request of each.
  const outbound =
    typeof store.putOutbound === 'function' && typeof store.getOutbound === 'function'
      ? new OutboundCalls(store, { history: history !== undefined })
      : undefined;
  const observer = observers([options.observer, history, metrics, tracing] as (StepObserver | undefined)[], (err) =>
    app.log.error({ err }, 'an observer of the call step failed'),
  );
  const versions: FlowVersions = {
    get: (n, v) => registry.get(n, v),
    pick: (n, c) => registry.pick(n, c),
    ...(sync ? { fetch: (n: string, v: string) => sync.fetch(n, v) } : {}),
  };
  const httpOpts = options.http ?? {};
  const secret = httpOpts.secret ?? ((name: string) => process.env[name]);
  const lookups = new Lookups({
    run: httpOpts.runner ?? httpRunner(httpOpts),
    secret,
    store,
    maxPerCall: httpOpts.maxLookupsPerCall ?? DEFAULT_MAX_LOOKUPS_PER_CALL,
  });
  const release = () => registry.release(live);
  const executor = liveExecutor(options.effects ?? {}, lookups, caps.queues?.());
  const handler = new CallHandler(
    {
      versions,
      store,
      live,
      release,
      executor,
      // the memory store answers in this process: nothing to ride (src/engine/stall.ts)
      storeInProcess: !caps.shared,
      ...(outbound ? { outbound } : {}),
    },
    {
      secret,
      deadlineMs: opts.deadlineMs,
      callTtlMs: opts.callTtlMs,
      endedTtlMs: opts.endedTtlMs,
      maxStateBytes: opts.maxStateBytes,
      evalLimits: opts.evalLimits,
      maxLiveCalls: opts.maxLiveCalls,
      unknownCall: opts.unknownCall,
      routes: opts.routes,
      ...(opts.fallback !== undefined ? { fallback: opts.fallback } : {}),
      ...(opts.recorder ? { recorder: opts.recorder } : {}),
      ...(sealer ? { sealer } : {}),
      ...(observer ? { observer } : {}),
    },
  );
  app.addHook('onClose', async () => handler.close());
  // the live-call bookkeeping, off the request path: idle calls swept; with a shared store, checked against it
  const keeper = new LiveKeeper(live, store, release, (callid) => handler.isRunning(callid), {
    sweepMs: Math.min(opts.callTtlMs, 60_000),
    ...(caps.shared ? { checkMs: opts.liveCheckMs } : {}),
  });
  app.addHook('onClose', async () => keeper.close());
  // A reloader made here is closed here (its checker's worker); one given is its owner's.
  if (!options.reloader) app.addHook('onClose', async () => reloader.close());
  const reload = countedReload(app, reloader, metrics);
  watch(app, options, reload);
  for (const [name, percent] of Object.entries(options.canary ?? {})) {
    if (registry.setCanary(name, percent) !== 'ok')
      app.log.warn({ flow: name }, `canary: no flow named "${name}" is loaded`);
  }
  options.control?.attach({
    setRoutes: (routes) => handler.setRoutes(routes),
    reload,
    ...(metrics ? { traffic: metrics } : {}),
  });
  const serviceClient = options.service ? new ServiceClient(options.service) : undefined;
  return {
    registry,
    report,
    store,
    adminStore: withHistory,
    live,
    handler,
    sync,
    history,
    metrics,
    metricsOpts,
    tracing,
    outbound,
    serviceClient,
    reload,
    refusedNow,
  };
}

/** The call history: the store's, when it has the methods (a store of one's own may not: then none, said). */
function callHistory(app: FastifyInstance, store: CallStore, options: CallscriptPluginOptions, opts: RtOptions) {
  const historyOpts = historySettings(options.history);
  const withHistory = historyStore(store);
  if (withHistory !== store && historyOpts)
    app.log.warn(
      { code: 'HISTORY_UNSUPPORTED' },
      'the call store given has no history methods (appendPath, addFinished...): no call history is kept',
    );
  const history =
    historyOpts && withHistory === store ? new HistoryWriter(store, historyOpts, opts.callTtlMs, app.log) : undefined;
  if (history) {
    // written before the server stops (the store may be closed by then in onClose), and what came after
    app.addHook('preClose', async () => history.close());
    app.addHook('onClose', async () => history.close(500, true));
  }
  return { withHistory, history };
}

/** The flows: the registry given (or loaded from flowsDir), its load report logged, the live calls, the reloader. */
async function loadFlows(app: FastifyInstance, options: CallscriptPluginOptions, opts: RtOptions) {
  const env = opts.environment !== undefined ? { environment: opts.environment } : {};
  let registry = options.reloader?.registry ?? options.registry;
  let report = options.report;
  if (!registry) {
    const loaded = await Registry.fromDirectory(options.flowsDir ?? 'flows', {
      maxFileBytes: opts.maxFlowBytes,
      ...env,
    });
    registry = loaded.registry;
    report = loaded.report;
  }
  for (const d of report?.diagnostics ?? []) logDiagnostic(app, d);
  const live = options.live ?? new LiveCalls(opts.callTtlMs);
  const dir = options.registry ? options.flowsDir : (options.flowsDir ?? 'flows');
  const reloader =
    options.reloader ??
    new Reloader(registry, dir, live, { settleMs: opts.reloadSettleMs, maxFileBytes: opts.maxFlowBytes, ...env });
  return { registry, report, live, reloader };
}

/** Instances on one store that shares records share flow versions, pins, canaries and counts. */
async function sharedVersions(
  app: FastifyInstance,
  store: CallStore,
  registry: Registry,
  live: LiveCalls,
  opts: RtOptions,
): Promise<SharedVersions | undefined> {
  const records = capabilitiesOf(store).sharedRecords?.();
  if (!records) return undefined;
  const sync = new SharedVersions(registry, live, records, {
    ttlMs: opts.callTtlMs + opts.endedTtlMs,
    check: {
      maxFileBytes: opts.maxFlowBytes,
      ...(opts.environment !== undefined ? { environment: opts.environment } : {}),
    },
    log: app.log,
  });
  await sync.start();
  app.addHook('onClose', async () => sync.close());
  return sync;
}

/** The sealer of the keys given (the first seals); a bad key is a registration error. Said in the log either way. */
function sealerOf(
  app: FastifyInstance,
  keys: readonly string[] | undefined,
  shared: boolean,
  registry: Registry,
): Sealer | undefined {
  if (!keys || keys.length === 0) {
    if (!shared) return undefined;
    const flows = registry
      .list()
      .filter((f) => registry.current(f.name)?.tables.sensitive)
      .map((f) => f.name);
    if (flows.length > 0)
      app.log.warn(
        { code: 'SENSITIVE_NOT_SEALED', flows },
        `flows ${flows.join(', ')} have sensitive values, stored in clear in the shared call store: set ` +
          `CALLSCRIPT_SENSITIVE_KEY to seal them (docs/security.md)`,
      );
    return undefined;
  }
  let sealer: Sealer;
  try {
    sealer = new Sealer(keys.map(parseKey));
  } catch (err) {
    throw new Error(`callscript plugin: sensitiveKeys: ${(err as Error).message}`, { cause: err });
  }
  app.log.info(
    { code: 'SENSITIVE_SEALED', key: sealer.keyId },
    `sensitive values are sealed in the call store (AES-256-GCM, key ${sealer.keyId})`,
  );
  return sealer;
}

function callMetrics(
  app: FastifyInstance,
  registry: Registry,
  report: LoadReport | undefined,
  live: LiveCalls,
  o: MetricsOptions,
  queues: QueueLines | undefined,
): CallMetrics {
  return new CallMetrics({
    liveCalls: function* () {
      for (const [flow, version] of live.inUse()) yield [flow, live.count(flow, version)];
    },
    flows: () => registry.list().map((f) => f.name),
    refusedEdits: () => (registry.reloaded ? registry.pendingErrors().size : (report?.refused.length ?? 0)),
    ...(o.cluster ? { cluster: o.cluster } : {}),
    ...(queues ? { queues } : {}),
    log: app.log,
  });
}

function warnTracingMismatch(app: FastifyInstance): void {
  const mismatch = tracingMismatch();
  if (!mismatch) return;
  app.log.warn(
    { code: 'TRACING_API_MISMATCH', registered: mismatch.registered, ours: mismatch.ours },
    `an OpenTelemetry SDK is registered through @opentelemetry/api ${mismatch.registered}, which ` +
      `callscript's @opentelemetry/api ${mismatch.ours} does not use: no spans are recorded. Install SDK ` +
      `packages that depend on @opentelemetry/api ${mismatch.ours} (npm ls @opentelemetry/api shows the ` +
      `copies; docs/operations.md, Traces)`,
  );
}

/** Reloads, each run counted once in the metrics (asks that come while one runs share the next run's promise). */
function countedReload(app: FastifyInstance, reloader: Reloader, metrics: CallMetrics | undefined) {
  const counted = new WeakSet<Promise<unknown>>();
  return (reason: string) => {
    const p = reloader.reload(reason, app.log);
    if (metrics && !counted.has(p)) {
      counted.add(p);
      p.then(
        (s) => metrics.reloaded(s),
        () => {},
      );
    }
    return p;
  };
}

/** `watch`: reload when a file of the flows directory changes (createServer watches itself). */
function watch(app: FastifyInstance, options: CallscriptPluginOptions, reload: (reason: string) => Promise<unknown>) {
  const dir = options.registry ? options.flowsDir : (options.flowsDir ?? 'flows');
  if (!options.watch || dir === undefined) return;
  const watcher = watchFlows({
    dir,
    debounceMs: typeof options.watch === 'object' ? options.watch.debounceMs : undefined,
    onFlows: () => void reload('file change').catch((err: unknown) => app.log.error({ err }, 'reload failed')),
    onError: (err) => app.log.error({ err }, 'watching the flows directory failed: reload with POST /admin/reload'),
  });
  app.addHook('onClose', async () => watcher.close());
}

function logDiagnostic(app: FastifyInstance, d: Diagnostic): void {
  const line = `${d.file}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`;
  if (d.severity === 'error') app.log.error({ code: d.code, file: d.file, line: d.line, column: d.column }, line);
  else app.log.warn({ code: d.code, file: d.file, line: d.line, column: d.column }, line);
}
