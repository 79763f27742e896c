/**
 * The transitions of a flow: the one definition that coverage (`callscript test
 * --coverage`), `paths` and `graph --coverage` share.
 *
 * A transition is a coverage key that a transition of the flow's compiled xstate machine
 * names in its `took` action (src/flow/machine-config.ts), so what is listed is exactly
 * what the machine can report when it runs:
 * - command (and sms) steps: `<step>:<key>` for each key of the step's own `on:` (an exact
 *   result, a pattern as written, `default` (also `next:`), `error`), and
 *   `<step>:<key>:then` for a branch with `retry` (its retries used up);
 * - flow-wide handlers, once per flow: `handlers.on.<command>:<key>` and `handlers:error`,
 *   taken at any step that inherits them (a handler no step inherits is no transition);
 * - switch steps (and `when`): `<step>:case1`, `case2`... in order, and `<step>:default`
 *   (the `else`, or the end of the flow when none is written);
 * - set steps: `<step>:next`;
 * - foreach steps: `<step>:do` (the first item into the body), `<step>:next` (each next item),
 *   `<step>:done` (the list is over) and, with `error:`, `<step>:error`;
 * - queue steps (version 2): `<step>:ring`, `:wait`, `:announce` (with `announce:`), `:held`, `:noanswer` (the
 *   waiting loop), its branches (`:timeout`, `:empty`, `:error`), then `:bridged` and `:abandoned` (the call ends
 *   while bridged or ringing, while waiting).
 * A result or error a step has no branch for ends the flow through the machine's catch-all:
 * no transition (nothing of the flow's is taken).
 */
import type { CompiledFlow } from '../engine/compile.js';
import { END_STATE, EV_ERROR, EV_RESULT, type MachineConfig, type TransitionConfig } from '../flow/machine-config.js';
import type { FlowModel, Pos, Step } from '../flow/model.js';
import { nextStateName } from '../flow/loops.js';
import { dest, stateStep, tookKeys } from './machine-read.js';
import { queueEdges, queueEndKeys, queueKeys } from './queue-edges.js';

export { stateStep, tookKeys } from './machine-read.js';

/** Every coverage key the machine can report. */
function machineKeys(config: MachineConfig): Set<string> {
  const keys = new Set<string>();
  for (const sc of Object.values(config.states)) {
    const lists = [...Object.values(sc.on ?? {}), sc.always ?? []];
    for (const list of lists) for (const t of list) for (const k of tookKeys(t)) keys.add(k);
  }
  return keys;
}

/** Where each key is written, in flow order: the steps' own keys, then the flow-wide handlers'. */
function writtenKeys(model: FlowModel): Map<string, Pos> {
  const pos = new Map<string, Pos>();
  const add = (k: string, p: Pos) => {
    if (!pos.has(k)) pos.set(k, p);
  };
  const branch = (owner: string, key: string, b: { retry?: number; pos: Pos }) => {
    add(`${owner}:${key}`, b.pos);
    if (b.retry !== undefined) add(`${owner}:${key}:then`, b.pos);
  };
  for (const [id, s] of Object.entries(model.steps)) stepKeys(id, s, branch, add);
  for (const [cmd, h] of Object.entries(model.handlers.on)) {
    if (!h) continue;
    for (const [k, b] of Object.entries(h.exact)) branch(`handlers.on.${cmd}`, k, b);
    for (const p of h.patterns) branch(`handlers.on.${cmd}`, p.source, p.branch);
  }
  if (model.handlers.error) branch('handlers', 'error', model.handlers.error);
  for (const [ns, m] of Object.entries(model.modules ?? {})) {
    for (const [cmd, h] of Object.entries(m.handlers.on)) {
      if (!h) continue;
      for (const [k, b] of Object.entries(h.exact)) branch(`${ns}handlers.on.${cmd}`, k, b);
      for (const p of h.patterns) branch(`${ns}handlers.on.${cmd}`, p.source, p.branch);
    }
    if (m.handlers.error) branch(`${ns}handlers`, 'error', m.handlers.error);
  }
  return pos;
}

type BranchAdd = (owner: string, key: string, b: { retry?: number; pos: Pos }) => void;

function stepKeys(id: string, s: Step, branch: BranchAdd, add: (k: string, p: Pos) => void): void {
  switch (s.kind) {
    case 'command':
      if (s.queue) queueKeys(id, s.pos, add);
      for (const [k, b] of Object.entries(s.on.exact)) branch(id, k, b);
      for (const p of s.on.patterns) branch(id, p.source, p.branch);
      if (s.on.default) branch(id, 'default', s.on.default);
      if (s.on.error) branch(id, 'error', s.on.error);
      if (s.valid) branch(id, 'invalid', { pos: s.valid.pos, retry: (s.valid.else ?? s.on.default)?.retry });
      if (s.queue) queueEndKeys(id, s.pos, add);
      break;
    case 'switch':
      s.cases.forEach((c, i) => add(`${id}:${s.calendar?.labels[i] ?? `case${i + 1}`}`, c.pos));
      add(`${id}:${s.calendar?.otherwise ?? 'default'}`, s.pos);
      break;
    case 'set':
      add(`${id}:next`, s.pos);
      break;
    case 'subflow':
      for (const k of Object.keys(s.on)) add(`${id}:${k}`, s.onPos[k]!);
      add(`${id}:default`, s.pos);
      break;
    case 'return':
      add(`${id}:return`, s.pos);
      break;
    case 'loop':
      add(`${id}:do`, s.doPos);
      add(`${id}:next`, s.doPos);
      add(`${id}:done`, s.nextPos ?? s.pos);
      if (s.error !== undefined) add(`${id}:error`, s.errorPos ?? s.pos);
      break;
  }
}

export interface FlowTransitions {
  /** Every transition, in flow order (steps in order, then the flow-wide handlers). */
  all: string[];
  /** Where each is written in the flow file. */
  pos: Map<string, Pos>;
}

/** The transitions of a compiled flow (see the module comment). */
export function flowTransitions(flow: CompiledFlow): FlowTransitions {
  const inMachine = machineKeys(flow.config);
  const written = writtenKeys(flow.model);
  const all = [...written.keys()].filter((k) => inMachine.has(k));
  for (const k of inMachine) if (!written.has(k)) all.push(k);
  const pos = new Map<string, Pos>();
  for (const k of all) {
    const p = written.get(k);
    if (p) pos.set(k, p);
  }
  return { all, pos };
}

// ---- the transition graph -------------------------------------------------------------------

export type EdgeKind =
  | 'key'
  | 'retry'
  | 'then'
  | 'case'
  | 'switch-default'
  | 'next'
  | 'unhandled'
  | 'status'
  | 'enter'
  | 'return'
  | 'loop'
  /** A queue step's waiting loop and its ways out when the call ends (queue-edges.ts). */
  | 'queue';

export interface FlowEdge {
  /** The transition this edge takes (a coverage key); for `unhandled` and `status` edges, a label (no transition). */
  id: string;
  kind: EdgeKind;
  from: string;
  /** A step id or END_STATE (`@end`). */
  to: string;
  /** The branch key (command edges). */
  key?: string;
  /** Retries allowed (retry / then edges). */
  retry?: number;
  /** A branch `say:` plays before going on. */
  say?: boolean;
  /** Edge comes from the flow-wide handlers (handlers.on / handlers.error). */
  flowWide?: boolean;
  /** The CEL condition that must hold (a case), or the cases that must not (a switch default). */
  condition?: string;
}

/** Kinds that take a transition. */
export const COVERABLE: ReadonlySet<EdgeKind> = new Set<EdgeKind>([
  'key',
  'retry',
  'then',
  'case',
  'switch-default',
  'next',
  'return',
  'loop',
  'queue',
]);

/** The label of a foreach transition, by its coverage key's last part. */
const LOOP_LABELS: Record<string, string> = { do: 'each item', next: 'next item', done: 'done', error: 'not a list' };

/**
 * Every edge of the flow's transition graph, read from its machine config: the states'
 * `always` lists (set and switch steps) and `result` and `error` lists (command steps);
 * `unhandled` edges for the machine's catch-all (a result or error with no branch ends the
 * flow), `status` edges to the hangup handler.
 */
export function flowEdges(flow: CompiledFlow): FlowEdge[] {
  const edges: FlowEdge[] = [];
  const handler = flow.model.handlers.hangup;
  const loopEdges = new Set<string>();
  for (const [id, sc] of Object.entries(flow.config.states)) {
    const meta = sc.meta;
    const step = flow.model.steps[id];
    if (meta.kind === 'logic' && meta.loop) {
      // a foreach's two states (`<step>`, `<step>@next`): one set of edges from the step, the first item's first
      if (meta.loop !== 'start') continue;
      const both = [...(sc.always ?? []), ...(flow.config.states[nextStateName(meta.step)]?.always ?? [])];
      for (const t of both) {
        if (t.guard?.type === 'budget') continue;
        const cover = tookKeys(t)[0] ?? '';
        const d = dest(flow, t.target);
        const sig = `${cover}|${d.to}`;
        if (loopEdges.has(sig)) continue;
        loopEdges.add(sig);
        const key = LOOP_LABELS[cover.slice(cover.lastIndexOf(':') + 1)] ?? cover;
        edges.push({ id: cover, kind: 'loop', from: meta.step, to: d.to, key, ...(d.say ? { say: true } : {}) });
      }
      continue;
    }
    if (meta.kind === 'logic' && step) {
      const cases = step.kind === 'switch' ? step.cases : [];
      for (const t of sc.always ?? []) {
        // the bounds, and a set's failure (its error way: handlers.error), are not drawn
        if (t.guard?.type === 'budget' || t.guard?.type === 'setFails' || t.guard?.params?.full) continue;
        const cover = tookKeys(t)[0] ?? '';
        if (step.kind === 'subflow')
          edges.push({ id: `${id}:enter`, kind: 'enter', from: id, to: t.target, key: `enter ${step.flow}` });
        else if (step.kind === 'return')
          edges.push({
            id: cover,
            kind: 'return',
            from: id,
            to: stateStep(flow, t.target),
            key: t.guard ? `${step.result} (back to ${String(t.guard.params?.site)})` : `${step.result} (no caller)`,
          });
        else if (step.kind === 'set') edges.push({ id: cover, kind: 'next', from: id, to: stateStep(flow, t.target) });
        else if (t.guard?.type === 'when') {
          const i = Number(t.guard.params?.i);
          edges.push({
            id: cover,
            kind: 'case',
            from: id,
            to: stateStep(flow, t.target),
            condition: cases[i]?.when ?? 'true',
          });
        } else {
          const not = cases.map((c) => `!(${c.when})`).join(' && ');
          edges.push({
            id: cover,
            kind: 'switch-default',
            from: id,
            to: stateStep(flow, t.target),
            condition: not || 'true',
          });
        }
      }
      continue;
    }
    // an http step's `<id>@wait` state repeats the step's branches: its edges are the step's
    if (meta.kind !== 'command' || meta.final || !step) continue;
    if (step.kind === 'command' && step.queue) {
      // the waiting loop and its parts' states (queue-edges.ts)
      edges.push(...queueEdges(flow, id));
      if (handler !== undefined) edges.push({ id: `${id}:hangup`, kind: 'status', from: id, to: handler });
      continue;
    }
    const regexKey = new Map(meta.keys.filter((k) => k.regex !== undefined).map((k) => [k.regex!, k.key]));
    const lists: [string, TransitionConfig[]][] = [
      ['default', sc.on?.[EV_RESULT] ?? []],
      ['error', sc.on?.[EV_ERROR] ?? []],
    ];
    for (const [fallback, list] of lists) {
      for (const t of list) {
        const cover = tookKeys(t);
        const p = t.guard?.params ?? {};
        const key =
          typeof p.invalid === 'string'
            ? 'invalid'
            : p.ok === true
              ? 'ok'
              : p.err === 'TIMEOUT'
                ? 'timeout'
                : typeof p.exact === 'string'
                  ? p.exact
                  : typeof p.re === 'string'
                    ? (regexKey.get(p.re) ?? p.re)
                    : fallback;
        if (cover.length === 0) {
          // `save:` with no default: the result is kept, then the flow ends.
          edges.push({ id: `${id}:${key}`, kind: 'unhandled', from: id, to: END_STATE, key });
          continue;
        }
        const d = dest(flow, t.target);
        const extra = {
          key,
          ...(d.say ? { say: true } : {}),
          ...(cover[0]!.startsWith('handlers') ? { flowWide: true } : {}),
        };
        if (typeof p.max === 'number')
          edges.push({ id: cover[0]!, kind: 'retry', from: id, to: id, retry: p.max, ...extra });
        else if (cover.length > 1) {
          const retry = list.find(
            (x) => x !== t && tookKeys(x)[0] === cover[0] && typeof x.guard?.params?.max === 'number',
          )?.guard?.params?.max as number | undefined;
          edges.push({
            id: cover[1]!,
            kind: 'then',
            from: id,
            to: d.to,
            ...(retry !== undefined ? { retry } : {}),
            ...extra,
          });
        } else edges.push({ id: cover[0]!, kind: 'key', from: id, to: d.to, ...extra });
      }
      // No default (or error) transition of the step's own: the flow's catch-all ends it.
      if (!list.some((t) => !t.guard))
        edges.push({ id: `${id}:${fallback}`, kind: 'unhandled', from: id, to: END_STATE, key: fallback });
    }
    if (handler !== undefined) edges.push({ id: `${id}:hangup`, kind: 'status', from: id, to: handler });
  }
  return edges;
}

/** The states the machine can ever enter from its start, ignoring guards (steps and say states). */
export function reachableStates(flow: CompiledFlow): Set<string> {
  const seen = new Set<string>([flow.config.initial]);
  const handler = flow.model.handlers.hangup;
  if (handler !== undefined) seen.add(handler);
  const queue = [...seen];
  while (queue.length > 0) {
    const s = flow.config.states[queue.shift()!];
    if (!s) continue;
    const lists = [...Object.values(s.on ?? {}), s.always ?? []];
    for (const list of lists) {
      for (const t of list) {
        if (!seen.has(t.target)) {
          seen.add(t.target);
          queue.push(t.target);
        }
      }
    }
  }
  return seen;
}
