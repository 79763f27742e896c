/**
 * Flow coverage of `callscript test --coverage` (docs/testing.md "Coverage"): which steps
 * ran and which result transitions were taken.
 *
 * The engine (src/engine) has no trace hook, so coverage is observed from outside:
 * `instrument` gives a copy of a compiled flow (same name and version) whose runtime
 * program is made of wrappers around the original steps and branches, with getters on
 * the fields the step loop (src/engine/run.ts) reads exactly when it takes a decision:
 * - a branch without retry: its `goto` (read once by takeBranch);
 * - a branch with retry: its `retry` (the key fired; read twice per decision), its
 *   `then` (retries used up);
 * - a switch case: its `goto` (read only when its condition held), the switch's
 *   `default` (read only when no case held), the switch's `cases` (the step ran);
 * - a set step: its `next` (the step ran);
 * - a command step: its builder's `build` (the step was entered).
 */
import type { CompiledFlow } from '../flow/compile.js';
import type { FlowModel, Pos, Step } from '../flow/model.js';
import type { PBranch, PCommand, PPattern, PSet, PStep, PSwitch, Program } from '../engine/program.js';

/** The raw data, also written by `--coverage-json` (read by `callscript graph --coverage`). */
export interface CoverageData {
  flows: Record<string, FlowCoverageData>;
}

export interface FlowCoverageData {
  /** Times each step ran, for every step of the flow (0: never). */
  steps: Record<string, number>;
  /** Times each transition was taken, by "<step>:<key>"; every one of `all` is present. */
  transitions: Record<string, number>;
  /** Every transition of the flow, in step order. */
  all: string[];
}

/** Where a transition or step is written, for the report. */
interface FlowInfo {
  file: string;
  stepPos: Map<string, Pos>;
  transPos: Map<string, Pos>;
}

/**
 * The transitions of a flow, by "<step>:<key>":
 * - command (and sms) steps: each key of the step's own `on:` (an exact result, a
 *   pattern as written, `default` (also `next:`), `error`), and `<key>:then` for a branch
 *   with `retry` (its retries used up);
 * - flow-wide handlers, once per flow: `handlers.on.<command>:<key>` and `handlers:error`
 *   (taken at any step that inherits them);
 * - switch steps (and `when`): `case1`, `case2`... in order, and `default` (the `else`,
 *   or the end of the flow when none is written);
 * - set steps: `next`.
 */
export function flowTransitions(model: FlowModel): { all: string[]; pos: Map<string, Pos> } {
  const all: string[] = [];
  const pos = new Map<string, Pos>();
  const add = (k: string, p: Pos) => {
    if (pos.has(k)) return;
    all.push(k);
    pos.set(k, p);
  };
  for (const [id, s] of Object.entries(model.steps)) transitionsOf(id, s, add);
  for (const [cmd, h] of Object.entries(model.handlers.on)) {
    if (!h) continue;
    for (const [k, b] of Object.entries(h.exact)) addBranch(`handlers.on.${cmd}`, k, b, add);
    for (const p of h.patterns) addBranch(`handlers.on.${cmd}`, p.source, p.branch, add);
  }
  if (model.handlers.error) addBranch('handlers', 'error', model.handlers.error, add);
  return { all, pos };
}

function addBranch(owner: string, key: string, b: { retry?: number; pos: Pos }, add: (k: string, p: Pos) => void): void {
  add(`${owner}:${key}`, b.pos);
  if (b.retry !== undefined) add(`${owner}:${key}:then`, b.pos);
}

function transitionsOf(id: string, s: Step, add: (k: string, p: Pos) => void): void {
  switch (s.kind) {
    case 'command':
      for (const [k, b] of Object.entries(s.on.exact)) addBranch(id, k, b, add);
      for (const p of s.on.patterns) addBranch(id, p.source, p.branch, add);
      if (s.on.default) addBranch(id, 'default', s.on.default, add);
      if (s.on.error) addBranch(id, 'error', s.on.error, add);
      break;
    case 'switch':
      s.cases.forEach((c, i) => add(`${id}:case${i + 1}`, c.pos));
      add(`${id}:default`, s.pos);
      break;
    case 'set':
      add(`${id}:next`, s.pos);
      break;
  }
}

/** Collects coverage over any number of runs, per flow. */
export class Coverage {
  readonly data: CoverageData = { flows: {} };
  private readonly info = new Map<string, FlowInfo>();
  private readonly instrumented = new WeakMap<CompiledFlow, CompiledFlow>();

  /** Registers a flow (every step and transition at 0); idempotent per name. */
  register(flow: CompiledFlow): FlowCoverageData {
    let d = this.data.flows[flow.name];
    if (d) return d;
    const { all, pos } = flowTransitions(flow.model);
    d = { steps: {}, transitions: {}, all };
    for (const id of Object.keys(flow.model.steps)) d.steps[id] = 0;
    for (const k of all) d.transitions[k] = 0;
    this.data.flows[flow.name] = d;
    const stepPos = new Map<string, Pos>();
    for (const [id, s] of Object.entries(flow.model.steps)) stepPos.set(id, s.pos);
    this.info.set(flow.name, { file: flow.model.file, stepPos, transPos: pos });
    return d;
  }

  /** The flow to run instead of `flow` to record its coverage here. */
  instrument(flow: CompiledFlow): CompiledFlow {
    const done = this.instrumented.get(flow);
    if (done) return done;
    const d = this.register(flow);
    const out = { ...flow, program: instrumentProgram(flow, d) };
    this.instrumented.set(flow, out);
    return out;
  }

  report(): FlowReport[] {
    return Object.entries(this.data.flows)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, d]) => flowReport(name, d, this.info.get(name)));
  }
}

export interface FlowReport {
  flow: string;
  file: string;
  steps: { covered: number; total: number; percent: number };
  transitions: { covered: number; total: number; percent: number };
  missedSteps: { id: string; pos?: Pos }[];
  missedTransitions: { key: string; pos?: Pos }[];
}

const pct = (covered: number, total: number) => (total === 0 ? 100 : Math.floor((covered / total) * 1000) / 10);

function flowReport(name: string, d: FlowCoverageData, info: FlowInfo | undefined): FlowReport {
  const stepIds = Object.keys(d.steps);
  const missedSteps = stepIds.filter((id) => d.steps[id] === 0).map((id) => ({ id, pos: info?.stepPos.get(id) }));
  const missedTransitions = d.all.filter((k) => !d.transitions[k]).map((key) => ({ key, pos: info?.transPos.get(key) }));
  const sc = stepIds.length - missedSteps.length;
  const tc = d.all.length - missedTransitions.length;
  return {
    flow: name,
    file: info?.file ?? '',
    steps: { covered: sc, total: stepIds.length, percent: pct(sc, stepIds.length) },
    transitions: { covered: tc, total: d.all.length, percent: pct(tc, d.all.length) },
    missedSteps,
    missedTransitions,
  };
}

/** The coverage report as text lines. */
export function formatCoverage(reports: FlowReport[]): string[] {
  const lines: string[] = ['', 'Coverage:'];
  for (const r of reports) {
    lines.push(
      `  ${r.flow} (${r.file}): steps ${r.steps.percent}% (${r.steps.covered}/${r.steps.total}), transitions ${r.transitions.percent}% (${r.transitions.covered}/${r.transitions.total})`,
    );
    for (const s of r.missedSteps) lines.push(`    step never run: ${s.id}${s.pos ? ` (${s.pos.file}:${s.pos.line})` : ''}`);
    for (const t of r.missedTransitions) lines.push(`    transition never taken: ${t.key}${t.pos ? ` (${t.pos.file}:${t.pos.line})` : ''}`);
  }
  return lines;
}

/** Percent of all transitions (of every flow covered) taken. */
export function totalTransitionPercent(reports: FlowReport[]): number {
  let c = 0;
  let t = 0;
  for (const r of reports) {
    c += r.transitions.covered;
    t += r.transitions.total;
  }
  return pct(c, t);
}

// ---- instrumentation ------------------------------------------------------------------------

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

function wrapBranch(b: PBranch, key: string, d: FlowCoverageData): PBranch {
  const w = { key: b.key } as PBranch;
  if (b.say) w.say = b.say;
  if (b.retry !== undefined) {
    const retry = b.retry;
    const then = b.then;
    // takeBranch reads `retry` twice per decision (`!== undefined`, then `used < retry`):
    // count the first read of each pair.
    let odd = false;
    Object.defineProperty(w, 'retry', {
      enumerable: true,
      get: () => {
        odd = !odd;
        if (odd) bump(d.transitions, key);
        return retry;
      },
    });
    Object.defineProperty(w, 'then', { enumerable: true, get: () => (bump(d.transitions, `${key}:then`), then) });
  } else {
    const goto = b.goto;
    Object.defineProperty(w, 'goto', { enumerable: true, get: () => (bump(d.transitions, key), goto) });
  }
  return w;
}

function wrapCommand(s: PCommand, model: FlowModel, d: FlowCoverageData): PCommand {
  const own = (k: string) => `${s.id}:${k}`;
  const inherited = (k: string) => `handlers.on.${s.command}:${k}`;
  const exact = new Map<string, PBranch>();
  for (const [k, b] of s.exact) exact.set(k, wrapBranch(b, own(k), d));
  const inheritedExact = new Map<string, PBranch>();
  for (const [k, b] of s.inheritedExact) inheritedExact.set(k, wrapBranch(b, inherited(k), d));
  const pats = (list: PPattern[], name: (k: string) => string) => list.map((p) => ({ key: p.key, re: p.re, branch: wrapBranch(p.branch, name(p.key), d) }));
  const builder = s.builder;
  const out: PCommand = {
    ...s,
    exact,
    patterns: pats(s.patterns, own),
    inheritedExact,
    inheritedPatterns: pats(s.inheritedPatterns, inherited),
    builder: {
      constant: builder.constant,
      build: (scope, n) => {
        bump(d.steps, s.id);
        return builder.build(scope, n);
      },
    },
  };
  if (s.default) out.default = wrapBranch(s.default, own('default'), d);
  if (s.error) {
    const step = model.steps[s.id];
    const isOwn = step?.kind === 'command' && step.on.error !== undefined;
    out.error = wrapBranch(s.error, isOwn ? own('error') : 'handlers:error', d);
  }
  return out;
}

function wrapSwitch(s: PSwitch, d: FlowCoverageData): PSwitch {
  const cases = s.cases.map((c, i) => {
    const w = { when: c.when } as { when: string; goto: string };
    Object.defineProperty(w, 'goto', { enumerable: true, get: () => (bump(d.transitions, `${s.id}:case${i + 1}`), c.goto) });
    return w;
  });
  const w = { kind: 'switch', id: s.id } as PSwitch;
  Object.defineProperty(w, 'cases', { enumerable: true, get: () => (bump(d.steps, s.id), cases) });
  Object.defineProperty(w, 'default', { enumerable: true, get: () => (bump(d.transitions, `${s.id}:default`), s.default) });
  return w;
}

function wrapSet(s: PSet, d: FlowCoverageData): PSet {
  const w = { kind: 'set', id: s.id, assign: s.assign } as PSet;
  Object.defineProperty(w, 'next', {
    enumerable: true,
    get: () => {
      bump(d.steps, s.id);
      bump(d.transitions, `${s.id}:next`);
      return s.next;
    },
  });
  return w;
}

function instrumentProgram(flow: CompiledFlow, d: FlowCoverageData): Program {
  const steps = new Map<string, PStep>();
  for (const [id, s] of flow.program.steps) {
    steps.set(id, s.kind === 'command' ? wrapCommand(s, flow.model, d) : s.kind === 'switch' ? wrapSwitch(s, d) : wrapSet(s, d));
  }
  return { ...flow.program, steps };
}
