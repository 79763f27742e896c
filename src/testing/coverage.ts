/**
 * Flow coverage of `callscript test --coverage` (docs/testing.md "Coverage"): which steps
 * ran and which result transitions were taken.
 *
 * Observed on the machine that serves calls: every transition of a flow's machine config
 * names its coverage keys (its `took` action, src/flow/machine-config.ts), and the
 * engine's run hooks report each key taken and each step entered (`hooksFor`). What the
 * transitions of a flow are is defined once, in transitions.ts (shared with `paths`).
 *
 * A module is covered by the flows that enter it as by its own scenarios: its entry adds
 * what its namespaced steps and transitions (`verify-customer:pin:TIMEOUT`) counted in each
 * flow registered that enters it (`merged`).
 */
import type { CompiledFlow } from '../engine/compile.js';
import type { Pos } from '../flow/model.js';
import { flowTransitions } from './transitions.js';
import type { RunHooks } from '../engine/behaviour.js';

/** The raw data, also written by `--coverage-json` (read by `callscript graph --coverage`). */
export interface CoverageData {
  flows: Record<string, FlowCoverageData>;
}

/** Coverage data as read back from a file (`--covered`, `graph --coverage`): every part optional. */
export interface CoverageFile {
  flows: Record<string, { steps?: Record<string, number>; transitions?: Record<string, number>; all?: string[] }>;
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

/** Collects coverage over any number of runs, per flow. */
export class Coverage {
  readonly data: CoverageData = { flows: {} };
  private readonly info = new Map<string, FlowInfo>();
  /** The modules each flow registered enters: their namespace prefixes (`verify-customer:`) and names. */
  private readonly links = new Map<string, { prefix: string; module: string }[]>();

  /** Registers a flow (every step and transition at 0); idempotent per name. */
  register(flow: CompiledFlow): FlowCoverageData {
    let d = this.data.flows[flow.name];
    if (d) return d;
    const { all, pos } = flowTransitions(flow);
    d = { steps: {}, transitions: {}, all };
    for (const id of Object.keys(flow.model.steps)) d.steps[id] = 0;
    for (const k of all) d.transitions[k] = 0;
    this.data.flows[flow.name] = d;
    const stepPos = new Map<string, Pos>();
    for (const [id, s] of Object.entries(flow.model.steps)) stepPos.set(id, s.pos);
    this.info.set(flow.name, { file: flow.model.file, stepPos, transPos: pos });
    const mods = flow.model.modules;
    if (mods)
      this.links.set(
        flow.name,
        Object.entries(mods).map(([prefix, m]) => ({ prefix, module: m.name })),
      );
    return d;
  }

  /**
   * The data with each module's entry merged with what the flows entering it counted of it: a step of the module by
   * its namespaced id, a transition by its namespaced key, and a `return` (in the entering flow, the way back to the
   * call site) by its return step having run. What `--coverage` reports and `--coverage-json` writes.
   */
  merged(): CoverageData {
    const out: CoverageData = { flows: {} };
    for (const [name, d] of Object.entries(this.data.flows)) {
      const m: FlowCoverageData = { steps: { ...d.steps }, transitions: { ...d.transitions }, all: d.all };
      for (const [by, links] of this.links) {
        const src = this.data.flows[by];
        if (!src || by === name) continue;
        for (const { prefix, module } of links) {
          if (module !== name) continue;
          for (const id of Object.keys(m.steps)) m.steps[id]! += src.steps[prefix + id] ?? 0;
          for (const k of m.all) {
            const n = k.endsWith(':return')
              ? (src.steps[prefix + k.slice(0, -':return'.length)] ?? 0)
              : (src.transitions[prefix + k] ?? 0);
            m.transitions[k] = (m.transitions[k] ?? 0) + n;
          }
        }
      }
      out.flows[name] = m;
    }
    return out;
  }

  /** The engine's run hooks that record `flow`'s coverage here. */
  hooksFor(flow: CompiledFlow): RunHooks {
    const d = this.register(flow);
    return { took: (k) => bump(d.transitions, k), entered: (step) => bump(d.steps, step) };
  }

  report(): FlowReport[] {
    return Object.entries(this.merged().flows)
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
  const missedTransitions = d.all
    .filter((k) => !d.transitions[k])
    .map((key) => ({ key, pos: info?.transPos.get(key) }));
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
      `  ${r.flow} (${r.file}): steps ${r.steps.percent}% (${r.steps.covered}/${r.steps.total}), ` +
        `transitions ${r.transitions.percent}% (${r.transitions.covered}/${r.transitions.total})`,
    );
    for (const s of r.missedSteps)
      lines.push(`    step never run: ${s.id}${s.pos ? ` (${s.pos.file}:${s.pos.line})` : ''}`);
    for (const t of r.missedTransitions)
      lines.push(`    transition never taken: ${t.key}${t.pos ? ` (${t.pos.file}:${t.pos.line})` : ''}`);
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

export interface Thresholds {
  /** `--min-coverage`: percent of the transitions of all the flows reported. */
  total?: number;
  /** `--min-coverage-per-flow`: percent of the transitions of each flow reported. */
  perFlow?: number;
}

/** One message per threshold missed, naming the flows and their figures (none: every threshold met). */
export function missedThresholds(reports: FlowReport[], t: Thresholds): string[] {
  const out: string[] = [];
  const figure = (r: FlowReport) => `${r.transitions.percent}% (${r.transitions.covered}/${r.transitions.total})`;
  if (t.total !== undefined && reports.length > 0) {
    const total = totalTransitionPercent(reports);
    const of =
      reports.length === 1
        ? `of ${reports[0]!.flow}`
        : `over ${reports.length} flows (${reports.map((r) => `${r.flow} ${r.transitions.percent}%`).join(', ')})`;
    if (total < t.total) out.push(`transition coverage ${total}% ${of} is under --min-coverage ${t.total}%`);
  }
  if (t.perFlow !== undefined) {
    for (const r of reports)
      if (r.transitions.percent < t.perFlow)
        out.push(`${r.flow}: transition coverage ${figure(r)} is under --min-coverage-per-flow ${t.perFlow}%`);
  }
  return out;
}

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}
