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
  /** The flow step (null for start, flow_end and call_ends). */
  step: string | null;
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
  input: LayoutInput;
}

const round = (n: number) => Math.round(n * 10) / 10;
const textWidth = (lines: readonly string[]) => Math.max(1, ...lines.map((l) => [...l].length)) * CHAR_W;

/** The graph of `callscript graph` and the sizes of its boxes. */
export function layoutInput(flow: CompiledFlow, width = 28): GraphParts {
  const g = buildGraph(flow, { width });
  const input: LayoutInput = {
    nodes: g.nodes.map((n) => ({ id: n.id, width: round(textWidth(n.lines) + 2 * PAD_X), height: n.lines.length * LINE_H + 2 * PAD_Y })),
    edges: g.edges.map((e, i) => ({ from: e.from, to: e.to, name: `e${i}`, ...(e.label ? { width: round(textWidth([e.label]) + 6), height: LINE_H } : {}) })),
  };
  return { nodes: g.nodes, edges: g.edges, input };
}

/** dagre's layered layout, top to bottom. */
export function runLayout(input: LayoutInput): LayoutOutput {
  const dg = new dagre.graphlib.Graph({ multigraph: true });
  dg.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 40, edgesep: 12, marginx: 16, marginy: 16 });
  dg.setDefaultEdgeLabel(() => ({}));
  for (const n of input.nodes) dg.setNode(n.id, { width: n.width, height: n.height });
  for (const e of input.edges) dg.setEdge(e.from, e.to, e.width !== undefined ? { width: e.width, height: e.height ?? LINE_H, labelpos: 'c' } : {}, e.name);
  dagre.layout(dg);
  const out: LayoutOutput = { width: Math.ceil(dg.graph().width ?? 0), height: Math.ceil(dg.graph().height ?? 0), nodes: {}, edges: {} };
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

/** The graph with its layout, as the console's graph route answers it. */
export function laidGraph(flow: Pick<CompiledFlow, 'name' | 'version'>, parts: GraphParts, layout: LayoutOutput): LaidGraph {
  const nodes: LaidNode[] = parts.nodes.map((n, i) => ({
    id: n.id,
    step: n.step ?? null,
    kind: n.shape === 'box' ? 'command' : n.shape,
    lines: n.lines,
    x: layout.nodes[n.id]?.x ?? 0,
    y: layout.nodes[n.id]?.y ?? 0,
    w: parts.input.nodes[i]!.width,
    h: parts.input.nodes[i]!.height,
  }));
  const edges: LaidEdge[] = parts.edges.map((e, i) => {
    const p = layout.edges[`e${i}`];
    return {
      id: `e${i}`,
      from: e.from,
      to: e.to,
      transitions: e.transition !== undefined && e.kind !== undefined && COVERABLE.has(e.kind) ? [e.transition] : [],
      kind: e.kind ?? (e.from === 'start' ? 'start' : 'handler'),
      label: e.label,
      dashed: e.dashed,
      flowWide: e.flowWide === true,
      points: p?.points ?? [],
      labelAt: e.label && p?.x !== undefined && p.y !== undefined ? { x: p.x, y: p.y } : null,
    };
  });
  return { flow: flow.name, version: flow.version, width: layout.width, height: layout.height, nodes, edges };
}

/** All three on this thread (tests, scripts): the server lays graphs out on its layout thread. */
export function layoutGraph(flow: CompiledFlow): LaidGraph {
  const parts = layoutInput(flow);
  return laidGraph(flow, parts, runLayout(parts.input));
}
