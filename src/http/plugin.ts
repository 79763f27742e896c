/**
 * The Fastify plugin: the real-time endpoint (POST /rt, POST /rt/:flow) and GET /health.
 * Register it in any Fastify app (it is encapsulated: its JSON parser and error handler
 * apply to its own routes only):
 *
 *   app.register(callscript, { flowsDir: 'flows', prefix: '/ivr' })
 */
import { basename } from 'node:path';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MemoryStore } from '../store/memory.js';
import { RedisStore } from '../store/redis.js';
import { RedisShared } from '../store/shared.js';
import { SharedVersions } from '../registry/shared-versions.js';
import { Registry } from '../registry/registry.js';
import { LiveCalls } from '../registry/live.js';
import { Reloader } from '../registry/reloader.js';
import { watchFlows } from '../registry/watch.js';
import { registerAdmin, pendingView } from './admin.js';
import { parseRtRequest } from '../protocol/request.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import rateLimit from '@fastify/rate-limit';
import { authGuard, authLimits } from './auth.js';
import { requestErrorAnswer, sendError } from './envelope.js';
import { requireJsonBody } from './guards.js';
import { refuseContentEncoding } from './content-encoding.js';
import { CallHandler } from '../engine/call.js';
import { parseKey, Sealer } from '../engine/seal.js';
import { performEffect } from './effects.js';
import { Lookups } from '../engine/http-wait.js';
import { httpRunner } from './lookup-client.js';
import { observers, type StepObserver } from '../engine/observe.js';
import { DEFAULT_RT_OPTIONS, type CallscriptPluginOptions, type MetricsOptions, type RtOptions } from './options.js';
import { checkOptions } from './check-options.js';
import { CallMetrics, registerMetrics } from './metrics.js';
import { registerHealth } from './health.js';
import { RtTracing, type RtSpan } from './tracing.js';
import { tracingMismatch } from './tracing-check.js';
import { DEFAULT_HISTORY, HistoryWriter, historySettings, historyStore } from './history.js';
import { DEFAULT_WEBHOOK_PATH, webhookRoute } from './webhooks.js';
import { OutboundCalls } from './outbound.js';
import { ServiceClient } from '../service/jsonrpc.js';

export const callscript: FastifyPluginAsync<CallscriptPluginOptions> = async (app, options) => {
  const opts: RtOptions = {
    ...DEFAULT_RT_OPTIONS,
    ...stripUndefined(options),
    routes: { ...DEFAULT_RT_OPTIONS.routes, ...options.routes },
  };
  checkOptions({ ...opts, admin: options.admin, canary: options.canary, metrics: options.metrics });
  let registry = options.reloader?.registry ?? options.registry;
  let report = options.report;
  if (!registry) {
    const loaded = await Registry.fromDirectory(options.flowsDir ?? 'flows', {
      maxFileBytes: opts.maxFlowBytes,
      ...(opts.environment !== undefined ? { environment: opts.environment } : {}),
    });
    registry = loaded.registry;
    report = loaded.report;
  }
  for (const d of report?.diagnostics ?? []) logDiagnostic(app, d);
  const store = options.store ?? new MemoryStore();
  if (!options.store) app.addHook('onClose', async () => store.close());
  const live = options.live ?? new LiveCalls(opts.callTtlMs);
  const reloader =
    options.reloader ??
    new Reloader(registry, options.registry ? options.flowsDir : (options.flowsDir ?? 'flows'), live, {
      settleMs: opts.reloadSettleMs,
      maxFileBytes: opts.maxFlowBytes,
      ...(opts.environment !== undefined ? { environment: opts.environment } : {}),
    });
  const effects = options.effects ?? {};
  // Instances on one Redis share flow versions, pins, canaries and counts (src/registry/shared-versions.ts).
  const sync =
    store instanceof RedisStore
      ? new SharedVersions(registry, live, new RedisShared(store.client, store.prefix), {
          ttlMs: opts.callTtlMs + opts.endedTtlMs,
          check: {
            maxFileBytes: opts.maxFlowBytes,
            ...(opts.environment !== undefined ? { environment: opts.environment } : {}),
          },
          log: app.log,
        })
      : undefined;
  if (sync) {
    await sync.start();
    app.addHook('onClose', async () => sync.close());
  }
  const reg = registry;
  const versions = {
    get: (n: string, v: string) => reg.get(n, v),
    pick: (n: string, c: string) => reg.pick(n, c),
    ...(sync ? { fetch: (n: string, v: string) => sync.fetch(n, v) } : {}),
  };
  const sealer = sealerOf(options.sensitiveKeys);
  if (sealer)
    app.log.info(
      { code: 'SENSITIVE_SEALED', key: sealer.keyId },
      `sensitive values are sealed in the call store (AES-256-GCM, key ${sealer.keyId})`,
    );
  else if (store instanceof RedisStore) {
    const flows = registry
      .list()
      .filter((f) => registry.current(f.name)?.tables.sensitive)
      .map((f) => f.name);
    if (flows.length > 0)
      app.log.warn(
        { code: 'SENSITIVE_NOT_SEALED', flows },
        `flows ${flows.join(', ')} have sensitive values, stored in clear in Redis: set ` +
          `CALLSCRIPT_SENSITIVE_KEY to seal them (docs/security.md)`,
      );
  }
  const httpOpts = options.http ?? {};
  const lookups = new Lookups({
    run: httpOpts.runner ?? httpRunner(httpOpts),
    store,
    ...(httpOpts.maxLookupsPerCall !== undefined ? { maxPerCall: httpOpts.maxLookupsPerCall } : {}),
  });
  const secret = httpOpts.secret ?? ((name: string) => process.env[name]);
  // The call history (src/http/history.ts): paths of live calls and the last finished calls, in the store.
  const historyOpts = historySettings(options.history);
  // a store of your own written before the history (no history methods): no history, the admin API shows none
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
  // Files whose edit is refused now: their flows serve the previous version (shown in /health, counted in the metrics).
  const refusedNow = () =>
    reg.reloaded
      ? [...reg.pendingErrors().entries()].map(([file, ds]) => ({ file: basename(file), diagnostics: pendingView(ds) }))
      : (report?.refused ?? []).map((file) => ({
          file: basename(file),
          diagnostics: pendingView(
            (report?.diagnostics ?? []).filter((d) => d.file === file && d.severity === 'error'),
          ),
        }));
  const metricsOpts: MetricsOptions | undefined = options.metrics === false ? undefined : (options.metrics ?? {});
  const metrics = metricsOpts
    ? new CallMetrics({
        liveCalls: function* () {
          for (const [flow, version] of live.inUse()) yield [flow, live.count(flow, version)];
        },
        flows: () => reg.list().map((f) => f.name),
        refusedEdits: () => (reg.reloaded ? reg.pendingErrors().size : (report?.refused.length ?? 0)),
        ...(metricsOpts.cluster ? { cluster: metricsOpts.cluster } : {}),
        log: app.log,
      })
    : undefined;
  const tracing = new RtTracing();
  const mismatch = tracingMismatch();
  if (mismatch) {
    app.log.warn(
      { code: 'TRACING_API_MISMATCH', registered: mismatch.registered, ours: mismatch.ours },
      `an OpenTelemetry SDK is registered through @opentelemetry/api ${mismatch.registered}, which ` +
        `callscript's @opentelemetry/api ${mismatch.ours} does not use: no spans are recorded. Install SDK ` +
        `packages that depend on @opentelemetry/api ${mismatch.ours} (npm ls @opentelemetry/api shows the ` +
        `copies; docs/operations.md, Traces)`,
    );
  }
  // Observers of every request handled (src/engine/observe.ts): the user's, metrics, call history.
  const stepObservers: (StepObserver | undefined)[] = [options.observer, history];
  stepObservers.push(metrics);
  stepObservers.push(tracing);
  const observer = observers(stepObservers, (err) => app.log.error({ err }, 'an observer of the call step failed'));
  // Outbound calls placed by the admin API (src/http/outbound.ts): kept in the store, read by the first request of
  // each.
  const outbound =
    typeof store.putOutbound === 'function' && typeof store.getOutbound === 'function'
      ? new OutboundCalls(store, { history: history !== undefined })
      : undefined;
  const serviceClient = options.service ? new ServiceClient(options.service) : undefined;
  const service = new CallHandler(
    {
      versions,
      store,
      live,
      release: () => reg.release(live),
      perform: (e, budget) => performEffect(effects, e, budget),
      lookups,
      ...(outbound ? { outbound } : {}),
    },
    {
      secret,
      deadlineMs: opts.deadlineMs,
      callTtlMs: opts.callTtlMs,
      ...(store instanceof MemoryStore ? {} : { liveCheckMs: opts.liveCheckMs }),
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
  app.addHook('onClose', async () => service.close());
  // A reloader made here is closed here (its checker's worker); one given is its owner's.
  if (!options.reloader) app.addHook('onClose', async () => reloader.close());
  // Every reload goes through here (file changes, SIGHUP, the admin API): counted once per run
  // (asks that come while one runs share the promise of the next run).
  const counted = new WeakSet<Promise<unknown>>();
  const reload = (reason: string) => {
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
  // `watch`: reload when a file of the flows directory changes (createServer does this itself).
  const watchDir = options.registry ? options.flowsDir : (options.flowsDir ?? 'flows');
  if (options.watch && watchDir !== undefined) {
    const watcher = watchFlows({
      dir: watchDir,
      debounceMs: typeof options.watch === 'object' ? options.watch.debounceMs : undefined,
      onFlows: () => void reload('file change').catch((err: unknown) => app.log.error({ err }, 'reload failed')),
      onError: (err) => app.log.error({ err }, 'watching the flows directory failed: reload with POST /admin/reload'),
    });
    app.addHook('onClose', async () => watcher.close());
  }
  for (const [name, percent] of Object.entries(options.canary ?? {})) {
    if (registry.setCanary(name, percent) !== 'ok')
      app.log.warn({ flow: name }, `canary: no flow named "${name}" is loaded`);
  }
  if (options.control) {
    options.control.setRoutes = (routes) => service.setRoutes(routes);
    options.control.reload = reload;
    if (metrics) options.control.traffic = metrics;
  }

  // The service sends application/json (other types are refused in onRequest, before the
  // body is read: requireJsonBody); take the body as text and parse it losslessly.
  // application/json is named too: Fastify caches the parser it finds for a content type,
  // but not the catch-all, which it would look for anew (parsing the header) on every request.
  const asText = (_req: FastifyRequest, body: string | Buffer, done: (err: null, body: string | Buffer) => void) =>
    done(null, body);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', '*'], { parseAs: 'string', bodyLimit: opts.bodyLimit }, asText);

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, req, reply) => {
    const known = requestErrorAnswer(err, opts.bodyLimit);
    if (known) return sendError(reply, ...known);
    req.log.error({ err }, 'unexpected error');
    return sendError(reply, 500, 'INTERNAL', 'unexpected error; the call state was not changed');
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(
      reply,
      404,
      'NOT_FOUND',
      `no route ${req.method} ${req.url.length > 200 ? `${req.url.slice(0, 200)}…` : req.url}`,
    ),
  );

  // Failed authentications are counted per address by @fastify/rate-limit (src/http/auth.ts).
  const limited = opts.authFailureLimit > 0 && (opts.auth !== undefined || options.admin !== undefined);
  if (limited) await app.register(rateLimit, { global: false });
  const limitsFor = () => (limited ? authLimits(app, opts.authFailureLimit, opts.authFailureWindowMs) : undefined);
  app.addHook('preParsing', refuseContentEncoding(sendError));

  // Credentials are checked before the body is read (onRequest), so an unauthenticated
  // request costs nothing and never reaches the call state; then the body must be JSON.
  const rtHooks = [
    ...(opts.auth
      ? [
          authGuard(
            {
              credentials: opts.auth,
              code: 'AUTH_REQUIRED',
              message: 'valid HTTP Basic credentials are required',
              name: 'callscript',
              what: '/rt',
            },
            limitsFor(),
          ),
        ]
      : []),
    requireJsonBody,
  ];

  type RtRequest = FastifyRequest<{ Params: { flow?: string }; Body: unknown }>;
  const step = async (req: RtRequest, reply: FastifyReply, span: RtSpan | undefined) => {
    const body = typeof req.body === 'string' ? req.body : '';
    const parsed = parseRtRequest(body, { maxDepth: opts.bodyDepth });
    if (!parsed.ok) return sendError(reply, 400, parsed.code, parsed.message);
    if (span) tracing.note(span, parsed.request.callid, parsed.request.command_id);
    const answer = await service.handle(parsed.request, req.params.flow, req.log, span?.traceId);
    if (answer.status !== 200) return sendError(reply, answer.status, answer.code, answer.message);
    if (span && answer.late) span.late = true;
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  };
  // A span per request when an OpenTelemetry SDK records (src/http/tracing.ts); else the step alone.
  const rt = async (req: RtRequest, reply: FastifyReply) => {
    const span = tracing.start(req);
    if (!span) return step(req, reply, undefined);
    let failed = false;
    try {
      return await tracing.within(span, () => step(req, reply, span));
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      tracing.end(span, failed ? 500 : reply.statusCode);
    }
  };
  for (const url of ['/rt', '/rt/:flow']) app.route({ method: 'POST', url, handler: rt, onRequest: rtHooks });
  const notAllowed = (allow: string, what: string) => (_req: FastifyRequest, reply: FastifyReply) =>
    sendError(reply.header('allow', allow), 405, 'METHOD_NOT_ALLOWED', what);
  const OTHER = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT'] as const;
  for (const url of ['/rt', '/rt/:flow'])
    app.route({ method: [...OTHER], url, handler: notAllowed('POST', 'the real-time endpoint only takes POST') });

  registerHealth(app, { registry: reg, store, live, refused: refusedNow, notAllowed });

  // The service's webhooks (src/http/webhooks.ts): SMS delivery reports kept as long as their calls' records.
  if (
    options.webhooks?.secret !== undefined &&
    metrics &&
    (options.webhooks.path ?? DEFAULT_WEBHOOK_PATH) === (metricsOpts?.path ?? '/metrics')
  )
    throw new Error(
      `callscript plugin: webhooks.path and metrics.path are both ${metricsOpts?.path ?? '/metrics'}: give ` +
        `them different paths`,
    );
  const webhooks = await webhookRoute(app, options.webhooks, store, {
    ttlMs: history?.smsTtlMs ?? DEFAULT_HISTORY.ttlMs + opts.callTtlMs,
    log: app.log,
  });
  if (webhooks && metrics) metrics.countWebhooks(() => webhooks.counts.list());

  if (metrics && metricsOpts) {
    // open, or behind the admin credentials (failures counted like the admin API's)
    const guard =
      metricsOpts.auth === 'admin'
        ? authGuard(
            {
              credentials: options.admin!,
              code: 'ADMIN_AUTH_REQUIRED',
              message: 'valid admin HTTP Basic credentials are required',
              name: 'callscript-admin',
              what: 'the metrics',
            },
            limitsFor(),
          )
        : undefined;
    registerMetrics(app, metrics, { path: metricsOpts.path ?? '/metrics', ...(guard ? { guard } : {}), notAllowed });
  }

  // the console's traffic: the plugin's `traffic` option, else the metrics' transitions counter
  const traffic = options.traffic ?? metrics;
  if (options.admin) {
    if (!outbound)
      app.log.warn(
        { code: 'OUTBOUND_UNSUPPORTED' },
        'the call store given has no outbound methods (putOutbound, getOutbound): POST /admin/calls is off',
      );
    // a call ended here is counted as ended (no request of the call ends it)
    const endCall: CallHandler['endCall'] = async (callid) => {
      const r = await service.endCall(callid);
      if (r.kind === 'ended') metrics?.endedByAdmin(r.state.flow, r.state.version);
      return r;
    };
    await registerAdmin(app, {
      auth: options.admin,
      limits: limitsFor(),
      registry,
      live,
      store: withHistory,
      reload,
      endCall,
      ...(history ? { history } : {}),
      ...(sync ? { sync } : {}),
      ...(traffic ? { traffic } : {}),
      ...(webhooks ? { webhooks } : {}),
      ...(outbound ? { outbound: { outbound, ...(serviceClient ? { service: serviceClient } : {}) } } : {}),
    });
  }
};

/** The sealer of the keys given (the first seals); a bad key is a registration error. */
function sealerOf(keys: readonly string[] | undefined): Sealer | undefined {
  if (!keys || keys.length === 0) return undefined;
  try {
    return new Sealer(keys.map(parseKey));
  } catch (err) {
    throw new Error(`callscript plugin: sensitiveKeys: ${(err as Error).message}`, { cause: err });
  }
}

function logDiagnostic(app: FastifyInstance, d: Diagnostic): void {
  const line = `${d.file}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`;
  if (d.severity === 'error') app.log.error({ code: d.code, file: d.file, line: d.line, column: d.column }, line);
  else app.log.warn({ code: d.code, file: d.file, line: d.line, column: d.column }, line);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
