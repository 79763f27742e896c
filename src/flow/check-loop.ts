/**
 * `foreach` steps (version 2): the step itself (`foreach: { in, as, index, max }` with `do`,
 * `next`, `error`), the names it gives its item and index (never a variable the flow sets
 * otherwise), and, on a flow with no other error, its body: it must come back to the loop,
 * and a loop inside another's body may not reuse the outer loop's names.
 */
import { DEFAULT_LOOP_MAX, MAX_LOOP_MAX, type LoopStep, type Step } from './model.js';
import { type Ctx, asString, checkVarName, knownEntries, posOf, report, requireV2 } from './check-context.js';
import { stepRef } from './check-results.js';
import { checkCel } from './check-values.js';
import { describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';
import { loopBody, MAX_LOOPS, waysBack } from './loops.js';

export const LOOP_KEYS = ['in', 'as', 'index', 'max'] as const;

/** A name a loop gives its item or index, where it is written. */
export interface LoopName {
  step: string;
  key: 'as' | 'index';
  name: string;
  at: YNode;
}

/** The loop steps checked so far and the names they declare (read by checkVarRefs and checkLoopNames). */
export interface LoopsSeen {
  count: number;
  names: LoopName[];
  /**
   * A foreach whose item has no valid name (as: missing or wrong, or the action misspelt): any unknown variable may be
   * the one it meant, so none is reported (one mistake, one diagnostic).
   */
  unnamed?: boolean;
}

export function loopsOf(ctx: Ctx): LoopsSeen {
  return (ctx.loops ??= { count: 0, names: [] });
}

const SHAPE_HINT = 'Write e.g. foreach: { in: vars.appointments, as: appointment, index: i, max: 20 }.';

export function checkLoopStep(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  requireV2(ctx, action, 'foreach steps');
  const seen = loopsOf(ctx);
  if (++seen.count === MAX_LOOPS + 1)
    report(
      ctx,
      'TOO_MANY_ENTRIES',
      action,
      `${where}a flow has at most ${MAX_LOOPS} foreach steps`,
      'Split the flow into modules (subflow:), or read several lists in one loop.',
    );
  const m = action.value.kind === 'map' ? action.value : undefined;
  if (!m) {
    report(
      ctx,
      'TYPE_MISMATCH',
      action.value,
      `${where}foreach takes a map { in, as, index, max }, not ${describe(action.value)}`,
      SHAPE_HINT,
    );
  } else knownEntries(ctx, m, LOOP_KEYS, `${where}foreach: `);
  const inEntry = m && entry(m, 'in');
  const asEntry = m && entry(m, 'as');
  if (m && !inEntry)
    report(ctx, 'MISSING_KEY', action, `${where}foreach needs 'in': a CEL expression giving the list`, SHAPE_HINT);
  if (m && !asEntry)
    report(ctx, 'MISSING_KEY', action, `${where}foreach needs 'as': the variable that holds each item`, SHAPE_HINT);
  const list = inEntry ? checkCel(ctx, inEntry.value, `${where}foreach in: `) : undefined;
  const as = asEntry ? loopName(ctx, id, 'as', asEntry.value, where) : undefined;
  if (as === undefined) seen.unnamed = true;
  const indexEntry = m && entry(m, 'index');
  const index = indexEntry ? loopName(ctx, id, 'index', indexEntry.value, where) : undefined;
  if (as !== undefined && index !== undefined && as === index)
    report(
      ctx,
      'LOOP_VAR_REUSED',
      indexEntry!.value,
      `${where}foreach index: '${index}' is also its as: the item and its index need two variables`,
      'Name the index on its own, e.g. index: i.',
    );
  const max = checkMax(ctx, m && entry(m, 'max'), where);
  const doEntry = entry(node, 'do');
  if (!doEntry)
    report(ctx, 'MISSING_KEY', action, `${where}foreach needs 'do': the first step of its body, run for each item`);
  const body = doEntry ? stepRef(ctx, doEntry.value, where) : undefined;
  if (body !== undefined && body === id)
    report(
      ctx,
      'LOOP_NEVER_BACK',
      doEntry!.value,
      `${where}do: names the foreach step itself: the loop has no body`,
      'Point do: at the first step of what to do with each item; that step (or one after it) comes back with ' +
        `next: ${id}.`,
    );
  const nextEntry = entry(node, 'next');
  const next = nextEntry ? stepRef(ctx, nextEntry.value, where) : undefined;
  const errorEntry = entry(node, 'error');
  const error = errorEntry ? stepRef(ctx, errorEntry.value, where) : undefined;
  if (list === undefined || as === undefined || body === undefined || max === undefined) return undefined;
  const step: LoopStep = {
    kind: 'loop',
    id,
    pos: posOf(ctx, action),
    in: list,
    inPos: posOf(ctx, inEntry!.value),
    as,
    asPos: posOf(ctx, asEntry!.value),
    max,
    do: body,
    doPos: posOf(ctx, doEntry!.value),
  };
  if (index !== undefined) {
    step.index = index;
    step.indexPos = posOf(ctx, indexEntry!.value);
  }
  if (next !== undefined) {
    step.next = next;
    step.nextPos = posOf(ctx, nextEntry!.value);
  }
  if (error !== undefined) {
    step.error = error;
    step.errorPos = posOf(ctx, errorEntry!.value);
  }
  return step;
}

function loopName(ctx: Ctx, step: string, key: 'as' | 'index', node: YNode, where: string): string | undefined {
  const name = asString(ctx, node, `${where}foreach ${key}:`);
  if (name === undefined || !checkVarName(ctx, name, node, `foreach ${key}:`)) return undefined;
  loopsOf(ctx).names.push({ step, key, name, at: node });
  return name;
}

function checkMax(ctx: Ctx, e: YEntry | undefined, where: string): number | undefined {
  if (!e) return DEFAULT_LOOP_MAX;
  const v = e.value;
  if (v.kind !== 'scalar' || v.type !== 'int') {
    report(
      ctx,
      'TYPE_MISMATCH',
      v,
      `${where}foreach max: is an integer (the most items the loop takes), not ${describe(v)}`,
      `Write max: 20 (1 to ${MAX_LOOP_MAX}; ${DEFAULT_LOOP_MAX} when not given).`,
    );
    return undefined;
  }
  const n = Number(v.value);
  if (n < 1 || n > MAX_LOOP_MAX) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      v,
      `${where}foreach max: ${n} is out of bounds (1..${MAX_LOOP_MAX})`,
      `max is the most items one run of the loop takes: 1 to ${MAX_LOOP_MAX} (${DEFAULT_LOOP_MAX} when not ` +
        `given); a longer list stops there.`,
    );
    return undefined;
  }
  return n;
}

/**
 * LOOP_SHADOWS_VAR: a loop's item or index named like a variable the flow sets otherwise (vars:, a module param,
 * save:, set:): each item would overwrite it. Run once every step is checked.
 */
export function checkLoopNames(ctx: Ctx, initial: readonly string[]): void {
  const names = ctx.loops?.names;
  if (!names || names.length === 0) return;
  const top = new Set(initial);
  for (const n of names) {
    const from = top.has(n.name) ? 'vars: (or a module param)' : ctx.declared.has(n.name) ? 'a save: or set:' : '';
    if (!from) continue;
    report(
      ctx,
      'LOOP_SHADOWS_VAR',
      n.at,
      `foreach '${n.step}': ${n.key}: '${n.name}' is also a variable of the flow (from ${from}): the loop would ` +
        `overwrite it with each ${n.key === 'as' ? 'item' : 'index'}`,
    );
  }
}

/**
 * The graph checks of loops (a flow with no other error): each body comes back to its loop (LOOP_NEVER_BACK), and a
 * loop inside another's body names its item and index apart from the outer loop's (LOOP_VAR_REUSED). Returns each
 * loop's body: the ways back to the loop are no eventless loop (each takes the next item, at most `max`).
 */
export function checkLoopGraph(
  ctx: Ctx,
  steps: Readonly<Record<string, Step>>,
  roots: readonly string[],
  next: (id: string) => readonly string[],
): Map<string, Set<string>> {
  const bodies = new Map<string, Set<string>>();
  const loops = Object.values(steps).filter((s): s is LoopStep => s.kind === 'loop');
  for (const l of loops) bodies.set(l.id, loopBody(steps, l, roots, next));
  for (const l of loops) {
    const body = bodies.get(l.id)!;
    if (l.do === l.id) continue; // reported with the step
    if (body.size === 0 || waysBack(body, l.id, next).length === 0) {
      const shared = body.size === 0;
      report(
        ctx,
        'LOOP_NEVER_BACK',
        { line: l.doPos.line, col: l.doPos.column },
        shared
          ? `foreach '${l.id}': its do: '${l.do}' is also reached from elsewhere in the flow, so the loop has no ` +
              `body of its own and never takes a next item`
          : `foreach '${l.id}': no step of its body (from do: '${l.do}') comes back to '${l.id}': the loop would ` +
              `take one item only`,
        shared
          ? `A loop's body is the steps reached only through its do:; give the body a first step of its own, ` +
              `which ends with next: ${l.id}.`
          : `End the body with next: ${l.id} (the next item); a way to another step leaves the loop early.`,
      );
    }
  }
  // nested loops: the inner one reusing a name of the outer one would overwrite its item (or index)
  for (const outer of loops) {
    const body = bodies.get(outer.id)!;
    const mine = new Set([outer.as, ...(outer.index !== undefined ? [outer.index] : [])]);
    for (const inner of loops) {
      if (inner === outer || !body.has(inner.id)) continue;
      for (const [key, name, pos] of [
        ['as', inner.as, inner.asPos],
        ['index', inner.index, inner.indexPos],
      ] as const) {
        if (name === undefined || !mine.has(name) || !pos) continue;
        report(
          ctx,
          'LOOP_VAR_REUSED',
          { line: pos.line, col: pos.column },
          `foreach '${inner.id}' is inside the body of foreach '${outer.id}' and its ${key}: '${name}' is a ` +
            `variable of '${outer.id}' too: the inner loop would overwrite it`,
          `Give the inner loop names of its own (as: ${name === 'item' ? 'entry' : 'item'}).`,
        );
      }
    }
  }
  return bodies;
}
