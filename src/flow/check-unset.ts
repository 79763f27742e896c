/**
 * MAYBE_UNSET: a `set` expression that reads a variable some way to its step leaves unset (a lookup that timed out
 * saves nothing; a branch skips the step that sets it). At run time the expression fails and the set takes its error
 * way (handlers.error, else the flow ends); validate says so where it can tell.
 *
 * A forward "definitely set" analysis over the steps: a variable is set at a step when every way there sets it (the
 * flow's `vars:` and a module's params at the start; `save:` on a command's result branches, not on its error,
 * timeout or `valid.else`; a set's assignments on its `next`; a subflow's `save:` on its results; a foreach's item
 * and index in its body). The hangup
 * handler starts from the flow's `vars:` alone (a call never answered runs it first thing). Only what is sure is
 * reported: a variable nothing sets at all is UNKNOWN_VARIABLE's, and an expression that guards a name with
 * `has(vars.x)` (or reads `vars.?x`) is not reported for it. The work is bounded: past it, nothing is reported.
 */
import { type Ctx, report } from './check-context.js';
import { expressionNeeds } from './expr.js';
import type { Branch, Handlers, Step } from './model.js';
import { spanIn } from './spans.js';

/** The most word operations the analysis may spend (a flow of 10,000 steps and 1,000 variables stays within). */
const WORK = 20_000_000;

interface Edge {
  to: string;
  /** Variables set on the way (bit indices). */
  sets: number[];
  /** The way, for the message: "its timeout branch". */
  via: string;
}

export interface UnsetInput {
  steps: Record<string, Step>;
  order: string[];
  start: string;
  handlers: Handlers;
  /** The variables set when the call starts: the flow's `vars:`, a module's params. */
  initial: string[];
}

const targetsOf = (b: Branch | undefined): string[] => (b ? [b.goto, b.then].filter((x) => x !== undefined) : []);

export function checkMaybeUnset(ctx: Ctx, g: UnsetInput): void {
  const reads = Object.values(g.steps).some((s) => s.kind === 'set' && s.assign.some((a) => a.value.kind === 'expr'));
  if (!reads) return;
  // the variables: an index each
  const index = new Map<string, number>();
  const idx = (n: string) => index.get(n) ?? (index.set(n, index.size), index.size - 1);
  for (const n of g.initial) idx(n);
  for (const s of Object.values(g.steps)) {
    if (s.kind === 'command' && s.save !== undefined) idx(s.save);
    if (s.kind === 'set') for (const a of s.assign) idx(a.name);
    if (s.kind === 'subflow') for (const n of Object.keys(s.save)) idx(n);
    if (s.kind === 'loop') for (const n of [s.as, ...(s.index !== undefined ? [s.index] : [])]) idx(n);
  }
  const words = (index.size + 31) >>> 5;
  const edges = new Map<string, Edge[]>();
  for (const id of g.order) {
    const s = g.steps[id];
    if (s) edges.set(id, edgesOf(s, g.handlers, idx));
  }
  const of = (names: string[]) => {
    const b = new Uint32Array(words);
    for (const n of names) {
      const i = idx(n);
      b[i >>> 5]! |= 1 << (i & 31);
    }
    return b;
  };
  const has = (b: Uint32Array, i: number) => (b[i >>> 5]! & (1 << (i & 31))) !== 0;
  const into = new Map<string, Uint32Array>();
  const queue: string[] = [];
  const reach = (id: string, bits: Uint32Array): void => {
    const cur = into.get(id);
    if (!cur) {
      into.set(id, bits);
      queue.push(id);
      return;
    }
    let changed = false;
    for (let w = 0; w < words; w++) {
      const v = cur[w]! & bits[w]!;
      if (v !== cur[w]) {
        cur[w] = v;
        changed = true;
      }
    }
    if (changed) queue.push(id);
  };
  const start = of(g.initial);
  if (g.steps[g.start]) reach(g.start, start.slice());
  if (g.handlers.hangup !== undefined && g.steps[g.handlers.hangup]) reach(g.handlers.hangup, start.slice());
  let work = 0;
  for (let q = 0; q < queue.length; q++) {
    const id = queue[q]!;
    const cur = into.get(id)!;
    for (const e of edges.get(id) ?? []) {
      if (!g.steps[e.to]) continue;
      if ((work += words + e.sets.length) > WORK) return;
      const out = cur.slice();
      for (const i of e.sets) out[i >>> 5]! |= 1 << (i & 31);
      reach(e.to, out);
    }
  }
  // the ways into each step (for the messages)
  const preds = new Map<string, [string, Edge][]>();
  for (const [from, list] of edges)
    for (const e of list) (preds.get(e.to) ?? preds.set(e.to, []).get(e.to)!).push([from, e]);
  // each reached set step's expressions, against what is set there (and by the step's earlier assignments)
  for (const id of g.order) {
    const s = g.steps[id];
    const at = into.get(id);
    if (!s || s.kind !== 'set' || !at) continue;
    const now = at.slice();
    for (const a of s.assign) {
      if (a.value.kind === 'expr') {
        for (const name of expressionNeeds(a.value.expr)) {
          const i = index.get(name);
          // a name nothing sets is UNKNOWN_VARIABLE's
          if (i === undefined || has(now, i)) continue;
          const node = ctx.exprAt?.get(a);
          const ref = node && ctx.refs.find((r) => r.at === node && r.root === 'vars' && r.name === name);
          const where = (ref &&
            ref.offset !== undefined &&
            node!.kind === 'scalar' &&
            spanIn(node!, ref.offset, ref.length ?? 0)) ||
            node || { line: a.pos.line, col: a.pos.column };
          report(
            ctx,
            'MAYBE_UNSET',
            where,
            `vars.${name} may not be set when step '${id}' runs (${witness(id, i, into, preds, edges, has, g)}): the ` +
              `expression of ${a.name} then fails, and the step takes its error way ` +
              `(${g.handlers.error ? 'handlers.error' : 'no handlers.error: the flow ends'})`,
          );
        }
      }
      const i = index.get(a.name)!;
      now[i >>> 5]! |= 1 << (i & 31);
    }
  }
}

/**
 * Where a way in leaves variable `i` unset: a step before it that sets it on other ways and not on this one (a save
 * on its results, not on its error branch), else one before which nothing set it.
 */
function witness(
  id: string,
  i: number,
  into: Map<string, Uint32Array>,
  preds: Map<string, [string, Edge][]>,
  edges: Map<string, Edge[]>,
  has: (b: Uint32Array, i: number) => boolean,
  g: UnsetInput,
): string {
  let plain: string | undefined;
  for (const [from, e] of preds.get(id) ?? []) {
    const at = into.get(from);
    if (!at || has(at, i) || e.sets.includes(i)) continue;
    if (edges.get(from)!.some((o) => o.sets.includes(i))) return `coming from '${from}' by ${e.via}`;
    plain ??= `coming from '${from}', where nothing has set it`;
  }
  if (plain) return plain;
  return id === g.handlers.hangup ? "the hangup handler starts from the flow's vars: alone" : 'the call starts here';
}

/** A step's ways out, with what each sets. */
function edgesOf(s: Step, handlers: Handlers, idx: (n: string) => number): Edge[] {
  const out: Edge[] = [];
  const add = (b: Branch | string | undefined, sets: number[], via: string) => {
    for (const to of typeof b === 'string' ? [b] : targetsOf(b)) out.push({ to, sets, via });
  };
  switch (s.kind) {
    case 'set': {
      if (s.next !== undefined)
        add(
          s.next,
          s.assign.map((a) => idx(a.name)),
          'its next',
        );
      add(handlers.error, [], 'its error way (handlers.error)');
      return out;
    }
    case 'switch':
      for (const c of s.cases) add(c.goto, [], 'a case');
      add(s.default, [], 'its default');
      return out;
    case 'subflow': {
      const saved = Object.keys(s.save).map(idx);
      for (const to of Object.values(s.on)) add(to, saved, 'a result');
      add(s.default, saved, 'its default');
      return out;
    }
    case 'return':
      return out;
    case 'loop':
      // the body gets the item (and its index); after the loop, or a value that is no list, nothing more is sure
      add(s.do, [idx(s.as), ...(s.index !== undefined ? [idx(s.index)] : [])], 'its body');
      add(s.next, [], 'its next');
      add(s.error, [], 'its error');
      return out;
    case 'command': {
      const saved = s.save !== undefined ? [idx(s.save)] : [];
      const http = s.command.name === 'http';
      for (const [k, b] of Object.entries(s.on.exact))
        add(
          b,
          http && k === 'timeout' ? [] : saved,
          http && k === 'timeout' ? 'its timeout branch' : `its ${k} branch`,
        );
      for (const p of s.on.patterns) add(p.branch, saved, `its ${p.source} branch`);
      add(s.on.default, saved, 'its default');
      add(s.valid?.else, [], 'its valid: else');
      const wide = s.inheritHandlers ? handlers.on[s.command.name] : undefined;
      for (const [k, b] of Object.entries(wide?.exact ?? {})) add(b, saved, `handlers.on ${k}`);
      for (const p of wide?.patterns ?? []) add(p.branch, saved, `handlers.on ${p.source}`);
      if (s.on.error) add(s.on.error, [], 'its error branch');
      else if (s.command.name !== 'hangup') add(handlers.error, [], 'handlers.error');
      return out;
    }
  }
}
