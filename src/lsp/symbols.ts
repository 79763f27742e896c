/**
 * A flow's names, where they are declared and where they are used, for navigation, completion and rename: the
 * declarations from the tree the checker walked (steps, vars, set and save names, loop names, module params,
 * prompts, calendars, environment keys, secrets, the `module:` of a module), the uses from what the checker recorded
 * as it checked (step targets, `vars.x`/`env.x`/`secrets.x` read by templates and conditions, calendars read by
 * steps and open()/holiday(), `{ prompt: x }`, a subflow step's module and `with:` params). A file with errors has
 * an index too: whatever the checker reached.
 */
import type { Position, Range } from 'vscode-languageserver';
import type { CheckSymbols } from '../flow/check.js';
import { spanIn } from '../flow/spans.js';
import { entry, type YMap, type YNode } from '../flow/yaml.js';
import { contains, nodeRange, toPosition } from './positions.js';

export type SymbolKind = 'step' | 'var' | 'prompt' | 'calendar' | 'env' | 'secret' | 'module' | 'param';

export interface Occurrence {
  kind: SymbolKind;
  name: string;
  range: Range;
  /** A declaration (a step's key, a `vars:` key, a `save:` name...) rather than a use. */
  def: boolean;
  /** A param's module (a `with:` key of a subflow step). */
  module?: string;
  /** The keys of the map it is a key of (its own too), where a rename must not take one (a `with:` key). */
  siblings?: readonly string[];
}

const isMap = (n: YNode | undefined): n is YMap => n?.kind === 'map';
const str = (n: YNode | undefined): string | undefined =>
  n?.kind === 'scalar' && typeof n.value === 'string' ? n.value : undefined;

/** Where the name of a `vars.x` (or `vars["x"]`, or `open("x")`) read is, inside the text as written. */
function nameRange(r: { name: string; at: YNode; offset?: number; length?: number }): Range {
  const text = r.at.kind === 'scalar' && typeof r.at.value === 'string' ? r.at.value : undefined;
  if (r.offset === undefined || text === undefined) return nodeRange(r.at);
  const inName = text.slice(r.offset, r.offset + (r.length ?? r.name.length)).lastIndexOf(r.name);
  const span = inName < 0 || r.at.kind !== 'scalar' ? undefined : spanIn(r.at, r.offset + inName, r.name.length);
  return span ? { start: toPosition(span.pos), end: toPosition(span.end) } : nodeRange(r.at);
}

export class FlowIndex {
  readonly occurrences: Occurrence[] = [];
  /** The flow's name when it is a module (it declares `module:`). */
  readonly module: string | undefined;
  /** A module's params (`module.params` keys), with where each is declared. */
  readonly params = new Map<string, Range>();
  private readonly seen = new Set<string>();

  /** `name`: the flow's name (CheckResult.name), by which subflow steps enter it when it is a module. */
  constructor(
    readonly symbols: CheckSymbols,
    name?: string,
  ) {
    const root = symbols.root;
    const mod = isMap(root) ? entry(root, 'module') : undefined;
    this.module = mod && name !== undefined ? name : undefined;
    if (mod && this.module !== undefined) this.add('module', this.module, mod.keyNode, true);
    if (isMap(root)) this.declarations(root);
    for (const t of symbols.targets) this.add('step', t.id, t.at, false);
    for (const r of symbols.refs) {
      if (r.root === 'call') continue;
      const kind: SymbolKind = r.root === 'vars' ? 'var' : r.root === 'env' ? 'env' : 'secret';
      this.push({ kind, name: r.name, range: nameRange(r), def: false });
    }
    for (const c of symbols.calendarRefs)
      this.push({ kind: 'calendar', name: c.name, range: nameRange(c), def: false });
    // the keys of a with: map, made once and shared by its keys' occurrences (a map of n keys: n, not n²)
    const keysOf = new Map<YMap, readonly string[]>();
    for (const u of symbols.uses ?? []) {
      const o: Occurrence = { kind: u.kind, name: u.name, range: nodeRange(u.at), def: false };
      if (u.module !== undefined) o.module = u.module;
      if (u.map) {
        let keys = keysOf.get(u.map);
        if (!keys) keysOf.set(u.map, (keys = u.map.entries.map((e) => e.key)));
        o.siblings = keys;
      }
      this.push(o);
    }
  }

  private push(o: Occurrence): void {
    // a name read twice from the same place (an alias, a template checked in every environment) is one occurrence
    const key = `${o.kind}:${o.name}@${o.range.start.line}:${o.range.start.character}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.occurrences.push(o);
  }

  private add(kind: SymbolKind, name: string, node: YNode, def: boolean): void {
    this.push({ kind, name, range: nodeRange(node), def });
  }

  private declarations(root: YMap): void {
    const keys = (m: YNode | undefined, kind: SymbolKind) => {
      if (isMap(m)) for (const e of m.entries) this.add(kind, e.key, e.keyNode, true);
    };
    keys(entry(root, 'vars')?.value, 'var');
    keys(entry(root, 'prompts')?.value, 'prompt');
    keys(entry(root, 'calendars')?.value, 'calendar');
    const mod = entry(root, 'module')?.value;
    const params = isMap(mod) ? entry(mod, 'params')?.value : undefined;
    keys(params, 'var');
    if (isMap(params)) for (const e of params.entries) this.params.set(e.key, nodeRange(e.keyNode));
    const envs = entry(root, 'environments')?.value;
    if (isMap(envs)) for (const e of envs.entries) keys(e.value, 'env');
    const secrets = entry(root, 'secrets')?.value;
    if (secrets?.kind === 'seq') for (const s of secrets.items) if (str(s)) this.add('secret', str(s)!, s, true);
    const steps = entry(root, 'steps')?.value;
    if (!isMap(steps)) return;
    for (const s of steps.entries) {
      this.add('step', s.key, s.keyNode, true);
      if (isMap(s.value)) this.stepDeclarations(s.value);
    }
  }

  /** The variables a step writes: set: keys, save: (a name, or a map of names), a loop's as and index. */
  private stepDeclarations(step: YMap): void {
    const set = entry(step, 'set')?.value;
    if (isMap(set)) for (const e of set.entries) this.add('var', e.key, e.keyNode, true);
    this.saves(entry(step, 'save')?.value);
    const on = entry(step, 'on')?.value;
    if (isMap(on)) for (const b of on.entries) if (isMap(b.value)) this.saves(entry(b.value, 'save')?.value);
    const loop = entry(step, 'foreach')?.value;
    if (isMap(loop))
      for (const k of ['as', 'index']) {
        const n = entry(loop, k)?.value;
        if (str(n)) this.add('var', str(n)!, n!, true);
      }
  }

  private saves(save: YNode | undefined): void {
    if (str(save)) this.add('var', str(save)!, save!, true);
    else if (isMap(save)) for (const e of save.entries) this.add('var', e.key, e.keyNode, true);
  }

  /** The occurrence under the cursor, if any. */
  at(p: Position): Occurrence | undefined {
    return this.occurrences.find((o) => contains(o.range, p));
  }

  /** Every occurrence of a name: declarations first, then uses in the order of the text. */
  of(kind: SymbolKind, name: string): Occurrence[] {
    const all = this.occurrences.filter((o) => o.kind === kind && o.name === name);
    const order = (a: Occurrence, b: Occurrence) =>
      a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character;
    return [...all.filter((o) => o.def), ...all.filter((o) => !o.def).sort(order)];
  }

  /** The names of a kind declared in the flow. */
  names(kind: SymbolKind): string[] {
    return [...new Set(this.occurrences.filter((o) => o.kind === kind && o.def).map((o) => o.name))];
  }
}
