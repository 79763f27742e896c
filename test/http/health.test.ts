/**
 * GET /health (readiness) and GET /health/live (liveness): 200 ok; 200 degraded when edits
 * are refused; 503 unavailable with the reason when no flow is loaded or the store is
 * unreachable (both reasons when both), or in the fault its own account gives (storeError);
 * liveness answers whatever the store and flows, and never asks the store.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type ServerOptions } from '../../src/http/server.js';
import type { StoreFault } from '../../src/store/faults.js';
import { MemoryStore } from '../../src/store/memory.js';
import { rtBody } from '../helpers/rt.js';

const DESK = new URL('../fixtures/metrics-flows/desk.yaml', import.meta.url).pathname;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** A memory store whose ping fails while `down`, counting pings. */
class FlakyStore extends MemoryStore {
  down = false;
  pings = 0;
  override async ping(): Promise<void> {
    this.pings++;
    if (this.down) throw new Error('Redis: connect ECONNREFUSED 127.0.0.1:6379');
  }
}

function flowsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-health-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function server(dir: string, opts: ServerOptions = {}) {
  const store = new FlakyStore();
  const s = await createServer({ flowsDir: dir, logLevel: false, store, reloadSettleMs: 0, ...opts });
  apps.push(s.app);
  return { ...s, store };
}

const get = async (app: FastifyInstance, url = '/health') => {
  const res = await app.inject({ url });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
};

const desk = readFileSync(DESK, 'utf8');
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const BROKEN = 'version: 1\nstart: nowhere\nsteps:\n  a: { hangup: {} }\n';

describe('GET /health', () => {
  it('200 ok: flows loaded, store answering, nothing refused; no reason', async () => {
    const { app } = await server(flowsDir({ 'desk.yaml': desk }));
    const h = await get(app);
    expect(h.status).toBe(200);
    expect(h.body).toEqual({
      status: 'ok',
      store: 'ok',
      flows: [expect.objectContaining({ name: 'desk', file: 'desk.yaml', errors: [] })],
      refused: [],
      calls: 0,
    });
  });

  it('200 degraded when an edit is refused (the flow serves its previous version), ok again once fixed', async () => {
    const dir = flowsDir({ 'desk.yaml': desk });
    const { app, control, registry } = await server(dir);
    const v1 = registry.current('desk')!.version;
    writeFileSync(join(dir, 'desk.yaml'), desk.replace('next: end', 'next: nowhere'));
    await control.reload!('test');
    const h = await get(app);
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('degraded');
    expect(h.body.reason).toBe(
      '1 flow file is refused (see refused): a flow whose edit is refused serves its previous version',
    );
    expect(h.body.flows).toEqual([
      expect.objectContaining({
        name: 'desk',
        version: v1,
        errors: [expect.objectContaining({ code: 'UNKNOWN_STEP', file: 'desk.yaml' })],
      }),
    ]);
    writeFileSync(join(dir, 'desk.yaml'), desk);
    await control.reload!('test');
    expect((await get(app)).body).toMatchObject({ status: 'ok', refused: [] });
    expect((await get(app)).body.reason).toBeUndefined();
  });

  it('200 degraded with two files refused at the start (one a new flow), the others serving', async () => {
    const { app } = await server(
      flowsDir({ 'desk.yaml': desk, 'a.yaml': BROKEN, 'b.yaml': BROKEN.replace('a:', 'b:') }),
    );
    const h = await get(app);
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('degraded');
    expect(h.body.reason).toBe(
      '2 flow files are refused (see refused): a flow whose edit is refused serves its previous version',
    );
    expect((h.body.refused as { file: string }[]).map((r) => r.file)).toEqual(['a.yaml', 'b.yaml']);
  });

  it('503 unavailable when no flow is loaded: an empty directory, or every file refused', async () => {
    const empty = await server(flowsDir({}));
    expect(await get(empty.app)).toEqual({
      status: 503,
      body: { status: 'unavailable', reason: 'no flow is loaded', store: 'ok', flows: [], refused: [], calls: 0 },
    });
    const refused = await server(flowsDir({ 'a.yaml': BROKEN }));
    const h = await get(refused.app);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({
      status: 'unavailable',
      reason: 'no flow is loaded (1 refused: see refused)',
      flows: [],
      refused: [{ file: 'a.yaml' }],
    });
  });

  it('503 unavailable when the store does not answer, with its error; both reasons when both', async () => {
    const { app, store } = await server(flowsDir({ 'desk.yaml': desk }));
    store.down = true;
    const h = await get(app);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({
      status: 'unavailable',
      reason: 'the call store is unreachable: Redis: connect ECONNREFUSED 127.0.0.1:6379',
      store: 'unreachable: Redis: connect ECONNREFUSED 127.0.0.1:6379',
    });
    store.down = false;
    expect((await get(app)).status).toBe(200);
    const none = await server(flowsDir({}));
    none.store.down = true;
    expect((await get(none.app)).body.reason).toBe(
      'no flow is loaded; the call store is unreachable: Redis: connect ECONNREFUSED 127.0.0.1:6379',
    );
  });

  it('a store that only pings: storeError with its kind and since when, kept while it stays down', async () => {
    const { app, store } = await server(flowsDir({ 'desk.yaml': desk }));
    store.down = true;
    const first = (await get(app)).body.storeError as { since: string; at: string };
    expect(first).toEqual({
      kind: 'unreachable',
      message: 'Redis: connect ECONNREFUSED 127.0.0.1:6379',
      since: expect.stringMatching(ISO),
      at: expect.stringMatching(ISO),
    });
    const second = (await get(app)).body.storeError as { since: string; at: string };
    expect(second.since).toBe(first.since);
    expect(second.at >= first.at).toBe(true);
    store.down = false;
    expect((await get(app)).body).toMatchObject({ status: 'ok', store: 'ok' });
    expect((await get(app)).body.storeError).toBeUndefined();
  });

  it("a store that keeps its own account (capabilities.health): its fault, not a ping's", async () => {
    const store = new FlakyStore();
    let fault: StoreFault | undefined = {
      kind: 'writes_refused',
      code: 'OOM',
      message: 'Redis: OOM command not allowed',
      since: Date.UTC(2026, 10, 22, 10),
      at: Date.UTC(2026, 10, 22, 10, 5),
    };
    Object.assign(store, { capabilities: { shared: false, health: async () => fault } });
    const s = await createServer({ flowsDir: flowsDir({ 'desk.yaml': desk }), logLevel: false, store });
    apps.push(s.app);
    expect(await get(s.app)).toMatchObject({
      status: 503,
      body: {
        status: 'unavailable',
        reason: 'the call store refuses writes: Redis: OOM command not allowed',
        store: 'writes refused: Redis: OOM command not allowed',
        storeError: {
          kind: 'writes_refused',
          code: 'OOM',
          message: 'Redis: OOM command not allowed',
          since: '2026-11-22T10:00:00.000Z',
          at: '2026-11-22T10:05:00.000Z',
        },
      },
    });
    expect(store.pings).toBe(0);
    fault = { kind: 'timeout', message: 'Redis: Command timed out', since: 0, at: 0 };
    expect((await get(s.app)).body).toMatchObject({
      reason: 'the call store times out: Redis: Command timed out',
      store: 'timing out: Redis: Command timed out',
    });
    fault = undefined;
    expect((await get(s.app)).status).toBe(200);
  });

  it('under the plugin prefix, HEAD too', async () => {
    const Fastify = (await import('fastify')).default;
    const { callscript } = await import('../../src/http/plugin.js');
    const app = Fastify();
    apps.push(app);
    await app.register(callscript, { flowsDir: flowsDir({ 'desk.yaml': desk }), prefix: '/ivr' });
    expect((await app.inject({ url: '/ivr/health' })).json().status).toBe('ok');
    expect((await app.inject({ url: '/ivr/health/live' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ method: 'HEAD', url: '/ivr/health/live' })).statusCode).toBe(200);
  });
});

describe('GET /health/live', () => {
  it('200 {status: ok} with the store down and no flow loaded, without asking the store', async () => {
    const { app, store } = await server(flowsDir({}));
    store.down = true;
    const before = store.pings;
    for (let i = 0; i < 3; i++) expect(await get(app, '/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(store.pings).toBe(before);
    expect((await get(app)).status).toBe(503);
    expect(store.pings).toBe(before + 1);
  });

  it('405 with Allow for other methods; query strings ignored', async () => {
    const { app } = await server(flowsDir({ 'desk.yaml': desk }));
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      const res = await app.inject({ method, url: '/health/live' });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: 'liveness only takes GET' } });
    }
    expect((await get(app, `/health/live?probe=${'x'.repeat(2000)}`)).status).toBe(200);
  });
});

describe('a refused file copied over a loaded one', () => {
  it('degraded, not unavailable: the loaded version keeps serving', async () => {
    const dir = flowsDir({});
    cpSync(DESK, join(dir, 'desk.yaml'));
    const { app, control } = await server(dir);
    writeFileSync(join(dir, 'desk.yaml'), BROKEN.replace('version: 1', 'version: 1\nname: desk'));
    await control.reload!('test');
    const h = await get(app);
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('degraded');
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/rt/desk',
          headers: { 'content-type': 'application/json' },
          payload: rtBody(),
        })
      ).statusCode,
    ).toBe(200);
  });
});
