/**
 * Sensitivity follows the value (docs/flow-language.md "Sensitive values"). From the names
 * listed in `sensitive:` (a linked flow's and its modules', joined), the variables that may
 * receive one of their values are sensitive too:
 * - a module's param given a sensitive value by a `with:` (`with: { code: "{{ vars.pin }}" }`);
 * - a caller's variable saved from a returned value that is sensitive (`return: { values:
 *   { echo: "{{ vars.code }}" } }` and `save: { confirmed: echo }`);
 * - a variable a `set:` computes from a sensitive value (SENSITIVE_COPIED still warns: list it);
 * - a foreach's item, when its list reads a sensitive value.
 * A value reads a sensitive one when a template tag or an expression names it (`vars.pin`,
 * `vars["pin"]`), reads `vars` whole or by a computed key, or reads `result` where the result
 * is the input of a step whose `save:` is sensitive. Computed once per compiled flow (engine
 * tables), in time linear in the flow; a flow without sensitive names pays nothing.
 */
import { successors } from './check-graph.js';
import { handlersOf, type FlowModel, type Step, type Value } from './model.js';

const TAG_RE = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;
/** `vars.x`, `vars["x"]`, or `vars` alone (whole, or a computed key: any of them). */
const VARS_RE = /(?<![\w.])vars(?:\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)|\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\])?/g;
const RESULT_RE = /(?<![\w.])result\b/;

/** What a value reads of the call: variables by name, all of them, the current result. */
interface Reads {
  names: Set<string>;
  whole: boolean;
  result: boolean;
}

function codeReads(code: string, into: Reads): void {
  for (const m of code.matchAll(VARS_RE)) {
    const name = m[1] ?? m[2] ?? m[3];
    if (name === undefined) into.whole = true;
    else into.names.add(name);
  }
  if (RESULT_RE.test(code)) into.result = true;
}

/** The reads of a literal (its strings' template tags) or of a CEL expression. */
function readsOf(v: Value, expr: boolean, into: Reads = { names: new Set(), whole: false, result: false }): Reads {
  if (typeof v === 'string') {
    if (expr) codeReads(v, into);
    else for (const m of v.matchAll(TAG_RE)) codeReads(m[1] ?? m[2] ?? '', into);
  } else if (Array.isArray(v)) for (const x of v) readsOf(x, false, into);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) readsOf(x, false, into);
  return into;
}

/** A way a value moves: `reads` at step `at` go into the variable or returned value `into`. */
interface Edge {
  at: string;
  reads: Reads;
  into: string;
}

/** A module's returned value, as a node: `<namespace>\0<name>` (never a variable name). */
const returned = (namespace: string, name: string) => `${namespace}\u0000${name}`;

function namespaceOf(id: string): string {
  return id.slice(0, id.lastIndexOf(':') + 1);
}

function edgesOf(steps: Record<string, Step>): { edges: Edge[]; saves: [string, string][] } {
  const edges: Edge[] = [];
  const saves: [string, string][] = [];
  for (const [id, s] of Object.entries(steps)) {
    if (s.kind === 'set')
      for (const a of s.assign)
        edges.push({
          at: id,
          reads: a.value.kind === 'expr' ? readsOf(a.value.expr, true) : readsOf(a.value.value, false),
          into: a.name,
        });
    else if (s.kind === 'subflow') {
      for (const [param, v] of Object.entries(s.with)) edges.push({ at: id, reads: readsOf(v, false), into: param });
      const target = s.target ?? `${s.flow}:`;
      for (const [into, from] of Object.entries(s.save)) saves.push([returned(target, from), into]);
    } else if (s.kind === 'loop') edges.push({ at: id, reads: readsOf(s.in, true), into: s.as });
    else if (s.kind === 'return')
      for (const [k, v] of Object.entries(s.values))
        edges.push({ at: id, reads: readsOf(v, false), into: returned(namespaceOf(id), k) });
  }
  return { edges, saves };
}

export type FlowSensitivityInput = Pick<FlowModel, 'sensitive' | 'steps'> &
  Partial<Pick<FlowModel, 'handlers' | 'modules'>>;

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/**
 * The flow's sensitive variables: those listed, and those that may receive one of their values. A work list: each
 * name (or returned value) is taken once, each way a value moves is looked at once per name it reads, and each step
 * is reached once from the steps whose `save:` is sensitive (for `result`): linear in the flow.
 */
export function sensitiveNames(model: FlowSensitivityInput): Set<string> {
  const names = new Set(model.sensitive ?? []);
  if (names.size === 0) return names;
  const { edges, saves } = edgesOf(model.steps);
  if (edges.length === 0) return names;
  const byName = new Map<string, Edge[]>();
  const byResultAt = new Map<string, Edge[]>();
  const savedAs = new Map<string, string[]>(saves.map(([from]) => [from, []]));
  for (const [from, into] of saves) savedAs.get(from)!.push(into);
  const savers = new Map<string, string[]>();
  for (const [id, st] of Object.entries(model.steps))
    if (st.kind === 'command' && st.save !== undefined) push(savers, st.save, id);
  const tainted = new Set<string>(); // returned values that are sensitive
  const todo: string[] = [...names];
  const taint = (node: string) => {
    const set = node.includes('\u0000') ? tainted : names;
    if (set.has(node)) return;
    set.add(node);
    todo.push(node);
  };
  for (const e of edges) {
    if (e.reads.whole) taint(e.into);
    for (const n of e.reads.names) push(byName, n, e);
    if (e.reads.result) push(byResultAt, e.at, e);
  }
  // the logic steps where `result` is the input of a command whose `save:` is sensitive: reached from it through
  // `set` and `switch` steps (a subflow starts its module afresh; a return and a subflow read it, and stop)
  const resultAt = new Set<string>();
  const linked = { handlers: model.handlers ?? { on: {} }, modules: model.modules };
  const reach = (command: string) => {
    const step = model.steps[command]!;
    const next = successors(step, handlersOf(linked, command));
    while (next.length > 0) {
      const id = next.pop()!;
      const st = model.steps[id];
      if (!st || st.kind === 'command' || resultAt.has(id)) continue;
      resultAt.add(id);
      for (const e of byResultAt.get(id) ?? []) taint(e.into);
      if (st.kind === 'set' || st.kind === 'switch' || st.kind === 'loop')
        next.push(...successors(st, linked.handlers));
    }
  };
  while (todo.length > 0) {
    const node = todo.pop()!;
    if (node.includes('\u0000')) {
      for (const into of savedAs.get(node) ?? []) taint(into);
      continue;
    }
    for (const e of byName.get(node) ?? []) taint(e.into);
    if (byResultAt.size > 0) for (const command of savers.get(node) ?? []) reach(command);
  }
  return names;
}
