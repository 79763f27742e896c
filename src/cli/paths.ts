/** `callscript paths <flow>`: a scenario file with one case per transition not yet covered. */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { compileFlow, type CompiledFlow } from '../engine/compile.js';
import { checkFlow } from '../flow/check.js';
import { formatDiagnostics } from '../flow/format.js';
import { compileAll, listFlowFiles } from '../registry/registry.js';
import { generateCases, scenarioYaml, uncovered, type CoverageFile } from '../testing/paths.js';

export interface PathsFlags {
  flows?: string;
  out?: string;
  covered?: string;
}

/** A flow by name (in the flows dir) or by path to a .yaml file; throws with the reason. */
export async function loadFlow(ref: string, flowsDir = 'flows'): Promise<CompiledFlow> {
  if (/\.ya?ml$/.test(ref) && existsSync(ref)) {
    const text = await readFile(ref, 'utf8');
    const { model, diagnostics } = checkFlow(text, ref);
    if (!model || diagnostics.some((d) => d.severity === 'error')) {
      throw new Error(`${ref} has errors:\n${formatDiagnostics(diagnostics, new Map([[ref, text]]))}`);
    }
    return compileFlow(model, text);
  }
  const files = await listFlowFiles(flowsDir);
  const texts = await Promise.all(files.map(async (file) => ({ file, text: await readFile(file, 'utf8') })));
  const { flows } = compileAll(texts);
  const found = flows.find((f) => f.name === ref);
  if (!found) throw new Error(`no valid flow named "${ref}" in ${flowsDir} (flows: ${flows.map((f) => f.name).join(', ') || 'none'})`);
  return found;
}

export async function paths(ref: string, flags: PathsFlags, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  let flow: CompiledFlow;
  let coverage: CoverageFile | undefined;
  try {
    flow = await loadFlow(ref, flags.flows);
    if (flags.covered) coverage = JSON.parse(await readFile(flags.covered, 'utf8')) as CoverageFile;
  } catch (e) {
    err.write(`callscript paths: ${(e as Error).message}\n`);
    return 2;
  }
  const todo = uncovered(flow, coverage);
  const cases = generateCases(flow, todo);
  const text = scenarioYaml(flow, cases, /\.ya?ml$/.test(ref) ? ref : flow.name);
  if (flags.out) {
    await writeFile(flags.out, text);
    err.write(`${flags.out}: ${cases.length} case${cases.length === 1 ? '' : 's'} (${todo.length} uncovered transition${todo.length === 1 ? '' : 's'})\n`);
  } else out.write(text);
  return 0;
}
