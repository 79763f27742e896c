// The console: hash routes (#/, #/flow/NAME[/VERSION], #/calls, #/call/CALLID, #/queues) and one tick
// every 2 s that reads GET /admin/flows (the header's live count, the refused edits banner)
// and refreshes the view shown, without reloading the page. No tick while the tab is hidden.

import { h, fill, link } from './dom.js';
import { getJson } from './api.js';
import { flowsView } from './flows.js';
import { flowView } from './flow.js';
import { callsView } from './calls.js';
import { callView } from './call.js';
import { queuesView } from './queues.js';

const TICK_MS = 2000;
const main = document.getElementById('main');
const liveCount = document.getElementById('live-count');
const statusEl = document.getElementById('status');
const banner = document.getElementById('banner');

const dec = (x) => {
  try {
    return decodeURIComponent(x);
  } catch {
    return x;
  }
};

function route(hash) {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((p) => p !== '')
    .map(dec);
  if (parts.length === 0 || (parts[0] === 'flows' && parts.length === 1)) return ['flows', flowsView()];
  if (parts[0] === 'flow' && parts.length >= 2) return ['flows', flowView(parts[1], parts[2])];
  if (parts[0] === 'calls') return ['calls', callsView()];
  if (parts[0] === 'call' && parts.length >= 2) return ['calls', callView(parts[1])];
  if (parts[0] === 'queues') return ['queues', queuesView()];
  return [
    'flows',
    {
      title: 'Not found',
      el: h(
        'section',
        { class: 'view' },
        h('h1', null, 'Not found'),
        h('p', null, 'No such page: ', link('back to the flows', '')),
      ),
      update() {},
    },
  ];
}

let view = null;
let running = null;
let again = false;

async function tick() {
  if (running) {
    again = true;
    return running;
  }
  running = (async () => {
    const v = view;
    let ctx = {};
    try {
      ctx.flows = await getJson('flows');
      fill(liveCount, `${ctx.flows.liveCalls} live call${ctx.flows.liveCalls === 1 ? '' : 's'}`);
      const refused = ctx.flows.refused ?? [];
      banner.hidden = refused.length === 0;
      fill(
        banner,
        refused.length === 0
          ? ''
          : [
              `${refused.length} refused edit${refused.length === 1 ? '' : 's'}: `,
              refused.map((r) => r.file).join(', '),
              ' (',
              link('details', ''),
              ')',
            ],
      );
      fill(statusEl, '');
      statusEl.className = 'status';
    } catch (err) {
      fill(statusEl, `Cannot reach the server: ${err.message}`);
      statusEl.className = 'status status--error';
      return;
    }
    try {
      if (v === view) await v.update(ctx);
    } catch (err) {
      fill(statusEl, `Refresh failed: ${err.message}`);
      statusEl.className = 'status status--error';
    }
  })();
  try {
    await running;
  } finally {
    running = null;
    if (again) {
      again = false;
      void tick();
    }
  }
}

function show() {
  const [nav, v] = route(location.hash);
  view = v;
  v.bindRefresh?.(tick);
  document.title = `${v.title} · callscript`;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.nav === nav);
  fill(main, v.el);
  void tick();
}

window.addEventListener('hashchange', show);
setInterval(() => {
  if (!document.hidden) void tick();
}, TICK_MS);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) void tick();
});
show();
