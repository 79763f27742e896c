/**
 * The link stage (version 2 subflows): the checker is per file; this pass looks at the
 * files of one directory together. For each flow that enters modules (`subflow:` steps)
 * it checks the modules exist and are modules, that `with:` covers the required params
 * and names no unknown one, that `on:` keys are among the module's results and saved
 * names among its returns, that no module enters itself through others (one SUBFLOW_CYCLE
 * per cycle), and that nesting and the total size stay bounded. A flow whose module fails
 * is refused with one diagnostic at its `flow:` value naming the module's own errors.
 *
 * A flow that passes gets its linked model: its own steps, and the steps of every module
 * it may reach (transitively), each module once whatever the number of call sites, under
 * namespaced ids (`pin-check:ask`); and its version, the hash of its source and of the
 * modules' sources: a changed module gives every flow that may enter it a new version.
 * Pure data. A module's steps are compiled into every flow that may enter it (made once here, shared: machine states
 * too, machine-config.ts), but each flow still holds them: the steps of modules held by all the flows of a directory
 * are bounded (MAX_LINKED_TOTAL, SUBFLOW_TOTAL_TOO_LARGE), so that what a load compiles stays linear in the files.
 */
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../errors/diagnostic.js';
import { FLOW_CODES } from '../errors/flow-codes.js';
import type { CheckResult } from './check.js';
import { closest } from './check-context.js';
import { sccs } from './scc.js';
import type { Branch, FlowModel, Handlers, LinkedModule, Pos, Step, SubflowStep } from './model.js';

/** Subflows nested at most this deep (frames on a call's stack). */
export const MAX_SUBFLOW_DEPTH = 8;
/** A flow and every module it may enter hold at most this many steps in all. */
export const MAX_LINKED_STEPS = 20_000;
/**
 * The flows of one directory hold at most this many steps of modules in all: a module's
 * steps are compiled into each flow (and module) that may enter it, so that what is
 * compiled stays within the files' size plus this bound, whatever the number of callers.
 */
export const MAX_LINKED_TOTAL = 100_000;

export interface LinkFile {
  file: string;
  text: string;
  result: CheckResult;
}

export interface Linked {
  model: FlowModel;
  version: string;
  /** The sources of the modules it may enter, by name order. */
  modules: { name: string; file: string; text: string }[];
}

export interface LinkOutput {
  /** Link diagnostics by file. */
  diagnostics: Map<string, Diagnostic[]>;
  /** Linked flows (and modules) by file: those with no error of their own or of a module. */
  linked: Map<string, Linked>;
  /**
   * Files that check on their own but cannot be linked (a module in a cycle, too deep, entering a module with errors).
   */
  failed: Set<string>;
}

const SEVERITY = new Map(FLOW_CODES.map((c) => [c.code, c]));

function diag(code: string, at: Pos, message: string, hint?: string): Diagnostic {
  const info = SEVERITY.get(code);
  const d: Diagnostic = {
    code,
    severity: info?.severity ?? 'error',
    message,
    file: at.file,
    line: at.line,
    column: at.column,
  };
  const h = hint ?? info?.hint;
  if (h) d.hint = h;
  return d;
}

/** The version of a flow and the modules it may enter (a flow with none: its source's hash, as before). */
export function linkedVersion(text: string, modules: readonly { name: string; text: string }[]): string {
  const h = createHash('sha256').update(text, 'utf8');
  for (const m of modules) h.update('\0module\0' + m.name + '\0', 'utf8').update(m.text, 'utf8');
  return h.digest('hex').slice(0, 12);
}

function subflowSteps(model: FlowModel): SubflowStep[] {
  const out: SubflowStep[] = [];
  for (const s of Object.values(model.steps)) if (s.kind === 'subflow') out.push(s);
  return out;
}

function where(p: Pos | Diagnostic): string {
  return `${p.file.split(/[\\/]/).pop()}:${p.line}:${p.column}`;
}

interface Node {
  f: LinkFile;
  name: string;
  model?: FlowModel;
  /** Errors of its own (check or link): its callers are refused naming them. */
  errors: Diagnostic[];
  calls: SubflowStep[];
  /** Depth of nesting below it, reachable modules (names), steps in all. */
  depth?: number;
  reach?: Set<string>;
  size?: number;
  /** Why its callers are refused, when it cannot be entered (bounded: never nests its modules' reasons). */
  bad?: string;
  /** The error a chain of modules that cannot be entered comes from, as `file:line:col CODE message`. */
  cause?: string;
}

/** Bounds of the link stage (tests lower them). */
export interface LinkLimits {
  maxDepth?: number;
  maxSteps?: number;
  maxTotal?: number;
}

export function linkFlows(files: readonly LinkFile[], limits: LinkLimits = {}): LinkOutput {
  const MAX_DEPTH = limits.maxDepth ?? MAX_SUBFLOW_DEPTH;
  const MAX_STEPS = limits.maxSteps ?? MAX_LINKED_STEPS;
  const MAX_TOTAL = limits.maxTotal ?? MAX_LINKED_TOTAL;
  const out: LinkOutput = { diagnostics: new Map(), linked: new Map(), failed: new Set() };
  const add = (d: Diagnostic) => {
    const list = out.diagnostics.get(d.file) ?? [];
    list.push(d);
    out.diagnostics.set(d.file, list);
  };
  const byName = new Map<string, Node>();
  const nodes: Node[] = [];
  for (const f of files) {
    const name = f.result.model?.name ?? f.result.name;
    const errors = f.result.diagnostics.filter((d) => d.severity === 'error');
    const n: Node = { f, name: name ?? '', errors, calls: [] };
    if (f.result.model && errors.length === 0) {
      n.model = f.result.model;
      n.calls = subflowSteps(n.model);
    }
    nodes.push(n);
    if (name !== undefined && !byName.has(name)) byName.set(name, n);
  }
  const moduleNames = [...byName.values()].filter((n) => n.f.result.module).map((n) => n.name);

  // each call site against its module's interface
  const own = new Map<Node, Diagnostic[]>();
  const report = (n: Node, d: Diagnostic) => {
    add(d);
    (own.get(n) ?? own.set(n, []).get(n)!).push(d);
  };
  for (const n of nodes) {
    for (const s of n.calls) {
      const m = byName.get(s.flow);
      if (!m) {
        const near = closest(s.flow, moduleNames.length ? moduleNames : [...byName.keys()]);
        report(
          n,
          diag(
            'UNKNOWN_MODULE',
            s.flowPos,
            `step '${s.id}': no flow '${s.flow}' in this directory`,
            near
              ? `did you mean '${near}'?`
              : moduleNames.length
                ? `Modules here: ${moduleNames.slice(0, 12).join(', ')}.`
                : 'A module is a flow file with module: in the same directory.',
          ),
        );
        continue;
      }
      if (!m.f.result.module) {
        report(
          n,
          diag(
            'NOT_A_MODULE',
            s.flowPos,
            `step '${s.id}': flow '${s.flow}' (${m.f.file.split(/[\\/]/).pop()}) is not a module: it has no ` +
              `module: interface`,
            'Declare `module: { params, results, returns }` in that file (it is then no longer served at /rt ' +
              'on its own), or enter another flow.',
          ),
        );
        continue;
      }
      const spec = m.model?.module;
      if (!spec) continue; // the module has errors: reported below, at the flow: value
      const params = Object.keys(spec.params);
      // a misspelt name is one mistake: its UNKNOWN_*, not also the missing or unhandled name it meant
      const meant = new Set<string>();
      for (const p of Object.keys(s.with)) {
        if (params.includes(p)) continue;
        const near = closest(p, params);
        if (near !== undefined) meant.add(near);
        report(
          n,
          diag(
            'UNKNOWN_PARAM',
            s.withPos[p]!,
            `step '${s.id}': module '${s.flow}' has no param ` +
              `'${p}'${params.length ? ` (params: ${params.join(', ')})` : ' (it takes none)'}`,
            near ? `did you mean '${near}'?` : undefined,
          ),
        );
      }
      const missing = params.filter((p) => spec.params[p]!.required && !Object.hasOwn(s.with, p) && !meant.has(p));
      if (missing.length) {
        report(
          n,
          diag(
            'MISSING_PARAM',
            s.withAt ?? s.flowPos,
            `step '${s.id}': module '${s.flow}' needs ${missing.map((p) => `'${p}'`).join(', ')} (required ` +
              `param${missing.length > 1 ? 's' : ''}) in with:`,
          ),
        );
      }
      for (const r of Object.keys(s.on)) {
        if (spec.results.includes(r)) continue;
        const near = closest(r, spec.results);
        if (near !== undefined) meant.add(near);
        report(
          n,
          diag(
            'UNKNOWN_RESULT',
            s.onPos[r]!,
            `step '${s.id}': module '${s.flow}' never returns '${r}' (results: ${spec.results.join(', ')})`,
            near ? `did you mean '${near}'?` : undefined,
          ),
        );
      }
      for (const [v, from] of Object.entries(s.save)) {
        if (spec.returns.includes(from)) continue;
        const near = closest(from, spec.returns);
        report(
          n,
          diag(
            'UNKNOWN_RETURN',
            s.savePos[v]!,
            `step '${s.id}': module '${s.flow}' returns no value ` +
              `'${from}'${spec.returns.length ? ` (returns: ${spec.returns.join(', ')})` : ' (it returns none)'}`,
            near ? `did you mean '${near}'?` : undefined,
          ),
        );
      }
      const unhandled = spec.results.filter((r) => !Object.hasOwn(s.on, r) && !meant.has(r));
      if (s.default === undefined && unhandled.length > 0) {
        report(
          n,
          diag(
            'UNHANDLED_RESULT',
            s.pos,
            `step '${s.id}': results ${unhandled.join(', ')} of module '${s.flow}' lead nowhere: with no ` +
              `default or next, the call would be hung up`,
          ),
        );
      }
    }
  }

  // cycles: one diagnostic each, at the first member's call into the next
  const edges = (n: Node) =>
    n.calls
      .map((s) => byName.get(s.flow))
      .filter((m): m is Node => m !== undefined && m.model !== undefined && !!m.f.result.module);
  for (const comp of sccs(
    nodes.filter((n) => n.model),
    edges,
  )) {
    const self = comp.length === 1 && comp[0]!.calls.some((s) => byName.get(s.flow) === comp[0]);
    if (comp.length < 2 && !self) continue;
    const members = new Set(comp);
    const first = [...comp].sort((a, b) => (a.name < b.name ? -1 : 1))[0]!;
    // walk the cycle from `first`: each member's first call into the component
    const path: { n: Node; s: SubflowStep }[] = [];
    const seen = new Set<Node>();
    let at = first;
    while (!seen.has(at)) {
      seen.add(at);
      const s =
        at.calls.find(
          (c) => members.has(byName.get(c.flow)!) && (!seen.has(byName.get(c.flow)!) || byName.get(c.flow) === first),
        ) ?? at.calls.find((c) => members.has(byName.get(c.flow)!))!;
      path.push({ n: at, s });
      at = byName.get(s.flow)!;
    }
    const names = [...path.map((p) => p.n.name), at.name].join(' -> ');
    const positions = path.map((p) => `${p.n.name} at ${where(p.s.flowPos)}`).join(', ');
    const d = diag('SUBFLOW_CYCLE', path[0]!.s.flowPos, `modules enter each other in a cycle: ${names} (${positions})`);
    add(d);
    for (const m of comp) {
      m.bad = `it is in a cycle of subflows (${names})`;
      m.cause = `${where(d)} SUBFLOW_CYCLE`;
      (own.get(m) ?? own.set(m, []).get(m)!).push(d);
    }
  }

  // depth, reach and size, callees first; a module with errors makes its callers fail
  // (iterative: a chain of thousands of module files must not overflow the stack)
  const done = (n: Node) => n.depth !== undefined || n.bad !== undefined || !n.model;
  const finish = (n: Node): void => {
    if (!n.model) return;
    let depth = 0;
    const reach = new Set<string>();
    for (const s of n.calls) {
      const m = byName.get(s.flow);
      if (!m || !m.f.result.module || !done(m)) continue;
      if (m.bad !== undefined || !m.model) {
        const why =
          m.bad ??
          `it has ${m.errors.length} error${m.errors.length === 1 ? '' : 's'}: ${m.errors
            .slice(0, 3)
            .map((e) => `${where(e)} ${e.code} ${e.message}`)
            .join('; ')}${m.errors.length > 3 ? '; ...' : ''}`;
        n.cause ??=
          m.cause ?? (m.errors[0] ? `${where(m.errors[0])} ${m.errors[0].code} ${m.errors[0].message}` : undefined);
        report(
          n,
          diag(
            'MODULE_INVALID',
            s.flowPos,
            `step '${s.id}': module '${s.flow}' cannot be entered: ${why}`,
            'Fix the module first (callscript validate lists its errors); this flow is refused until it checks.',
          ),
        );
        continue;
      }
      depth = Math.max(depth, m.depth! + 1);
      reach.add(m.name);
      for (const r of m.reach!) reach.add(r);
    }
    let size = Object.keys(n.model.steps).length;
    for (const r of reach) size += Object.keys(byName.get(r)!.model!.steps).length;
    n.depth = depth;
    n.reach = reach;
    n.size = size;
    const mine = own.get(n) ?? [];
    if (depth > MAX_DEPTH) {
      const deepest = n.calls.find((s) => (byName.get(s.flow)?.depth ?? -1) + 1 === depth)!;
      const d = diag(
        'SUBFLOW_TOO_DEEP',
        deepest.flowPos,
        `step '${deepest.id}': entering '${deepest.flow}' nests subflows ${depth} deep; at most ${MAX_DEPTH} ` +
          `are allowed`,
      );
      // a module nested too deep itself is bad: its callers get MODULE_INVALID, so this is the first crossing
      report(n, d);
      n.bad = `it nests subflows ${depth} deep (at most ${MAX_DEPTH})`;
      n.cause = `${where(d)} SUBFLOW_TOO_DEEP`;
    } else if (size > MAX_STEPS) {
      {
        report(
          n,
          diag(
            'SUBFLOW_TOO_LARGE',
            n.model.steps[Object.keys(n.model.steps)[0]!]!.pos,
            `the flow and the ${reach.size} modules it may enter hold ${size.toLocaleString('en-US')} steps ` +
              `in all; at most ${MAX_STEPS.toLocaleString('en-US')} are allowed`,
          ),
        );
      }
      n.bad =
        `it and the modules it may enter hold ${size.toLocaleString('en-US')} steps (at ` +
        `most ${MAX_STEPS.toLocaleString('en-US')})`;
    } else if ((own.get(n) ?? mine).length > 0) {
      // codes and positions only: a chain of modules must not nest its reasons (a diamond would double them at each
      // level)
      const errs = own.get(n) ?? mine;
      n.bad ??= `it has ${errs.length} error${errs.length === 1 ? '' : 's'} (${errs
        .slice(0, 3)
        .map((e) => `${where(e)} ${e.code}`)
        .join(', ')}${errs.length > 3 ? ', ...' : ''})${n.cause ? `, from ${n.cause}` : `: ${errs[0]!.message}`}`;
    }
  };
  const onStack = new Set<Node>();
  for (const root of nodes) {
    if (done(root)) continue;
    const work: { n: Node; i: number }[] = [{ n: root, i: 0 }];
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      if (top.i < top.n.calls.length) {
        const m = byName.get(top.n.calls[top.i++]!.flow);
        if (m && m.f.result.module && !onStack.has(m) && !done(m)) {
          onStack.add(m);
          work.push({ n: m, i: 0 });
        }
        continue;
      }
      work.pop();
      onStack.delete(top.n);
      finish(top.n);
    }
  }

  // each module's namespaced steps are made once here and shared by every flow that may enter it (the same objects:
  // the compile stage makes their machine states once too, machine-config.ts)
  const parts = new Map<FlowModel, ModulePart>();
  const partOf = (m: FlowModel): ModulePart => {
    let part = parts.get(m);
    if (!part) parts.set(m, (part = modulePart(m)));
    return part;
  };
  // the steps of modules linked into flows, in all: in the files' order (the registry puts the files already serving
  // first), the flow that would go past the bound is refused, and the ones after it are linked if they fit
  let total = 0;
  for (const n of nodes) {
    if (n.model && (n.bad !== undefined || (own.get(n)?.length ?? 0) > 0)) out.failed.add(n.f.file);
    if (!n.model || n.bad !== undefined || (own.get(n)?.length ?? 0) > 0 || byName.get(n.name) !== n) continue;
    const reach = [...n.reach!].sort();
    if (reach.length === 0) continue; // nothing to link: the model and version as checked
    const copies = n.size! - Object.keys(n.model.steps).length;
    if (total + copies > MAX_TOTAL) {
      const count = (k: number) => k.toLocaleString('en-US');
      const site = n.calls[0]!;
      const what = reach.length === 1 ? `module '${reach[0]}' holds` : `${reach.length} modules it may enter hold`;
      report(
        n,
        diag(
          'SUBFLOW_TOTAL_TOO_LARGE',
          site.flowPos,
          `step '${site.id}': the ${what} ${count(copies)} steps, compiled into this flow: the flows of this ` +
            `directory would hold ${count(total + copies)} steps of modules in all; at most ${count(MAX_TOTAL)} ` +
            `are allowed`,
        ),
      );
      out.failed.add(n.f.file);
      continue;
    }
    total += copies;
    const mods = reach.map((r) => byName.get(r)!);
    out.linked.set(n.f.file, {
      model: linkModel(
        n.model,
        mods.map((m) => partOf(m.model!)),
      ),
      version: linkedVersion(
        n.f.text,
        mods.map((m) => ({ name: m.name, text: m.f.text })),
      ),
      modules: mods.map((m) => ({ name: m.name, file: m.f.file, text: m.f.text })),
    });
  }
  return out;
}

/** A module as the flows that may enter it hold it: its steps under namespaced ids, and what they need at run time. */
interface ModulePart {
  model: FlowModel;
  steps: Record<string, Step>;
  linked: LinkedModule;
}

function modulePart(m: FlowModel): ModulePart {
  const p = `${m.name}:`;
  const steps: Record<string, Step> = {};
  for (const [id, s] of Object.entries(m.steps))
    steps[p + id] = m.prompts ? prefixPrompts(prefixStep(s, p), p) : prefixStep(s, p);
  const linked: LinkedModule = {
    name: m.name,
    file: m.file,
    start: p + m.start,
    vars: m.vars,
    params: m.module!.params,
    handlers: prefixHandlers(m.handlers, p),
  };
  return { model: m, steps, linked };
}

/** The flow's model with each module's steps added once, namespaced `<module>:<step>` (shared with other callers). */
function linkModel(root: FlowModel, parts: ModulePart[]): FlowModel {
  const steps: Record<string, Step> = {};
  for (const [id, s] of Object.entries(root.steps))
    steps[id] = s.kind === 'subflow' ? { ...s, target: `${s.flow}:` } : s;
  const linked: Record<string, LinkedModule> = {};
  for (const part of parts) {
    Object.assign(steps, part.steps);
    linked[`${part.linked.name}:`] = part.linked;
  }
  return linkTables(
    { ...root, steps, modules: linked },
    parts.map((part) => part.model),
  );
}

/**
 * The version 2 tables of the modules, joined to the linked flow's, since their steps run in
 * its machine: prompts namespaced as their steps are (`pin-check:wrong`; languages declared
 * by a module only are added), secrets and sensitive names joined, calendars and environment
 * values joined (the flow's own win a name both define: use distinct names).
 */
function linkTables(model: FlowModel, modules: FlowModel[]): FlowModel {
  const out: FlowModel = { ...model };
  for (const m of modules) {
    const p = `${m.name}:`;
    if (m.prompts) {
      out.prompts = { ...out.prompts };
      for (const [name, entry] of Object.entries(m.prompts)) out.prompts[p + name] = entry;
    }
    if (m.languages) {
      out.languages = { ...m.languages, ...out.languages };
      out.language ??= m.language;
    }
    if (m.secrets) out.secrets = [...new Set([...(out.secrets ?? []), ...m.secrets])];
    if (m.sensitive) out.sensitive = [...new Set([...(out.sensitive ?? []), ...m.sensitive])];
    if (m.calendars) out.calendars = { ...m.calendars, ...out.calendars };
    // the flow's own values win a name both define, whether written or read from the server's environment
    const own = new Set([...Object.keys(out.env ?? {}), ...Object.keys(out.envFrom ?? {})]);
    const theirs = <V>(o: Record<string, V>) => Object.fromEntries(Object.entries(o).filter(([k]) => !own.has(k)));
    if (m.env) out.env = { ...theirs(m.env), ...out.env };
    if (m.envFrom) out.envFrom = { ...theirs(m.envFrom), ...out.envFrom };
  }
  return out;
}

/** A module's `{ prompt: name }` media, renamed to the namespaced prompt (deep: commands, says, fillers). */
function prefixPrompts<T>(v: T, p: string): T {
  if (Array.isArray(v)) return v.map((x) => prefixPrompts(x, p)) as T;
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if (o.kind === 'prompt' && typeof o.name === 'string') return { ...o, name: p + o.name } as T;
  const copy: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) copy[k] = prefixPrompts(x, p);
  return copy as T;
}

function pre(p: string, id: string | undefined): string | undefined {
  return id === undefined || id === '' ? id : p + id;
}

function prefixBranch(b: Branch, p: string): Branch {
  const o: Branch = { ...b };
  if (b.goto !== undefined) o.goto = pre(p, b.goto)!;
  if (b.then !== undefined) o.then = pre(p, b.then)!;
  return o;
}

function prefixHandlers(h: Handlers, p: string): Handlers {
  const o: Handlers = { on: {} };
  if (h.error) o.error = prefixBranch(h.error, p);
  for (const [cmd, v] of Object.entries(h.on)) {
    if (!v) continue;
    o.on[cmd as keyof Handlers['on']] = {
      exact: Object.fromEntries(Object.entries(v.exact).map(([k, b]) => [k, prefixBranch(b, p)])),
      patterns: v.patterns.map((x) => ({ ...x, branch: prefixBranch(x.branch, p) })),
    };
  }
  return o;
}

function prefixStep(s: Step, p: string): Step {
  const id = p + s.id;
  switch (s.kind) {
    case 'set':
      return { ...s, id, ...(s.next !== undefined ? { next: pre(p, s.next)! } : {}) };
    case 'switch':
      return {
        ...s,
        id,
        cases: s.cases.map((c) => ({ ...c, goto: pre(p, c.goto)! })),
        ...(s.default !== undefined ? { default: pre(p, s.default)! } : {}),
      };
    case 'subflow':
      return {
        ...s,
        id,
        target: `${s.flow}:`,
        on: Object.fromEntries(Object.entries(s.on).map(([k, t]) => [k, pre(p, t)!])),
        ...(s.default !== undefined ? { default: pre(p, s.default)! } : {}),
      };
    case 'return':
      return { ...s, id };
    case 'loop':
      return {
        ...s,
        id,
        do: pre(p, s.do)!,
        ...(s.next !== undefined ? { next: pre(p, s.next)! } : {}),
        ...(s.error !== undefined ? { error: pre(p, s.error)! } : {}),
      };
    case 'command': {
      const on = s.on;
      return {
        ...s,
        id,
        on: {
          exact: Object.fromEntries(Object.entries(on.exact).map(([k, b]) => [k, prefixBranch(b, p)])),
          patterns: on.patterns.map((x) => ({ ...x, branch: prefixBranch(x.branch, p) })),
          ...(on.default ? { default: prefixBranch(on.default, p) } : {}),
          ...(on.error ? { error: prefixBranch(on.error, p) } : {}),
        },
        ...(s.valid?.else ? { valid: { ...s.valid, else: prefixBranch(s.valid.else, p) } } : {}),
      };
    }
  }
}
