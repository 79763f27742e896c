/**
 * Reading a compiled flow's machine config for the tools' graphs: the coverage keys a transition names, the step a
 * state stands for, and where a transition leads past a say state.
 */
import type { CompiledFlow } from '../engine/compile.js';
import type { TransitionConfig } from '../flow/machine-config.js';

/** The coverage keys a transition names (its `took` action). */
export function tookKeys(t: TransitionConfig): string[] {
  const a = t.actions.find((x) => x.type === 'took');
  return (a?.params?.keys as string[] | undefined) ?? [];
}

/** The step a machine state stands for: a foreach's `<step>@next` is its step. */
export function stateStep(flow: CompiledFlow, state: string): string {
  const m = flow.config.states[state]?.meta;
  return m && m.kind === 'logic' ? m.step : state;
}

/** Where a transition leads, past a say state (and a foreach's `@next` to its step); and whether a say plays first. */
export function dest(flow: CompiledFlow, target: string): { to: string; say: boolean } {
  const m = flow.config.states[target]?.meta;
  return m && m.kind === 'say' ? { to: stateStep(flow, m.to), say: true } : { to: stateStep(flow, target), say: false };
}
