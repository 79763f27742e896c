/**
 * The flow's transition graph laid out for drawing: the graph of `callscript graph`
 * (src/testing/graph.ts `buildGraph`: the same nodes, edges and labels) with positions
 * computed by dagre (@dagrejs/dagre, the layered layout Mermaid uses), so that a browser
 * only has to draw it (the web console, src/http/console.ts).
 *
 * Three parts, so that the costly one can run on another thread (src/http/layouts.ts):
 * `layoutInput` (the graph and the sizes of its boxes: plain data), `runLayout` (dagre:
 * CPU-bound, from milliseconds for a usual flow to minutes for a flow of hundreds of steps
 * with long back edges) and `laidGraph` (the two joined into what the console draws).
 *
 * Sizes are in SVG user units for a 12px monospace font (the console's CSS): a character is
 * 7.2 wide, a line 16 high. Coordinates are those of the node's or label's centre.
 */
import dagre from '@dagrejs/dagre';
import type { CompiledFlow } from '../engine/compile.js';
import { buildGraph, type GEdge, type GNode } from './graph.js';
import { COVERABLE, type EdgeKind } from './transitions.js';

export const CHAR_W = 7.2;
export const LINE_H = 16;
const PAD_X = 12;
const PAD_Y = 8;

export type NodeKind = 'command' | 'logic' | 'end' | 'start';

export interface LaidNode {
  /** `s0`, `s1`... (steps in flow order), `start`, `flow_end`, `call_ends`. */
  id: string;
  /** The flow step (null for start, flow_end, call_ends and a queue step's parts). */
  step: string | null;
  /** A part of a queue step (its hold, announcement, ring): that step. */
  partOf?: string;
  kind: NodeKind;
  lines: string[];
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface LaidEdge {
  /** `e0`, `e1`... in the order of `callscript graph`. */
  id: string;
  from: string;
  to: string;
  /** The coverage keys counted when the edge is taken (empty: an edge that takes no transition of the flow). */
  transitions: string[];
  /** The FlowEdge kind; `start` (the flow's start), `handler` (to the hangup handler). */
  kind: EdgeKind | 'start' | 'handler';
  label: string;
  dashed: boolean;
  /** From the flow-wide handlers: its key is shared by the edges of every step that inherits it. */
  flowWide: boolean;
  points: { x: number; y: number }[];
  /** Where the label's centre is (null: no label). */
  labelAt: { x: number; y: number } | null;
}

export interface LaidGraph {
  flow: string;
  version: string;
  width: number;
  height: number;
  nodes: LaidNode[];
  edges: LaidEdge[];
}

/** What dagre is given: box sizes and edges (plain data, sent to the layout thread). */
export interface LayoutInput {
  nodes: { id: string; width: number; height: number }[];
  /** `name`: the edge's id (e0...); a label's box when it has one. */
  edges: { from: string; to: string; name: string; width?: number; height?: number }[];
}

/** What dagre computed: centres of the nodes, points and label centres of the edges. */
export interface LayoutOutput {
  width: number;
  height: number;
  nodes: Record<string, { x: number; y: number }>;
  edges: Record<string, { points: { x: number; y: number }[]; x?: number; y?: number }>;
}

export interface GraphParts {
  nodes: GNode[];
  edges: GEdge[];
  /** Each node's own box (the layout's box is wider when the node has self-loops: they are drawn beside it). */
  boxes: { width: number; height: number }[];
  input: LayoutInput;
}

const round = (n: number) => Math.round(n * 10) / 10;
const textWidth = (lines: readonly string[]) => Math.max(1, ...lines.map((l) => [...l].length)) * CHAR_W;

/** How far the i-th self-loop of a node reaches out of its box, and the gap to the labels. */
const LOOP_REACH = (i: number) => 22 + 12 * i;
const LOOP_GAP = 6;
/** Vertical distance between the labels of a node's self-loops (a label and its count). */
const LOOP_LABEL_STEP = 28;

/**
 * The graph of `callscript graph` and the sizes of its boxes. Self-loops (retries) are not
 * given to dagre (it places them far from their node): the node's box is widened on the
 * right by the room they need, and they are drawn there (laidGraph).
 */
export function layoutInput(flow: CompiledFlow, width = 28): GraphParts {
  const g = buildGraph(flow, { width });
  const loops = new Map<string, GEdge[]>();
  for (const e of g.edges) if (e.from === e.to) loops.set(e.from, [...(loops.get(e.from) ?? []), e]);
  const boxes = g.nodes.map((n) => ({
    width: round(textWidth(n.lines) + 2 * PAD_X),
    height: n.lines.length * LINE_H + 2 * PAD_Y,
  }));
  const input: LayoutInput = {
    nodes: g.nodes.map((n, i) => {
      const own = loops.get(n.id) ?? [];
      const room =
        own.length === 0 ? 0 : LOOP_REACH(own.length - 1) + LOOP_GAP + textWidth(own.map((e) => e.label)) + 4;
      const height = Math.max(boxes[i]!.height, own.length * LOOP_LABEL_STEP);
      return { id: n.id, width: round(boxes[i]!.width + room), height };
    }),
    edges: g.edges.flatMap((e, i) =>
      e.from === e.to
        ? []
        : [
            {
              from: e.from,
              to: e.to,
              name: `e${i}`,
              ...(e.label ? { width: round(textWidth([e.label]) + 6), height: LINE_H } : {}),
            },
          ],
    ),
  };
  return { nodes: g.nodes, edges: g.edges, boxes, input };
}

/** dagre's layered layout, top to bottom. */
export function runLayout(input: LayoutInput): LayoutOutput {
  const dg = new dagre.graphlib.Graph({ multigraph: true });
  dg.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 40, edgesep: 12, marginx: 16, marginy: 16 });
  dg.setDefaultEdgeLabel(() => ({}));
  for (const n of input.nodes) dg.setNode(n.id, { width: n.width, height: n.height });
  for (const e of input.edges)
    dg.setEdge(
      e.from,
      e.to,
      e.width !== undefined ? { width: e.width, height: e.height ?? LINE_H, labelpos: 'c' } : {},
      e.name,
    );
  dagre.layout(dg);
  const out: LayoutOutput = {
    width: Math.ceil(dg.graph().width ?? 0),
    height: Math.ceil(dg.graph().height ?? 0),
    nodes: {},
    edges: {},
  };
  for (const n of input.nodes) {
    const p = dg.node(n.id);
    out.nodes[n.id] = { x: round(p.x ?? 0), y: round(p.y ?? 0) };
  }
  for (const e of input.edges) {
    const p = dg.edge({ v: e.from, w: e.to, name: e.name });
    out.edges[e.name] = {
      points: (p.points ?? []).map((q: { x: number; y: number }) => ({ x: round(q.x), y: round(q.y) })),
      ...(e.width !== undefined && p.x !== undefined && p.y !== undefined ? { x: round(p.x), y: round(p.y) } : {}),
    };
  }
  return out;
}

type Pt = { x: number; y: number };

/** Where the line from the centre of a box towards `p` leaves the box. */
function boundary(c: Pt, w: number, h: number, p: Pt): Pt {
  const dx = p.x - c.x;
  const dy = p.y - c.y;
  if (dx === 0 && dy === 0) return { x: c.x, y: c.y + h / 2 };
  const onTopOrBottom = Math.abs(dy) * (w / 2) > Math.abs(dx) * (h / 2);
  const k = onTopOrBottom ? h / 2 / Math.abs(dy) : w / 2 / Math.abs(dx);
  return { x: round(c.x + dx * k), y: round(c.y + dy * k) };
}

/** The graph with its layout, as the console's graph route answers it. */
export function laidGraph(
  flow: Pick<CompiledFlow, 'name' | 'version'>,
  parts: GraphParts,
  layout: LayoutOutput,
): LaidGraph {
  const nodes: LaidNode[] = parts.nodes.map((n, i) => {
    const box = parts.boxes[i]!;
    const room = parts.input.nodes[i]!.width - box.width; // the self-loops' room, on the right
    const at = layout.nodes[n.id] ?? { x: 0, y: 0 };
    return {
      id: n.id,
      step: n.step ?? null,
      ...(n.partOf !== undefined ? { partOf: n.partOf } : {}),
      kind: n.shape === 'box' ? 'command' : n.shape,
      lines: n.lines,
      x: round(at.x - room / 2),
      y: at.y,
      w: box.width,
      h: box.height,
    };
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const loopIndex = new Map<string, number>();
  const loopCount = new Map<string, number>();
  for (const e of parts.edges) if (e.from === e.to) loopCount.set(e.from, (loopCount.get(e.from) ?? 0) + 1);
  const loopLabelX = new Map<string, number>();
  for (const [id, k] of loopCount) {
    const n = byId.get(id)!;
    loopLabelX.set(id, n.x + n.w / 2 + LOOP_REACH(k - 1) + LOOP_GAP);
  }
  const edges: LaidEdge[] = parts.edges.map((e, i) => {
    let points: Pt[];
    let labelAt: Pt | null = null;
    if (e.from === e.to) {
      // the i-th self-loop: out of the box's right side and back, labels stacked beside the loops
      const n = byId.get(e.from)!;
      const j = loopIndex.get(e.from) ?? 0;
      loopIndex.set(e.from, j + 1);
      const k = loopCount.get(e.from)!;
      const xr = n.x + n.w / 2;
      const a = Math.min(n.h / 2 - 4, 8 + 6 * j);
      const reach = LOOP_REACH(j);
      points = [
        { x: xr, y: n.y - a },
        { x: xr + reach, y: n.y - a - 6 },
        { x: xr + reach, y: n.y + a + 6 },
        { x: xr, y: n.y + a },
      ].map((p) => ({ x: round(p.x), y: round(p.y) }));
      if (e.label)
        labelAt = {
          x: round(loopLabelX.get(e.from)! + textWidth([e.label]) / 2),
          y: round(n.y + (j - (k - 1) / 2) * LOOP_LABEL_STEP - 6),
        };
    } else {
      const p = layout.edges[`e${i}`];
      points = [...(p?.points ?? [])];
      // dagre ends an edge on the (widened) layout box: end it on the node's own box
      const from = byId.get(e.from)!;
      const to = byId.get(e.to)!;
      if (points.length >= 2) {
        if (loopCount.has(e.from)) points[0] = boundary(from, from.w, from.h, points[1]!);
        if (loopCount.has(e.to)) points[points.length - 1] = boundary(to, to.w, to.h, points[points.length - 2]!);
      }
      if (e.label && p?.x !== undefined && p.y !== undefined) labelAt = { x: p.x, y: p.y };
    }
    return {
      id: `e${i}`,
      from: e.from,
      to: e.to,
      transitions: e.transition !== undefined && e.kind !== undefined && COVERABLE.has(e.kind) ? [e.transition] : [],
      kind: e.kind ?? (e.from === 'start' ? 'start' : 'handler'),
      label: e.label,
      dashed: e.dashed,
      flowWide: e.flowWide === true,
      points,
      labelAt,
    };
  });
  return { flow: flow.name, version: flow.version, width: layout.width, height: layout.height, nodes, edges };
}

/** All three on this thread (tests, scripts): the server lays graphs out on its layout thread. */
export function layoutGraph(flow: CompiledFlow): LaidGraph {
  const parts = layoutInput(flow);
  return laidGraph(flow, parts, runLayout(parts.input));
}
