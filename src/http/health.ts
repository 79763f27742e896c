/**
 * GET /health (readiness) and GET /health/live (liveness). Both are open (load balancers
 * and orchestrators probe them, with no credentials) and show names only: file names, never
 * paths. /health answers the allowed host names only (localhost, IP addresses,
 * server.allowed_hosts: src/http/hosts.ts), so that a DNS-rebinding page cannot read its flow
 * names and diagnostics; /health/live, which shows nothing, answers any.
 *
 * - /health: 503 `unavailable` when no call can be served here (no flow loaded, the store
 *   failing: unreachable, timing out, refusing writes), with the `reason` and the store's
 *   error (`storeError`: its kind, code, since when); 200 `degraded` when edits are refused
 *   (their flows serve the previous version; `refused` says which and why); else 200 `ok`.
 *   The store's fault is the store's own account when it keeps one (its `health`
 *   capability: the Redis store notes every command's outcome and writes a probe), else
 *   what a ping on each request to /health finds.
 * - /health/live: 200 while the process answers; it touches neither the store nor the
 *   flows (a Redis outage is not cured by a restart).
 */
import type { FastifyInstance, onRequestHookHandler, RouteHandlerMethod } from 'fastify';
import type { Diagnostic } from '../errors/diagnostic.js';
import type { LiveCalls } from '../registry/live.js';
import type { Registry } from '../registry/registry.js';
import { StoreFaults, type StoreFault, type StoreFaultKind } from '../store/faults.js';
import { capabilitiesOf, type CallStore } from '../store/types.js';
import { pendingView } from './admin.js';

export interface HealthDeps {
  /** onRequest of /health: the host names it answers (src/http/hosts.ts); /health/live answers any. */
  hostGuard: onRequestHookHandler;
  registry: Registry;
  store: Pick<CallStore, 'ping' | 'capabilities'>;
  live: Pick<LiveCalls, 'size'>;
  /** The files whose edit is refused now, with their diagnostics (file names only). */
  refused(): { file: string; diagnostics: Diagnostic[] }[];
  /** The 405 handler of a path, naming the methods it takes. */
  notAllowed(allow: string, what: string): RouteHandlerMethod;
}

/** How `store` and `reason` name each kind of store fault. */
const FAULT_WORDS: Record<StoreFaultKind, { store: string; reason: string }> = {
  writes_refused: { store: 'writes refused', reason: 'refuses writes' },
  timeout: { store: 'timing out', reason: 'times out' },
  unreachable: { store: 'unreachable', reason: 'is unreachable' },
  error: { store: 'failing', reason: 'fails' },
};

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function registerHealth(app: FastifyInstance, d: HealthDeps): void {
  const reg = d.registry;
  // a store that keeps no account of its own: its pings' outcomes
  const pings = new StoreFaults();
  const storeFault = async (): Promise<StoreFault | undefined> => {
    const health = capabilitiesOf(d.store).health;
    if (health)
      return health().catch((e: unknown) => {
        pings.met({ kind: 'error', message: messageOf(e) });
        return pings.current();
      });
    await d.store.ping().then(
      () => pings.served(false),
      (e: unknown) => pings.met({ kind: 'unreachable', message: messageOf(e) }),
    );
    return pings.current();
  };
  app.get('/health', { onRequest: d.hostGuard }, async (_req, reply) => {
    const pending = reg.pendingErrors();
    // the store must serve: without it no call can advance (the balancer takes the instance out)
    const fault = await storeFault();
    const flows = reg.list();
    const refused = d.refused();
    const down: string[] = [];
    if (flows.length === 0)
      down.push(`no flow is loaded${refused.length > 0 ? ` (${refused.length} refused: see refused)` : ''}`);
    if (fault) down.push(`the call store ${FAULT_WORDS[fault.kind].reason}: ${fault.message}`);
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
      store: fault ? `${FAULT_WORDS[fault.kind].store}: ${fault.message}` : 'ok',
      ...(fault
        ? {
            storeError: {
              kind: fault.kind,
              ...(fault.code !== undefined ? { code: fault.code } : {}),
              message: fault.message,
              since: new Date(fault.since).toISOString(),
              at: new Date(fault.at).toISOString(),
            },
          }
        : {}),
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
