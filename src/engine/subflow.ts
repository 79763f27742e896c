/**
 * Subflows at run time (version 2): the frame stack of a call inside modules. Entering a
 * module (`enter`) pushes a frame, the caller's vars and the call site, and gives the
 * module its own vars: its `vars:`, its params' defaults, then the `with:` values rendered
 * in the caller's scope. Returning (`leave`) renders the return's values in the module's
 * scope, pops the frame: the caller's vars come back, with the values its `save:` names.
 * The stack is bounded by the link stage's nesting limit (MAX_SUBFLOW_DEPTH) and stored
 * in the call state, so the state cap counts the frames' vars too.
 *
 * When the call ends inside a module, the hangup handler of the flow served at /rt runs
 * with that flow's vars (the bottom frame's): `unwind`.
 */
import type { FlowModel, Value } from '../flow/model.js';
import { MAX_SUBFLOW_DEPTH } from '../flow/link.js';
import { literalValue } from './params.js';
import { addLog, limitHit, scopeOf, type Ctx } from './behaviour.js';
import { jsonSize } from './size.js';

/** One frame: the call site (a subflow step's state) and the caller's vars. */
export interface Frame {
  s: string;
  v: Record<string, Value>;
}

export const NO_FRAMES: readonly Frame[] = Object.freeze([]) as readonly Frame[];

type Literal = ReturnType<typeof literalValue>;

interface Enter {
  with: [string, Literal][];
  /** The module's vars and params' defaults: what it starts from. */
  initial: Record<string, Value>;
}

export interface SubflowTables {
  enters: Map<string, Enter>;
  returns: Map<string, { result: string; values: [string, Literal][] }>;
  saves: Map<string, [string, string][]>;
}

export function buildSubflowTables(model: FlowModel): SubflowTables | undefined {
  let t: SubflowTables | undefined;
  for (const [id, s] of Object.entries(model.steps)) {
    if (s.kind !== 'subflow' && s.kind !== 'return') continue;
    t ??= { enters: new Map(), returns: new Map(), saves: new Map() };
    if (s.kind === 'return') {
      t.returns.set(id, { result: s.result, values: Object.entries(s.values).map(([k, v]) => [k, literalValue(v)]) });
      continue;
    }
    const mod = model.modules?.[`${s.flow}:`];
    const initial: Record<string, Value> = { ...(mod?.vars ?? {}) };
    for (const [k, p] of Object.entries(mod?.params ?? {})) if (!p.required) initial[k] = p.value;
    t.enters.set(id, { with: Object.entries(s.with).map(([k, v]) => [k, literalValue(v)]), initial });
    t.saves.set(id, Object.entries(s.save));
  }
  return t;
}

function render(ctx: Ctx, step: string, list: [string, Literal][], what: string): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const [name, lit] of list) {
    try {
      out[name] = lit.c ? lit.v : lit.f(() => scopeOf(ctx));
    } catch (err) {
      if (limitHit(ctx.rt, err, step, `${what} ${name}`)) continue;
      addLog(ctx.rt, {
        level: 'warn',
        code: 'RUNTIME_TEMPLATE',
        msg: `${what} ${name} at ${step}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`,
        step,
      });
    }
  }
  return out;
}

/** Pushes a frame and gives the module its vars (the `enter` action of a subflow step). */
export function enter(t: SubflowTables | undefined, ctx: Ctx, p: { step: string }): Partial<Ctx> {
  const rt = ctx.rt;
  rt.i++;
  rt.last = p.step;
  rt.hooks?.entered?.(p.step);
  const e = t?.enters.get(p.step);
  const frames = ctx.f ?? [];
  if (!e || frames.length >= MAX_SUBFLOW_DEPTH) {
    // the link stage bounds nesting: only a state from elsewhere gets here
    addLog(rt, {
      level: 'error',
      code: 'SUBFLOW_DEPTH',
      msg: `subflow at ${p.step}: ${frames.length} frames already; the call ends`,
      step: p.step,
    });
    return {};
  }
  const vars = Object.assign({}, e.initial, render(ctx, p.step, e.with, 'with'));
  if (jsonSize(vars, rt.maxState) > rt.maxState) {
    addLog(rt, {
      level: 'error',
      code: 'STATE_TOO_LARGE',
      msg: `subflow at ${p.step}: the module's params are over the call state cap of ${rt.maxState} bytes`,
      step: p.step,
    });
    rt.abort ??= { code: 'STATE_TOO_LARGE', step: p.step, what: 'subflow params', logAt: rt.log!.length };
  }
  return { vars, f: [...frames, { s: p.step, v: ctx.vars }], c: { n: 1, r: {} }, k: 1 };
}

/** The top frame is this call site; with `full`, the stack is at the nesting bound. */
export function atSite(ctx: Ctx, p: { site?: string; full?: boolean }): boolean {
  const f = ctx.f;
  if (p.full) return f !== undefined && f.length >= MAX_SUBFLOW_DEPTH;
  return f !== undefined && f.length > 0 && f[f.length - 1]!.s === p.site;
}

/** Pops the frame: the caller's vars back, with the returned values it saves (the `leave` action of a return step). */
export function leave(t: SubflowTables | undefined, ctx: Ctx, p: { step: string; site?: string }): Partial<Ctx> {
  const rt = ctx.rt;
  rt.i++;
  rt.last = p.step;
  rt.hooks?.entered?.(p.step);
  const r = t?.returns.get(p.step);
  const values = r ? render(ctx, p.step, r.values, 'return') : {};
  const frames = ctx.f ?? [];
  if (p.site === undefined || frames.length === 0) {
    // a module run on its own: the flow ends with its result, kept for the scenario runner
    addLog(rt, { level: 'info', code: 'MODULE_RETURNED', msg: `return ${r?.result ?? ''} at ${p.step}`, step: p.step });
    return { ret: { result: r?.result ?? '', values } };
  }
  const top = frames[frames.length - 1]!;
  const vars = Object.assign({}, top.v);
  for (const [into, from] of t?.saves.get(p.site) ?? []) if (Object.hasOwn(values, from)) vars[into] = values[from]!;
  const out: Partial<Ctx> = {
    vars,
    f: frames.length === 1 ? undefined : frames.slice(0, -1),
    c: { n: 1, r: {} },
    k: 1,
  };
  // a loop of the module left by its return is over
  const ns = p.step.slice(0, p.step.indexOf(':') + 1);
  if (ns && ctx.l && Object.keys(ctx.l).some((k) => k.startsWith(ns))) {
    const l = Object.fromEntries(Object.entries(ctx.l).filter(([k]) => !k.startsWith(ns)));
    out.l = Object.keys(l).length > 0 ? l : undefined;
  }
  return out;
}

/** The call ended inside modules: the served flow's vars come back for its hangup handler. */
export function unwind(ctx: Ctx): Partial<Ctx> {
  const f = ctx.f;
  return f && f.length > 0 ? { vars: f[0]!.v, f: undefined } : {};
}
