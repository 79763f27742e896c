/**
 * The flow stage's compiler: a checked flow model becomes its xstate machine config (plain
 * data, src/flow/machine-config.ts) and its version: the first 12 hex digits of the
 * SHA-256 of the flow's source text, to which live calls are pinned. The engine makes the
 * runnable machine from this (src/engine/compile.ts).
 */
import { createHash } from 'node:crypto';
import { buildMachineConfig, type MachineConfig, type ModuleStates } from './machine-config.js';
import type { FlowModel } from './model.js';

export interface FlowConfig {
  name: string;
  /** Content hash of the source: 12 lowercase hex digits. */
  version: string;
  model: FlowModel;
  config: MachineConfig;
}

export function flowVersion(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex').slice(0, 12);
}

/**
 * The version of a flow: its source's hash; for a flow with environments (version 2),
 * the hash of the source and the selected environment's name, so that the same file
 * served in two environments gives two versions (a call is pinned to its environment).
 */
export function modelVersion(model: FlowModel, source: string): string {
  return model.environment === undefined ? flowVersion(source) : flowVersion(`${source}\u0000env:${model.environment}`);
}

/**
 * `version`: a linked flow's (link.ts: its source and its modules'); absent, the source's hash (and environment).
 * `shared`: the machine states of modules already made in this load, taken from there (made there the first time).
 */
export function compileConfig(model: FlowModel, source: string, version?: string, shared?: ModuleStates): FlowConfig {
  return {
    name: model.name,
    version: version ?? modelVersion(model, source),
    model,
    config: buildMachineConfig(model, shared),
  };
}
