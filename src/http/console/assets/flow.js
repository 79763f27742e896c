// A flow: its versions, and the diagram of one (the current one by default) with its edges
// coloured by the traffic the metrics counted.

import { h, fill, link, table, row } from './dom.js';
import { getJson, seg, ApiError } from './api.js';
import { drawDiagram, paintTraffic } from './diagram.js';
import { clock, ver } from './format.js';
import { diagnosticItem } from './flows.js';

export function legend() {
  const item = (cls, text) => h('span', { class: 'legend-item' }, h('span', { class: `swatch swatch--${cls}` }), text);
  return h(
    'div',
    { class: 'legend' },
    item('t0', 'not taken'),
    item('t1', 'taken (up to ¼ of the busiest)'),
    item('t2', 'up to ½'),
    item('t3', 'up to ¾'),
    item('t4', 'busiest'),
    item('dashed', 'flow-wide handler (its count: at every step)'),
  );
}

/** The diagram's zoom: "Fit to width" or "Actual size" (a diagram wider than the page scrolls). */
function zoomButtons(box, graph) {
  const fit = h('button', { type: 'button', class: 'zoom-fit' }, 'Fit to width');
  const actual = h('button', { type: 'button', class: 'zoom-actual' }, 'Actual size');
  const set = (on) => {
    box.classList.toggle('diagram-box--fit', on);
    fit.disabled = on;
    actual.disabled = !on;
  };
  fit.addEventListener('click', () => set(true));
  actual.addEventListener('click', () => set(false));
  // fitted by default when that shrinks it by a third at most (its text stays readable)
  set(graph.width <= Math.max(box.clientWidth, 600) * 1.5);
  return h('div', { class: 'zoom' }, fit, actual);
}

/** Loads and draws a flow version's diagram into `box`; returns the graph (or null when it could not be drawn). */
export async function loadDiagram(box, name, version) {
  fill(box, h('p', { class: 'muted' }, 'Laying out the diagram…'));
  try {
    const graph = await getJson(`flows/${seg(name)}/graph${version ? `?version=${seg(version)}` : ''}`);
    const svg = drawDiagram(graph);
    fill(box, svg);
    const zoom = zoomButtons(box, graph);
    const old = box.previousElementSibling;
    if (old?.classList.contains('zoom')) old.replaceWith(zoom);
    else box.before(zoom);
    return { graph, svg };
  } catch (err) {
    fill(
      box,
      h(
        'p',
        { class: 'error-text' },
        err instanceof ApiError ? `${err.code}: ${err.message}` : String(err.message ?? err),
      ),
    );
    return null;
  }
}

export function flowView(name, version) {
  const head = h('div', { class: 'flow-head' });
  const versions = h('div', { class: 'versions' });
  const note = h('p', { class: 'traffic-note muted' });
  const box = h('div', { class: 'diagram-box' });
  const el = h(
    'section',
    { class: 'view view--flow' },
    h('p', { class: 'crumbs' }, link('Flows', ''), ' / ', name),
    head,
    versions,
    h('h2', null, 'Diagram'),
    note,
    legend(),
    box,
  );
  let shown = null; // { version, graph, svg }
  let loading = null;
  return {
    title: `Flow ${name}`,
    el,
    async update(ctx) {
      const f = (ctx.flows?.flows ?? []).find((x) => x.name === name);
      if (!f) {
        fill(head, h('h1', null, name), h('p', { class: 'error-text' }, `No flow named ${name} is loaded.`));
        return;
      }
      fill(
        head,
        h('h1', null, name),
        h(
          'p',
          { class: 'muted' },
          `${f.file} · current version `,
          h('span', { class: 'mono' }, ver(f.current)),
          ` · ${f.liveCalls} live call${f.liveCalls === 1 ? '' : 's'}`,
        ),
        f.errors.length > 0
          ? h(
              'div',
              { class: 'refused-inline' },
              h('strong', null, 'Edit refused: serving the previous version.'),
              h('ul', { class: 'diagnostics' }, f.errors.map(diagnosticItem)),
            )
          : null,
      );
      const want = version ?? f.current ?? f.newest;
      fill(
        versions,
        table(
          'versions',
          ['Version', 'Published', 'State', 'Live calls', 'Calls', 'Errors'],
          [...f.versions]
            .reverse()
            .map((v) =>
              row({ 'data-version': v.version, class: v.version === want ? 'selected' : null }, [
                h('td', { class: 'mono' }, link(v.version, 'flow', name, v.version)),
                v.publishedAt ? clock(v.publishedAt) : '—',
                [v.current ? 'current' : null, v.newest ? 'newest' : null, v.loaded ? null : 'released']
                  .filter(Boolean)
                  .join(', '),
                h('td', { class: 'num' }, String(v.liveCalls)),
                h('td', { class: 'num' }, String(v.calls ?? 0)),
                h('td', { class: 'num' }, String(v.errors ?? 0)),
              ]),
            ),
        ),
      );
      if (!shown || shown.version !== want) {
        if (loading !== want) {
          loading = want;
          const d = await loadDiagram(box, name, want);
          loading = null;
          shown = d ? { version: want, ...d } : { version: want, graph: null, svg: null };
        }
      }
      if (!shown?.graph) return;
      let traffic;
      try {
        traffic = await getJson(`flows/${seg(name)}/traffic`);
      } catch (err) {
        fill(note, `Traffic unavailable: ${err.message}`);
        paintTraffic(shown.svg, shown.graph, null);
        return;
      }
      if (!traffic.available) {
        fill(note, `Traffic unavailable: ${traffic.reason}.`);
        paintTraffic(shown.svg, shown.graph, null);
        return;
      }
      const counts = traffic.versions[shown.version] ?? {};
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      const max = paintTraffic(shown.svg, shown.graph, counts);
      fill(
        note,
        `Version ${shown.version}: ${total} transition${total === 1 ? '' : 's'} counted since the server started`,
        max ? `; the busiest edge was taken ${max} times.` : '.',
      );
    },
  };
}
