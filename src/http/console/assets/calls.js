// Live calls (refreshed every tick, without a reload) and the last finished calls
// (GET /admin/calls?status=live|finished); a row opens the call.

import { h, fill, link, table, row } from './dom.js';
import { getJson, ApiError } from './api.js';
import { ago, clock, duration, ver } from './format.js';

const LIMIT = 100;
// Pages of live calls asked per refresh, at most (a page may hold few calls: on Redis among
// many other keys, each page reads a bounded part of the keys; docs/admin.md).
const MAX_PAGES = 20;

/** Live calls, following `next` until LIMIT calls or MAX_PAGES pages (`next` set: some were not read). */
export async function liveCalls(get = getJson) {
  const calls = [];
  let next = null;
  for (let n = 0; n < MAX_PAGES && calls.length < LIMIT; n++) {
    const q = `calls?status=live&limit=${LIMIT - calls.length}${next ? `&cursor=${encodeURIComponent(next)}` : ''}`;
    const page = await get(q);
    calls.push(...(page.calls ?? []));
    next = page.next;
    if (!next) break;
  }
  return { calls, next };
}

function unavailable(box, err) {
  const msg =
    err instanceof ApiError && err.status === 404
      ? 'The call history is not available on this server (GET /admin/calls).'
      : `Could not list the calls: ${err.message}`;
  fill(box, h('p', { class: 'error-text' }, msg));
}

export function callsView() {
  const liveHead = h('h2', null, 'Live calls');
  const live = h('div', { class: 'live-calls' });
  const finished = h('div', { class: 'finished-calls' });
  const el = h(
    'section',
    { class: 'view view--calls' },
    h('h1', null, 'Calls'),
    liveHead,
    live,
    h('h2', null, 'Finished calls'),
    finished,
  );
  return {
    title: 'Calls',
    el,
    async update() {
      const [l, f] = await Promise.allSettled([liveCalls(), getJson(`calls?status=finished&limit=${LIMIT}`)]);
      if (l.status === 'fulfilled') {
        const calls = l.value.calls ?? [];
        fill(liveHead, `Live calls (${calls.length}${l.value.next ? '+' : ''})`);
        fill(
          live,
          table(
            'calls calls--live',
            ['Call', 'Flow', 'Version', 'Step', 'Started', 'Last request', 'Commands'],
            calls.map((c) =>
              row({ 'data-callid': c.callid }, [
                h('td', { class: 'mono' }, link(c.callid, 'call', c.callid)),
                h('td', null, link(c.flow, 'flow', c.flow)),
                h('td', { class: 'mono' }, ver(c.version)),
                h('td', { class: 'step' }, c.step ?? '—'),
                clock(c.started),
                c.lastSeen ? ago(c.lastSeen) : '—',
                h('td', { class: 'num' }, c.commands == null ? '—' : String(c.commands)),
              ]),
            ),
            'No live call.',
          ),
        );
      } else unavailable(live, l.reason);
      if (f.status === 'fulfilled') {
        const calls = f.value.calls ?? [];
        fill(
          finished,
          table(
            'calls calls--finished',
            ['Call', 'Flow', 'Version', 'Outcome', 'Status', 'Last step', 'Ended', 'Duration'],
            calls.map((c) =>
              row({ 'data-callid': c.callid }, [
                h('td', { class: 'mono' }, link(c.callid, 'call', c.callid)),
                h('td', null, link(c.flow, 'flow', c.flow)),
                h('td', { class: 'mono' }, ver(c.version)),
                h('td', null, h('span', { class: `pill pill--${c.outcome}` }, c.outcome)),
                c.status ?? '—',
                c.lastStep ?? '—',
                clock(c.ended),
                duration(c.durationMs),
              ]),
            ),
            'No finished call yet.',
          ),
        );
      } else unavailable(finished, f.reason);
    },
  };
}
