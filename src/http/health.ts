/**
 * GET /health (readiness) and GET /health/live (liveness). Both are open (load balancers
 * and orchestrators probe them, with no credentials) and show names only: file names, never
 * paths. /health answers the allowed host names only (localhost, IP addresses,
 * server.allowed_hosts: src/http/hosts.ts), so that a DNS-rebinding page cannot read its flow
 * names and diagnostics; /health/live, which shows nothing, answers any.
 *
 * - /health: 503 `unavailable` when no call can be served here (no flow loaded, the store
 *   unreachable), with the `reason`; 200 `degraded` when edits are refused (their flows
 *   serve the previous version; `refused` says which and why); else 200 `ok`.
 * - /health/live: 200 while the process answers; it touches neither the store nor the
 *   flows (a Redis outage is not cured by a restart).
 */
import type { FastifyInstance, onRequestHookHandler, RouteHandlerMethod } from 'fastify';
import type { Diagnostic } from '../errors/diagnostic.js';
import type { LiveCalls } from '../registry/live.js';
import type { Registry } from '../registry/registry.js';
import type { CallStore } from '../store/types.js';
import { pendingView } from './admin.js';

export interface HealthDeps {
  /** onRequest of /health: the host names it answers (src/http/hosts.ts); /health/live answers any. */
  hostGuard: onRequestHookHandler;
  registry: Registry;
  store: Pick<CallStore, 'ping'>;
  live: Pick<LiveCalls, 'size'>;
  /** The files whose edit is refused now, with their diagnostics (file names only). */
  refused(): { file: string; diagnostics: Diagnostic[] }[];
  /** The 405 handler of a path, naming the methods it takes. */
  notAllowed(allow: string, what: string): RouteHandlerMethod;
}

export function registerHealth(app: FastifyInstance, d: HealthDeps): void {
  const reg = d.registry;
  app.get('/health', { onRequest: d.hostGuard }, async (_req, reply) => {
    const pending = reg.pendingErrors();
    // the store must answer: without it no call can advance (the balancer takes the instance out)
    const storeProblem = await d.store.ping().then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    const flows = reg.list();
    const refused = d.refused();
    const down: string[] = [];
    if (flows.length === 0)
      down.push(`no flow is loaded${refused.length > 0 ? ` (${refused.length} refused: see refused)` : ''}`);
    if (storeProblem !== undefined) down.push(`the call store is unreachable: ${storeProblem}`);
    const status = down.length > 0 ? 'unavailable' : refused.length > 0 ? 'degraded' : 'ok';
    if (down.length > 0) reply.code(503);
    const reason =
      down.length > 0
        ? down.join('; ')
        : refused.length > 0
          ? `${refused.length} flow file${refused.length === 1 ? ' is' : 's are'} refused (see refused): a ` +
            `flow whose edit is refused serves its previous version`
          : undefined;
    return {
      status,
      ...(reason !== undefined ? { reason } : {}),
      store: storeProblem === undefined ? 'ok' : `unreachable: ${storeProblem}`,
      // `errors`: the pending diagnostics of a refused edit of the flow's file
      flows: flows.map((f) => ({ ...f, errors: pendingView(pending.get(reg.entry(f.name)!.file)) })),
      refused,
      // Live calls: ended calls' tombstones in the store are not counted.
      calls: d.live.size,
    };
  });
  app.route({
    method: ['DELETE', 'PATCH', 'POST', 'PUT'],
    url: '/health',
    handler: d.notAllowed('GET, HEAD', 'health only takes GET'),
  });
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.route({
    method: ['DELETE', 'PATCH', 'POST', 'PUT'],
    url: '/health/live',
    handler: d.notAllowed('GET, HEAD', 'liveness only takes GET'),
  });
}
