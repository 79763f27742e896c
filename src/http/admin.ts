/**
 * The admin API (/admin/...): flows and their versions, live and finished calls
 * (src/http/calls.ts), outbound calls (src/http/outbound.ts), queues (src/http/queues.ts), rollback, canary,
 * reload. Registered only when admin credentials are configured; those are its own
 * (not the real-time route's), checked in onRequest before any body is read. Answers are
 * JSON; errors use the `{"error":{"code","message"}}` envelope with catalogue codes.
 */
import { basename } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Diagnostic } from '../errors/diagnostic.js';
import type { LiveCalls } from '../registry/live.js';
import type { FlowEntry, Registry } from '../registry/registry.js';
import type { ReloadSummary } from '../registry/reloader.js';
import type { CallStore } from '../store/types.js';
import { authGuard, type AuthLimits } from './auth.js';
import { sendError as fail } from './envelope.js';
import { requireJsonBody, sameOriginOnly } from './guards.js';
import { allowedHostsOnly } from './hosts.js';
import type { SharedVersions } from '../registry/shared-versions.js';
import { registerConsole } from './console.js';
import type { TrafficSource } from './metrics.js';
import { registerCalls, type CallsDeps } from './calls.js';
import type { WebhookReceiver } from './webhooks.js';
import { registerOutbound, type OutboundRouteDeps } from './outbound.js';
import { registerQueues } from './queues.js';

export interface AdminDeps extends CallsDeps {
  auth: { login: string; password: string };
  /** Host names the admin API answers to besides localhost and IP addresses (server.allowed_hosts). */
  allowedHosts: readonly string[];
  /** Failed admin authentications counted per address (its own counters, not /rt's). */
  limits: AuthLimits | undefined;
  registry: Registry;
  live: LiveCalls;
  store: CallStore;
  reload: (reason: string) => Promise<ReloadSummary>;
  /** With a shared store: pins, canaries and counts shared by the instances. */
  sync?: SharedVersions;
  /** The webhook route, when it is on (GET /admin/webhooks shows its counts). */
  webhooks?: WebhookReceiver;
  /** Outbound calls (POST /admin/calls, GET /admin/outbound/:id); absent when the store cannot keep them. */
  outbound?: OutboundRouteDeps;
  /** The traffic of each flow's transitions (the metrics: src/http/metrics.ts), when metrics are on. */
  traffic?: TrafficSource;
}

/** Diagnostics as shown over HTTP: file names only, never absolute paths. */
export function pendingView(ds: readonly Diagnostic[] | undefined): Diagnostic[] {
  return (ds ?? []).map((d) => ({ ...d, file: basename(d.file) }));
}

/** A flow as the admin API shows it. */
export function flowView(e: FlowEntry, d: Pick<AdminDeps, 'registry' | 'live' | 'sync'>, detail: boolean) {
  const current = d.registry.current(e.name)?.version ?? null;
  const last = new Map<string, number>();
  for (const r of e.history) last.set(r.version, r.publishedAt);
  for (const v of e.versions.keys()) if (!last.has(v)) last.set(v, 0);
  const versions = [...last.entries()]
    .sort((a, b) => a[1] - b[1])
    .map(([version, at]) => ({
      version,
      publishedAt: at ? new Date(at).toISOString() : null,
      loaded: e.versions.has(version),
      current: version === current,
      newest: version === e.newest.version,
      liveCalls: d.live.count(e.name, version),
      ...(d.sync ? d.sync.statsFor(e.name, version) : d.live.statsFor(e.name, version)),
    }));
  return {
    name: e.name,
    file: basename(e.file),
    deleted: e.deleted,
    current,
    newest: e.newest.version,
    previous: e.previous ?? null,
    pinned: e.pinned ?? null,
    canary:
      e.canary === undefined
        ? null
        : { percent: e.canary, newest: e.newest.version, base: e.pinned ?? e.previous ?? null },
    liveCalls: versions.reduce((n, v) => n + v.liveCalls, 0),
    errors: pendingView(d.registry.pendingErrors().get(e.file)),
    versions,
    ...(detail ? { impact: e.impact ?? null } : {}),
  };
}

/** The JSON object of a POST body ({} when empty); a string message when it is not one. */
export function bodyObject(req: Pick<FastifyRequest, 'body'>): Record<string, unknown> | string {
  const text = typeof req.body === 'string' ? req.body.trim() : '';
  if (text === '') return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : 'the body must be a JSON object';
  } catch {
    return 'the body is not valid JSON';
  }
}

export async function registerAdmin(app: FastifyInstance, d: AdminDeps): Promise<void> {
  await app.register(
    async (admin) => {
      // A host name not allowed (DNS rebinding) and a browser sent here by another site are
      // refused before the credentials are looked at; then the admin credentials (failures
      // counted per address); then a POST body is JSON.
      admin.addHook('onRequest', allowedHostsOnly(d.allowedHosts));
      admin.addHook('onRequest', sameOriginOnly(d.allowedHosts));
      admin.addHook(
        'onRequest',
        authGuard(
          {
            credentials: d.auth,
            code: 'ADMIN_AUTH_REQUIRED',
            message: 'valid admin HTTP Basic credentials are required',
            name: 'callscript-admin',
            what: 'the admin API',
          },
          d.limits,
        ),
      );
      admin.addHook('onRequest', (req, reply, done) =>
        req.method === 'POST' ? requireJsonBody(req, reply, done) : done(),
      );

      admin.get(
        '/flows',
        async () => (
          await d.sync?.refresh(),
          {
            flows: d.registry.entriesList().map((e) => flowView(e, d, false)),
            refused: [...d.registry.pendingErrors().entries()].map(([file, ds]) => ({
              file: basename(file),
              diagnostics: pendingView(ds),
            })),
            liveCalls: d.live.size,
          }
        ),
      );

      admin.get<{ Params: { name: string } }>('/flows/:name', async (req, reply) => {
        const e = d.registry.entry(req.params.name);
        if (!e) return fail(reply, 404, 'UNKNOWN_FLOW', `no flow named "${req.params.name}" is loaded`);
        await d.sync?.refresh();
        return flowView(e, d, true);
      });

      admin.post<{ Params: { name: string } }>('/flows/:name/current', async (req, reply) => {
        const body = bodyObject(req);
        if (typeof body === 'string') return fail(reply, 400, 'BAD_ADMIN_BODY', body);
        if (typeof body.version !== 'string')
          return fail(reply, 400, 'BAD_ADMIN_BODY', 'give the version to make current: {"version": "<12 hex digits>"}');
        // a version published by another instance only: fetched from the shared store first
        if (d.sync && d.registry.has(req.params.name) && !d.registry.get(req.params.name, body.version))
          await d.sync.fetch(req.params.name, body.version);
        const r = d.registry.setCurrent(req.params.name, body.version);
        if (r === 'UNKNOWN_FLOW')
          return fail(reply, 404, 'UNKNOWN_FLOW', `no flow named "${req.params.name}" takes calls`);
        if (r === 'UNKNOWN_VERSION')
          return fail(reply, 404, 'UNKNOWN_VERSION', `flow ${req.params.name} has no version ${body.version}`);
        await d.sync?.setPin(req.params.name, body.version);
        req.log.warn(
          { code: 'FLOW_PINNED', flow: req.params.name, version: body.version },
          `flow ${req.params.name}: new calls get version ${body.version} (set by the admin API)`,
        );
        return flowView(d.registry.entry(req.params.name)!, d, true);
      });

      admin.post<{ Params: { name: string } }>('/flows/:name/canary', async (req, reply) => {
        const body = bodyObject(req);
        if (typeof body === 'string') return fail(reply, 400, 'BAD_ADMIN_BODY', body);
        const p = body.percent;
        if (!(p === null || (typeof p === 'number' && p >= 0 && p <= 100)))
          return fail(
            reply,
            400,
            'BAD_ADMIN_BODY',
            'give the percent of new calls for the newest version: {"percent": 0..100}, or {"percent": null} ' +
              'to stop the canary',
          );
        if (d.registry.setCanary(req.params.name, p ?? undefined) !== 'ok')
          return fail(reply, 404, 'UNKNOWN_FLOW', `no flow named "${req.params.name}" takes calls`);
        await d.sync?.setCanary(req.params.name, p ?? null);
        req.log.warn(
          { code: 'FLOW_CANARY', flow: req.params.name, percent: p },
          `flow ${req.params.name}: ` +
            `canary ${p === null ? 'off' : `${p}% of new calls to the newest version`} (set by the admin API)`,
        );
        return flowView(d.registry.entry(req.params.name)!, d, true);
      });

      admin.post('/reload', async () => d.reload('admin API'));

      registerCalls(admin, d);
      if (d.outbound) registerOutbound(admin, d.outbound, bodyObject);
      // the queues' lines and agents, from the store (src/http/queues.ts)
      registerQueues(admin, { store: d.store }, bodyObject);

      // the webhook route and the events it took since this process started, by type and result (docs/webhooks.md)
      admin.get('/webhooks', async () =>
        d.webhooks
          ? { on: true, path: d.webhooks.path, events: d.webhooks.counts.list() }
          : { on: false, path: null, events: [] },
      );

      // the web console and the graph and traffic routes it draws with (src/http/console.ts)
      await registerConsole(admin, {
        registry: d.registry,
        ...(d.sync ? { sync: d.sync } : {}),
        ...(d.traffic ? { traffic: d.traffic } : {}),
      });
    },
    { prefix: '/admin' },
  );
}
