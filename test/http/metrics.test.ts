/**
 * GET /metrics after calls driven through fastify.inject: the exact lines of each metric
 * (durations by their counts: their values are the machine's), the reloads and refused
 * edits, the store errors, the deadline fallbacks, the effects, the traffic of the
 * transitions (TrafficSource); the path, `metrics: false`, and `auth: admin`.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildServer, createServer, type ServerOptions } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import { StoreUnavailable } from '../../src/store/types.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { hooked } from '../helpers/store.js';

const FLOWS = new URL('../fixtures/metrics-flows', import.meta.url).pathname;
const DESK = new URL('../fixtures/metrics-flows/desk.yaml', import.meta.url).pathname;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

async function server(opts: ServerOptions = {}) {
  const s = await createServer({ flowsDir: FLOWS, logLevel: false, effects: { sms: async () => '8242D945' }, ...opts });
  apps.push(s.app);
  return s;
}

const post = (app: FastifyInstance, url: string, over: Partial<RtFields> = {}) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: rtBody(over) });
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

/** The sample lines of the metrics named (no comments). */
async function lines(app: FastifyInstance, ...names: string[]): Promise<string[]> {
  const res = await app.inject({ url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body.split('\n').filter((l) => names.some((n) => l.startsWith(`${n}{`) || l.startsWith(`${n} `)));
}

/** A whole desk call: menu, 1 (sales), NOANSWER (bye), the play done (hangup), the service's HANGUP. */
async function wholeCall(app: FastifyInstance, callid: string) {
  await post(app, '/rt/desk', { callid });
  await post(app, '/rt/desk', { callid, command: 'read', command_id: 1, command_result: '1' });
  await post(app, '/rt/desk', { callid, command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
  await post(app, '/rt/desk', { callid, command: 'play', command_id: 3, command_result: '0' });
  expect(
    (await post(app, '/rt/desk', { callid, command: 'hangup', command_id: 4, call_status: 'HANGUP' })).statusCode,
  ).toBe(200);
}

describe('GET /metrics', () => {
  it(
    'counts requests, calls started and ended, transitions and live calls by flow version, in the Prometheus ' +
      'text format',
    async () => {
      const { app, registry } = await server();
      const v = registry.current('desk')!.version;
      const vc = registry.current('confirm')!.version;
      await wholeCall(app, '1');
      // a caller who hangs up at the menu: abandoned; still live meanwhile
      await post(app, '/rt/desk', { callid: '2' });
      await post(app, '/rt/desk', { callid: '3' });
      await post(app, '/rt/desk', { callid: '2', command: 'read', command_id: 1, call_status: 'HANGUP' });
      // a retry (the stored reply again), a stale request, an unknown flow, an sms
      await post(app, '/rt/desk', { callid: '3' });
      await post(app, '/rt/desk', { callid: '3', command: 'play', command_id: 1, command_result: '0' });
      await post(app, '/rt/nope', { callid: '4' });
      await post(app, '/rt/confirm', { callid: '5' });

      const res = await app.inject({ url: '/metrics' });
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toContain('# HELP callscript_requests_total Requests handled on the real-time route');
      expect(res.body).toContain('# TYPE callscript_requests_total counter\n');
      expect(res.body).toContain('# TYPE callscript_request_duration_seconds histogram\n');
      expect(await lines(app, 'callscript_requests_total')).toEqual([
        `callscript_requests_total{flow="desk",version="${v}",outcome="ok"} 8`,
        `callscript_requests_total{flow="desk",version="${v}",outcome="replay"} 1`,
        `callscript_requests_total{flow="desk",version="${v}",outcome="stale"} 1`,
        'callscript_requests_total{flow="",version="",outcome="no_route"} 1',
        `callscript_requests_total{flow="confirm",version="${vc}",outcome="ok"} 1`,
      ]);
      expect(await lines(app, 'callscript_calls_started_total', 'callscript_calls_ended_total')).toEqual([
        `callscript_calls_started_total{flow="desk",version="${v}"} 3`,
        `callscript_calls_started_total{flow="confirm",version="${vc}"} 1`,
        `callscript_calls_ended_total{flow="desk",version="${v}",outcome="completed"} 1`,
        `callscript_calls_ended_total{flow="desk",version="${v}",outcome="abandoned"} 1`,
      ]);
      expect(await lines(app, 'callscript_transitions_total')).toEqual([
        `callscript_transitions_total{flow="desk",version="${v}",transition="menu:1"} 1`,
        `callscript_transitions_total{flow="desk",version="${v}",transition="sales:NOANSWER"} 1`,
        `callscript_transitions_total{flow="desk",version="${v}",transition="bye:default"} 1`,
        `callscript_transitions_total{flow="confirm",version="${vc}",transition="confirm:default"} 1`,
      ]);
      // every loaded flow, 0 when it has no call
      expect(await lines(app, 'callscript_live_calls')).toEqual([
        'callscript_live_calls{flow="confirm"} 1',
        'callscript_live_calls{flow="desk"} 1',
      ]);
      expect(await lines(app, 'callscript_effects_total')).toEqual([
        'callscript_effects_total{kind="sms",outcome="ok"} 1',
      ]);
      expect(await lines(app, 'callscript_effect_duration_seconds_count')).toEqual([
        'callscript_effect_duration_seconds_count{kind="sms"} 1',
      ]);
      expect(await lines(app, 'callscript_request_duration_seconds_count')).toEqual([
        'callscript_request_duration_seconds_count{flow="desk",step="menu"} 4',
        'callscript_request_duration_seconds_count{flow="desk",step="sales"} 1',
        'callscript_request_duration_seconds_count{flow="desk",step="bye"} 1',
        'callscript_request_duration_seconds_count{flow="desk",step="end"} 2',
        'callscript_request_duration_seconds_count{flow="desk",step=""} 2',
        'callscript_request_duration_seconds_count{flow="",step=""} 1',
        'callscript_request_duration_seconds_count{flow="confirm",step="sent"} 1',
      ]);
      // the buckets are cumulative and end with +Inf = the count; the sum is a number of seconds
      const menu = (
        await lines(app, 'callscript_request_duration_seconds_bucket', 'callscript_request_duration_seconds_sum')
      ).filter((l) => l.includes('step="menu"'));
      expect(menu.map((l) => l.replace(/ [0-9.e-]+$/, ''))).toEqual([
        ...[
          '0.001',
          '0.0025',
          '0.005',
          '0.01',
          '0.025',
          '0.05',
          '0.1',
          '0.25',
          '0.5',
          '1',
          '2.5',
          '4',
          '5',
          '+Inf',
        ].map((le) => `callscript_request_duration_seconds_bucket{le="${le}",flow="desk",step="menu"}`),
        'callscript_request_duration_seconds_sum{flow="desk",step="menu"}',
      ]);
      const counts = menu.slice(0, 14).map((l) => Number(l.split(' ')[1]));
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      expect(counts[13]).toBe(4);
      expect(
        await lines(
          app,
          'callscript_deadline_fallbacks_total',
          'callscript_store_errors_total',
          'callscript_refused_edits',
          'callscript_reloads_total',
          'callscript_processes',
        ),
      ).toEqual(['callscript_refused_edits 0', 'callscript_store_errors_total 0', 'callscript_processes 1']);
    },
  );

  it("has the process's default metrics, prefixed callscript_", async () => {
    const { app } = await server();
    const body = (await app.inject({ url: '/metrics' })).body;
    for (const name of [
      'callscript_process_cpu_seconds_total',
      'callscript_process_resident_memory_bytes',
      'callscript_nodejs_eventloop_lag_seconds',
      'callscript_nodejs_heap_size_used_bytes',
    ]) {
      expect(body).toMatch(new RegExp(`^${name} [0-9.e+-]+$`, 'm'));
    }
    expect(body).toMatch(
      /^callscript_nodejs_version_info\{version="v\d+\.\d+\.\d+",major="\d+",minor="\d+",patch="\d+"\} 1$/m,
    );
    // the metric names are unique: the registries of several apps in a process never mix
    const types = body.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
  });

  it('keeps each app its own counts (a Registry per plugin instance)', async () => {
    const a = await server();
    const b = await server();
    await post(a.app, '/rt/desk', { callid: '1' });
    await post(a.app, '/rt/desk', { callid: '2' });
    await post(b.app, '/rt/desk', { callid: '1' });
    const v = a.registry.current('desk')!.version;
    expect(await lines(a.app, 'callscript_calls_started_total')).toEqual([
      `callscript_calls_started_total{flow="desk",version="${v}"} 2`,
    ]);
    expect(await lines(b.app, 'callscript_calls_started_total')).toEqual([
      `callscript_calls_started_total{flow="desk",version="${v}"} 1`,
    ]);
  });

  it(
    'counts reloads (ok, refused) and the files refused ' + 'now; the refused edit serves its previous version',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'callscript-metrics-'));
      cpSync(DESK, join(dir, 'desk.yaml'));
      const s = await server({ flowsDir: dir, reloadSettleMs: 0 });
      const v1 = s.registry.current('desk')!.version;
      await post(s.app, '/rt/desk', { callid: '1' });
      await s.control.reload!('test');
      writeFileSync(join(dir, 'desk.yaml'), readFileSync(DESK, 'utf8').replace('next: end', 'next: nowhere'));
      await s.control.reload!('test');
      expect(await lines(s.app, 'callscript_reloads_total', 'callscript_refused_edits')).toEqual([
        'callscript_reloads_total{result="ok"} 1',
        'callscript_reloads_total{result="refused"} 1',
        'callscript_refused_edits 1',
      ]);
      await post(s.app, '/rt/desk', { callid: '2' });
      expect(await lines(s.app, 'callscript_calls_started_total')).toEqual([
        `callscript_calls_started_total{flow="desk",version="${v1}"} 2`,
      ]);
      // two asks while one runs share the next run: counted once each run
      writeFileSync(join(dir, 'desk.yaml'), readFileSync(DESK, 'utf8').replace('Goodbye.', 'Bye.'));
      await Promise.all([s.control.reload!('a'), s.control.reload!('b'), s.control.reload!('c')]);
      expect(await lines(s.app, 'callscript_reloads_total', 'callscript_refused_edits')).toEqual([
        'callscript_reloads_total{result="ok"} 3',
        'callscript_reloads_total{result="refused"} 1',
        'callscript_refused_edits 0',
      ]);
      const v2 = s.registry.current('desk')!.version;
      await post(s.app, '/rt/desk', { callid: '3' });
      expect(await lines(s.app, 'callscript_calls_started_total')).toEqual([
        `callscript_calls_started_total{flow="desk",version="${v1}"} 2`,
        `callscript_calls_started_total{flow="desk",version="${v2}"} 1`,
      ]);
    },
  );

  it('a file refused at the start counts as a refused edit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callscript-metrics-'));
    cpSync(DESK, join(dir, 'desk.yaml'));
    writeFileSync(join(dir, 'broken.yaml'), 'version: 1\nstart: nowhere\nsteps:\n  a: { hangup: {} }\n');
    const { app } = await server({ flowsDir: dir });
    expect(await lines(app, 'callscript_refused_edits', 'callscript_live_calls')).toEqual([
      'callscript_live_calls{flow="desk"} 0',
      'callscript_refused_edits 1',
    ]);
  });

  it('counts STORE_UNAVAILABLE answers as store errors', async () => {
    const store = hooked(new MemoryStore(), {
      load: () => {
        throw new StoreUnavailable('Redis: connection refused');
      },
    });
    const { app } = await server({ store });
    expect((await post(app, '/rt/desk', { callid: '1' })).statusCode).toBe(503);
    expect((await post(app, '/rt/nope', { callid: '1' })).statusCode).toBe(503);
    expect(await lines(app, 'callscript_store_errors_total', 'callscript_requests_total')).toEqual([
      'callscript_requests_total{flow="",version="",outcome="store_unavailable"} 2',
      'callscript_store_errors_total 2',
    ]);
  });

  it('counts deadline fallbacks by flow, and the late step once, when it lands', async () => {
    const inner = new MemoryStore();
    let delay = 0;
    const slow = hooked(inner, { load: () => new Promise((r) => setTimeout(r, delay)) });
    const { app, registry } = await server({ store: slow, deadlineMs: 100 });
    const v = registry.current('desk')!.version;
    await post(app, '/rt/desk', { callid: '1' });
    delay = 250;
    const res = await post(app, '/rt/desk', { callid: '1', command: 'read', command_id: 1, command_result: '1' });
    expect(res.json()).toMatchObject({ command: 'wait', command_id: 1 });
    delay = 0;
    expect(await lines(app, 'callscript_deadline_fallbacks_total')).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(await lines(app, 'callscript_deadline_fallbacks_total', 'callscript_requests_total')).toEqual([
      `callscript_requests_total{flow="desk",version="${v}",outcome="ok"} 2`,
      'callscript_deadline_fallbacks_total{flow="desk"} 1',
    ]);
  });

  it('counts effects by kind and outcome (the error kind)', async () => {
    let fail = true;
    const { app } = await server({
      effects: {
        sms: async () => {
          if (fail) throw new Error('the API is down');
          return 'H1';
        },
      },
    });
    await post(app, '/rt/confirm', { callid: '1' });
    fail = false;
    await post(app, '/rt/confirm', { callid: '2' });
    await post(app, '/rt/confirm', { callid: '3' });
    expect(await lines(app, 'callscript_effects_total', 'callscript_effect_duration_seconds_count')).toEqual([
      'callscript_effects_total{kind="sms",outcome="FAILED"} 1',
      'callscript_effects_total{kind="sms",outcome="ok"} 2',
      'callscript_effect_duration_seconds_count{kind="sms"} 3',
    ]);
  });
});

describe('traffic(flow): the transitions per version and key, for the console', () => {
  it('gives what the transitions counter holds, for that flow only; {} for a flow with none or unknown', async () => {
    const { app, registry, control } = await server();
    const v = registry.current('desk')!.version;
    await wholeCall(app, '1');
    await post(app, '/rt/desk', { callid: '2' });
    await post(app, '/rt/desk', { callid: '2', command: 'read', command_id: 1, command_result: '1' });
    await post(app, '/rt/confirm', { callid: '3' });
    const traffic = control.traffic!;
    expect(await traffic.traffic('desk')).toEqual({ [v]: { 'menu:1': 2, 'sales:NOANSWER': 1, 'bye:default': 1 } });
    expect(await traffic.traffic('confirm')).toEqual({
      [registry.current('confirm')!.version]: { 'confirm:default': 1 },
    });
    expect(await traffic.traffic('nope')).toEqual({});
    expect(await traffic.traffic('__proto__')).toEqual({});
  });

  it('is absent with metrics: false', async () => {
    const { control } = await server({ metrics: false });
    expect(control.traffic).toBeUndefined();
  });
});

describe('the metrics route: path, off, admin credentials', () => {
  it('serves at the path given, under the plugin prefix; 405 for other methods', async () => {
    const app = await buildServer({ flowsDir: FLOWS, logLevel: false, metrics: { path: '/internal/prom' } });
    apps.push(app);
    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(404);
    const res = await app.inject({ url: '/internal/prom' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('callscript_refused_edits 0\n');
    expect((await app.inject({ method: 'HEAD', url: '/internal/prom' })).statusCode).toBe(200);
    const post = await app.inject({ method: 'POST', url: '/internal/prom' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: 'metrics only take GET' } });
  });

  it('metrics: false: no route', async () => {
    const app = await buildServer({ flowsDir: FLOWS, logLevel: false, metrics: false });
    apps.push(app);
    expect((await app.inject({ url: '/metrics' })).json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route GET /metrics' },
    });
  });

  it(
    'auth: admin: 401 ADMIN_AUTH_REQUIRED with the challenge without the admin credentials (the /rt ones do ' +
      'not do), 200 with them',
    async () => {
      const app = await buildServer({
        flowsDir: FLOWS,
        logLevel: false,
        auth: { login: 'svc', password: 'rt-pw' },
        admin: { login: 'ops', password: 'admin-pw' },
        metrics: { auth: 'admin' },
      });
      apps.push(app);
      for (const headers of [{}, { authorization: basic('svc', 'rt-pw') }, { authorization: basic('ops', 'wrong') }]) {
        const res = await app.inject({ url: '/metrics', headers });
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Basic realm="callscript-admin", charset="UTF-8"');
        expect(res.json()).toEqual({
          error: { code: 'ADMIN_AUTH_REQUIRED', message: 'valid admin HTTP Basic credentials are required' },
        });
      }
      const ok = await app.inject({ url: '/metrics', headers: { authorization: basic('ops', 'admin-pw') } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('callscript_processes 1\n');
    },
  );

  it('auth: admin: failed attempts are limited per address like the admin API (429 past the limit)', async () => {
    const app = await buildServer({
      flowsDir: FLOWS,
      logLevel: false,
      admin: { login: 'ops', password: 'admin-pw' },
      metrics: { auth: 'admin' },
      authFailureLimit: 2,
    });
    apps.push(app);
    const codes: number[] = [];
    for (let i = 0; i < 4; i++)
      codes.push(
        (await app.inject({ url: '/metrics', headers: { authorization: basic('ops', `guess${i}`) } })).statusCode,
      );
    expect(codes).toEqual([401, 401, 429, 429]);
  });

  it('refuses bad metrics options at registration with a clear message', async () => {
    const bad = async (metrics: unknown) =>
      buildServer({ flowsDir: FLOWS, logLevel: false, metrics: metrics as never });
    await expect(bad({ auth: 'admin' })).rejects.toThrow(
      'callscript plugin: metrics.auth admin needs the admin credentials (the admin option): without them ' +
        '/metrics would be open',
    );
    await expect(bad({ auth: 'open' })).rejects.toThrow(
      'callscript plugin: metrics.auth must be none or admin, got open',
    );
    await expect(bad({ path: 'metrics' })).rejects.toThrow(
      'callscript plugin: metrics.path must be a path like /metrics (letters, digits, . _ ~ - and /), got "metrics"',
    );
    await expect(bad({ path: '/health/metrics' })).rejects.toThrow(
      "callscript plugin: metrics.path /health/metrics is taken by the plugin's /health routes",
    );
    await expect(bad({ path: '/rt' })).rejects.toThrow(
      "callscript plugin: metrics.path /rt is taken by the plugin's /rt routes",
    );
    await expect(bad({ path: '/a b' })).rejects.toThrow('metrics.path must be a path like /metrics');
    await expect(bad(true)).rejects.toThrow('callscript plugin: metrics must be false or { path, auth }, got true');
  });
});
