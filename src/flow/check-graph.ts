/**
 * Checks on the flow as a graph of steps: unknown targets, unreachable steps, steps that
 * can never reach the end of the call, loops of logic steps, and the hangup handler.
 */
import { ACTION_SPECS, isEffect } from './actions.js';
import type { Branch, Handlers, Step } from './model.js';
import { type Ctx, closest, didYouMean, report } from './check-context.js';
import { unhandledResults } from './check-results.js';
import type { Loc, YEntry, YNode } from './yaml.js';
import { sccs } from './scc.js';
import { checkLoopGraph } from './check-loop.js';

/** UNKNOWN_STEP for every reference to a step id that is not defined. */
export function checkTargets(ctx: Ctx, ids: readonly string[]): void {
  const known = new Set(ids);
  const hints = new Map<string, string>();
  for (const t of ctx.targets) {
    if (known.has(t.id)) continue;
    let hint = hints.get(t.id);
    if (hint === undefined) {
      hint =
        didYouMean(t.id, ids, ctx.suggest) ??
        (ids.length
          ? `Steps are: ${ids.slice(0, 12).join(', ')}${ids.length > 12 ? ', ...' : ''}.`
          : 'Define it under steps:.');
      hints.set(t.id, hint);
    }
    report(ctx, 'UNKNOWN_STEP', t.at, `no step '${t.id}' in this flow`, hint);
  }
}

function branchTargets(b: Branch | undefined): string[] {
  if (!b) return [];
  return [b.goto, b.then].filter((x): x is string => x !== undefined);
}

/** Where a step can go next (flow-wide handlers included). */
export function successors(step: Step, handlers: Handlers): string[] {
  if (step.kind === 'set') return step.next ? [step.next] : [];
  if (step.kind === 'switch') return [...step.cases.map((c) => c.goto), ...(step.default ? [step.default] : [])];
  if (step.kind === 'subflow')
    return [...new Set([...Object.values(step.on), ...(step.default ? [step.default] : [])])];
  if (step.kind === 'return') return [];
  if (step.kind === 'loop')
    return [...new Set([step.do, ...(step.next ? [step.next] : []), ...(step.error ? [step.error] : [])])];
  const on = step.on;
  const out = [
    ...Object.values(on.exact),
    ...on.patterns.map((p) => p.branch),
    on.default,
    on.error,
    step.valid?.else,
  ].flatMap(branchTargets);
  const wide = step.inheritHandlers ? handlers.on[step.command.name] : undefined;
  if (wide) out.push(...[...Object.values(wide.exact), ...wide.patterns.map((p) => p.branch)].flatMap(branchTargets));
  if (!on.error && step.command.name !== 'hangup') out.push(...branchTargets(handlers.error));
  return [...new Set(out)];
}

/** A step as written: its id and its entry in the file (the targets written inside it are its). */
export interface StepNode {
  id: string;
  entry: YEntry;
}

/**
 * UNREACHABLE_STEP on a flow that has other errors, so that a change with several errors
 * shows its unreachable steps at once. The graph is what can be known: the edges of the
 * steps that checked; for a step with errors (absent from `steps`), every step id written
 * inside it and every flow-wide handler target (it may go to any of them); and for a
 * target that names no step, the step its did-you-mean names, or without one every step
 * nothing names (a typo is not also an unreachable step). A step is reported only when no
 * way at all can lead to it.
 */
export function checkReachable(
  ctx: Ctx,
  steps: Record<string, Step>,
  written: StepNode[],
  start: string,
  handlers: Handlers,
): void {
  const order = written.map((w) => w.id);
  const known = new Set(order);
  if (!known.has(start)) return;
  const next = new Map<string, Set<string>>(order.map((id) => [id, new Set<string>()]));
  for (const [id, s] of Object.entries(steps)) for (const t of successors(s, handlers)) next.get(id)?.add(t);
  // a set step's error way (an assignment that fails): handlers.error
  for (const [id, s] of Object.entries(steps))
    if (s.kind === 'set') for (const t of branchTargets(handlers.error)) next.get(id)?.add(t);
  const wide = [
    ...Object.values(handlers.on).flatMap((h) =>
      h ? [...Object.values(h.exact), ...h.patterns.map((p) => p.branch)] : [],
    ),
    handlers.error,
  ].flatMap(branchTargets);
  for (const w of written) {
    if (steps[w.id]) continue;
    for (const t of wide) next.get(w.id)!.add(t);
    for (const t of namesIn(w.entry.value, known)) next.get(w.id)!.add(t);
  }
  // the step each target is written in: steps are in file order, so a binary search on their start
  const ownerOf = (at: YNode): StepNode | undefined => {
    let lo = 0;
    let hi = written.length - 1;
    let found: StepNode | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (before(written[mid]!.entry.keyNode.pos, at.pos)) {
        found = written[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found && before(at.pos, found.entry.value.end) ? found : undefined;
  };
  // a target naming no step may have meant any step nothing names (an orphan), when no did-you-mean says which
  const named = new Set(ctx.targets.map((t) => t.id));
  const orphans = order.filter((id) => !named.has(id) && id !== start);
  const guesses = new Map<string, string[]>();
  for (const t of ctx.targets) {
    const owner = ownerOf(t.at);
    if (!owner) continue; // start:, handlers: roots and flow-wide targets are counted above
    let to = [t.id];
    if (!known.has(t.id)) {
      if (!guesses.has(t.id)) {
        const guess = closest(t.id, order, ctx.suggest);
        guesses.set(t.id, guess !== undefined ? [guess] : orphans);
      }
      to = guesses.get(t.id)!;
    }
    if (!steps[owner.id] || !known.has(t.id)) for (const x of to) next.get(owner.id)!.add(x);
  }
  const roots = [start, ...(handlers.hangup && known.has(handlers.hangup) ? [handlers.hangup] : [])];
  const reached = new Set<string>(roots);
  const queue = [...roots];
  for (let i = 0; i < queue.length; i++)
    for (const t of next.get(queue[i]!) ?? [])
      if (known.has(t) && !reached.has(t)) {
        reached.add(t);
        queue.push(t);
      }
  for (const w of written) {
    if (reached.has(w.id)) continue;
    const s = steps[w.id];
    report(
      ctx,
      'UNREACHABLE_STEP',
      s ? loc(s) : w.entry,
      `step '${w.id}' is never reached from start '${start}'${handlers.hangup ? ' or the hangup handler' : ''}`,
    );
  }
}

/** Every string value inside `node` that is a step id: where a step with errors may lead. */
function namesIn(node: YNode, ids: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const todo: YNode[] = [node];
  while (todo.length) {
    const n = todo.pop()!;
    if (n.kind === 'scalar') {
      if (typeof n.value === 'string' && ids.has(n.value)) out.push(n.value);
    } else if (n.kind === 'seq') todo.push(...n.items);
    else for (const e of n.entries) todo.push(e.value);
  }
  return out;
}

function before(a: Loc, b: Loc): boolean {
  return a.line < b.line || (a.line === b.line && a.col <= b.col);
}

/** Whether the call can end at this step: hangup, a bridged dialout, or a result with nowhere to go. */
export function canEndHere(step: Step, handlers: Handlers): boolean {
  if (step.kind === 'set' || step.kind === 'loop') return step.next === undefined;
  if (step.kind === 'switch') return step.default === undefined;
  // a return ends the module; a subflow may end the call inside its module, and results it does not handle end it
  if (step.kind === 'subflow' || step.kind === 'return') return true;
  const name = step.command.name;
  if (name === 'hangup' || name === 'dialout') return true;
  if (step.on.default) return false;
  const kind = ACTION_SPECS[name].results.kind;
  if (kind === 'none' || kind === 'any') return true;
  return unhandledResults(name, step.command, step.on, step.inheritHandlers ? handlers.on[name] : undefined) !== null;
}

function loc(step: Step): Loc {
  return { line: step.pos.line, col: step.pos.column };
}

export interface GraphInput {
  steps: Record<string, Step>;
  /** Step ids in file order. */
  order: string[];
  start: string;
  handlers: Handlers;
  /** Where handlers.hangup is written, for HANDLER_COMMAND. */
  hangupAt?: YNode;
}

export function checkGraph(ctx: Ctx, g: GraphInput): void {
  const { steps, order, handlers } = g;
  const rank = new Map(order.map((id, i) => [id, i]));
  const byRank = (a: string, b: string) => rank.get(a)! - rank.get(b)!;
  const next = new Map(order.map((id) => [id, successors(steps[id]!, handlers).filter((t) => t in steps)]));
  const roots = [g.start, ...(handlers.hangup ? [handlers.hangup] : [])].filter((r) => r in steps);
  // each loop's body: its ways back to the loop take the next item (bounded by the list and max:)
  const bodies = checkLoopGraph(ctx, steps, roots, (id) => next.get(id) ?? []);

  // reachable from start and the hangup handler; a set step may also take its error way (handlers.error), which
  // counts for reaching steps only (a failure is no way the checker requires a flow to end by, or loop on)
  const errorWay = branchTargets(handlers.error).filter((t) => t in steps);
  const reached = new Set<string>(roots);
  const queue = [...roots];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const t of steps[id]!.kind === 'set' ? [...next.get(id)!, ...errorWay] : next.get(id)!)
      if (!reached.has(t)) {
        reached.add(t);
        queue.push(t);
      }
  }
  for (const id of order) {
    if (!reached.has(id))
      report(
        ctx,
        'UNREACHABLE_STEP',
        loc(steps[id]!),
        `step '${id}' is never reached from start '${g.start}'${handlers.hangup ? ' or the hangup handler' : ''}`,
      );
  }

  // steps from which the end can be reached (backwards from the ends)
  const prev = new Map<string, string[]>(order.map((id) => [id, []]));
  for (const [from, tos] of next) for (const t of tos) prev.get(t)!.push(from);
  const ends = new Set(order.filter((id) => canEndHere(steps[id]!, handlers)));
  const back = [...ends];
  for (let i = 0; i < back.length; i++)
    for (const p of prev.get(back[i]!)!)
      if (!ends.has(p)) {
        ends.add(p);
        back.push(p);
      }
  // what a trapped step leads to is trapped too (else it could reach an end through it)
  const trapped = order.filter((id) => reached.has(id) && !ends.has(id));
  const trappedSet = new Set(trapped);
  const leadsTo = trapped.length
    ? firstReachable(trapped, (id) => next.get(id)!, byRank, 7)
    : new Map<string, string[]>();
  for (const id of trapped) {
    // reported where the trap is entered: a root, or a step reached from outside the trap
    if (!roots.includes(id) && !prev.get(id)!.some((p) => reached.has(p) && !trappedSet.has(p))) continue;
    const loop = leadsTo.get(id)!.filter((o) => o !== id);
    const via = loop.length
      ? ` (it only leads to ${loop
          .slice(0, 5)
          .map((o) => `'${o}'`)
          .join(', ')}${loop.length > 5 ? ', ...' : ''})`
      : '';
    report(
      ctx,
      'NO_PATH_TO_END',
      loc(steps[id]!),
      `step '${id}' can never reach the end of the call: every way out of it loops back${via}`,
    );
  }

  // loops made only of logic steps (a foreach's ways back from its body take its next item: not one of them), and
  // of a queue step's ways out taken without a command (empty, error: at its first poll, with no say)
  const logic = (id: string) => isLogic(steps[id]!) || (steps[id]!.kind === 'command' && !!steps[id]!.queue);
  const logicNext = (id: string) =>
    queueInstantWays(steps[id]!, handlers, next.get(id)!).filter((t) => logic(t) && !bodies.get(t)?.has(id));
  for (const scc of sccs(order.filter(logic), logicNext)) {
    const self = scc.length === 1 && logicNext(scc[0]!).includes(scc[0]!);
    if (scc.length < 2 && !self) continue;
    const names = [...scc].sort(byRank);
    const path = [...names, names[0]].map((n) => `'${n}'`).join(' -> ');
    const queue = names.find((n) => !isLogic(steps[n]!));
    report(
      ctx,
      'EVENTLESS_LOOP',
      loc(steps[names[0]!]!),
      queue
        ? `steps ${path} can loop without issuing a command: queue '${queue}' answers empty (or error) at once ` +
            `when no agent can take the call (or the store fails)`
        : `logic steps ${path} loop without issuing a command`,
      queue
        ? `Play something on the way back (empty: { goto: ${queue}, say: ... }, a wait step), or end the call ` +
            `there (a message, voicemail).`
        : undefined,
    );
  }

  // the hangup handler runs logic steps only
  const h = handlers.hangup;
  if (h && h in steps && g.hangupAt) {
    if (!isLogic(steps[h]!)) {
      const s = steps[h]!;
      const what = s.kind === 'command' ? s.command.name : s.kind;
      const hint =
        what === 'hangup'
          ? `The call is already hung up when the handler runs: remove handlers.hangup, or point it at a set ` +
            `step (e.g. one that logs how the call ended).`
          : `Nothing can be played or sent to the call once it is over: point handlers.hangup at a set, switch ` +
            `or when step.`;
      report(
        ctx,
        'HANDLER_COMMAND',
        g.hangupAt,
        `the hangup handler '${h}' is a ${what} step; it must be a logic step (set, switch, when)`,
        hint,
      );
    } else {
      // breadth first from the handler through logic steps; a path is rebuilt only when reported
      const from = new Map<string, string>([[h, '']]);
      const q = [h];
      for (let i = 0; i < q.length; i++) {
        const id = q[i]!;
        for (const t of next.get(id)!) {
          if (from.has(t)) continue;
          from.set(t, id);
          const s = steps[t]!;
          if (!isLogic(s)) {
            report(
              ctx,
              'HANDLER_COMMAND',
              g.hangupAt,
              `the hangup handler leads to command step '${t}' (${pathTo(from, t)}); the call is over when it runs`,
              handlerExitHint(steps[id]!, s),
            );
          } else q.push(t);
        }
      }
    }
  }
  checkBridged(ctx, steps, next);
}

/**
 * HANDLER_COMMAND at a queue step's `bridged:` that is, or leads to, a command step: bridged is taken once the call
 * has ended (as the hangup handler, which it stands in for), so only logic steps run there.
 */
function checkBridged(ctx: Ctx, steps: Record<string, Step>, next: ReadonlyMap<string, string[]>): void {
  for (const q of Object.values(steps)) {
    const b = q.kind === 'command' && q.queue ? q.on.exact.bridged : undefined;
    if (!b?.goto || !(b.goto in steps)) continue;
    const at = { line: b.pos.line, col: b.pos.column };
    const hint =
      `bridged is taken once the call has ended (the caller or the agent hung up), instead of handlers.hangup: ` +
      `lead it to logic steps only (set, switch, when, sms, http).`;
    if (!isLogic(steps[b.goto]!)) {
      report(
        ctx,
        'HANDLER_COMMAND',
        at,
        `queue '${q.id}': bridged goes to command step '${b.goto}'; the call is over when it runs`,
        hint,
      );
      continue;
    }
    const from = new Map<string, string>([[b.goto, '']]);
    const todo = [b.goto];
    for (let i = 0; i < todo.length; i++) {
      for (const t of next.get(todo[i]!) ?? []) {
        if (from.has(t)) continue;
        from.set(t, todo[i]!);
        if (isLogic(steps[t]!)) todo.push(t);
        else {
          report(
            ctx,
            'HANDLER_COMMAND',
            at,
            `queue '${q.id}': bridged leads to command step '${t}' (${pathTo(from, t)}); the call is over when ` +
              `it runs`,
            hint,
          );
          todo.length = 0;
          break;
        }
      }
    }
  }
}

/** The ways out of a step that may be taken within the request (a queue's: empty and error without a say). */
function queueInstantWays(step: Step, handlers: Handlers, all: string[]): string[] {
  if (step.kind !== 'command' || !step.queue) return all;
  const ways = [step.on.exact.empty, step.on.error ?? handlers.error];
  return ways.filter((b) => b?.goto !== undefined && !b.say?.length).map((b) => b!.goto!);
}

/** "h -> a -> b -> t" from the breadth-first parents; a long path shows its first and last steps. */
function pathTo(from: ReadonlyMap<string, string>, to: string): string {
  const path = [to];
  for (let p = from.get(to); p; p = from.get(p)) path.push(p);
  path.reverse();
  return (path.length > 10 ? [...path.slice(0, 4), '...', ...path.slice(-4)] : path).join(' -> ');
}

/**
 * For each node, the first `k` nodes (by `order`) that it reaches through one or more
 * edges, itself included when it is on a cycle, or merely in its strongly connected
 * component: callers drop it. Linear in the graph (times k), whatever the number of nodes
 * asked about: components are visited once, each taking the k first of those it leads to.
 */
function firstReachable(
  nodes: string[],
  edges: (id: string) => string[],
  order: (a: string, b: string) => number,
  k: number,
): Map<string, string[]> {
  const compOf = new Map<string, number>();
  const firsts: string[][] = [];
  // Tarjan yields a component after every component it leads to
  for (const comp of sccs(nodes, edges)) {
    const c = firsts.length;
    for (const id of comp) compOf.set(id, c);
    const acc = new Set<string>(comp);
    for (const id of comp)
      for (const t of edges(id)) if (compOf.get(t) !== c) for (const x of firsts[compOf.get(t)!]!) acc.add(x);
    firsts.push([...acc].sort(order).slice(0, k));
  }
  return new Map(nodes.map((id) => [id, firsts[compOf.get(id)!]!]));
}

/** What to do when logic step `from` of the hangup handler leads to command step `to`. */
function handlerExitHint(from: Step, to: Step): string {
  const hangup = to.kind === 'command' && to.command.name === 'hangup';
  const viaNext =
    from.kind === 'set' ? from.next === to.id : from.kind === 'command' && from.on.default?.goto === to.id;
  if (viaNext) {
    return hangup
      ? `Drop \`next: ${to.id}\` from '${from.id}': without next, the handler ends the flow by itself (the ` +
          `call is already hung up).`
      : `Drop \`next: ${to.id}\` from '${from.id}' (without next, the handler ends there): nothing can be ` +
          `played once the call is over.`;
  }
  const end = hangup
    ? 'the handler ends the flow by itself when it reaches a set step without next'
    : 'nothing can be played once the call is over';
  return `Make '${from.id}' lead to logic steps only (set, switch, when, sms): ${end}.`;
}

/**
 * Logic steps issue no call command: set, switch/when, return, and effects such as sms. A
 * subflow is not one: the module it enters may issue commands (a loop through it is no
 * eventless loop; the request's logic-step budget bounds one that is), and a hangup
 * handler may not enter a module.
 */
function isLogic(step: Step): boolean {
  if (step.kind === 'subflow') return false;
  // a queue is an effect that issues commands (hold media, announcements, the ring)
  return step.kind !== 'command' || (isEffect(step.command.name) && !step.queue);
}
