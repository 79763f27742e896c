/**
 * Compiles a checked flow model: the fast runtime program that `advance` runs, the xstate
 * machine that formally models the same decisions (for diagrams, path generation and an
 * equivalence test), and the version: the first 12 hex digits of the SHA-256 of the
 * flow's source text, to which live calls are pinned.
 */
import { createHash } from 'node:crypto';
import { buildProgram, type Program } from '../engine/program.js';
import { buildMachine, type FlowMachine } from './machine.js';
import type { FlowModel } from './model.js';

export interface CompiledFlow {
  name: string;
  /** Content hash of the source: 12 lowercase hex digits. */
  version: string;
  model: FlowModel;
  machine: FlowMachine;
  program: Program;
}

export function flowVersion(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex').slice(0, 12);
}

export function compileFlow(model: FlowModel, source: string): CompiledFlow {
  const program = buildProgram(model);
  return {
    name: model.name,
    version: flowVersion(source),
    model,
    machine: buildMachine(model, program),
    program,
  };
}
