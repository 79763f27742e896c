/**
 * The web console (/admin/console) and the two admin routes it draws with, registered in the
 * admin scope (its credentials and same-origin guard apply):
 *
 * - `GET /admin/console`: one HTML page; `GET /admin/console/assets/:file`: its ES modules,
 *   CSS and icon, read once from src/http/console/ (dist/http/console/ when built: the build
 *   copies them). No inline script or style: a strict Content-Security-Policy.
 * - `GET /admin/flows/:name/graph?version=`: a flow version's transition graph (the one of
 *   `callscript graph`), laid out on the server (src/http/layouts.ts) so the browser only
 *   draws the SVG.
 * - `GET /admin/flows/:name/traffic`: the transitions taken per version of the flow, as
 *   counted by the metrics (a TrafficSource), to colour the diagram's edges.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CompiledFlow } from '../engine/compile.js';
import type { Registry } from '../registry/registry.js';
import { compileAll } from '../registry/registry.js';
import type { SharedVersions } from '../registry/shared-versions.js';
import { sendError as fail } from './envelope.js';
import { GraphLayouts, type LayoutsOptions } from './layouts.js';
import type { TrafficSource } from './metrics.js';

export interface ConsoleDeps {
  registry: Registry;
  sync?: SharedVersions;
  traffic?: TrafficSource;
  layouts?: LayoutsOptions;
}

/** The console's page and assets may load from this origin only; no inline code, no frames. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src " +
  "'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The files of the console: index.html and assets/*, read once. */
function readAssets(): { page: Asset; assets: Map<string, Asset> } {
  const dir = new URL('./console/', import.meta.url);
  const asset = (url: URL, name: string): Asset => {
    const body = readFileSync(url);
    const type = TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';
    return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
  };
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(new URL('./assets/', dir))) {
    if (/^[a-z0-9-]+\.(js|css|svg)$/.test(name)) assets.set(name, asset(new URL(`./assets/${name}`, dir), name));
  }
  return { page: asset(new URL('./index.html', dir), 'index.html'), assets };
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin');
}

const VERSION_RE = /^[0-9a-f]{12}$/;
const clip = (s: string) => (s.length > 100 ? `${s.slice(0, 100)}…` : s);

/** Registers the console's routes on the admin scope (prefix /admin, its guards on). */
export async function registerConsole(admin: FastifyInstance, d: ConsoleDeps): Promise<void> {
  const { page, assets } = readAssets();
  const layouts = new GraphLayouts(d.layouts);
  admin.addHook('onClose', async () => layouts.close());
  // Released versions compiled again from their kept source, for the diagrams of finished calls (the last few).
  const recompiled = new Map<string, CompiledFlow>();

  admin.get('/console', async (_req, reply) =>
    secure(reply).header('cache-control', 'no-store').type(page.type).send(page.body),
  );

  admin.get<{ Params: { file: string } }>('/console/assets/:file', async (req, reply) => {
    const a = assets.get(req.params.file);
    if (!a) return fail(reply, 404, 'NOT_FOUND', `no console asset ${clip(req.params.file)}`);
    secure(reply).header('cache-control', 'private, no-cache').header('etag', a.etag);
    if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
    return reply.type(a.type).send(a.body);
  });

  /**
   * The version asked for (the current one by default), loaded, fetched from the shared store, or compiled again from
   * its source.
   */
  async function versionOf(name: string, version: unknown): Promise<CompiledFlow | undefined> {
    const e = d.registry.entry(name)!;
    if (version === undefined) return d.registry.current(name) ?? e.newest;
    if (typeof version !== 'string' || !VERSION_RE.test(version)) return undefined;
    const loaded = d.registry.get(name, version) ?? (d.sync ? await d.sync.fetch(name, version) : undefined);
    if (loaded) return loaded;
    const key = `${name}\u0000${version}`;
    const kept = recompiled.get(key);
    if (kept) return kept;
    const src = d.registry.sourceOf(name, version);
    if (!src) return undefined;
    const flow = compileAll([src]).flows.find((f) => f.name === name && f.version === version);
    if (!flow) return undefined;
    recompiled.set(key, flow);
    if (recompiled.size > 8) recompiled.delete(recompiled.keys().next().value!);
    return flow;
  }

  admin.get<{ Params: { name: string }; Querystring: { version?: unknown } }>(
    '/flows/:name/graph',
    async (req, reply) => {
      const { name } = req.params;
      if (!d.registry.entry(name)) return fail(reply, 404, 'UNKNOWN_FLOW', `no flow named "${clip(name)}" is loaded`);
      const flow = await versionOf(name, req.query.version);
      if (!flow)
        return fail(reply, 404, 'UNKNOWN_VERSION', `flow ${name} has no version ${clip(String(req.query.version))}`);
      const r = await layouts.get(flow);
      if (!r.ok)
        return fail(reply, r.lasting ? 422 : 503, r.lasting ? 'GRAPH_TOO_LARGE' : 'GRAPH_UNAVAILABLE', r.message);
      reply.header('cache-control', 'private, no-cache');
      return { ...r.graph, current: d.registry.current(name)?.version === flow.version };
    },
  );

  admin.get<{ Params: { name: string } }>('/flows/:name/traffic', async (req, reply) => {
    const { name } = req.params;
    if (!d.registry.entry(name)) return fail(reply, 404, 'UNKNOWN_FLOW', `no flow named "${clip(name)}" is loaded`);
    reply.header('cache-control', 'no-store');
    if (!d.traffic) return { flow: name, available: false, reason: 'no traffic source: metrics are off', versions: {} };
    try {
      return { flow: name, available: true, versions: await d.traffic.traffic(name) };
    } catch (err) {
      req.log.warn({ err, flow: name }, 'the traffic of a flow could not be read');
      return {
        flow: name,
        available: false,
        reason: `the traffic could not be read: ${err instanceof Error ? err.message : String(err)}`,
        versions: {},
      };
    }
  });
}
