/**
 * Sensitivity follows the value (docs/flow-language.md "Sensitive values"). From the names
 * listed in `sensitive:` (a linked flow's and its modules', joined), the variables that may
 * receive one of their values are sensitive too:
 * - a module's param given a sensitive value by a `with:` (`with: { code: "{{ vars.pin }}" }`);
 * - a caller's variable saved from a returned value that is sensitive (`return: { values:
 *   { echo: "{{ vars.code }}" } }` and `save: { confirmed: echo }`);
 * - a variable a `set:` computes from a sensitive value (SENSITIVE_COPIED still warns: list it).
 * A value reads a sensitive one when a template tag or an expression names it (`vars.pin`,
 * `vars["pin"]`), reads `vars` whole or by a computed key, or reads `result` where the result
 * is the input of a step whose `save:` is sensitive. Computed once per compiled flow, to a
 * fixpoint; a flow without sensitive names pays nothing.
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
    } else if (s.kind === 'return')
      for (const [k, v] of Object.entries(s.values))
        edges.push({ at: id, reads: readsOf(v, false), into: returned(namespaceOf(id), k) });
  }
  return { edges, saves };
}

/**
 * The logic steps where `result` is the input of a command step whose `save:` is sensitive:
 * reached from one through `set` and `switch` steps only (a subflow starts its module afresh).
 */
function sensitiveResultAt(model: FlowSensitivityInput, names: ReadonlySet<string>): Set<string> {
  const at = new Set<string>();
  const linked = { handlers: model.handlers ?? { on: {} }, modules: model.modules };
  const todo: string[] = [];
  for (const [id, s] of Object.entries(model.steps))
    if (s.kind === 'command' && s.save !== undefined && names.has(s.save))
      todo.push(...successors(s, handlersOf(linked, id)));
  while (todo.length > 0) {
    const id = todo.pop()!;
    const s = model.steps[id];
    if (!s || at.has(id) || s.kind === 'command' || s.kind === 'return') {
      if (s?.kind === 'return') at.add(id);
      continue;
    }
    at.add(id);
    if (s.kind === 'set' || s.kind === 'switch') todo.push(...successors(s, linked.handlers));
  }
  return at;
}

export type FlowSensitivityInput = Pick<FlowModel, 'sensitive' | 'steps'> &
  Partial<Pick<FlowModel, 'handlers' | 'modules'>>;

/** The flow's sensitive variables: those listed, and those that may receive one of their values. */
export function sensitiveNames(model: FlowSensitivityInput): Set<string> {
  const names = new Set(model.sensitive ?? []);
  if (names.size === 0) return names;
  const { edges, saves } = edgesOf(model.steps);
  if (edges.length === 0) return names;
  const tainted = new Set<string>(); // returned values that are sensitive
  for (let changed = true; changed;) {
    changed = false;
    const resultAt = edges.some((e) => e.reads.result) ? sensitiveResultAt(model, names) : new Set<string>();
    for (const e of edges) {
      const isVar = !e.into.includes('\u0000');
      if (isVar ? names.has(e.into) : tainted.has(e.into)) continue;
      const r = e.reads;
      if (!(r.whole || (r.result && resultAt.has(e.at)) || [...r.names].some((n) => names.has(n)))) continue;
      (isVar ? names : tainted).add(e.into);
      changed = true;
    }
    for (const [from, into] of saves)
      if (tainted.has(from) && !names.has(into)) {
        names.add(into);
        changed = true;
      }
  }
  return names;
}
