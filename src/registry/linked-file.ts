/**
 * One flow file for the tools (paths, graph, simulate, a scenario's `flow: path.yaml`): a
 * flow that enters modules (version 2 subflows) is linked with the flow files of its own
 * directory, as the server would load it; any other is compiled alone.
 */
import { basename, dirname, join } from 'node:path';
import type { CompiledFlow } from '../engine/compile.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import { checkFlow, type CheckOptions } from '../flow/check.js';
import { compileAll } from './files.js';
import { readFlows } from './load.js';

export interface OneFlow {
  flow?: CompiledFlow;
  /** The file's error diagnostics (link ones included), and the sources for code frames. */
  errors: Diagnostic[];
  sources: Map<string, string>;
}

export async function compileFlowFile(ref: string, text: string, opts: CheckOptions = {}): Promise<OneFlow> {
  const alone = checkFlow(text, ref, opts);
  const enters = alone.model && Object.values(alone.model.steps).some((s) => s.kind === 'subflow');
  let files = [{ file: ref, text }];
  let file = ref;
  if (enters) {
    const dir = dirname(ref);
    file = join(dir, basename(ref));
    const { texts } = await readFlows(dir).catch(() => ({ texts: [] as { file: string; text: string }[] }));
    files = [...texts.filter((t) => t.file !== file), { file, text }];
  }
  const { flows, report } = compileAll(files, opts);
  const errors = report.diagnostics.filter((d) => d.file === file && d.severity === 'error');
  const flow = errors.length ? undefined : [...flows, ...(report.modules ?? [])].find((f) => f.model.file === file);
  return flow ? { flow, errors, sources: report.sources } : { errors, sources: report.sources };
}
