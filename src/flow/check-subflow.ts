/**
 * Subflows (version 2), the per-file part: a module's `module:` interface, `subflow:`
 * steps (which module, with which params, where each result leads, which returned values
 * are saved) and `return:` steps. What needs the other files (the module exists, params,
 * results and returns match, no cycles) is the link stage's (link.ts).
 */
import type { ModuleSpec, ReturnStep, SubflowStep, Value } from './model.js';
import {
  type Ctx,
  ID_RE,
  asMap,
  asString,
  checkVarName,
  didYouMean,
  knownEntries,
  posOf,
  report,
  requireV2,
} from './check-context.js';
import { stepRef } from './check-results.js';
import { toValue } from './check-values.js';
import { describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';

/** The keys of `module:`, of a `subflow:` step's map and of a `return:` written as a map. */
export const MODULE_KEYS = ['params', 'results', 'returns'] as const;
export const SUBFLOW_KEYS = ['flow', 'with'] as const;
export const RETURN_KEYS = ['result', 'values'] as const;

/** `module: { params, results, returns }`. */
export function checkModuleSpec(ctx: Ctx, e: YEntry, vars: Record<string, Value>): ModuleSpec | undefined {
  requireV2(ctx, e, 'module:');
  const map = asMap(ctx, e.value, 'module');
  if (!map) return undefined;
  const spec: ModuleSpec = { params: {}, results: [], returns: [], pos: posOf(ctx, e) };
  for (const k of knownEntries(ctx, map, MODULE_KEYS, 'module: ')) {
    if (k.key === 'params') {
      if (k.value.kind === 'scalar' && k.value.type === 'null') continue;
      const params = asMap(ctx, k.value, 'module.params');
      for (const p of params?.entries ?? []) {
        if (!checkVarName(ctx, p.key, p, 'module.params:')) continue;
        const v = p.value;
        if (v.kind === 'scalar' && v.type === 'string' && v.value === 'required' && !v.quoted) {
          spec.params[p.key] = { required: true };
          continue;
        }
        const val = toValue(ctx, v, `module.params.${p.key}: `, false);
        if (val !== undefined) spec.params[p.key] = { required: false, value: val };
      }
    } else {
      const what = k.key === 'results' ? 'a result' : 'a returned value';
      if (k.value.kind === 'scalar' && k.value.type === 'null') continue;
      if (k.value.kind !== 'seq') {
        report(ctx, 'TYPE_MISMATCH', k.value, `module.${k.key} must be a list of names, not ${describe(k.value)}`);
        continue;
      }
      const list = k.key === 'results' ? spec.results : spec.returns;
      for (const it of k.value.items) {
        const n = asString(ctx, it, `module.${k.key}: ${what}`);
        if (n === undefined) continue;
        const ok = k.key === 'results' ? checkResultName(ctx, n, it) : checkVarName(ctx, n, it, `module.returns:`);
        if (!ok) continue;
        if (list.includes(n)) report(ctx, 'DUPLICATE_KEY', it, `module.${k.key}: '${n}' is listed twice`);
        else list.push(n);
      }
    }
  }
  if (!entry(map, 'results'))
    report(
      ctx,
      'MISSING_KEY',
      map,
      "module: missing 'results': the results a return may end the module with (e.g. [done])",
    );
  for (const name of Object.keys(spec.params))
    if (Object.hasOwn(vars, name))
      report(
        ctx,
        'DUPLICATE_KEY',
        entry(asMap(ctx, entry(map, 'params')!.value, 'module.params')!, name)!,
        `module.params: '${name}' is also declared under vars:; a param is a variable of the module already`,
      );
  return spec;
}

function checkResultName(ctx: Ctx, n: string, at: YNode): boolean {
  if (!ID_RE.test(n) || n === 'default' || n === 'error') {
    report(
      ctx,
      'BAD_NAME',
      at,
      `module.results: '${n}' is not a valid result name: letters, digits, - and _ (64 at most), not default or error`,
    );
    return false;
  }
  return true;
}

/** A `subflow:` step. */
export function checkSubflowStep(
  ctx: Ctx,
  node: YMap,
  action: YEntry,
  id: string,
  where: string,
): SubflowStep | undefined {
  requireV2(ctx, action, 'subflow');
  const map = asMap(ctx, action.value, `${where}subflow`);
  if (!map) return undefined;
  knownEntries(ctx, map, SUBFLOW_KEYS, `${where}subflow: `);
  const flowEntry = entry(map, 'flow');
  if (!flowEntry) {
    report(ctx, 'MISSING_KEY', action, `${where}subflow needs 'flow': the name of the module to run`);
    return undefined;
  }
  const flow = asString(ctx, flowEntry.value, `${where}subflow.flow`);
  if (flow !== undefined) ctx.uses?.push({ kind: 'module', name: flow, at: flowEntry.value });
  if (flow !== undefined && !ID_RE.test(flow))
    report(ctx, 'BAD_NAME', flowEntry.value, `${where}'${flow}' is not a flow name (letters, digits, - and _)`);
  const step: SubflowStep = {
    kind: 'subflow',
    id,
    pos: posOf(ctx, action),
    flow: flow ?? '',
    flowPos: posOf(ctx, flowEntry.value),
    with: {},
    withPos: {},
    save: {},
    savePos: {},
    on: {},
    onPos: {},
  };
  const w = entry(map, 'with');
  if (w) {
    step.withAt = posOf(ctx, w);
    const wm =
      w.value.kind === 'scalar' && w.value.type === 'null' ? undefined : asMap(ctx, w.value, `${where}subflow.with`);
    for (const p of wm?.entries ?? []) {
      if (flow !== undefined) ctx.uses?.push({ kind: 'param', name: p.key, at: p.keyNode, module: flow, map: wm });
      const v: Value | undefined = toValue(ctx, p.value, `${where}with ${p.key}: `, true);
      if (v === undefined) continue;
      step.with[p.key] = v;
      step.withPos[p.key] = posOf(ctx, p);
    }
  }
  const save = entry(node, 'save');
  if (save) {
    const sm = asMap(ctx, save.value, `${where}save (caller variable: returned value)`);
    for (const s of sm?.entries ?? []) {
      if (!checkVarName(ctx, s.key, s, 'save:')) continue;
      const from = asString(ctx, s.value, `${where}save ${s.key}: the returned value's name`);
      if (from === undefined) continue;
      ctx.declared.add(s.key);
      step.save[s.key] = from;
      step.savePos[s.key] = posOf(ctx, s.value);
    }
  }
  const on = entry(node, 'on');
  const om = on ? asMap(ctx, on.value, `${where}on`) : undefined;
  let def: YEntry | undefined;
  for (const e of om?.entries ?? []) {
    if (e.value.kind !== 'scalar' || e.value.type !== 'string') {
      report(
        ctx,
        'TYPE_MISMATCH',
        e.value,
        `${where}a subflow's result leads to a step id, not ${describe(e.value)}`,
        'Write `on: { verified: menu }`; to say something first, lead to a say step.',
      );
      continue;
    }
    const to = stepRef(ctx, e.value, where);
    if (to === undefined) continue;
    if (e.key === 'default') {
      step.default = to;
      def = e;
    } else {
      step.on[e.key] = to;
      step.onPos[e.key] = posOf(ctx, e);
    }
  }
  const next = entry(node, 'next');
  if (next) {
    if (def)
      report(
        ctx,
        'DUPLICATE_DEFAULT',
        next,
        `${where}has both next and on.default (line ${def.keyNode.pos.line}); they mean the same thing`,
      );
    else if (next.value.kind !== 'scalar' || next.value.type !== 'string')
      report(ctx, 'TYPE_MISMATCH', next.value, `${where}next of a subflow is a step id, not ${describe(next.value)}`);
    else step.default = stepRef(ctx, next.value, where);
  }
  return flow === undefined ? undefined : step;
}

/** A `return:` step: `return: locked` or `return: { result, values }`. */
export function checkReturnStep(ctx: Ctx, action: YEntry, id: string, where: string): ReturnStep | undefined {
  requireV2(ctx, action, 'return');
  const mod = ctx.module;
  if (!mod) {
    report(
      ctx,
      'RETURN_OUTSIDE_MODULE',
      action,
      `${where}return ends a module, and this flow is not one (it has no module:)`,
      'A flow served at /rt ends with hangup; declare `module: { results: [...] }` to make this file a ' +
        'module that other flows enter with subflow:.',
    );
    return undefined;
  }
  const v = action.value;
  const step: ReturnStep = {
    kind: 'return',
    id,
    pos: posOf(ctx, action),
    result: '',
    resultPos: posOf(ctx, v),
    values: {},
    valuesPos: {},
  };
  let resultNode = v;
  if (v.kind === 'map') {
    knownEntries(ctx, v, RETURN_KEYS, `${where}return: `);
    const r = entry(v, 'result');
    if (!r) {
      report(
        ctx,
        'MISSING_KEY',
        action,
        `${where}return needs 'result': one of the module's results (${mod.results.join(', ')})`,
      );
      return undefined;
    }
    resultNode = r.value;
    const vals = entry(v, 'values');
    const vm = vals ? asMap(ctx, vals.value, `${where}return.values`) : undefined;
    for (const e of vm?.entries ?? []) {
      if (!mod.returns.includes(e.key)) {
        report(
          ctx,
          'UNKNOWN_RETURN',
          e,
          `${where}'${e.key}' is not among the module's ` +
            `returns${mod.returns.length ? ` (${mod.returns.join(', ')})` : ' (it declares none)'}`,
          didYouMean(e.key, mod.returns) ?? 'Declare it under module.returns, or remove it.',
        );
        continue;
      }
      const val = toValue(ctx, e.value, `${where}return ${e.key}: `, true);
      if (val === undefined) continue;
      step.values[e.key] = val;
      step.valuesPos[e.key] = posOf(ctx, e);
    }
  }
  const result = asString(ctx, resultNode, `${where}return's result`);
  if (result === undefined) return undefined;
  step.result = result;
  step.resultPos = posOf(ctx, resultNode);
  if (!mod.results.includes(result)) {
    report(
      ctx,
      'UNKNOWN_RESULT',
      resultNode,
      `${where}'${result}' is not among the module's results (${mod.results.join(', ') || 'none declared'})`,
      didYouMean(result, mod.results) ?? 'Declare it under module.results, or return one of them.',
    );
    return undefined;
  }
  return step;
}
