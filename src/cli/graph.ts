/**
 * `callscript graph <flow>`: the flow as a Mermaid or Graphviz diagram, or (`--format
 * xstate`) the JSON config of the xstate machine that serves its calls.
 */
import { readCoverageFile } from '../testing/tool-file.js';
import { xstateConfig } from '../flow/machine-config.js';
import { renderGraph, type GraphFormat } from '../testing/graph.js';
import { envOf, flowsDirOf, loadFlow } from '../testing/flow-dir.js';
import { printableLines } from '../terminal/printable.js';

export interface GraphFlags {
  format?: string;
  coverage?: string;
  flows?: string;
  env?: string;
}

export async function graph(
  ref: string,
  flags: GraphFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const format = (flags.format ?? 'mermaid') as GraphFormat | 'xstate';
  if (format !== 'mermaid' && format !== 'dot' && format !== 'xstate') {
    err.write(`callscript graph: --format is mermaid, dot or xstate, not "${flags.format}"\n`);
    return 2;
  }
  try {
    const flow = await loadFlow(ref, flowsDirOf(flags.flows), envOf(flags.env));
    if (format === 'xstate') {
      if (flags.coverage) throw new Error('--coverage marks a diagram: use it with --format mermaid or dot');
      out.write(JSON.stringify(xstateConfig(flow.config), null, 2) + '\n');
      return 0;
    }
    const coverage = flags.coverage ? await readCoverageFile(flags.coverage, '--coverage') : undefined;
    out.write(renderGraph(flow, { format, ...(coverage ? { coverage } : {}) }));
    return 0;
  } catch (e) {
    // a refused flow's diagnostics, one a line: control characters escaped
    err.write(`callscript graph: ${printableLines((e as Error).message)}\n`);
    return 2;
  }
}
