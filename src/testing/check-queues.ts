/**
 * A scenario's `queues:` against its flow (docs/testing.md "Queues"): a queue named is one of the flow's queue steps
 * (`queue: { name: sales }`, a module's included), and an agent named in `busy:`, `free:`, `paused:`, `resumed:` is
 * one of that queue's when its steps list their agents as numbers (a list with a template, or `{ expr }`, names them
 * only when the call runs: any number is taken). Each problem is an error of the file at its position, with the name
 * meant.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { closest } from '../flow/check-context.js';
import { isTemplate } from '../flow/expr.js';
import type { Scenario, ScenarioError } from './scenario.js';
import type { QueueChange } from './scenario-queues.js';

/** The flow's queues: for each, its agents when every step of it lists them as numbers (else undefined: any). */
export function flowQueues(flow: CompiledFlow): Map<string, Set<string> | undefined> {
  const out = new Map<string, Set<string> | undefined>();
  for (const s of Object.values(flow.model.steps)) {
    if (s.kind !== 'command' || !s.queue) continue;
    const q = s.queue;
    const literal = q.agents.kind === 'list' && !q.agents.items.some(isTemplate) ? q.agents.items : undefined;
    const had = out.get(q.name);
    if (!out.has(q.name)) out.set(q.name, literal ? new Set(literal) : undefined);
    else if (had && literal) for (const a of literal) had.add(a);
    else out.set(q.name, undefined);
  }
  return out;
}

export function checkQueueNames(s: Scenario, flow: CompiledFlow): ScenarioError[] {
  const queues = flowQueues(flow);
  const errors: ScenarioError[] = [];
  const err = (pos: { line: number; col: number }, message: string) =>
    errors.push({ file: s.file, line: pos.line, column: pos.col, message });
  const check = (changes: readonly QueueChange[] | undefined) => {
    for (const c of changes ?? []) {
      if (!queues.has(c.queue)) {
        const names = [...queues.keys()];
        const near = closest(c.queue, names);
        err(
          c.pos,
          `queues: "${c.queue}" is not a queue of flow ${flow.name}` +
            (names.length === 0
              ? ' (it has no queue step)'
              : near !== undefined
                ? ` (did you mean "${near}"?)`
                : ` (its queues: ${names.join(', ')})`),
        );
        continue;
      }
      const agents = queues.get(c.queue);
      if (!agents) continue;
      for (const key of ['busy', 'free', 'paused', 'resumed'] as const)
        for (const a of c[key] ?? []) {
          if (agents.has(a.number)) continue;
          const near = closest(a.number, [...agents]);
          err(
            a.pos,
            `queues.${c.queue}.${key}: "${a.number}" is not an agent of queue ${c.queue} in flow ${flow.name}` +
              (near !== undefined
                ? ` (did you mean "${near}"?)`
                : ` (its agents: ${[...agents].slice(0, 10).join(', ')})`),
          );
        }
    }
  };
  for (const c of s.cases) {
    check(c.queues);
    for (const st of c.steps) check(st.queues);
  }
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}
