/**
 * The Fastify plugin: the real-time endpoint (POST /rt, POST /rt/:flow), GET /health, the
 * metrics, the service's webhooks and the admin API. Register it in any Fastify app (it is
 * encapsulated: its JSON parser and error handler apply to its own routes only):
 *
 *   app.register(callscript, { flowsDir: 'flows', prefix: '/ivr' })
 *
 * The parts are made and wired in src/http/compose.ts; here, the plugin's scope (body parser,
 * error and not-found answers, authentication limits) and its routes.
 */
import { codeDefault } from '../config/code.js';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { CallHandler } from '../engine/call.js';
import { registerAdmin } from './admin.js';
import { authGuard, authLimits } from './auth.js';
import { checkOptions } from './check-options.js';
import { compose, type Parts } from './compose.js';
import { refuseContentEncoding } from './content-encoding.js';
import { requestErrorAnswer, sendError } from './envelope.js';
import { registerHealth } from './health.js';
import { allowedHostsOnly, oneHostOnly } from './hosts.js';
import { DEFAULT_HISTORY } from './history.js';
import { registerMetrics } from './metrics.js';
import { DEFAULT_RT_OPTIONS, type CallscriptPluginOptions, type RtOptions } from './options.js';
import { registerRt } from './rt-route.js';
import { DEFAULT_WEBHOOK_PATH, webhookRoute } from './webhooks.js';

/** The metrics' path when none is given (metrics.path). */
const METRICS_PATH = String(codeDefault('metrics.path'));

export const callscript: FastifyPluginAsync<CallscriptPluginOptions> = async (app, options) => {
  const opts: RtOptions = {
    ...DEFAULT_RT_OPTIONS,
    ...stripUndefined(options),
    routes: { ...DEFAULT_RT_OPTIONS.routes, ...options.routes },
  };
  checkOptions({ ...opts, admin: options.admin, canary: options.canary, metrics: options.metrics });
  const parts = await compose(app, options, opts);
  scope(app, opts);
  // Failed authentications are counted per address by @fastify/rate-limit (src/http/auth.ts).
  const limited = opts.authFailureLimit > 0 && (opts.auth !== undefined || options.admin !== undefined);
  if (limited) await app.register(rateLimit, { global: false });
  const limits = () => (limited ? authLimits(app, opts.authFailureLimit, opts.authFailureWindowMs) : undefined);
  const adminGuard = (what: string) =>
    authGuard(
      {
        credentials: options.admin!,
        code: 'ADMIN_AUTH_REQUIRED',
        message: 'valid admin HTTP Basic credentials are required',
        name: 'callscript-admin',
        what,
      },
      limits(),
    );
  const rtAuth = opts.auth
    ? authGuard(
        {
          credentials: opts.auth,
          code: 'AUTH_REQUIRED',
          message: 'valid HTTP Basic credentials are required',
          name: 'callscript',
          what: '/rt',
        },
        limits(),
      )
    : undefined;
  registerRt(app, {
    handler: parts.handler,
    tracing: parts.tracing,
    bodyDepth: opts.bodyDepth,
    notAllowed,
    ...(rtAuth ? { auth: rtAuth } : {}),
  });
  // the routes a browser page could read answer allowed host names only (src/http/hosts.ts)
  const allowedHosts = opts.allowedHosts ?? [];
  const hostGuard = allowedHostsOnly(allowedHosts);
  registerHealth(app, {
    hostGuard,
    registry: parts.registry,
    store: parts.store,
    live: parts.live,
    refused: parts.refusedNow,
    notAllowed,
  });
  const webhooks = await registerWebhooks(app, options, opts, parts);
  const { metrics, metricsOpts } = parts;
  if (metrics && metricsOpts) {
    // open, or behind the admin credentials (failures counted like the admin API's)
    const guard = metricsOpts.auth === 'admin' ? adminGuard('the metrics') : undefined;
    registerMetrics(app, metrics, {
      path: metricsOpts.path ?? METRICS_PATH,
      guards: guard ? [hostGuard, guard] : [hostGuard],
      notAllowed,
    });
  }
  if (!options.admin) return;
  if (!parts.outbound)
    app.log.warn(
      { code: 'OUTBOUND_UNSUPPORTED' },
      'the call store given has no outbound methods (putOutbound, getOutbound): POST /admin/calls is off',
    );
  // a call ended here is counted as ended (no request of the call ends it)
  const endCall: CallHandler['endCall'] = async (callid) => {
    const r = await parts.handler.endCall(callid);
    if (r.kind === 'ended') metrics?.endedByAdmin(r.state.flow, r.state.version);
    return r;
  };
  // the console's traffic: the plugin's `traffic` option, else the metrics' transitions counter
  const traffic = options.traffic ?? metrics;
  const { outbound, serviceClient, history, sync } = parts;
  await registerAdmin(app, {
    auth: options.admin,
    allowedHosts,
    limits: limits(),
    registry: parts.registry,
    live: parts.live,
    store: parts.adminStore,
    reload: parts.reload,
    endCall,
    ...(history ? { history } : {}),
    ...(sync ? { sync } : {}),
    ...(traffic ? { traffic } : {}),
    ...(webhooks ? { webhooks } : {}),
    ...(outbound ? { outbound: { outbound, ...(serviceClient ? { service: serviceClient } : {}) } } : {}),
  });
};

/**
 * The plugin's scope: the service sends application/json (other types are refused in
 * onRequest, before the body is read: requireJsonBody); the body is taken as text and parsed
 * losslessly by the route. application/json is named too: Fastify caches the parser it finds
 * for a content type, but not the catch-all, which it would look for anew on every request.
 * Errors and unknown routes get the JSON error envelope; compressed bodies are refused.
 */
function scope(app: FastifyInstance, opts: RtOptions): void {
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
  app.setNotFoundHandler((req, reply) => {
    const url = req.url.length > 200 ? `${req.url.slice(0, 200)}…` : req.url;
    return sendError(reply, 404, 'NOT_FOUND', `no route ${req.method} ${url}`);
  });
  app.addHook('preParsing', refuseContentEncoding(sendError));
  app.addHook('onRequest', oneHostOnly);
}

/** The service's webhooks (src/http/webhooks.ts): SMS delivery reports kept as long as their calls' records. */
async function registerWebhooks(app: FastifyInstance, options: CallscriptPluginOptions, opts: RtOptions, parts: Parts) {
  const { metrics, metricsOpts, history } = parts;
  const metricsPath = metricsOpts?.path ?? METRICS_PATH;
  if (
    options.webhooks?.secret !== undefined &&
    metrics &&
    (options.webhooks.path ?? DEFAULT_WEBHOOK_PATH) === metricsPath
  )
    throw new Error(
      `callscript plugin: webhooks.path and metrics.path are both ${metricsPath}: give them different paths`,
    );
  const webhooks = await webhookRoute(app, options.webhooks, parts.store, {
    ttlMs: history?.smsTtlMs ?? DEFAULT_HISTORY.ttlMs + opts.callTtlMs,
    log: app.log,
  });
  if (webhooks && metrics) metrics.countWebhooks(() => webhooks.counts.list());
  return webhooks;
}

function notAllowed(allow: string, what: string) {
  return (_req: FastifyRequest, reply: FastifyReply) =>
    sendError(reply.header('allow', allow), 405, 'METHOD_NOT_ALLOWED', what);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
