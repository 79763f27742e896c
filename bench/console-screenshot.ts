/**
 * The screenshots of docs/console.md: a server on the example flows (flows/), a few real
 * calls of front-desk through /rt (finished ones, and one left live), and the console in
 * headless Chromium (/usr/bin/chromium).
 *
 *   npx tsx bench/console-screenshot.ts [outDir]     (default docs/)
 */
import { join, resolve } from 'node:path';
import { ADMIN, launchChromium, listen, RtCall } from '../test/helpers/console.js';

const out = resolve(process.argv[2] ?? 'docs');
const server = await listen({ flowsDir: 'flows' }); // the diagram's traffic: the metrics'
const caller = { cli_number: '+447700900123', date_started: '2026-11-22 10:00:00' };
let n = 9000;
const call = () => new RtCall(server.app, 'front-desk', { ...caller, callid: String(++n) });

try {
  // sales did not answer: the operator took it
  for (let i = 0; i < 4; i++) {
    const c = call();
    await c.start(); // welcome
    await c.answer(''); // menu
    await c.answer('1'); // sales
    await c.answer('NOANSWER'); // "busy" then operator
    await c.answer('');
    await c.end('HANGUP');
  }
  // the address, then accounts
  for (let i = 0; i < 2; i++) {
    const c = call();
    await c.start();
    await c.answer('');
    await c.answer('3'); // info
    await c.answer(''); // count_visit, again, menu
    await c.answer('2'); // accounts
    await c.end('HANGUP');
  }
  // no choice at all: three timeouts, then the operator, busy, goodbye
  const silent = call();
  const silentId = String(n); // call() numbered it
  await silent.start();
  await silent.answer('');
  for (let i = 0; i < 3; i++) await silent.answer('TIMEOUT');
  await silent.answer('NOANSWER'); // operator_busy
  await silent.answer(''); // goodbye
  await silent.answer(''); // end: hangup
  await silent.end('HANGUP');
  // one still at the menu
  const live = call();
  await live.start();
  await live.answer('');

  const browser = await launchChromium();
  const context = await browser.newContext({
    httpCredentials: { username: ADMIN.login, password: ADMIN.password },
    viewport: { width: 1440, height: 1000 },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  await page.goto(`${server.url}/admin/console#/flow/front-desk`);
  await page.locator('svg.diagram g.edge.edge--t4').first().waitFor();
  // at actual size, the diagram scrolled to the menu
  if (await page.locator('button.zoom-actual').isEnabled()) await page.locator('button.zoom-actual').click();
  await page.evaluate(() => {
    const d = globalThis as unknown as {
      document: {
        querySelector(
          s: string,
        ): { scrollLeft: number; clientWidth: number; getBoundingClientRect(): { x: number } } | null;
      };
    };
    const box = d.document.querySelector('.diagram-box')!;
    const menu = d.document.querySelector('g.node[data-step="menu"]')!;
    box.scrollLeft = Math.max(
      0,
      menu.getBoundingClientRect().x - box.getBoundingClientRect().x - box.clientWidth / 2 + 150,
    );
  });
  await page.screenshot({ path: join(out, 'console-flow.png') });
  await page.goto(`${server.url}/admin/console#/`);
  await page.locator('table.flows tbody tr').first().waitFor();
  await page.screenshot({ path: join(out, 'console-flows.png') });
  // the silent caller's path, fitted to the width
  await page.goto(`${server.url}/admin/console#/call/${silentId}`);
  await page.locator('svg.diagram g.edge.edge--path').first().waitFor({ state: 'attached' });
  if (await page.locator('button.zoom-fit').isEnabled()) await page.locator('button.zoom-fit').click();
  await page.screenshot({ path: join(out, 'console-call.png'), fullPage: true });
  await browser.close();
  console.log(`screenshots written to ${out}: console-flow.png, console-flows.png, console-call.png`);
} finally {
  await server.app.close();
}
