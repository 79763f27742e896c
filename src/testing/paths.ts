/**
 * `callscript paths`: the transition graph of a compiled flow (read from its xstate
 * machine config; sample results checked on the machine itself), and one scenario case per transition not yet
 * covered, each the shortest way there from the start (BFS), written in the scenario
 * format of docs/testing.md with `# TODO` comments where a value cannot be derived.
 *
 * Transition ids (shared with coverage data):
 * - `<step>:<key>`: a command step's branch key (an exact result, a pattern's source,
 *   `default`, `error`); for a `retry` branch, the retry itself (the step runs again);
 * - `<step>:<key>:then`: the retries of that key are used up (`then`);
 * - `<step>:case:<n>` (1-based) and `<step>:default`: a switch (or `when`) step's cases.
 * Coverage data (src/testing/coverage.ts) keys some of them differently (`case<n>`, a
 * flow-wide handler once per flow as `handlers.on.<command>:<key>` / `handlers:error`):
 * each edge's `cover` is its key there.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { END_STATE, EV_ERROR, EV_RESULT, type TransitionConfig } from '../flow/machine-config.js';
import type { Value } from '../flow/model.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { keysTaken } from '../engine/probe.js';
import { compileLinear, type LinearRegex } from '../flow/pattern.js';

export type EdgeKind = 'key' | 'retry' | 'then' | 'case' | 'switch-default' | 'next' | 'status';

export interface FlowEdge {
  /** Transition id; `next` and `status` edges are not transitions to cover (id still set). */
  id: string;
  kind: EdgeKind;
  from: string;
  /** A step id or END_STATE (`@end`). */
  to: string;
  /** The branch key (command edges). */
  key?: string;
  /** Retries allowed (retry / then edges). */
  retry?: number;
  /** A branch `say:` plays before going on. */
  say?: boolean;
  /** Edge comes from the flow-wide handlers (handlers.on / handlers.error). */
  flowWide?: boolean;
  /** The key of this transition in coverage data (src/testing/coverage.ts), when it has one. */
  cover?: string;
  /** The CEL condition that must hold (a case), or the cases that must not (a switch default). */
  condition?: string;
}

/** Kinds that are transitions to cover. */
export const COVERABLE: ReadonlySet<EdgeKind> = new Set<EdgeKind>(['key', 'retry', 'then', 'case', 'switch-default']);

/** The coverage keys a transition names (its `took` action). */
function tookKeys(t: TransitionConfig): string[] {
  const a = t.actions.find((x) => x.type === 'took');
  return (a?.params?.keys as string[] | undefined) ?? [];
}

/** Where a transition leads, past a say state; and whether a say plays first. */
function dest(flow: CompiledFlow, target: string): { to: string; say: boolean } {
  const m = flow.config.states[target]?.meta;
  return m && m.kind === 'say' ? { to: m.to, say: true } : { to: target, say: false };
}

/**
 * Every edge of the flow's transition graph, read from its machine config: the states'
 * `always` lists (set and switch steps) and `result` and `error` lists (command steps).
 */
export function flowEdges(flow: CompiledFlow): FlowEdge[] {
  const edges: FlowEdge[] = [];
  const handler = flow.model.handlers.hangup;
  for (const [id, sc] of Object.entries(flow.config.states)) {
    const meta = sc.meta;
    const step = flow.model.steps[id];
    if (meta.kind === 'logic' && step) {
      const cases = step.kind === 'switch' ? step.cases : [];
      for (const t of sc.always ?? []) {
        if (t.guard?.type === 'budget') continue;
        const cover = tookKeys(t)[0] ?? '';
        if (step.kind === 'set') {
          edges.push({ id: `${id}:next`, kind: 'next', from: id, to: t.target });
        } else if (t.guard?.type === 'when') {
          const i = Number(t.guard.params?.i);
          edges.push({ id: `${id}:case:${i + 1}`, kind: 'case', from: id, to: t.target, condition: cases[i]?.when ?? 'true', cover });
        } else {
          const not = cases.map((c) => `!(${c.when})`).join(' && ');
          edges.push({ id: `${id}:default`, kind: 'switch-default', from: id, to: t.target, condition: not || 'true', cover });
        }
      }
      continue;
    }
    if (meta.kind !== 'command' || meta.final) continue;
    const regexKey = new Map(meta.keys.filter((k) => k.regex !== undefined).map((k) => [k.regex!, k.key]));
    const lists: [string, TransitionConfig[]][] = [
      ['default', sc.on?.[EV_RESULT] ?? []],
      ['error', sc.on?.[EV_ERROR] ?? []],
    ];
    for (const [fallback, list] of lists) {
      for (const t of list) {
        const cover = tookKeys(t);
        const p = t.guard?.params ?? {};
        const key = typeof p.exact === 'string' ? p.exact : typeof p.re === 'string' ? regexKey.get(p.re) ?? p.re : fallback;
        if (cover.length === 0) {
          // No branch: the result (or error) ends the flow.
          edges.push({ id: `${id}:${key}`, kind: 'key', from: id, to: END_STATE, key });
          continue;
        }
        const d = dest(flow, t.target);
        const extra = { key, ...(d.say ? { say: true } : {}), ...(cover[0]!.startsWith('handlers') ? { flowWide: true } : {}) };
        if (typeof p.max === 'number') edges.push({ id: `${id}:${key}`, kind: 'retry', from: id, to: id, retry: p.max, ...extra, cover: cover[0]! });
        else if (cover.length > 1) {
          const retry = list.find((x) => x !== t && tookKeys(x)[0] === cover[0] && typeof x.guard?.params?.max === 'number')?.guard?.params?.max as number | undefined;
          edges.push({ id: `${id}:${key}:then`, kind: 'then', from: id, to: d.to, ...(retry !== undefined ? { retry } : {}), ...extra, cover: cover[1]! });
        } else edges.push({ id: `${id}:${key}`, kind: 'key', from: id, to: d.to, ...extra, cover: cover[0]! });
      }
      // No default (or error) transition of the step's own: the flow's catch-all ends it.
      if (!list.some((t) => !t.guard)) edges.push({ id: `${id}:${fallback}`, kind: 'key', from: id, to: END_STATE, key: fallback });
    }
    if (handler !== undefined) edges.push({ id: `${id}:hangup`, kind: 'status', from: id, to: handler });
  }
  return edges;
}

/** The transitions to cover, in edge order. */
export function transitionIds(flow: CompiledFlow): string[] {
  return flowEdges(flow)
    .filter((e) => COVERABLE.has(e.kind))
    .map((e) => e.id);
}

// ---- samples ------------------------------------------------------------------------------

/** A string matching a (simple) regular expression source, or undefined. */
export function sampleFor(regex: string): string | undefined {
  let re: LinearRegex;
  try {
    re = compileLinear(regex);
  } catch {
    return undefined;
  }
  const out = gen(regex);
  for (const s of [out, out?.replace(/a/g, '0'), '0', '1', '00', '0000', '']) if (s !== undefined && re.test(s)) return s;
  return undefined;
}

function gen(src: string): string | undefined {
  let i = 0;
  const alt = (): string => {
    let s = seq();
    while (src[i] === '|') {
      i++;
      seq();
    }
    return s;
  };
  const atom = (): string | null => {
    const ch = src[i]!;
    if (ch === '^' || ch === '$') {
      i++;
      return '';
    }
    if (ch === '(') {
      i++;
      if (src[i] === '?') i += src[i + 1] === '<' ? 3 : 2;
      const s = alt();
      i++; // )
      return s;
    }
    if (ch === '[') {
      let j = i + 1;
      const neg = src[j] === '^';
      if (neg) j++;
      let first = src[j] === '\\' ? esc(src[j + 1]!) : src[j]!;
      while (j < src.length && !(src[j] === ']' && j > i + 1)) j += src[j] === '\\' ? 2 : 1;
      i = j + 1;
      if (neg) first = first === 'a' ? 'b' : 'a';
      return first;
    }
    if (ch === '\\') {
      i += 2;
      return esc(src[i - 1]!);
    }
    if (ch === '.') {
      i++;
      return 'a';
    }
    i++;
    return ch;
  };
  const seq = (): string => {
    let s = '';
    while (i < src.length && src[i] !== '|' && src[i] !== ')') {
      const a = atom();
      if (a === null) return s;
      let n = 1;
      const q = src[i];
      if (q === '*' || q === '?') {
        n = 0;
        i++;
      } else if (q === '+') {
        i++;
      } else if (q === '{') {
        const m = /^\{(\d+)(,\d*)?\}/.exec(src.slice(i));
        if (m) {
          n = Number(m[1]);
          i += m[0].length;
        }
      }
      if (src[i] === '?') i++; // lazy
      s += a.repeat(n);
    }
    return s;
  };
  try {
    return alt();
  } catch {
    return undefined;
  }
}

function esc(c: string): string {
  if (c === 'd') return '0';
  if (c === 'w') return 'a';
  if (c === 's') return ' ';
  if (c === 'D' || c === 'W' || c === 'S') return '-';
  return c;
}

const DEFAULT_CANDIDATES = ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '99', '999', '*', '#', 'OTHER', 'UNKNOWN', 'x'];

/** A result that takes `e` (a key, retry or then edge of a command step), with whether it is only a guess. */
export function resultFor(flow: CompiledFlow, e: FlowEdge): { value: string; todo?: string } {
  const key = e.key!;
  const meta = flow.config.states[e.from]?.meta;
  const keys = meta && meta.kind === 'command' ? meta.keys : [];
  // The transition's first coverage key: what the machine reports when it takes it.
  const first = e.kind === 'then' ? e.cover?.replace(/:then$/, '') : e.cover;
  const takes = (value: string) => keysTaken(flow, e.from, value)[0] === first;
  if (key === 'default') {
    const command = meta && meta.kind === 'command' ? meta.command : '';
    const spec = isAction(command) ? ACTION_SPECS[command].results : undefined;
    const known = spec && spec.kind === 'enum' ? spec.values : spec && spec.kind === 'digits' ? [] : undefined;
    for (const c of [...(known ?? []), ...DEFAULT_CANDIDATES]) {
      if (first === undefined ? keysTaken(flow, e.from, c).length === 0 : takes(c)) return known?.includes(c) ? { value: c } : { value: c, todo: 'any result that no other key of the step matches' };
    }
    return { value: 'OTHER', todo: 'a result that no other key of the step matches' };
  }
  const km = keys.find((k) => k.key === key);
  if (!km || km.exact !== undefined) return { value: key };
  const s = sampleFor(km.regex!);
  if (s !== undefined && takes(s)) return { value: s };
  return { value: s ?? '', todo: `a result matching ${key}` };
}

// ---- shortest paths -------------------------------------------------------------------------

interface Node {
  step: string;
  /** The call has ended (a terminal status): only logic steps run. */
  ended: boolean;
}
const nodeKey = (n: Node) => (n.ended ? '!' : '') + n.step;

/** The edges from a node that a path may take (no call command after the call ended). */
function outEdges(flow: CompiledFlow, bySource: Map<string, FlowEdge[]>, n: Node): FlowEdge[] {
  const list = bySource.get(n.step) ?? [];
  if (!n.ended) return list;
  return flow.config.states[n.step]?.meta.kind === 'logic' ? list : [];
}

function bfs(flow: CompiledFlow, edges: FlowEdge[], from: Node): Map<string, { prev?: string; edge?: FlowEdge; node: Node }> {
  const bySource = new Map<string, FlowEdge[]>();
  for (const e of edges) bySource.set(e.from, [...(bySource.get(e.from) ?? []), e]);
  const seen = new Map<string, { prev?: string; edge?: FlowEdge; node: Node }>([[nodeKey(from), { node: from }]]);
  const queue: Node[] = [from];
  while (queue.length > 0) {
    const n = queue.shift()!;
    for (const e of outEdges(flow, bySource, n)) {
      if (e.kind === 'retry' || e.kind === 'then') continue; // only as the last edge
      const next: Node = { step: e.to, ended: n.ended || e.kind === 'status' };
      const k = nodeKey(next);
      if (seen.has(k) || e.to === END_STATE) {
        if (!seen.has(k)) seen.set(k, { prev: nodeKey(n), edge: e, node: next });
        continue;
      }
      seen.set(k, { prev: nodeKey(n), edge: e, node: next });
      queue.push(next);
    }
  }
  return seen;
}

function pathTo(seen: ReturnType<typeof bfs>, key: string): FlowEdge[] | undefined {
  if (!seen.has(key)) return undefined;
  const out: FlowEdge[] = [];
  let k: string | undefined = key;
  while (k !== undefined) {
    const s: { prev?: string; edge?: FlowEdge } = seen.get(k)!;
    if (s.edge) out.unshift(s.edge);
    k = s.prev;
  }
  return out;
}

export interface GeneratedCase {
  transition: string;
  edge: FlowEdge;
  /** The edges taken, the claimed transition included (retries: the edge repeated). */
  path: FlowEdge[];
  /** How many edges of `path` lead to and include the claimed transition. */
  claimAt: number;
  /** Some edge of the path needs a condition (switch case or default) to hold. */
  conditional: boolean;
  steps: ScenarioStep[];
  mocksSms: ({ hash: string } | { error: string })[];
}

export interface ScenarioStep {
  expect: string | { sms: Record<string, Value> };
  result?: string;
  error?: string;
  status?: string;
  /** Comments written above the step. */
  comments: string[];
  /** Index of the edge in `path` this step belongs to. */
  edge: number;
}

/** One case per transition (of `only`, default all): the shortest path there, then the shortest way to the end. */
export function generateCases(flow: CompiledFlow, only?: Iterable<string>): GeneratedCase[] {
  const edges = flowEdges(flow);
  const want = only ? new Set(only) : undefined;
  const start: Node = { step: flow.model.start, ended: false };
  const fromStart = bfs(flow, edges, start);
  const out: GeneratedCase[] = [];
  for (const e of edges) {
    if (!COVERABLE.has(e.kind) || (want && !want.has(e.id))) continue;
    const prefix = pathTo(fromStart, nodeKey({ step: e.from, ended: false })) ?? (e.from === start.step ? [] : undefined);
    let reach = prefix;
    let ended = false;
    if (!reach) {
      // Reached only once the call has ended (the hangup handler's logic steps).
      reach = pathTo(fromStart, nodeKey({ step: e.from, ended: true }));
      ended = true;
    }
    if (!reach) continue;
    const path = [...reach];
    if (e.kind === 'then') {
      for (let i = 0; i < (e.retry ?? 0); i++) path.push({ ...e, kind: 'retry', to: e.from, id: `${e.from}:${e.key}` });
    }
    path.push(e);
    const claimAt = path.length;
    if (e.to !== END_STATE) {
      const rest = pathTo(bfs(flow, edges, { step: e.to, ended }), nodeKey({ step: END_STATE, ended })) ?? [];
      path.push(...rest);
    }
    const c = render(flow, e, path, claimAt);
    out.push(c);
  }
  return out;
}

function render(flow: CompiledFlow, e: FlowEdge, path: FlowEdge[], claimAt: number): GeneratedCase {
  const steps: ScenarioStep[] = [];
  const mocksSms: GeneratedCase['mocksSms'] = [];
  let pending: string[] = [];
  let smsN = 0;
  let ended = false;
  path.forEach((pe, i) => {
    const claim = i === claimAt - 1 ? ` (${e.id})` : '';
    if (pe.kind === 'case') pending.push(`TODO: ${pe.from} takes case ${pe.id.split(':').pop()}${claim}: this must hold: ${pe.condition}`);
    if (pe.kind === 'switch-default') pending.push(`TODO: ${pe.from} takes its default${claim}: no case holds: ${pe.condition}`);
    if (pe.kind === 'next' || pe.kind === 'case' || pe.kind === 'switch-default') return;
    const meta = flow.config.states[pe.from]?.meta;
    const command = meta && meta.kind === 'command' ? meta.command : 'hangup';
    const isSms = command === 'sms';
    const step: ScenarioStep = { expect: isSms ? { sms: {} } : command, comments: pending, edge: i };
    pending = [];
    if (pe.kind === 'status') {
      step.status = 'HANGUP';
      ended = true;
    } else if (pe.key === 'error') {
      if (isSms) mocksSms.push({ error: 'FAILED' });
      else step.error = 'FAILED';
      step.comments.push(`TODO: the error code (any command_error takes the error branch)${claim}`);
    } else if (pe.key === 'default' && meta?.kind === 'command' && meta.keys.length === 0 && !isSms) {
      // `next:`: whatever the command returns; the runner sends its first success result.
    } else {
      const r = resultFor(flow, pe);
      if (isSms) mocksSms.push({ hash: pe.key === 'default' ? `SMS${String(++smsN).padStart(5, '0')}` : r.value });
      else step.result = r.value;
      if (r.todo) step.comments.push(`TODO: ${r.todo}${claim}`);
    }
    if (claim && step.comments.every((c) => !c.includes(claim))) step.comments.push(`takes ${e.id}`);
    steps.push(step);
    if (pe.say) steps.push({ expect: 'play', comments: [`the branch's say: (${pe.id})`], edge: i });
  });
  if (!ended && path.length > 0 && path[path.length - 1]!.to === END_STATE) steps.push({ expect: 'hangup', comments: pending, edge: path.length - 1 });
  else if (pending.length > 0 && steps.length > 0) steps[steps.length - 1]!.comments.push(...pending);
  else if (pending.length > 0) steps.push({ expect: 'hangup', comments: pending, edge: path.length - 1 });
  const conditional = path.some((x) => x.kind === 'case' || x.kind === 'switch-default');
  return { transition: e.id, edge: e, path, claimAt, conditional, steps, mocksSms };
}

// ---- coverage and output ----------------------------------------------------------------------

export interface CoverageFile {
  flows: Record<string, { steps?: Record<string, number>; transitions?: Record<string, number>; all?: string[] }>;
}

/** The transitions of `flow` with no count in the coverage data. */
export function uncovered(flow: CompiledFlow, coverage: CoverageFile | undefined): string[] {
  const taken = coverage?.flows?.[flow.name]?.transitions ?? {};
  return flowEdges(flow)
    .filter((e) => COVERABLE.has(e.kind))
    .filter((e) => !((taken[e.cover ?? e.id] ?? 0) > 0))
    .map((e) => e.id);
}

const q = (s: string) => JSON.stringify(s);

function yamlValue(v: Value): string {
  return JSON.stringify(v);
}

/** The scenario file (docs/testing.md) for the cases. */
export function scenarioYaml(flow: CompiledFlow, cases: GeneratedCase[], flowRef = flow.name): string {
  const lines: string[] = [
    '# yaml-language-server: $schema=../schemas/scenario.schema.json',
    `# Generated by \`callscript paths ${flowRef}\`: one case per transition not yet covered, each the`,
    '# shortest path from the start. Complete the TODOs (conditions, results) before running it.',
    `flow: ${q(flowRef)}`,
  ];
  if (cases.length === 0) {
    lines.push('cases: []  # every transition is covered');
    return lines.join('\n') + '\n';
  }
  lines.push('cases:');
  for (const c of cases) {
    lines.push(`  - name: ${q(c.transition)}`);
    if (c.mocksSms.length > 0) {
      lines.push('    mocks:');
      lines.push(`      sms: [${c.mocksSms.map((m) => ('hash' in m ? `{ hash: ${q(m.hash)} }` : `{ error: ${q(m.error)} }`)).join(', ')}]`);
    }
    if (c.steps.length === 0) {
      lines.push('    steps: []');
      continue;
    }
    lines.push('    steps:');
    for (const s of c.steps) {
      for (const cm of s.comments) lines.push(`      # ${cm.replace(/\n/g, ' ')}`);
      const ex = typeof s.expect === 'string' ? s.expect : `{ sms: ${yamlValue(s.expect.sms)} }`;
      lines.push(`      - expect: ${ex}`);
      if (s.result !== undefined) lines.push(`        result: ${q(s.result)}`);
      if (s.error !== undefined) lines.push(`        error: ${q(s.error)}`);
      if (s.status !== undefined) lines.push(`        status: ${s.status}`);
    }
  }
  return lines.join('\n') + '\n';
}
