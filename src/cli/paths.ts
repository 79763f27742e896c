/** `callscript paths <flow>`: a scenario file with one case per transition not yet covered. */
import { writeFile } from 'node:fs/promises';
import { readCoverageFile } from '../testing/tool-file.js';
import { dirname, relative, resolve, sep } from 'node:path';
import type { CompiledFlow } from '../engine/compile.js';
import { envOf, flowsDirOf, loadFlow } from '../testing/flow-dir.js';
import { missingParams, sampleParam, withParams } from '../testing/module-params.js';
import type { Value } from '../flow/model.js';
import type { CoverageFile } from '../testing/coverage.js';
import { EXPLORE_MAX_MS } from '../testing/explore.js';
import { generateCases, scenarioYaml, uncovered } from '../testing/paths.js';
import { scenarioSchemaRef } from '../testing/schema-ref.js';
import { printable, printableLines } from '../terminal/printable.js';

export interface PathsFlags {
  flows?: string;
  out?: string;
  covered?: string;
  /** How long the search may take, in seconds (default 60). */
  maxSeconds?: string;
  env?: string;
  /** A module's params, name=value (repeatable); the required ones not given are sampled. */
  with?: string[];
}

export { envOf, loadFlow } from '../testing/flow-dir.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export async function paths(
  ref: string,
  flags: PathsFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const maxSeconds = flags.maxSeconds === undefined ? EXPLORE_MAX_MS / 1000 : Number(flags.maxSeconds);
  if (!Number.isFinite(maxSeconds) || maxSeconds <= 0 || maxSeconds > 86_400) {
    err.write(
      `callscript paths: --max-seconds ${JSON.stringify(flags.maxSeconds)} is not a number of seconds ` +
        `between 0 and 86400\n`,
    );
    return 2;
  }
  let flow: CompiledFlow;
  let coverage: CoverageFile | undefined;
  try {
    flow = await loadFlow(ref, flowsDirOf(flags.flows), envOf(flags.env));
    if (flags.covered) coverage = await readCoverageFile(flags.covered, '--covered');
  } catch (e) {
    // a refused flow's diagnostics, one a line: control characters escaped
    err.write(`callscript paths: ${printableLines((e as Error).message)}\n`);
    return 2;
  }
  let params: Record<string, Value>;
  try {
    params = withParams(flow, flags.with ?? []);
  } catch (e) {
    err.write(`callscript paths: ${printableLines((e as Error).message)}\n`);
    return 2;
  }
  // a module run on its own needs its required params: those not given are sampled, and said
  const sampled = missingParams(flow, params);
  for (const name of sampled) params[name] = sampleParam(flow, name);
  for (const name of sampled)
    err.write(
      `paths: ${flow.name} is a module: its required param ${name} is sampled ` +
        `as ${printable(JSON.stringify(params[name]))} ` +
        `(give another with --with ${name}=...)\n`,
    );
  const todo = uncovered(flow, coverage);
  const g = generateCases(flow, todo, { maxMs: maxSeconds * 1000, params });
  // On stdout, where the file goes is unknown: no $schema line rather than a wrong one.
  const schema = flags.out ? scenarioSchemaRef(flags.out) : undefined;
  // A flow given by path is named relative to the scenario file (as the runner resolves it).
  const flowRef = /\.ya?ml$/.test(ref)
    ? flags.out
      ? relative(dirname(resolve(flags.out)), resolve(ref))
          .split(sep)
          .join('/')
      : ref
    : flow.name;
  const text = scenarioYaml(flow, g, { flowRef, sampled, ...(schema !== undefined ? { schema } : {}) });
  if (flags.out) {
    try {
      await writeFile(flags.out, text);
    } catch (e) {
      err.write(
        `callscript paths: cannot write ${flags.out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`,
      );
      return 2;
    }
  } else out.write(text);
  err.write(
    `${flags.out ?? 'paths'}: ${plural(g.cases.length, 'case')} for ${plural(todo.length, 'uncovered transition')}\n`,
  );
  for (const s of g.skipped) err.write(`  no case for ${printable(`${s.transition}: ${s.why}`)}\n`);
  if (g.outOfTime !== undefined)
    err.write(
      `  the search stopped at its time limit (${g.outOfTime / 1000} s): give it longer with --max-seconds, ` +
        `or write the cases left by hand\n`,
    );
  return 0;
}
