/**
 * A ready-to-listen Fastify app with the callscript plugin at the root: what
 * `callscript serve` runs. Logs go through Fastify's pino logger, one line per call
 * (request logging is off; `LOG_LEVEL=debug` adds a line per request).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { callscript } from './plugin.js';
import type { CallscriptPluginOptions } from './options.js';

export interface ServerOptions extends CallscriptPluginOptions {
  /** pino level (fatal, error, warn, info, debug, trace, silent) or false for no logger. */
  logLevel?: string | false;
}

export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
  const { logLevel = 'info', ...plugin } = options;
  const app = Fastify({
    logger: logLevel === false ? false : { level: logLevel },
    disableRequestLogging: logLevel !== 'debug' && logLevel !== 'trace',
    bodyLimit: plugin.bodyLimit ?? 65536,
    // Keep-alive connections from the service are reused for many requests.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
  });
  await app.register(callscript, plugin);
  return app;
}
