/**
 * `callscript graph`: the flow's transition graph (src/testing/transitions.ts `flowEdges`, read
 * from the compiled machine) as a Mermaid `flowchart TD` or a Graphviz digraph.
 *
 * - nodes: steps, labelled `id` and the command (say text truncated, read max_digits),
 *   logic steps as `set` / `switch`, plus `@end` ("end") and `start`;
 * - edges: labelled with the result key; a retry is a self-loop `KEY ×n`, the exhausted
 *   edge `KEY (retries used up)`; a branch `say:` adds ` + say`; switch cases are labelled
 *   with their condition (truncated); a flow-wide result handler's edge is dashed and
 *   marked `(flow-wide)`; the hangup handler hangs off a `call ends` node;
 * - with coverage data: an edge whose transition was never taken is red and dashed,
 *   labelled `(untaken)`; taken edges show their count.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { END_STATE } from '../flow/machine-config.js';
import type { MediaParam, QueueSpec, Value } from '../flow/model.js';
import { COVERABLE, flowEdges, type EdgeKind, type FlowEdge } from './transitions.js';
import { QUEUE_PARTS, queueStep } from './queue-edges.js';
import type { CoverageFile } from './coverage.js';
import { printable, printableLines } from '../terminal/printable.js';

export type GraphFormat = 'mermaid' | 'dot';

export interface GraphOptions {
  format?: GraphFormat;
  coverage?: CoverageFile;
  /** Longest label text (say text, conditions) before truncation with "…". */
  width?: number;
}

const trunc = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

function mediaText(m: MediaParam | undefined): string | undefined {
  const first = m?.[0];
  if (!first) return undefined;
  if (first.kind === 'tts') return first.text;
  if (first.kind === 'id') return `media ${first.id}`;
  if (first.kind === 'raw') return first.value;
  if (first.kind === 'prompt') return `prompt ${first.name}`;
  return undefined;
}

const scalar = (v: Value | undefined) =>
  v === undefined || v === null || typeof v === 'object' ? undefined : String(v);

/** The node label lines of a step. */
export function stepLabel(flow: CompiledFlow, id: string, width = 40): string[] {
  const step = flow.model.steps[id];
  if (!step) return [id];
  if (step.kind === 'set') return [id, `set ${step.assign.map((a) => a.name).join(', ')}`];
  // `when: / then: / else:` is a switch of one case: shown as what the author wrote.
  if (step.kind === 'switch')
    return [id, step.calendar ? `calendar ${step.calendar.name}` : step.cases.length === 1 ? 'when' : 'switch'];
  if (step.kind === 'subflow') return [id, `subflow ${step.flow}`];
  if (step.kind === 'return') return [id, `return ${step.result}`];
  if (step.kind === 'loop')
    return [id, `foreach ${step.as}${step.index ? `, ${step.index}` : ''} in ${trunc(step.in, width)}`];
  const c = step.command;
  const lines = [id, c.name];
  const text = mediaText(c.media.media_id ?? c.media.prompt ?? c.media.welcome);
  if (text !== undefined) lines[1] += `: "${trunc(text, width)}"`;
  const md = scalar(c.params.max_digits);
  if (md !== undefined) lines.push(`max_digits ${md}`);
  if (c.name === 'sms' && scalar(c.params.to) !== undefined) lines.push(`to ${trunc(scalar(c.params.to)!, width)}`);
  if (step.http) lines[1] += `: ${step.http.method} ${trunc(step.http.url, width)}`;
  if (step.queue) return queueLabel(id, step.queue, width);
  return lines;
}

/** A queue step's node: its line, its agents and strategy, its longest wait. */
function queueLabel(id: string, q: QueueSpec, width: number): string[] {
  const agents =
    q.agents.kind === 'list'
      ? `${q.agents.items.length} agent${q.agents.items.length === 1 ? '' : 's'}`
      : `agents ${trunc(q.agents.expr, width)}`;
  return [id, `queue ${q.name}`, `${agents}, ${q.strategy}`, `max_wait ${q.max_wait} s`];
}

/** The node of a part of a queue step (its hold, announcement, ring): what it plays or dials. */
function queuePartLabel(q: QueueSpec, name: 'hold' | 'announce' | 'ring', width: number): string[] {
  if (name === 'ring') return ['ring the agent', `dialout, ${q.ring_time} s`];
  if (name === 'announce') {
    const text = mediaText(q.announce?.media);
    return [`announce every ${q.announce?.every ?? 60} s`, ...(text !== undefined ? [`"${trunc(text, width)}"`] : [])];
  }
  const chunks = q.hold.map((h) => (h.kind === 'wait' ? `wait ${h.wait} s` : `"${mediaText([h.media]) ?? ''}"`));
  return ['hold (looped)', trunc(chunks.join(', '), width)];
}

/**
 * An edge's label. `command`: the command of the step it leaves (a dialout's `default` is
 * the call answered: it is bridged, and the flow goes on only once that call ends).
 */
export function edgeLabel(e: FlowEdge, width = 40, command?: string): string {
  let l: string;
  switch (e.kind) {
    case 'retry':
      l = `${e.key} ×${e.retry}`;
      break;
    case 'then':
      l = `${e.key} (retries used up)`;
      break;
    case 'case':
      // a calendar step's cases are its results (coverage keys <step>:open, <step>:holiday)
      l = /:(open|holiday)$/.test(e.id) ? e.id.slice(e.id.lastIndexOf(':') + 1) : trunc(e.condition ?? '', width);
      break;
    case 'switch-default':
      l = e.id.endsWith(':closed') ? 'closed' : 'default';
      break;
    case 'next':
      l = '';
      break;
    case 'enter':
    case 'return':
    case 'loop':
      l = trunc(e.key ?? '', width);
      break;
    default:
      l = command === 'dialout' && e.key === 'default' ? 'answered (bridged)' : (e.key ?? '');
  }
  if (e.say) l += ' + say';
  if (e.flowWide) l += ' (flow-wide)';
  return l;
}

export interface GNode {
  id: string;
  lines: string[];
  shape: 'box' | 'logic' | 'end' | 'start';
  /** The flow step the node stands for (absent for `start`, `flow_end`, `call_ends` and a queue step's parts). */
  step?: string;
  /** A part of a queue step (its hold, announcement, ring): that step. */
  partOf?: string;
}
export interface GEdge {
  from: string;
  to: string;
  label: string;
  dashed: boolean;
  untaken: boolean;
  /** The coverage key the edge takes (absent for the start edge and the hangup handler's). */
  transition?: string;
  /** The FlowEdge kind (absent for the start edge and the hangup handler's). */
  kind?: EdgeKind;
  /** From the flow-wide handlers (handlers.on / handlers.error): one key shared by every step's edge. */
  flowWide?: boolean;
}

/**
 * The graph, format-neutral. Node ids are `s0`, `s1`, ... (steps in flow order), `start`, `flow_end`, `call_ends`
 * (`end` is reserved in Mermaid); a queue step's parts are `s<n>_hold`, `s<n>_announce`, `s<n>_ring` after it.
 */
export function buildGraph(flow: CompiledFlow, opts: GraphOptions = {}): { nodes: GNode[]; edges: GEdge[] } {
  const width = opts.width ?? 40;
  const ids = new Map<string, string>();
  const nodes: GNode[] = [{ id: 'start', lines: ['start'], shape: 'start' }];
  Object.keys(flow.model.steps).forEach((id, i) => {
    ids.set(id, `s${i}`);
    const step = flow.model.steps[id]!;
    const final = step.kind === 'command' && step.command.name === 'hangup';
    nodes.push({
      id: `s${i}`,
      lines: stepLabel(flow, id, width),
      shape: step.kind === 'command' ? (final ? 'end' : 'box') : 'logic',
      step: id,
    });
    const q = queueStep(flow, id)?.queue;
    if (q)
      for (const { part, name } of QUEUE_PARTS) {
        if (!flow.config.states[id + part]) continue;
        ids.set(id + part, `s${i}_${name}`);
        nodes.push({ id: `s${i}_${name}`, lines: queuePartLabel(q, name, width), shape: 'box', partOf: id });
      }
  });
  nodes.push({ id: 'flow_end', lines: ['end (hangup)'], shape: 'end' });
  const nid = (s: string) => (s === END_STATE ? 'flow_end' : (ids.get(s) ?? 'flow_end'));
  const cov = opts.coverage?.flows?.[flow.name]?.transitions;
  const edges: GEdge[] = [{ from: 'start', to: nid(flow.model.start), label: '', dashed: false, untaken: false }];
  let handlerEdge = false;
  for (const e of flowEdges(flow)) {
    if (e.kind === 'status') {
      if (!handlerEdge && flow.model.handlers.hangup !== undefined) {
        nodes.push({ id: 'call_ends', lines: ['call ends', '(any step)'], shape: 'start' });
        edges.push({
          from: 'call_ends',
          to: nid(flow.model.handlers.hangup),
          label: 'hangup handler (flow-wide)',
          dashed: true,
          untaken: false,
        });
        handlerEdge = true;
      }
      continue;
    }
    const count = cov ? (cov[e.id] ?? 0) : undefined;
    const untaken = count === 0 && COVERABLE.has(e.kind);
    const from = flow.model.steps[e.from];
    let label = edgeLabel(e, width, from?.kind === 'command' ? from.command.name : undefined);
    if (untaken) label += label ? ' (untaken)' : '(untaken)';
    else if (count !== undefined && COVERABLE.has(e.kind)) label += ` [${count}]`;
    edges.push({
      from: nid(e.from),
      to: nid(e.to),
      label,
      dashed: Boolean(e.flowWide) || untaken,
      untaken,
      transition: e.id,
      kind: e.kind,
      ...(e.flowWide ? { flowWide: true } : {}),
    });
  }
  return { nodes, edges };
}

// ---- mermaid ------------------------------------------------------------------------------------

/**
 * Text inside a quoted Mermaid label: control characters escaped (a diagram is printed on a terminal:
 * src/terminal/printable.ts), quotes and markup characters as entity codes.
 */
export function mermaidText(s: string): string {
  return printable(s).replace(/[#"<>&]/g, (c) => `#${c.charCodeAt(0)};`);
}

export function toMermaid(flow: CompiledFlow, opts: GraphOptions = {}): string {
  const g = buildGraph(flow, opts);
  const out = ['flowchart TD'];
  for (const n of g.nodes) {
    const t = `"${n.lines.map(mermaidText).join('<br/>')}"`;
    const shaped =
      n.shape === 'logic' ? `{{${t}}}` : n.shape === 'end' ? `([${t}])` : n.shape === 'start' ? `((${t}))` : `[${t}]`;
    out.push(`  ${n.id}${shaped}`);
  }
  const untaken: number[] = [];
  g.edges.forEach((e, i) => {
    const arrow = e.dashed ? '-.->' : '-->';
    out.push(e.label ? `  ${e.from} ${arrow}|"${mermaidText(e.label)}"| ${e.to}` : `  ${e.from} ${arrow} ${e.to}`);
    if (e.untaken) untaken.push(i);
  });
  if (untaken.length > 0) out.push(`  linkStyle ${untaken.join(',')} stroke:#d00,color:#d00`);
  return out.join('\n') + '\n';
}

// ---- dot ---------------------------------------------------------------------------------------

/** A Graphviz double-quoted string: control characters escaped but its line breaks, which are the label's. */
export function dotString(s: string): string {
  return `"${printableLines(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

export function toDot(flow: CompiledFlow, opts: GraphOptions = {}): string {
  const g = buildGraph(flow, opts);
  const out = [
    `digraph ${dotString(flow.name)} {`,
    '  rankdir=TB;',
    '  node [shape=box, fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=10];',
  ];
  for (const n of g.nodes) {
    const shape =
      n.shape === 'logic' ? 'hexagon' : n.shape === 'end' ? 'doubleoctagon' : n.shape === 'start' ? 'oval' : 'box';
    out.push(`  ${n.id} [label=${dotString(n.lines.join('\n'))}, shape=${shape}];`);
  }
  for (const e of g.edges) {
    const attrs = [`label=${dotString(e.label)}`];
    if (e.dashed) attrs.push('style=dashed');
    if (e.untaken) attrs.push('color=red', 'fontcolor=red');
    out.push(`  ${e.from} -> ${e.to} [${attrs.join(', ')}];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}

export function renderGraph(flow: CompiledFlow, opts: GraphOptions = {}): string {
  return (opts.format ?? 'mermaid') === 'dot' ? toDot(flow, opts) : toMermaid(flow, opts);
}
