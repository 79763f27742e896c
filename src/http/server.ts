/**
 * A ready-to-listen Fastify app with the callscript plugin at the root: what
 * `callscript serve` runs. Logs go through Fastify's pino logger, one line per call
 * (request logging is off; `LOG_LEVEL=debug` adds a line per request).
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { callscript } from './plugin.js';
import type { CallscriptPluginOptions } from './options.js';
import { Registry, type LoadReport } from '../registry/registry.js';

export interface ServerOptions extends CallscriptPluginOptions {
  /** pino level (fatal, error, warn, info, debug, trace, silent) or false for no logger. */
  logLevel?: string | false;
}

export interface Server {
  app: FastifyInstance;
  registry: Registry;
  /** What loading the flows directory found (absent when a registry was given). */
  report?: LoadReport;
}

export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
  return (await createServer(options)).app;
}

/** Like buildServer, and also hands back the registry and the load report. */
export async function createServer(options: ServerOptions = {}): Promise<Server> {
  const { logLevel = 'info', ...plugin } = options;
  let { registry, report } = plugin;
  if (!registry) {
    const loaded = await Registry.fromDirectory(plugin.flowsDir ?? 'flows');
    registry = loaded.registry;
    report = loaded.report;
  }
  const perRequest = logLevel === 'debug' || logLevel === 'trace';
  const app = Fastify({
    logger: logLevel === false ? false : { level: logLevel },
    logController: new LogController({ disableRequestLogging: !perRequest }),
    bodyLimit: plugin.bodyLimit ?? 65536,
    // Keep-alive connections from the service are reused for many requests.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
  });
  await app.register(callscript, { ...plugin, registry, report });
  return { app, registry, report };
}
