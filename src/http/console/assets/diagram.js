// A flow's diagram as SVG, from the laid-out graph of GET /admin/flows/:name/graph (the
// server computed every position): boxes for steps, arrows for transitions. Edges take a
// traffic class (edge--t0 never taken ... edge--t4 the busiest) from the transitions counted,
// and a call's path (edges taken in order, numbered; steps visited) can be drawn over it.

import { s } from './dom.js';

/** Traffic levels: t0 never taken, t1..t4 by share of the busiest edge (quarters). */
export const LEVELS = ['t0', 't1', 't2', 't3', 't4'];

/**
 * Times each edge was taken, from a version's counts `{coverage key: n}`: null for edges that
 * take no transition (the start, the hangup handler, a result with no branch). A retry's key
 * is also counted when its retries are used up (the `:then` transition reports both keys),
 * so the self-loop's count is the key's minus its `:then`'s.
 */
export function edgeCounts(graph, counts) {
  const out = new Map();
  const keys = new Set(graph.edges.flatMap((e) => e.transitions));
  for (const e of graph.edges) {
    if (!counts || e.transitions.length === 0) {
      out.set(e.id, null);
      continue;
    }
    let n = 0;
    for (const k of e.transitions) {
      n += counts[k] ?? 0;
      if (e.kind === 'retry' && keys.has(`${k}:then`)) n -= counts[`${k}:then`] ?? 0;
    }
    out.set(e.id, Math.max(0, n));
  }
  return out;
}

/** The traffic level of a count against the busiest edge's. */
export function levelOf(n, max) {
  if (!n || !max) return 0;
  return Math.min(4, Math.max(1, Math.ceil((4 * n) / max)));
}

/**
 * A call's path over the graph, from its path entries (one per request: `from` the step whose
 * command the request reports, absent for the first; `transitions` the coverage keys taken,
 * in order; `step` the step of the command answered). Each key is matched to the edge that
 * leaves where the call is (a flow-wide handler's key is shared by every step's edge).
 * Returns the order numbers of the edges taken, the steps visited and the last one.
 */
export function pathOf(graph, entries) {
  const byStep = new Map(graph.nodes.filter((n) => n.step !== null).map((n) => [n.step, n.id]));
  const byKey = new Map();
  for (const e of graph.edges) for (const k of e.transitions) byKey.set(k, [...(byKey.get(k) ?? []), e]);
  const handlerEdges = graph.edges.filter((e) => e.kind === 'handler');
  const startEdge = graph.edges.find((e) => e.kind === 'start');
  const edges = new Map();
  const nodes = new Set();
  let n = 0;
  let last = null;
  const take = (e) => {
    n += 1;
    edges.set(e.id, [...(edges.get(e.id) ?? []), n]);
    nodes.add(e.from);
    nodes.add(e.to);
    return e.to;
  };
  (entries ?? []).forEach((entry, i) => {
    let at = entry.from != null ? (byStep.get(entry.from) ?? null) : null;
    if (entry.from == null && i === 0 && startEdge) at = take(startEdge);
    const keys = Array.isArray(entry.transitions) ? entry.transitions : [];
    for (const k of keys) {
      if (keys.includes(`${k}:then`)) continue; // the retries used up: the :then edge, not the self-loop
      const cands = byKey.get(k) ?? [];
      const e = cands.find((c) => c.from === at) ?? cands[0];
      if (!e) continue;
      if (e.from !== at) {
        // the call ended at another step: the hangup handler runs from "call ends"
        const h = handlerEdges.find((x) => x.to === e.from);
        if (h) take(h);
      }
      at = take(e);
    }
    const stepNode = entry.step != null ? byStep.get(entry.step) : undefined;
    if (stepNode) {
      nodes.add(stepNode);
      last = stepNode;
    } else if (at) last = at;
  });
  if (last) nodes.add(last);
  return { edges, nodes, last };
}

// d3's curveBasis (a B-spline through dagre's points), as dagre-d3 draws its edges.
function curve(points) {
  if (points.length === 0) return '';
  const f = (v) => Math.round(v * 10) / 10;
  if (points.length < 3) return `M${points.map((p) => `${f(p.x)},${f(p.y)}`).join('L')}`;
  let d = '';
  let x0 = NaN,
    y0 = NaN,
    x1 = NaN,
    y1 = NaN;
  let state = 0;
  const bez = (x, y) => {
    const c1 = `${f((2 * x0 + x1) / 3)},${f((2 * y0 + y1) / 3)}`;
    const c2 = `${f((x0 + 2 * x1) / 3)},${f((y0 + 2 * y1) / 3)}`;
    d += `C${c1} ${c2} ${f((x0 + 4 * x1 + x) / 6)},${f((y0 + 4 * y1 + y) / 6)}`;
  };
  for (const { x, y } of points) {
    if (state === 0) {
      d += `M${f(x)},${f(y)}`;
      state = 1;
    } else if (state === 1) state = 2;
    else {
      if (state === 2) {
        d += `L${f((5 * x0 + x1) / 6)},${f((5 * y0 + y1) / 6)}`;
        state = 3;
      }
      bez(x, y);
    }
    x0 = x1;
    x1 = x;
    y0 = y1;
    y1 = y;
  }
  bez(x1, y1);
  d += `L${f(x1)},${f(y1)}`;
  return d;
}

function nodeShape(n) {
  const x = n.x - n.w / 2;
  const y = n.y - n.h / 2;
  if (n.kind === 'start') return s('ellipse', { class: 'node-shape', cx: n.x, cy: n.y, rx: n.w / 2, ry: n.h / 2 });
  if (n.kind === 'logic') {
    const k = Math.min(10, n.w / 4);
    const pts = [
      [x + k, y],
      [x + n.w - k, y],
      [x + n.w, n.y],
      [x + n.w - k, y + n.h],
      [x + k, y + n.h],
      [x, n.y],
    ];
    return s('polygon', { class: 'node-shape', points: pts.map((p) => p.join(',')).join(' ') });
  }
  return s('rect', {
    class: 'node-shape',
    x,
    y,
    width: n.w,
    height: n.h,
    rx: n.kind === 'end' ? Math.min(n.h / 2, 16) : 4,
  });
}

const MARKERS = ['plain', ...LEVELS, 'path'];

/** The SVG of a graph. Traffic and a path are painted on it afterwards (paintTraffic, paintPath). */
export function drawDiagram(graph) {
  const defs = s(
    'defs',
    null,
    MARKERS.map((m) =>
      s(
        'marker',
        {
          id: `cs-arrow-${m}`,
          class: `arrow arrow--${m}`,
          viewBox: '0 0 10 10',
          refX: 9,
          refY: 5,
          markerWidth: 7,
          markerHeight: 7,
          orient: 'auto-start-reverse',
        },
        s('path', { d: 'M0,0L10,5L0,10z' }),
      ),
    ),
  );
  const edges = graph.edges.map((e) =>
    s(
      'g',
      {
        class: ['edge', `edge--${e.kind}`, e.dashed && 'edge--dashed', e.flowWide && 'edge--flow-wide'],
        'data-edge': e.id,
        'data-from': e.from,
        'data-to': e.to,
        'data-transitions': e.transitions.join(' '),
      },
      s('title', null, edgeTitle(e, null)),
      s('path', { class: 'edge-line', d: curve(e.points), 'marker-end': 'url(#cs-arrow-plain)' }),
      e.labelAt
        ? s('text', { class: 'edge-label', x: e.labelAt.x, y: e.labelAt.y + 4, 'text-anchor': 'middle' }, e.label)
        : null,
      e.labelAt
        ? s('text', { class: 'edge-count', x: e.labelAt.x, y: e.labelAt.y + 17, 'text-anchor': 'middle' })
        : null,
    ),
  );
  const nodes = graph.nodes.map((n) =>
    s(
      'g',
      { class: ['node', `node--${n.kind}`], 'data-node': n.id, 'data-step': n.step ?? undefined },
      s('title', null, n.step ?? n.lines.join(' ')),
      nodeShape(n),
      s(
        'text',
        { class: 'node-text', x: n.x, y: n.y - (n.lines.length * 16) / 2 + 12, 'text-anchor': 'middle' },
        n.lines.map((l, i) =>
          s('tspan', { x: n.x, dy: i === 0 ? 0 : 16, class: i === 0 ? 'node-id' : 'node-line' }, l),
        ),
      ),
    ),
  );
  return s(
    'svg',
    {
      class: 'diagram',
      viewBox: `0 0 ${graph.width} ${graph.height}`,
      width: graph.width,
      height: graph.height,
      role: 'img',
      'aria-label': `diagram of ${graph.flow} version ${graph.version}`,
    },
    defs,
    s('g', { class: 'edges' }, edges),
    s('g', { class: 'nodes' }, nodes),
    s('g', { class: 'path-badges' }),
  );
}

function edgeTitle(e, n) {
  const what =
    e.transitions.length > 0
      ? e.transitions.join(', ')
      : e.kind === 'start'
        ? 'the flow starts'
        : e.kind === 'handler'
          ? 'the hangup handler'
          : 'no branch: the flow ends';
  return n === null || n === undefined
    ? what
    : `${what}: taken ${n} time${n === 1 ? '' : 's'}${e.flowWide ? ' (at every step)' : ''}`;
}

/**
 * Colours the edges by traffic (counts: a version's `{key: n}`, or null when unknown). Returns the busiest edge's
 * count.
 */
export function paintTraffic(svg, graph, counts) {
  const per = edgeCounts(graph, counts);
  const max = Math.max(0, ...[...per.values()].filter((n) => n !== null));
  for (const e of graph.edges) {
    const g = svg.querySelector(`g.edge[data-edge="${e.id}"]`);
    if (!g) continue;
    const n = per.get(e.id);
    for (const l of LEVELS) g.classList.remove(`edge--${l}`);
    g.classList.toggle('edge--counted', n !== null);
    const level = n === null ? null : LEVELS[levelOf(n, max)];
    if (level) g.classList.add(`edge--${level}`);
    const line = g.querySelector('.edge-line');
    if (!g.classList.contains('edge--path')) line.setAttribute('marker-end', `url(#cs-arrow-${level ?? 'plain'})`);
    g.querySelector('title').textContent = edgeTitle(e, n);
    const count = g.querySelector('.edge-count');
    if (count) count.textContent = n ? `×${n}` : '';
    g.setAttribute('data-count', n === null ? '' : String(n));
  }
  return max;
}

/** Draws a call's path (see pathOf) over the diagram: its edges numbered in order, its steps marked. */
export function paintPath(svg, graph, path) {
  svg.classList.toggle('diagram--path', path.edges.size > 0 || path.nodes.size > 0);
  const badges = svg.querySelector('g.path-badges');
  badges.replaceChildren();
  for (const e of graph.edges) {
    const g = svg.querySelector(`g.edge[data-edge="${e.id}"]`);
    const order = path.edges.get(e.id);
    g.classList.toggle('edge--path', Boolean(order));
    g.setAttribute('data-order', order ? order.join(',') : '');
    if (order) {
      g.querySelector('.edge-line').setAttribute('marker-end', 'url(#cs-arrow-path)');
      const p = e.labelAt ?? e.points[Math.floor(e.points.length / 2)] ?? { x: 0, y: 0 };
      const text = order.length > 4 ? `${order.slice(0, 3).join(',')}…` : order.join(',');
      const w = 8 + text.length * 7;
      badges.append(
        s(
          'g',
          { class: 'path-badge', 'data-edge': e.id },
          s('rect', { x: p.x - w / 2, y: p.y - 26, width: w, height: 15, rx: 7 }),
          s('text', { x: p.x, y: p.y - 15, 'text-anchor': 'middle' }, text),
        ),
      );
    }
  }
  for (const n of graph.nodes) {
    const g = svg.querySelector(`g.node[data-node="${n.id}"]`);
    g.classList.toggle('node--visited', path.nodes.has(n.id));
    g.classList.toggle('node--last', path.last === n.id);
  }
}
