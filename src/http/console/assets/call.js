// One call, live or finished (GET /admin/calls/:callid): what it is, its variables (sensitive
// ones masked by the server), its path as a timeline (the rest of a long path read from
// GET /admin/calls/:callid/path, page by page), and the path drawn on the diagram of its flow
// version. A live call can be ended (DELETE: it ends at its next request).

import { h, fill, link, table, row } from './dom.js';
import { getJson, send, seg, ApiError } from './api.js';
import { pathOf, paintPath, paintTraffic } from './diagram.js';
import { clock, duration, ms } from './format.js';
import { loadDiagram } from './flow.js';

function fields(c) {
  const items = [
    ['Flow', link(c.flow, 'flow', c.flow)],
    ['Version', link(c.version, 'flow', c.flow, c.version)],
    [c.status === 'live' ? 'Step' : 'Last step', c.step ?? c.lastStep ?? '—'],
    ['Started', clock(c.started)],
  ];
  if (c.status === 'live') items.push(['Last request', c.lastSeen ? clock(c.lastSeen) : '—']);
  else
    items.push(
      ['Ended', clock(c.ended)],
      ['Duration', duration(c.durationMs)],
      ['Outcome', c.outcome ? `${c.outcome}${c.error ? ` (${c.error})` : ''}` : '—'],
      ['Call status', c.status === 'finished' ? (c.callStatus ?? c.status) : '—'],
    );
  items.push(['Commands', c.commands == null ? '—' : String(c.commands)]);
  return h(
    'dl',
    { class: 'call-fields' },
    items.map(([k, v]) => [h('dt', null, k), h('dd', { 'data-field': k }, v)]),
  );
}

/**
 * A request's effects, one after the other: `sms ok SMS00001 (12 ms)`; a queue step's operation names its queue and
 * op, and a poll's answer the caller's wait so far: `queue sales poll: wait, waited 30 s (1 ms)`.
 */
export function effectsText(list) {
  return (list ?? [])
    .map((e) => {
      const q = e.queue;
      if (e.kind === 'queue' && q) {
        const got = e.outcome === 'ok' ? (e.value ?? 'ok') : e.outcome;
        const waited = q.waited !== undefined && q.op === 'poll' ? `, waited ${q.waited} s` : '';
        return `queue ${q.name} ${q.op}: ${got}${waited} (${duration(e.ms)})`;
      }
      return `${e.kind} ${e.outcome}${e.value !== undefined ? ` ${e.value}` : ''} (${duration(e.ms)})`;
    })
    .join('; ');
}

// Pages of a call's path read at most (a page is 256 KiB at most: docs/admin.md).
const MAX_PATH_PAGES = 50;

/**
 * A call's whole path: the detail's first page, then the pages after it (`pathNext`, then each page's `next`), at
 * most MAX_PATH_PAGES.
 */
export async function callPath(callid, detail, get = getJson) {
  const path = Array.isArray(detail.path) ? [...detail.path] : [];
  let next = detail.pathNext ?? null;
  for (let n = 0; next && n < MAX_PATH_PAGES; n++) {
    const page = await get(`calls/${seg(callid)}/path?cursor=${encodeURIComponent(next)}`);
    path.push(...(page.path ?? []));
    next = page.next;
  }
  return path;
}

/** Requests counted in an entry (a retry answered the same reply again, refused ones): " (retried 2×, refused 1×)". */
function counted(p) {
  const parts = [];
  if (p.replays) parts.push(`retried ${p.replays}×`);
  if (p.refused) parts.push(`refused ${p.refused}×`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function timeline(path, dropped) {
  const t0 = path.length > 0 ? ms(path[0].at) : NaN;
  const rows = table(
    'path',
    ['#', '+ms', 'From', 'Result', 'Transitions', 'Step', 'Command sent', 'Effects'],
    path.map((p, i) =>
      row({ 'data-index': i, class: p.late ? 'late' : null }, [
        h('td', { class: 'num' }, String(dropped + i + 1)),
        h('td', { class: 'num' }, Number.isFinite(t0) ? `+${Math.round(ms(p.at) - t0)}` : '—'),
        p.from ?? '(start)',
        [p.command ? `${p.command} ` : '', p.result ?? '', p.error ? ` error ${p.error}` : ''].join('').trim() || '—',
        h('td', { class: 'mono small' }, (p.transitions ?? []).join(' → ') || '—'),
        p.step ?? '—',
        p.reply ? `${p.reply.command}${counted(p)}` : `—${counted(p)}`,
        effectsText(p.effects) || '—',
      ]),
    ),
    'No request recorded yet.',
  );
  if (!(dropped > 0)) return rows;
  return h(
    'div',
    null,
    h('p', { class: 'muted' }, `The first ${dropped} entries are not kept (history.max_path, history.max_path_bytes).`),
    rows,
  );
}

function vars(v) {
  const entries = Object.entries(v ?? {});
  return table(
    'vars',
    ['Variable', 'Value'],
    entries.map(([k, x]) =>
      row(null, [
        h('td', { class: 'mono' }, k),
        h('td', { class: 'mono' }, typeof x === 'string' ? x : JSON.stringify(x)),
      ]),
    ),
    'No variables.',
  );
}

export function callView(callid) {
  const head = h('div', { class: 'call-head' });
  const info = h('div');
  const box = h('div', { class: 'diagram-box' });
  const steps = h('div', { class: 'path-box' });
  const varsBox = h('div');
  const el = h(
    'section',
    { class: 'view view--call' },
    h('p', { class: 'crumbs' }, link('Calls', 'calls'), ' / ', callid),
    head,
    info,
    h('h2', null, 'Path'),
    box,
    steps,
    h('h2', null, 'Variables'),
    varsBox,
  );
  let shown = null; // { key, graph, svg }
  let ended = false;
  return {
    title: `Call ${callid}`,
    el,
    async update() {
      if (ended && shown) return; // a finished call does not change
      let c;
      try {
        c = await getJson(`calls/${seg(callid)}`);
      } catch (err) {
        fill(
          head,
          h('h1', null, `Call ${callid}`),
          h(
            'p',
            { class: 'error-text' },
            err instanceof ApiError && err.status === 404
              ? 'No live or finished call has this id (it may have left the history).'
              : err.message,
          ),
        );
        return;
      }
      const live = c.status === 'live';
      ended = !live;
      const stop = live ? h('button', { type: 'button', class: 'end-call danger' }, 'End this call') : null;
      const said = h('span', { class: 'end-result', role: 'status' });
      stop?.addEventListener('click', async () => {
        if (!confirm(`End call ${callid}? The caller is hung up at the call's next request.`)) return;
        stop.disabled = true;
        try {
          await send('DELETE', `calls/${seg(callid)}`);
          fill(said, 'Ended: the call hangs up at its next request.');
        } catch (err) {
          fill(said, `Could not end it: ${err.message}`);
          stop.disabled = false;
        }
      });
      fill(
        head,
        h(
          'h1',
          null,
          `Call ${callid} `,
          h(
            'span',
            { class: `pill pill--${live ? 'live' : (c.outcome ?? 'finished')}` },
            live ? 'live' : `finished: ${c.outcome ?? ''}`,
          ),
        ),
        stop,
        said,
      );
      fill(info, fields(c));
      let path;
      try {
        path = await callPath(callid, c);
      } catch {
        path = Array.isArray(c.path) ? c.path : [];
      }
      fill(steps, timeline(path, c.dropped ?? 0));
      fill(varsBox, vars(c.vars));
      const key = `${c.flow}@${c.version}`;
      if (!shown || shown.key !== key) {
        const d = await loadDiagram(box, c.flow, c.version);
        shown = d ? { key, ...d } : { key, graph: null, svg: null };
      }
      if (shown.graph) {
        paintTraffic(shown.svg, shown.graph, null);
        paintPath(shown.svg, shown.graph, pathOf(shown.graph, path));
      }
    },
  };
}
