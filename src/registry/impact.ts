/**
 * What a new version of a flow changes for the calls already running: the steps changed,
 * added and removed (a step is changed when its model differs, positions aside), and how
 * many live calls of the replaced version sit in a changed or removed step. Those calls
 * stay pinned to their version; the report tells the author how many are affected.
 */
import type { FlowModel } from '../flow/model.js';

export interface ImpactReport {
  flow: string;
  /** The version replaced as current (the diff's left side). */
  from: string;
  /** The version published. */
  to: string;
  /** Epoch ms of the publish. */
  at: number;
  changed: string[];
  added: string[];
  removed: string[];
  /** Live calls of `from` when `to` was published. */
  liveCalls: number;
  /** Of those, the calls in a changed step / a removed step, with the step names. */
  inChanged: number;
  inRemoved: number;
  byStep: Record<string, number>;
}

/** A step's model without source positions, as comparable JSON. */
function shape(value: unknown): string {
  return JSON.stringify(value, (key, v: unknown) => (key === 'pos' ? undefined : v));
}

export function diffSteps(from: FlowModel, to: FlowModel): { changed: string[]; added: string[]; removed: string[] } {
  const changed: string[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const [id, step] of Object.entries(to.steps)) {
    const old = from.steps[id];
    if (!old) added.push(id);
    else if (shape(old) !== shape(step)) changed.push(id);
  }
  for (const id of Object.keys(from.steps)) if (!(id in to.steps)) removed.push(id);
  return { changed: changed.sort(), added: added.sort(), removed: removed.sort() };
}

/** The report, given the steps the live calls of `from` are at (one entry per call). */
export function impactReport(
  from: { version: string; model: FlowModel },
  to: { version: string; model: FlowModel },
  liveSteps: Iterable<string>,
  at: number,
): ImpactReport {
  const diff = diffSteps(from.model, to.model);
  const changed = new Set(diff.changed);
  const removed = new Set(diff.removed);
  let liveCalls = 0;
  let inChanged = 0;
  let inRemoved = 0;
  const byStep: Record<string, number> = {};
  for (const step of liveSteps) {
    liveCalls++;
    const hit = changed.has(step) ? 'changed' : removed.has(step) ? 'removed' : undefined;
    if (!hit) continue;
    if (hit === 'changed') inChanged++;
    else inRemoved++;
    byStep[step] = (byStep[step] ?? 0) + 1;
  }
  return { flow: to.model.name, from: from.version, to: to.version, at, ...diff, liveCalls, inChanged, inRemoved, byStep };
}

/** One log line's text. */
export function impactText(r: ImpactReport): string {
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none');
  return (
    `flow ${r.flow}: ${r.from} -> ${r.to}; changed: ${list(r.changed)}; added: ${list(r.added)}; removed: ${list(r.removed)}; ` +
    `${r.liveCalls} live call${r.liveCalls === 1 ? '' : 's'} on ${r.from}, ${r.inChanged} in changed steps, ${r.inRemoved} in removed steps (they finish on ${r.from})`
  );
}
