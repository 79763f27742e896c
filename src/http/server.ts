/**
 * A ready-to-listen Fastify app with the callscript plugin at the root: what
 * `callscript serve` runs. Logs go through Fastify's pino logger, one line per call
 * (request logging is off, and so are the per-request child loggers; `LOG_LEVEL=debug`
 * adds a line per request, with a reqId on every line).
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { callscript } from './plugin.js';
import { DEFAULT_RT_OPTIONS, type CallscriptPluginOptions } from './options.js';
import { PluginControl } from './control.js';
import { Registry, type LoadReport } from '../registry/registry.js';
import { LiveCalls } from '../registry/live.js';
import { Reloader } from '../registry/reloader.js';
import { watchFlows } from '../registry/watch.js';
import { guardServer, serverOptions, type TransportOptions } from './transport.js';
import { traceLogOptions } from './tracing.js';
import type { DestinationStream } from 'pino';

export interface ServerOptions extends CallscriptPluginOptions, Partial<TransportOptions> {
  /** pino level (fatal, error, warn, info, debug, trace, silent) or false for no logger. */
  logLevel?: string | false;
  /** Where the log lines go (a pino destination, e.g. a pino-pretty stream); default pino's stdout, JSON lines. */
  logStream?: DestinationStream;
  /** Watch the flows directory (and `configFile`) and reload on change. Default off (serve turns it on). */
  watch?: boolean | { debounceMs?: number };
  /** The config file to watch; `onConfigChange` runs when it changes. */
  configFile?: string;
  onConfigChange?: () => void;
}

export interface Server {
  app: FastifyInstance;
  registry: Registry;
  /** What loading the flows directory found (absent when a registry was given). */
  report?: LoadReport;
  reloader: Reloader;
  live: LiveCalls;
  /** Handles on the running plugin: reload, new routes. */
  control: PluginControl;
}

export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
  return (await createServer(options)).app;
}

/** Like buildServer, and also hands back the registry, the load report and the reload handles. */
export async function createServer(options: ServerOptions = {}): Promise<Server> {
  const {
    logLevel = 'info',
    logStream,
    watch,
    configFile,
    onConfigChange,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    socketTimeoutMs,
    maxConnections,
    trustProxy,
    ...plugin
  } = options;
  const transport = {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    socketTimeoutMs,
    maxConnections,
    trustProxy,
  };
  let { registry, report } = plugin;
  const flowsDir = registry ? plugin.flowsDir : (plugin.flowsDir ?? 'flows');
  if (!registry) {
    const loaded = await Registry.fromDirectory(flowsDir!, {
      maxFileBytes: plugin.maxFlowBytes ?? DEFAULT_RT_OPTIONS.maxFlowBytes,
      ...(plugin.environment !== undefined ? { environment: plugin.environment } : {}),
    });
    registry = loaded.registry;
    report = loaded.report;
  }
  const live = plugin.live ?? new LiveCalls(plugin.callTtlMs ?? DEFAULT_RT_OPTIONS.callTtlMs);
  const reloader =
    plugin.reloader ??
    new Reloader(registry, flowsDir, live, {
      settleMs: plugin.reloadSettleMs ?? DEFAULT_RT_OPTIONS.reloadSettleMs,
      maxFileBytes: plugin.maxFlowBytes ?? DEFAULT_RT_OPTIONS.maxFlowBytes,
      ...(plugin.environment !== undefined ? { environment: plugin.environment } : {}),
    });
  const control = plugin.control ?? new PluginControl();
  const perRequest = logLevel === 'debug' || logLevel === 'trace';
  const app = Fastify({
    // lines logged within a recording OpenTelemetry span carry its trace_id and span_id
    logger:
      logLevel === false ? false : { level: logLevel, ...traceLogOptions, ...(logStream ? { stream: logStream } : {}) },
    logController: new LogController({ disableRequestLogging: !perRequest }),
    // Fastify makes a child logger per request, bound to its reqId; with request logging
    // off no line carries that id to correlate with, so requests log through the app's
    // logger itself (the call lines carry the callid) and the per-request child is not built.
    ...(perRequest ? {} : { childLoggerFactory: (logger: FastifyBaseLogger) => logger }),
    bodyLimit: plugin.bodyLimit ?? DEFAULT_RT_OPTIONS.bodyLimit,
    // Timeouts, the connection cap and the error envelope of what Node and Fastify answer
    // before a route runs (src/http/transport.ts).
    ...serverOptions(transport),
  });
  guardServer(app, transport);
  if (!plugin.reloader) app.addHook('onClose', async () => reloader.close());
  await app.register(callscript, { ...plugin, registry, report, reloader, live, control });
  // a missing directory is reported by the load (FLOWS_DIR_MISSING), not thrown by the watcher
  if (watch && flowsDir !== undefined && !report?.diagnostics.some((d) => d.code === 'FLOWS_DIR_MISSING')) {
    const reload = (reason: string) => control.reload(reason);
    const watcher = watchFlows({
      dir: flowsDir,
      configFile,
      debounceMs: typeof watch === 'object' ? watch.debounceMs : undefined,
      onFlows: () => void reload('file change').catch((err: unknown) => app.log.error({ err }, 'reload failed')),
      onConfig: onConfigChange,
      onError: (err) =>
        app.log.error({ err }, 'watching the flows directory failed: reload with SIGHUP or POST /admin/reload'),
    });
    app.addHook('onClose', async () => watcher.close());
  }
  return { app, registry, report, reloader, live, control };
}
