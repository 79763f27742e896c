/**
 * The web console's routes through fastify.inject: the page and its assets (credentials,
 * CSP, caching), GET /admin/flows/:name/graph (the graph of `callscript graph`, laid out)
 * and GET /admin/flows/:name/traffic, with hostile inputs. The browser's view of it:
 * console-browser.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from '../../src/http/server.js';
import { flowVersion } from '../../src/engine/compile.js';
import { compileAll } from '../../src/registry/registry.js';
import { buildGraph } from '../../src/testing/graph.js';
import { CONSOLE_CSP } from '../../src/http/console.js';
import { ADMIN, ADMIN_HEADER, flowsDir, RtCall } from '../helpers/console.js';
import { DESK, DESK_V2, DESK_V3 } from '../helpers/console-flows.js';
import { bigFlow } from '../helpers/big-flow.js';

let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.app.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(
  files: Record<string, string> = { 'desk.yaml': DESK },
  extra: Parameters<typeof createServer>[0] = {},
) {
  dir = flowsDir(files);
  // a file is written, then reloaded at once: the settle window (test/registry/settle.test.ts) is not waited for
  server = await createServer({ flowsDir: dir, logLevel: false, admin: ADMIN, reloadSettleMs: 0, ...extra });
  return server;
}
const get = (s: Server, url: string, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'GET', url, headers: { authorization: ADMIN_HEADER, ...headers } });
const reload = (s: Server) =>
  s.app.inject({ method: 'POST', url: '/admin/reload', headers: { authorization: ADMIN_HEADER } });

describe('GET /admin/console', () => {
  it('asks for the admin credentials (the browser shows its login prompt)', async () => {
    const s = await start();
    for (const url of [
      '/admin/console',
      '/admin/console/assets/app.js',
      '/admin/flows/desk/graph',
      '/admin/flows/desk/traffic',
    ]) {
      const r = await s.app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Basic realm="callscript-admin", charset="UTF-8"');
      expect(r.json()).toEqual({
        error: { code: 'ADMIN_AUTH_REQUIRED', message: 'valid admin HTTP Basic credentials are required' },
      });
      const wrong = await get(s, url, { authorization: 'Basic ' + Buffer.from('boss:nope').toString('base64') });
      expect(wrong.statusCode).toBe(401);
    }
  });

  it('does not exist without admin credentials configured', async () => {
    dir = flowsDir({ 'desk.yaml': DESK });
    server = await createServer({ flowsDir: dir, logLevel: false });
    const r = await server.app.inject({ method: 'GET', url: '/admin/console' });
    expect(r.statusCode).toBe(404);
    expect(r.json().error.code).toBe('NOT_FOUND');
  });

  it('serves one HTML page under a strict CSP: no inline script or style, never cached', async () => {
    const s = await start();
    const r = await get(s, '/admin/console');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src " +
        "'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    const html = r.body;
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => [m[1], m[2]])).toEqual([[' type="module" src="console/assets/app.js"', '']]);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=|javascript:|https?:\/\//i);
    // relative URLs: the console works under the plugin's prefix too
    expect([...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'console/assets/icon.svg',
      'console/assets/style.css',
      'console/assets/app.js',
      '#/',
      '#/',
      '#/calls',
      '#/queues',
    ]);
    // nothing of the request is reflected
    const odd = await get(s, '/admin/console?<script>alert(1)</script>');
    expect(odd.body).toBe(html);
  });

  it('serves its assets, each module the app imports, with ETags (304 when unchanged)', async () => {
    const s = await start();
    const seen = new Set<string>();
    const queue = ['app.js'];
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const r = await get(s, `/admin/console/assets/${name}`);
      expect(r.statusCode, name).toBe(200);
      expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(r.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(r.headers['cache-control']).toBe('private, no-cache');
      for (const m of r.body.matchAll(/^import .* from '\.\/([a-z-]+\.js)';$/gm)) queue.push(m[1]!);
      // never markup from strings: no innerHTML, outerHTML, insertAdjacentHTML, document.write, eval
      expect(r.body, name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
    }
    expect([...seen].sort()).toEqual([
      'api.js',
      'app.js',
      'call.js',
      'calls.js',
      'diagram.js',
      'dom.js',
      'flow.js',
      'flows.js',
      'format.js',
      'queues.js',
    ]);
    const css = await get(s, '/admin/console/assets/style.css');
    expect([css.statusCode, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8']);
    const icon = await get(s, '/admin/console/assets/icon.svg');
    expect([icon.statusCode, icon.headers['content-type']]).toEqual([200, 'image/svg+xml']);
    const etag = css.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const again = await get(s, '/admin/console/assets/style.css', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('hostile: asset names outside the list are 404, never files of the server', async () => {
    const s = await start();
    for (const name of [
      'nope.js',
      '..%2Fconsole.ts',
      '%2e%2e%2f%2e%2e%2fpackage.json',
      'index.html',
      '.%2Fapp.js',
      'APP.JS',
      'app.js%00',
      `${'a'.repeat(90)}.js`,
    ]) {
      const r = await get(s, `/admin/console/assets/${name}`);
      expect(r.statusCode, name).toBe(404);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    const r = await get(s, '/admin/console/assets/nope.js');
    expect(r.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no console asset nope.js' } });
    expect((await get(s, '/admin/console/assets/..%2F..%2Fpackage.json')).body).not.toContain('"dependencies"');
  });

  it('refuses a page another site sends the browser to (the admin credentials stay unused)', async () => {
    const s = await start();
    const r = await get(s, '/admin/console', { 'sec-fetch-site': 'cross-site' });
    expect(r.statusCode).toBe(403);
    expect(r.json().error.code).toBe('CROSS_ORIGIN');
    expect((await get(s, '/admin/flows/desk/graph', { origin: 'http://evil.example' })).statusCode).toBe(403);
    expect((await get(s, '/admin/console', { 'sec-fetch-site': 'none' })).statusCode).toBe(200);
  });
});

describe('GET /admin/flows/:name/graph', () => {
  it(
    'answers the graph of `callscript graph`, laid out: nodes with label lines and boxes, edges with keys, ' +
      'labels and points',
    async () => {
      const s = await start();
      const r = await get(s, '/admin/flows/desk/graph');
      expect(r.statusCode).toBe(200);
      expect(r.headers['cache-control']).toBe('private, no-cache');
      const g = r.json();
      expect(Object.keys(g)).toEqual(['flow', 'version', 'width', 'height', 'nodes', 'edges', 'current']);
      expect([g.flow, g.version, g.current]).toEqual(['desk', flowVersion(DESK), true]);
      expect(g.nodes.map((n: Record<string, unknown>) => [n.id, n.step, n.kind, n.lines])).toEqual([
        ['start', null, 'start', ['start']],
        ['s0', 'hello', 'command', ['hello', 'play: "Welcome to the desk."']],
        ['s1', 'menu', 'command', ['menu', 'read: "Press 1 for sales, 2 for he…"', 'max_digits 1']],
        ['s2', 'sales', 'command', ['sales', 'dialout']],
        ['s3', 'help', 'command', ['help', 'play: "Help is on the way."']],
        ['s4', 'count', 'logic', ['count', 'set visits']],
        ['s5', 'again', 'logic', ['again', 'when']],
        ['s6', 'operator', 'command', ['operator', 'dialout']],
        ['s7', 'bye', 'command', ['bye', 'play: "Goodbye."']],
        ['s8', 'end', 'end', ['end', 'hangup']],
        ['s9', 'log_end', 'logic', ['log_end', 'set ended']],
        ['flow_end', null, 'end', ['end (hangup)']],
        ['call_ends', null, 'start', ['call ends', '(any step)']],
      ]);
      expect(
        g.edges.map((e: Record<string, unknown>) => [
          e.id,
          e.from,
          e.to,
          e.transitions,
          e.kind,
          e.label,
          e.dashed,
          e.flowWide,
        ]),
      ).toEqual([
        ['e0', 'start', 's0', [], 'start', '', false, false],
        ['e1', 's0', 's1', ['hello:default'], 'key', 'default', false, false],
        ['e2', 's0', 'flow_end', [], 'unhandled', 'error', false, false],
        ['e3', 'call_ends', 's9', [], 'handler', 'hangup handler (flow-wide)', true, false],
        ['e4', 's1', 's2', ['menu:1'], 'key', '1', false, false],
        ['e5', 's1', 's3', ['menu:2'], 'key', '2', false, false],
        ['e6', 's1', 's1', ['menu:TIMEOUT'], 'retry', 'TIMEOUT ×2', false, false],
        ['e7', 's1', 's7', ['menu:TIMEOUT:then'], 'then', 'TIMEOUT (retries used up)', false, false],
        ['e8', 's1', 's6', ['handlers.on.read:0'], 'key', '0 (flow-wide)', true, true],
        ['e9', 's1', 's7', ['menu:default'], 'key', 'default', false, false],
        ['e10', 's1', 'flow_end', [], 'unhandled', 'error', false, false],
        ['e11', 's2', 's7', ['sales:NOANSWER'], 'key', 'NOANSWER', false, false],
        ['e12', 's2', 'flow_end', [], 'unhandled', 'answered (bridged)', false, false],
        ['e13', 's2', 'flow_end', [], 'unhandled', 'error', false, false],
        ['e14', 's3', 's4', ['help:default'], 'key', 'default', false, false],
        ['e15', 's3', 'flow_end', [], 'unhandled', 'error', false, false],
        ['e16', 's4', 's5', ['count:next'], 'next', '', false, false],
        ['e17', 's5', 's1', ['again:case1'], 'case', 'vars.visits < 2', false, false],
        ['e18', 's5', 's7', ['again:default'], 'switch-default', 'default', false, false],
        ['e19', 's6', 's7', ['operator:NOANSWER'], 'key', 'NOANSWER', false, false],
        ['e20', 's6', 'flow_end', [], 'unhandled', 'answered (bridged)', false, false],
        ['e21', 's6', 'flow_end', [], 'unhandled', 'error', false, false],
        ['e22', 's7', 's8', ['bye:default'], 'key', 'default', false, false],
        ['e23', 's7', 'flow_end', [], 'unhandled', 'error', false, false],
        ['e24', 's9', 'flow_end', ['log_end:next'], 'next', '', false, false],
      ]);
      // the same nodes and edges as `callscript graph` (labels cut at 28 characters instead of 40)
      const flow = compileAll([{ file: 'desk.yaml', text: DESK }]).flows[0]!;
      const cli = buildGraph(flow, { width: 28 });
      expect(g.nodes.map((n: { id: string; lines: string[] }) => [n.id, n.lines])).toEqual(
        cli.nodes.map((n) => [n.id, n.lines]),
      );
      expect(
        g.edges.map((e: { from: string; to: string; label: string; dashed: boolean }) => [
          e.from,
          e.to,
          e.label,
          e.dashed,
        ]),
      ).toEqual(cli.edges.map((e) => [e.from, e.to, e.label, e.dashed]));
      // positions: every box inside the drawing, no two boxes overlapping; every edge a line of points
      expect(g.width).toBeGreaterThan(0);
      expect(g.height).toBeGreaterThan(0);
      for (const n of g.nodes) {
        expect(n.w).toBeGreaterThan(n.lines.reduce((m: number, l: string) => Math.max(m, l.length), 0) * 7);
        expect(n.h).toBe(n.lines.length * 16 + 16);
        expect(n.x - n.w / 2).toBeGreaterThanOrEqual(0);
        expect(n.y - n.h / 2).toBeGreaterThanOrEqual(0);
        expect(n.x + n.w / 2).toBeLessThanOrEqual(g.width);
        expect(n.y + n.h / 2).toBeLessThanOrEqual(g.height);
      }
      for (const a of g.nodes) {
        for (const b of g.nodes) {
          if (a === b) continue;
          const apart = Math.abs(a.x - b.x) >= (a.w + b.w) / 2 || Math.abs(a.y - b.y) >= (a.h + b.h) / 2;
          expect(apart, `${a.id} and ${b.id} overlap`).toBe(true);
        }
      }
      for (const e of g.edges) {
        expect(e.points.length, e.id).toBeGreaterThanOrEqual(2);
        for (const p of e.points) expect([typeof p.x, typeof p.y]).toEqual(['number', 'number']);
        expect(e.labelAt === null, e.id).toBe(e.label === '');
      }
      // a retry's self-loop is drawn out of its box's right side and back, its label beside it
      const menu = g.nodes.find((n: { step: string }) => n.step === 'menu');
      const loop = g.edges.find((e: { id: string }) => e.id === 'e6');
      expect(loop.points[0]).toEqual({ x: Math.round((menu.x + menu.w / 2) * 10) / 10, y: menu.y - 8 });
      expect(loop.points.at(-1)).toEqual({ x: loop.points[0].x, y: menu.y + 8 });
      expect(Math.max(...loop.points.map((p: { x: number }) => p.x))).toBe(loop.points[0].x + 22);
      expect(loop.labelAt.x - ('TIMEOUT ×2'.length * 7.2) / 2).toBeCloseTo(loop.points[0].x + 22 + 6, 0);
      // laid out once per version
      expect((await get(s, '/admin/flows/desk/graph')).body).toBe(r.body);
    },
  );

  it('answers any version published: loaded, or compiled again from its kept source once released', async () => {
    const s = await start();
    const [v1, v2, v3] = [DESK, DESK_V2, DESK_V3].map(flowVersion);
    writeFileSync(join(dir!, 'desk.yaml'), DESK_V2);
    expect((await reload(s)).json().published).toEqual([expect.objectContaining({ name: 'desk', version: v2 })]);
    writeFileSync(join(dir!, 'desk.yaml'), DESK_V3);
    expect((await reload(s)).json().published).toEqual([expect.objectContaining({ name: 'desk', version: v3 })]);
    expect(s.registry.get('desk', v1!)).toBeUndefined(); // released: neither newest nor previous, no live call
    const cur = (await get(s, '/admin/flows/desk/graph')).json();
    expect([cur.version, cur.current]).toEqual([v3, true]);
    const prev = (await get(s, `/admin/flows/desk/graph?version=${v2}`)).json();
    expect([prev.version, prev.current]).toEqual([v2, false]);
    expect(prev.nodes.find((n: { step: string }) => n.step === 'bye').lines).toEqual([
      'bye',
      'play: "Goodbye, and thank you."',
    ]);
    const old = await get(s, `/admin/flows/desk/graph?version=${v1}`);
    expect(old.statusCode).toBe(200);
    expect([old.json().version, old.json().current]).toEqual([v1, false]);
    expect(old.json().nodes.find((n: { step: string }) => n.step === 'bye').lines).toEqual(['bye', 'play: "Goodbye."']);
    expect(s.registry.get('desk', v1!)).toBeUndefined(); // drawn, not loaded back
  });

  it('404 for an unknown flow or version; hostile names and versions are clipped, answered as JSON', async () => {
    const s = await start();
    const cases: [string, number, string, string][] = [
      ['/admin/flows/nope/graph', 404, 'UNKNOWN_FLOW', 'no flow named "nope" is loaded'],
      ['/admin/flows/desk/graph?version=000000000000', 404, 'UNKNOWN_VERSION', 'flow desk has no version 000000000000'],
      ['/admin/flows/desk/graph?version=ZZZ', 404, 'UNKNOWN_VERSION', 'flow desk has no version ZZZ'],
      ['/admin/flows/desk/graph?version=', 404, 'UNKNOWN_VERSION', 'flow desk has no version '],
      [
        `/admin/flows/desk/graph?version=${flowVersion(DESK)}&version=${flowVersion(DESK)}`,
        404,
        'UNKNOWN_VERSION',
        `flow desk has no version ${flowVersion(DESK)},${flowVersion(DESK)}`,
      ],
      ['/admin/flows/__proto__/graph', 404, 'UNKNOWN_FLOW', 'no flow named "__proto__" is loaded'],
      ['/admin/flows/constructor/traffic', 404, 'UNKNOWN_FLOW', 'no flow named "constructor" is loaded'],
      [
        '/admin/flows/%3Cscript%3Ealert(1)%3C%2Fscript%3E/graph',
        404,
        'UNKNOWN_FLOW',
        'no flow named "<script>alert(1)</script>" is loaded',
      ],
    ];
    for (const [url, status, code, message] of cases) {
      const r = await get(s, url);
      expect([r.statusCode, r.json()], url).toEqual([status, { error: { code, message } }]);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    const long = await get(s, `/admin/flows/desk/graph?version=${'a'.repeat(5000)}`);
    expect(long.statusCode).toBe(404);
    expect(long.json().error.message).toBe(`flow desk has no version ${'a'.repeat(100)}…`);
    const name = await get(s, `/admin/flows/${'x'.repeat(100)}/graph`);
    expect(name.statusCode).toBe(404);
  });

  it('422 GRAPH_TOO_LARGE for a flow with more boxes than the console draws', async () => {
    const s = await start({ 'desk.yaml': DESK, 'big.yaml': bigFlow(600) });
    const r = await get(s, '/admin/flows/big/graph');
    expect(r.statusCode).toBe(422);
    expect(r.json()).toEqual({
      error: {
        code: 'GRAPH_TOO_LARGE',
        message:
          `the diagram of big ${s.registry.current('big')!.version} has 602 boxes, more than the console draws ` +
          `(600): use callscript graph --format dot`,
      },
    });
    expect((await get(s, '/admin/flows/desk/graph')).statusCode).toBe(200);
  });
});

describe('GET /admin/flows/:name/traffic', () => {
  it('says when there is no traffic source (metrics off)', async () => {
    const s = await start({ 'desk.yaml': DESK }, { metrics: false });
    const r = await get(s, '/admin/flows/desk/traffic');
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.json()).toEqual({
      flow: 'desk',
      available: false,
      reason: 'no traffic source: metrics are off',
      versions: {},
    });
    expect((await get(s, '/admin/flows/nope/traffic')).json().error.code).toBe('UNKNOWN_FLOW');
  });

  it('answers the transitions taken per version, as the metrics counted them', async () => {
    const s = await start();
    const v1 = flowVersion(DESK);
    const a = new RtCall(s.app, 'desk', { callid: '501' });
    await a.start(); // hello
    await a.answer(''); // menu
    await a.answer('TIMEOUT');
    await a.answer('2'); // help
    await a.answer(''); // count, again (case1) -> menu
    await a.answer('1'); // sales
    await a.end('HANGUP'); // log_end
    const b = new RtCall(s.app, 'desk', { callid: '502' });
    await b.start();
    await b.answer('');
    await b.answer('0'); // flow-wide handler -> operator
    await b.answer('NOANSWER'); // bye
    await b.answer(''); // end: hangup
    await b.end('HANGUP'); // the service reports the call over: log_end
    const r = (await get(s, '/admin/flows/desk/traffic')).json();
    expect(r).toEqual({
      flow: 'desk',
      available: true,
      versions: {
        [v1]: {
          'hello:default': 2,
          'menu:TIMEOUT': 1,
          'menu:2': 1,
          'help:default': 1,
          'count:next': 1,
          'again:case1': 1,
          'menu:1': 1,
          'log_end:next': 2,
          'handlers.on.read:0': 1,
          'operator:NOANSWER': 1,
          'bye:default': 1,
        },
      },
    });
  });

  it('the plugin’s traffic option replaces the metrics’; one that fails: no traffic, and why', async () => {
    const given = await start(
      { 'desk.yaml': DESK },
      { traffic: { traffic: async (flow) => ({ [flow]: { 'hello:default': 7 } }) } },
    );
    expect((await get(given, '/admin/flows/desk/traffic')).json()).toEqual({
      flow: 'desk',
      available: true,
      versions: { desk: { 'hello:default': 7 } },
    });
    await given.app.close();
    const s = await start(
      { 'desk.yaml': DESK },
      { traffic: { traffic: async () => Promise.reject(new Error('registry closed')) } },
    );
    expect((await get(s, '/admin/flows/desk/traffic')).json()).toEqual({
      flow: 'desk',
      available: false,
      reason: 'the traffic could not be read: registry closed',
      versions: {},
    });
  });
});
