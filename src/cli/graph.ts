/** `callscript graph <flow>`: the flow as a Mermaid or Graphviz diagram. */
import { readFile } from 'node:fs/promises';
import { renderGraph, type GraphFormat } from '../testing/graph.js';
import type { CoverageFile } from '../testing/paths.js';
import { loadFlow } from './paths.js';

export interface GraphFlags {
  format?: string;
  coverage?: string;
  flows?: string;
}

export async function graph(ref: string, flags: GraphFlags, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const format = (flags.format ?? 'mermaid') as GraphFormat;
  if (format !== 'mermaid' && format !== 'dot') {
    err.write(`callscript graph: --format is mermaid or dot, not "${flags.format}"\n`);
    return 2;
  }
  try {
    const flow = await loadFlow(ref, flags.flows);
    const coverage = flags.coverage ? (JSON.parse(await readFile(flags.coverage, 'utf8')) as CoverageFile) : undefined;
    out.write(renderGraph(flow, { format, ...(coverage ? { coverage } : {}) }));
    return 0;
  } catch (e) {
    err.write(`callscript graph: ${(e as Error).message}\n`);
    return 2;
  }
}
