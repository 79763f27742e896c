/**
 * The runtime of `foreach` steps (version 2; the states: src/flow/machine-loop.ts). A loop
 * keeps one number in the call's context, `l[<loop step>]`: the items it has taken in its
 * current run. Entering `<loop>` starts at 0; `<loop>@next` goes on from there. Each visit
 * evaluates `in:` (the list is read where it is, so a body that changes it changes what
 * comes next) and decides once (memoised on the request's run for the guards and the action
 * of that visit): the next item, the end of the list (or of `max:`), or a value that is not
 * a list. The item and its index go into their variables; every visit counts as a logic
 * step of the request (ITERATION_LIMIT).
 */
import { evaluate } from '../flow/expr.js';
import type { LoopStep, Value } from '../flow/model.js';
import { addLog, limitHit, scopeOf, type Ctx } from './behaviour.js';

/** What the engine keeps of a loop step. */
export interface LoopTable {
  in: string;
  as: string;
  index?: string;
  max: number;
}

export function loopTable(step: LoopStep): LoopTable {
  const t: LoopTable = { in: step.in, as: step.as, max: step.max };
  if (step.index !== undefined) t.index = step.index;
  return t;
}

/** What a visit of a loop state decided. */
export type LoopGot =
  { kind: 'item'; item: Value; i: number } | { kind: 'done'; max?: number } | { kind: 'error'; why: string };

/** The decision of the visit under way, for the guards and the action of that one visit. */
export interface LoopMemo {
  step: string;
  first: boolean;
  vars: object;
  at: number;
  got: LoopGot;
}

type Params = { step: string; first: boolean };

/** The items already taken by the loop's current run (0 when it starts). */
function position(ctx: Ctx, p: Params): number {
  return p.first ? 0 : (ctx.l?.[p.step] ?? 0);
}

function describe(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'object') return 'a map';
  return `a ${typeof v} (${JSON.stringify(v).slice(0, 40)})`;
}

/** The decision of this visit: computed once, then read by the guards and the action. */
export function decide(loops: Map<string, LoopTable>, ctx: Ctx, p: Params): LoopGot {
  const rt = ctx.rt;
  const at = position(ctx, p);
  const m = rt.loop;
  if (m && m.step === p.step && m.first === p.first && m.vars === ctx.vars && m.at === at) return m.got;
  const t = loops.get(p.step);
  let got: LoopGot;
  if (!t) got = { kind: 'error', why: 'no such loop step' };
  else {
    let list: Value | undefined;
    let failed = '';
    try {
      list = evaluate(t.in, scopeOf(ctx));
    } catch (err) {
      // over the request's budget: the request is redone from its prior state (its error way); stop here quietly
      if (limitHit(rt, err, p.step, `foreach in ${t.in}`)) list = [];
      else failed = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    }
    if (list === undefined) got = { kind: 'error', why: `${t.in} failed to evaluate: ${failed}` };
    else if (!Array.isArray(list)) got = { kind: 'error', why: `${t.in} is ${describe(list)}, not a list` };
    else if (at >= list.length) got = { kind: 'done' };
    else if (at >= t.max) got = { kind: 'done', max: list.length };
    else got = { kind: 'item', item: list[at]!, i: at };
  }
  rt.loop = { step: p.step, first: p.first, vars: ctx.vars, at, got };
  return got;
}

/** The guard `loop`: this visit takes an item (`is: item`), or meets a value that is not a list (`is: error`). */
export function loopGuard(loops: Map<string, LoopTable>, ctx: Ctx, p: Params & { is: 'item' | 'error' }): boolean {
  return decide(loops, ctx, p).kind === p.is;
}

/**
 * The action `loop`: an item into the body (its variables set, the position moved on), or the end of the loop (the
 * position dropped; a value that is not a list, or a list cut at max:, logged).
 */
export function loopTake(
  loops: Map<string, LoopTable>,
  ctx: Ctx,
  p: Params & { end?: 'done' | 'error' },
): Partial<Ctx> {
  const rt = ctx.rt;
  rt.i++;
  rt.last = p.step;
  rt.hooks?.entered?.(p.step);
  const got = decide(loops, ctx, p);
  rt.loop = undefined;
  const t = loops.get(p.step);
  if (got.kind === 'item' && !p.end && t) {
    const vars = Object.assign({}, ctx.vars, { [t.as]: got.item });
    if (t.index !== undefined) vars[t.index] = got.i;
    return { vars, l: Object.assign({}, ctx.l, { [p.step]: got.i + 1 }) };
  }
  if (got.kind === 'error')
    addLog(rt, {
      level: 'warn',
      code: 'RUNTIME_LOOP',
      msg: `foreach at ${p.step}: ${got.why}; ${p.end === 'error' ? 'taking its error way' : 'taken as an empty list'}`,
      step: p.step,
    });
  else if (got.kind === 'done' && got.max !== undefined)
    addLog(rt, {
      level: 'warn',
      code: 'LOOP_MAX',
      msg:
        `foreach at ${p.step}: the list has ${got.max.toLocaleString('en-US')} items; the loop stopped at its max ` +
        `of ${t?.max ?? 0}`,
      step: p.step,
    });
  if (!ctx.l || !Object.hasOwn(ctx.l, p.step)) return {};
  const l = Object.assign({}, ctx.l);
  delete l[p.step];
  return { l: Object.keys(l).length > 0 ? l : undefined };
}
