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
/** The keys read below a variable: `.body.dob` after `vars.patient`. */
const FIELDS_RE = /^(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*/;

/** What a value reads of the call: variables by name, all of them, the current result. */
interface Reads {
  names: Set<string>;
  /** The keys read below each variable read (`vars.patient.body.name`: patient -> [body, name]). */
  fields?: [string, string[]][];
  whole: boolean;
  result: boolean;
}

/** The keys `text` reads from `at` on, just after a variable (`vars.patient` then `.body.dob`). */
export function keysAfter(text: string, at: number): string[] {
  const m = FIELDS_RE.exec(text.slice(at));
  return m && m[0] !== ''
    ? m[0]
        .split('.')
        .slice(1)
        .map((k) => k.trim())
    : [];
}

/** The keys below a variable that lead to sensitive fields: a key to the keys below it, or null for a field. */
export type FieldTree = ReadonlyMap<string, FieldTree | null>;

/**
 * The fields listed in `sensitive:` (`patient.body.dob`), by variable: the tree of the keys below it (a path that is a
 * prefix of another is a field itself).
 */
export function sensitiveFields(listed: readonly string[] | undefined): Map<string, FieldTree> {
  const out = new Map<string, Map<string, unknown>>();
  for (const n of listed ?? []) {
    const [root, ...keys] = n.split('.');
    if (keys.length === 0) continue;
    if (!out.has(root!)) out.set(root!, new Map());
    let t: Map<string, unknown> | null = out.get(root!)!;
    for (let i = 0; i < keys.length && t !== null; i++) {
      if (i === keys.length - 1) t.set(keys[i]!, null);
      else {
        if (!t.has(keys[i]!)) t.set(keys[i]!, new Map());
        t = t.get(keys[i]!) as Map<string, unknown> | null;
      }
    }
  }
  return out as Map<string, FieldTree>;
}

/**
 * The sensitive field a read of the keys `read` below a variable may read, as its keys: one path holds the other
 * (`vars.patient` and `vars.patient.body` hold `body.dob`; `vars.patient.body.dob.year` is inside it), undefined
 * when the read is beside every field (`vars.patient.body.name`). In time linear in the read's keys.
 */
export function fieldRead(tree: FieldTree, read: readonly string[]): string[] | undefined {
  let t: FieldTree | null = tree;
  const path: string[] = [];
  for (const k of read) {
    if (t === null) return path;
    if (!t.has(k)) return undefined;
    path.push(k);
    t = t.get(k)!;
  }
  // the read holds fields below it: the first one, to name it
  while (t !== null) {
    const first: [string, FieldTree | null] | undefined = t.entries().next().value;
    if (!first) return path;
    path.push(first[0]);
    t = first[1];
  }
  return path;
}

function codeReads(code: string, into: Reads): void {
  for (const m of code.matchAll(VARS_RE)) {
    const name = m[1] ?? m[2] ?? m[3];
    if (name === undefined) into.whole = true;
    else {
      into.names.add(name);
      (into.fields ??= []).push([name, m[1] !== undefined ? keysAfter(code, m.index + m[0].length) : []]);
    }
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

/**
 * The variables each command step saves of its result: its `save:` and the named groups its patterns' branches save
 * (its own and the flow-wide handlers.on it inherits). Each holds the result, or a part of it: one sensitive, all are.
 */
export function resultVars(model: FlowSensitivityInput): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const linked = { handlers: model.handlers ?? { on: {} }, modules: model.modules };
  for (const [id, st] of Object.entries(model.steps)) {
    if (st.kind !== 'command') continue;
    const vars: string[] = st.save !== undefined ? [st.save] : [];
    const inherited = st.inheritHandlers ? handlersOf(linked, id).on[st.command.name]?.patterns : undefined;
    for (const p of [...st.on.patterns, ...(inherited ?? [])])
      if (p.branch.save) vars.push(...Object.keys(p.branch.save));
    if (vars.length > 0) out.set(id, vars);
  }
  return out;
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
  const names = new Set((model.sensitive ?? []).filter((n) => !n.includes('.')));
  const fields = sensitiveFields(model.sensitive);
  if (names.size === 0 && fields.size === 0) return names;
  const { edges, saves } = edgesOf(model.steps);
  const byName = new Map<string, Edge[]>();
  const byResultAt = new Map<string, Edge[]>();
  const savedAs = new Map<string, string[]>(saves.map(([from]) => [from, []]));
  for (const [from, into] of saves) savedAs.get(from)!.push(into);
  const savers = new Map<string, string[]>();
  const saved = resultVars(model);
  for (const [id, vars] of saved) for (const v of vars) push(savers, v, id);
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
    // a value that reads a sensitive field (or the variable holding it whole) is sensitive whole
    if (fields.size > 0)
      for (const [name, keys] of e.reads.fields ?? [])
        if (fields.has(name) && fieldRead(fields.get(name)!, keys)) taint(e.into);
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
    for (const command of savers.get(node) ?? []) {
      // the step's result holds the value: every variable saved of it holds it (or a part), and `result` after it
      for (const v of saved.get(command)!) taint(v);
      if (byResultAt.size > 0) reach(command);
    }
  }
  return names;
}
