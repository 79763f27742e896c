/**
 * A runnable flow: the flow stage's machine config and version (src/flow/compile.ts), the
 * tables the engine's guards and actions read (tables.ts), and the xstate machine made
 * from both (machine.ts). What the registry keeps per flow version.
 */
import { compileConfig, type FlowConfig } from '../flow/compile.js';
import type { ModuleStates, StateMeta } from '../flow/machine-config.js';
import type { FlowModel } from '../flow/model.js';
import { createFlowMachine, type FlowMachine } from './machine.js';
import { buildTables, type FlowTables } from './tables.js';

export { flowVersion } from '../flow/compile.js';

export interface CompiledFlow extends FlowConfig {
  tables: FlowTables;
  machine: FlowMachine;
}

/** `shared`: the machine states of the modules made in this load (src/flow/machine-config.ts, ModuleStates). */
export function compileFlow(model: FlowModel, source: string, version?: string, shared?: ModuleStates): CompiledFlow {
  return fromConfig(compileConfig(model, source, version, shared));
}

/** A runnable flow from a config compiled elsewhere (another thread). */
export function fromConfig(fc: FlowConfig): CompiledFlow {
  const tables = buildTables(fc.model);
  return { ...fc, tables, machine: createFlowMachine(fc.config, tables) };
}

/** The meta of a machine state (`@end` and unknown states: the end). */
export function metaOf(flow: FlowConfig, state: string): StateMeta {
  return flow.config.states[state]?.meta ?? { kind: 'end' };
}
