/**
 * The web console in headless Chromium (Debian's package, /usr/bin/chromium, driven by
 * playwright-core): what a person sees. Calls are real, driven through /rt. Skipped with a
 * message when Chromium is missing, unless CI=true (then they fail).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { flowVersion } from '../../src/engine/compile.js';
import type { Server } from '../../src/http/server.js';
import {
  ADMIN,
  ADMIN_HEADER,
  chromiumAvailable,
  flowsDir,
  launchChromium,
  listen,
  RtCall,
} from '../helpers/console.js';
import { DESK, MARKUP } from '../helpers/console-flows.js';
import { FakeQueues, QueuesStore, sampleViews } from './queues-fake.js';

const HAVE_CHROMIUM = chromiumAvailable();

let browser: Browser | undefined;
let server: (Server & { url: string }) | undefined;
let context: BrowserContext | undefined;
let dir: string | undefined;

beforeAll(async () => {
  if (HAVE_CHROMIUM) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  await server?.app.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(files: Record<string, string>) {
  dir = flowsDir(files);
  server = await listen({ flowsDir: dir }); // the traffic: the metrics' transitions counter
  return server;
}

/** A page of the console, logged in; CSP violations and page errors are collected. */
async function open(path = '', credentials = true): Promise<{ page: Page; problems: string[] }> {
  context = await browser!.newContext(
    credentials ? { httpCredentials: { username: ADMIN.login, password: ADMIN.password } } : {},
  );
  // the page's clock: time flows, and a poll brings the console's next tick forward instead of waiting for it
  await context.clock.install();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${server!.url}/admin/console${path}`);
  return { page, problems };
}

/** The console's refresh period (src/http/console/assets/app.js). */
const TICK_MS = 2000;
/**
 * Waits for what the page shows: the console refreshes on a tick every 2 s, which each try brings forward on the
 * page's clock (installed by open()).
 */
const poll = <T>(page: Page, f: () => Promise<T>) =>
  expect.poll(
    async () => {
      await page.clock.fastForward(TICK_MS);
      return f();
    },
    { timeout: 10_000, interval: 100 },
  );
const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();
const reload = (s: Server) =>
  s.app.inject({ method: 'POST', url: '/admin/reload', headers: { authorization: ADMIN_HEADER } });

describe.skipIf(!HAVE_CHROMIUM)('the web console in Chromium', () => {
  it('without credentials the browser gets the login prompt, and no console', async () => {
    await start({ 'desk.yaml': DESK });
    for (const credentials of [undefined, { username: ADMIN.login, password: 'wrong' }]) {
      context = await browser!.newContext(credentials ? { httpCredentials: credentials } : {});
      const page = await context.newPage();
      const answers: [number, string | undefined][] = [];
      page.on('response', (r) => answers.push([r.status(), r.headers()['www-authenticate']]));
      // the server challenges; headless, the prompt is dismissed: the page shows the 401's body, or fails
      const res = await page.goto(`${server!.url}/admin/console`).catch((e: Error) => e);
      if (res instanceof Error) expect(res.message).toMatch(/ERR_INVALID_AUTH_CREDENTIALS/);
      else {
        expect(res!.status()).toBe(401);
        expect(await page.locator('body').textContent()).toContain('ADMIN_AUTH_REQUIRED');
      }
      expect(answers[0]).toEqual([401, 'Basic realm="callscript-admin", charset="UTF-8"']);
      expect(await page.locator('table.flows').count()).toBe(0);
      await context.close();
      context = undefined;
    }
  });

  it('lists the flows, draws a diagram, and colours its edges by traffic as calls go, without a reload', async () => {
    const s = await start({ 'desk.yaml': DESK, 'markup.yaml': MARKUP });
    const { page, problems } = await open();
    await page.locator('table.flows tbody tr').first().waitFor();
    expect(await texts(page, 'table.flows th')).toEqual([
      'Flow',
      'File',
      'Current version',
      'Newest version',
      'Live calls',
      'Calls',
      'Errors',
      'Status',
    ]);
    expect(await texts(page, 'table.flows td.flow-name')).toEqual(['desk', 'markup']);
    const desk = page.locator('tr[data-flow="desk"]');
    expect(await desk.locator('td').nth(1).textContent()).toBe('desk.yaml');
    expect(await desk.locator('td').nth(2).textContent()).toContain(flowVersion(DESK));
    expect(await desk.locator('td.live-calls').textContent()).toBe('0');
    expect(await desk.locator('td').last().textContent()).toBe('serving');
    expect(await page.locator('#live-count').textContent()).toBe('0 live calls');
    await page.evaluate(() => ((globalThis as unknown as { stayed: boolean }).stayed = true));

    // a call starts: counted live, in the header and the flow's row, without a reload
    const a = new RtCall(s.app, 'desk', { callid: '7001' });
    await a.start();
    await poll(page, () => page.locator('#live-count').textContent()).toBe('1 live call');
    expect(await desk.locator('td.live-calls').textContent()).toBe('1');

    await desk.locator('a', { hasText: 'desk' }).click();
    await page.locator('svg.diagram').waitFor();
    expect(await page.locator('h1').textContent()).toBe('desk');
    expect(await page.locator('svg.diagram g.node').count()).toBe(13);
    expect(await page.locator('svg.diagram g.edge').count()).toBe(25);
    expect(await page.locator('svg.diagram g.node[data-step="menu"] tspan').allTextContents()).toEqual([
      'menu',
      'read: "Press 1 for sales, 2 for he…"',
      'max_digits 1',
    ]);
    expect(await page.locator('svg.diagram g.edge[data-transitions="menu:1"] .edge-label').textContent()).toBe('1');
    // no transition taken yet: every edge that counts is "not taken"
    await poll(page, () => page.locator('svg.diagram g.edge.edge--t0').count()).toBe(15);
    expect(await page.locator('svg.diagram g.edge.edge--counted').count()).toBe(15);

    await a.answer(''); // menu
    await a.answer('1'); // sales
    await a.end('HANGUP'); // log_end
    const edge = (key: string) => page.locator(`svg.diagram g.edge[data-transitions="${key}"]`);
    await poll(page, () => edge('menu:1').getAttribute('class')).toContain('edge--t4');
    for (const k of ['hello:default', 'menu:1', 'log_end:next']) {
      expect(await edge(k).getAttribute('class'), k).toContain('edge--t4');
      expect(await edge(k).getAttribute('data-count')).toBe('1');
    }
    expect(await edge('menu:2').getAttribute('class')).toContain('edge--t0');
    expect(await page.locator('svg.diagram g.edge.edge--t0').count()).toBe(12);

    const b = new RtCall(s.app, 'desk', { callid: '7002' });
    await b.start();
    await b.answer('');
    await b.answer('2'); // help
    await b.answer(''); // count, again, menu
    await poll(page, () => edge('hello:default').getAttribute('data-count')).toBe('2');
    expect(await edge('hello:default').getAttribute('class')).toContain('edge--t4');
    expect(await edge('menu:1').getAttribute('class')).toContain('edge--t2'); // 1 of the busiest 2
    expect(await edge('again:case1').getAttribute('class')).toContain('edge--t2');
    expect(await edge('hello:default').locator('.edge-count').textContent()).toBe('×2');
    expect(await page.locator('p.traffic-note').textContent()).toBe(
      `Version ${flowVersion(DESK)}: 8 transitions counted since the server started; the busiest edge was ` +
        `taken 2 times.`,
    );
    expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).toBe(true);
    expect(problems).toEqual([]);
  });

  it('shows a refused edit with its diagnostic, and its end when the file is fixed', async () => {
    const s = await start({ 'desk.yaml': DESK });
    const { page, problems } = await open();
    await page.locator('tr[data-flow="desk"]').waitFor();
    expect(await page.locator('#banner').isVisible()).toBe(false);
    writeFileSync(join(dir!, 'desk.yaml'), DESK.replace('"1": sales', '"1": salez'));
    expect((await reload(s)).json().kept).toEqual(['desk']);
    const d = (
      await s.app.inject({ method: 'GET', url: '/admin/flows/desk', headers: { authorization: ADMIN_HEADER } })
    ).json().errors[0];
    expect([d.file, d.code]).toEqual(['desk.yaml', 'UNKNOWN_STEP']);
    await poll(page, () => page.locator('#banner').textContent()).toBe('1 refused edit: desk.yaml (details)');
    const row = page.locator('tr[data-flow="desk"]');
    expect(await row.locator('.pill').textContent()).toBe('edit refused: serving the previous version');
    expect(await row.locator('li.diagnostic .diag-place').textContent()).toBe(`desk.yaml:${d.line}:${d.column}`);
    expect(await row.locator('li.diagnostic .diag-code').textContent()).toBe('UNKNOWN_STEP');
    expect(await row.locator('li.diagnostic .diag-message').textContent()).toBe(d.message);
    expect(await page.locator('.refused-file h3').allTextContents()).toEqual(['desk.yaml']);
    expect(await page.locator('.refused-file li.diagnostic').first().textContent()).toContain(
      `desk.yaml:${d.line}:${d.column} UNKNOWN_STEP ${d.message}`,
    );
    // the flow still serves its version
    expect(await row.locator('td').nth(2).textContent()).toContain(flowVersion(DESK));

    writeFileSync(join(dir!, 'desk.yaml'), DESK);
    expect((await reload(s)).json().refused).toEqual([]);
    await poll(page, () => page.locator('#banner').isVisible()).toBe(false);
    expect(await row.locator('.pill').textContent()).toBe('serving');
    expect(await page.locator('section.refused').isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });

  it('hostile: markup in flow texts, file names and diagnostics is shown as text, never run', async () => {
    const hostileFile = '<img src=x onerror=window.__pwned=3>.yaml';
    await start({
      'desk.yaml': DESK,
      'markup.yaml': MARKUP,
      [hostileFile]: DESK.replace('name: desk', 'name: "<b onmouseover=window.__pwned=4>bold</b>"'),
    });
    const { page, problems } = await open();
    await page.locator('.refused-file').first().waitFor();
    expect(await texts(page, '.refused-file h3')).toEqual([hostileFile]);
    expect(await page.locator('.refused-file li.diagnostic .diag-message').first().textContent()).toContain(
      '<b onmouseover=window.__pwned=4>bold</b>',
    );
    expect(await page.locator('#banner').textContent()).toBe(`1 refused edit: ${hostileFile} (details)`);
    await page.goto(`${server!.url}/admin/console#/flow/markup`);
    await page.locator('svg.diagram').waitFor();
    expect(await page.locator('svg.diagram g.node[data-step="hello"] tspan').allTextContents()).toEqual([
      'hello',
      'play: "<img src=x onerror=window._…"',
    ]);
    // a flow name in the URL that is markup: shown as text too
    await page.goto(`${server!.url}/admin/console#/flow/${encodeURIComponent('<img src=x onerror=window.__pwned=5>')}`);
    await poll(page, () => page.locator('main h1').textContent()).toBe('<img src=x onerror=window.__pwned=5>');
    // a result the service sends that is markup: in the call's timeline, as text
    const c = new RtCall(server!.app, 'desk', { callid: '6666' });
    await c.start();
    await c.answer('');
    await c.answer('<img src=x onerror=window.__pwned=6>'); // no such choice: default, bye
    await page.goto(`${server!.url}/admin/console#/call/6666`);
    await poll(page, () => page.locator('table.path tbody tr').count()).toBe(3);
    expect(await page.locator('table.path tbody tr').nth(2).locator('td').nth(3).textContent()).toBe(
      'read <img src=x onerror=window.__pwned=6>',
    );
    expect(await page.locator('main img, main script, main b').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(problems).toEqual([]);
    unlinkSync(join(dir!, hostileFile));
  });

  it('live calls appear and leave without a reload; a finished call’s path is drawn on its diagram', async () => {
    const s = await start({ 'desk.yaml': DESK });
    const { page, problems } = await open('#/calls');
    await page.locator('div.finished-calls table').waitFor();
    expect(await texts(page, 'div.live-calls tbody td')).toEqual(['No live call.']);
    expect(await texts(page, 'div.finished-calls tbody td')).toEqual(['No finished call yet.']);
    const a = new RtCall(s.app, 'desk', { callid: '8001' });
    await a.start();
    await a.answer(''); // menu
    const liveRow = page.locator('div.live-calls tr[data-callid="8001"]');
    await poll(page, () => liveRow.locator('td.step').textContent()).toBe('menu');
    expect((await liveRow.locator('td').allTextContents()).filter((_, i) => [0, 1, 2, 3, 6].includes(i))).toEqual([
      '8001',
      'desk',
      flowVersion(DESK),
      'menu',
      '2',
    ]);
    expect(await page.locator('h2', { hasText: 'Live calls' }).textContent()).toBe('Live calls (1)');
    await a.answer('2'); // help
    await poll(page, () => liveRow.locator('td.step').textContent()).toBe('help');
    await a.answer(''); // count, again, menu
    await a.answer('1'); // sales
    await a.end('HANGUP'); // the call ends during the dialout (bridged: transferred): log_end
    await poll(page, () => liveRow.count()).toBe(0);
    expect(await texts(page, 'div.live-calls tbody td')).toEqual(['No live call.']);
    const done = page.locator('div.finished-calls tr[data-callid="8001"]');
    await done.waitFor();
    const cells = await done.locator('td').allTextContents();
    expect(cells.slice(0, 6)).toEqual(['8001', 'desk', flowVersion(DESK), 'transferred', 'HANGUP', 'sales']);
    const record = (
      await s.app.inject({ method: 'GET', url: '/admin/calls/8001', headers: { authorization: ADMIN_HEADER } })
    ).json();
    expect(cells[7]).toBe(
      record.durationMs < 1000 ? `${Math.round(record.durationMs)} ms` : `${(record.durationMs / 1000).toFixed(1)} s`,
    );

    await done.locator('a', { hasText: '8001' }).click();
    await poll(page, () => page.locator('main h1').textContent()).toBe('Call 8001 finished: transferred');
    await page.locator('svg.diagram').waitFor();
    await poll(page, () => page.locator('svg.diagram g.edge.edge--path').count()).toBe(9);
    // the edges it took, numbered in order: the start, hello, 2, help, count, again's case, 1, then the hangup handler
    // when the caller hung up
    const order = await page
      .locator('svg.diagram g.edge.edge--path')
      .evaluateAll((gs) =>
        gs.map((g) => [
          g.getAttribute('data-transitions') || g.getAttribute('data-edge'),
          g.getAttribute('data-order'),
        ]),
      );
    expect(Object.fromEntries(order)).toEqual({
      e0: '1',
      'hello:default': '2',
      e3: '8',
      'menu:1': '7',
      'menu:2': '3',
      'help:default': '4',
      'count:next': '5',
      'again:case1': '6',
      'log_end:next': '9',
    });
    expect(await texts(page, 'svg.diagram g.path-badge text')).toHaveLength(9);
    const visited = await page
      .locator('svg.diagram g.node.node--visited')
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-step') ?? g.getAttribute('data-node')));
    expect(visited.sort()).toEqual([
      'again',
      'call_ends',
      'count',
      'flow_end',
      'hello',
      'help',
      'log_end',
      'menu',
      'sales',
      'start',
    ]);
    expect(await page.locator('svg.diagram g.node.node--last').getAttribute('data-step')).toBe('sales');
    expect(await page.locator('svg.diagram').getAttribute('class')).toBe('diagram diagram--path');
    // the timeline: one row per request
    expect(await page.locator('table.path tbody tr').count()).toBe(6);
    const third = await page.locator('table.path tbody tr').nth(2).locator('td').allTextContents();
    expect([third[0], third[2], third[3], third[4], third[5], third[6]]).toEqual([
      '3',
      'menu',
      'read 2',
      'menu:2',
      'help',
      'play',
    ]);
    expect(await page.locator('table.path tbody tr').nth(3).locator('td').nth(4).textContent()).toBe(
      'help:default → count:next → again:case1',
    );
    expect(
      await page
        .locator('table.vars tbody tr')
        .evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent))),
    ).toEqual([
      ['visits', '1'],
      ['ended', 'yes'],
    ]);
    expect(await page.locator('dd[data-field="Call status"]').textContent()).toBe('HANGUP');
    expect(problems).toEqual([]);
  });

  it('a live call’s page follows it as it goes, and ends it', async () => {
    const s = await start({ 'desk.yaml': DESK });
    const b = new RtCall(s.app, 'desk', { callid: '8101' });
    await b.start();
    await b.answer(''); // menu
    const { page, problems } = await open('#/call/8101');
    await poll(page, () => page.locator('main h1').textContent()).toBe('Call 8101 live');
    await page.locator('svg.diagram').waitFor();
    await poll(page, () => page.locator('svg.diagram g.node.node--last').getAttribute('data-step')).toBe('menu');
    expect(await page.locator('svg.diagram g.edge.edge--path').count()).toBe(2);
    await b.answer('2'); // help
    await poll(page, () => page.locator('svg.diagram g.node.node--last').getAttribute('data-step')).toBe('help');
    expect(await page.locator('svg.diagram g.edge[data-transitions="menu:2"]').getAttribute('data-order')).toBe('3');
    expect(await page.locator('dd[data-field="Step"]').textContent()).toBe('help');

    page.once('dialog', (d) => void d.accept());
    await page.locator('button.end-call').click();
    await poll(page, () => page.locator('.end-result').textContent()).toBe(
      'Ended: the call hangs up at its next request.',
    );
    await b.answer(''); // the service's next request: answered hangup
    expect(b.reply?.command).toBe('hangup');
    await poll(page, () => page.locator('main h1').textContent()).toBe('Call 8101 finished: ended_by_admin');
    expect(await page.locator('button.end-call').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("the queues: each one's waiting callers and agents, live; an agent paused from its row", async () => {
    const fake = new FakeQueues([sampleViews()[1]!]); // support: nobody waiting
    dir = flowsDir({ 'desk.yaml': DESK });
    server = await listen({ flowsDir: dir, store: new QueuesStore(fake) });
    const { page, problems } = await open('#/queues');
    await page.locator('section.queue[data-queue="support"]').waitFor();
    expect(await texts(page, 'section.queue h2')).toEqual(['support']);
    expect(await texts(page, 'section.queue table.queue-line tbody td')).toEqual(['Nobody waiting.']);
    // callers arrive in the store: shown without a reload
    fake.queues.set('sales', sampleViews()[0]!);
    await poll(page, () => texts(page, 'section.queue h2')).toEqual(['sales', 'support']);
    const sales = page.locator('section.queue[data-queue="sales"]');
    expect(await sales.locator('.queue-counts').textContent()).toMatch(
      /^3 waiting, the longest .+ · agents: 1 free, 1 busy, 1 wrap-up, 1 paused · answered 12, abandoned 3, timed out 1 · mean handling 2 min 05 s$/,
    );
    const cells = async (table: string, n: number) =>
      (await sales.locator(`table.${table} tbody tr`).all()).map(async (r) =>
        (await r.locator('td').allTextContents()).slice(0, n),
      );
    expect(await Promise.all(await cells('queue-line', 2))).toEqual([
      ['1', '4242'],
      ['—', '4243'],
      ['2', '4244'],
    ]);
    expect(await sales.locator('tr[data-callid="4243"] td').last().textContent()).toBe('+33612345678');
    expect(await Promise.all(await cells('queue-agents', 3))).toEqual([
      ['+33612345678', 'busy', 'no'],
      ['+33612345679', 'free', 'no'],
      ['+33612345680', 'wrap_up', 'no'],
      ['+33612345681', 'free', 'paused'],
    ]);
    await sales.locator('tr[data-number="+33612345679"] button.agent-pause').click();
    await poll(page, () => page.locator('.queue-result').textContent()).toBe('Agent +33612345679 paused in sales.');
    await poll(page, () => sales.locator('tr[data-number="+33612345679"] td.agent-paused').textContent()).toBe(
      'paused',
    );
    expect(await sales.locator('tr[data-number="+33612345679"] button').textContent()).toBe('Resume');
    expect(fake.calls.filter((c) => c[0] === 'pause').map((c) => c.slice(0, 4))).toEqual([
      ['pause', 'sales', '+33612345679', true],
    ]);
    expect(problems).toEqual([]);
  });
});
