/**
 * The flows a tool runs (`test`, `simulate`, `paths`, `graph`): the flows of a directory, or
 * one flow by name or by path, with what to do when there is none: a missing directory is
 * named with the ways to give another (--flows, FLOWS_DIR), and a flow of that name that the
 * directory holds but refused (an unknown environment, an error) is reported with its own
 * diagnostics, as the path form reports them.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import type { CompiledFlow } from '../engine/compile.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import { checkFlow } from '../flow/check.js';
import { formatDiagnostics } from '../flow/format.js';
import { compileFlowFile } from '../registry/linked-file.js';
import { callerScriptNotFlow, isCallerScriptName, readFlows, readFlowText } from '../registry/load.js';
import { compileAll } from '../registry/registry.js';

/** The flows directory of a tool: --flows, else FLOWS_DIR, else `flows`. */
export function flowsDirOf(flag?: string): string {
  return flag ?? (process.env.FLOWS_DIR || 'flows');
}

/** The environment of version 2 flows a tool runs in: --env, else CALLSCRIPT_ENV (absent: each flow's first). */
export function envOf(flag?: string): string | undefined {
  const e = flag ?? process.env.CALLSCRIPT_ENV;
  return e === undefined || e === '' ? undefined : e;
}

/** Why a flows directory has no flows to give: missing, or not a directory; undefined when it is one. */
export async function flowsDirProblem(dir: string): Promise<string | undefined> {
  const s = await stat(dir).catch((e: NodeJS.ErrnoException) => e);
  const other = 'give the directory of your flows with --flows <dir> or FLOWS_DIR';
  if (s instanceof Error)
    return s.code === 'ENOENT'
      ? `the flows directory "${dir}" is missing (in ${resolve('.')}): ${other}`
      : `the flows directory "${dir}" cannot be read (${s.code ?? s.message}): ${other}`;
  if (!s.isDirectory()) return `the flows directory "${dir}" is not a directory: ${other}`;
  return undefined;
}

/** The most files flowNear reads, and the largest it reads (a flow's name: is near its top). */
const NEAR_FILES = 50;
const NEAR_BYTES = 256 * 1024;

/**
 * A flow file named `name` near a scenario file, outside the flows directory the tool read: in the scenario's
 * directory, its `flows/`, its parent or its parent's `flows/` (by file name, else by a top-level `name:`); its path
 * as the user would write it, or undefined. For the hint of a scenario whose flow is not in --flows.
 */
export async function flowNear(name: string, scenarioFile: string, flowsDir: string): Promise<string | undefined> {
  const here = dirname(scenarioFile);
  const dirs = [here, join(here, 'flows'), join(here, '..'), join(here, '..', 'flows')]
    .map((d) => resolve(d))
    .filter((d, i, a) => a.indexOf(d) === i && d !== resolve(flowsDir));
  const flowFile = (f: string) => /\.ya?ml$/.test(f) && !/\.(test|caller)\.ya?ml$/.test(f) && !f.startsWith('.');
  const named = new RegExp(`^name:\\s*(["']?)${name.replace(/[^A-Za-z0-9_-]/g, '\\$&')}\\1\\s*(#.*)?$`, 'm');
  let read = 0;
  for (const d of dirs) {
    const files = (await readdir(d).catch(() => [] as string[])).filter(flowFile).sort();
    const byStem = files.find((f) => stem(f) === name);
    const candidates = byStem ? [byStem, ...files.filter((f) => f !== byStem)] : files;
    for (const f of candidates) {
      if (read++ >= NEAR_FILES) return undefined;
      const path = join(d, f);
      const size = (await stat(path).catch(() => undefined))?.size ?? Infinity;
      if (size > NEAR_BYTES) continue;
      const text = await readFile(path, 'utf8').catch(() => '');
      if (!/^steps:/m.test(text)) continue;
      const own = /^name:/m.test(text);
      if ((own && named.test(text)) || (!own && stem(f) === name)) {
        const rel = relative(process.cwd(), path);
        return rel === '' || isAbsolute(rel) ? path : rel;
      }
    }
  }
  return undefined;
}

/** A flow file the directory refused: its flow's name, its errors and the sources of their code frames. */
export interface Refused {
  name: string;
  file: string;
  errors: Diagnostic[];
  sources: Map<string, string>;
}

/** The refused files of a compile, by their flow's name (its `name:`, else its file name). */
export function refusedByName(
  texts: readonly { file: string; text: string }[],
  report: { diagnostics: Diagnostic[]; sources: Map<string, string>; refused: string[] },
): Map<string, Refused> {
  const out = new Map<string, Refused>();
  for (const file of report.refused) {
    const text = texts.find((t) => t.file === file)?.text;
    const name = (text !== undefined ? checkFlow(text, file).model?.name : undefined) ?? stem(file);
    const errors = report.diagnostics.filter((d) => d.file === file && d.severity === 'error');
    if (!out.has(name)) out.set(name, { name, file, errors, sources: report.sources });
  }
  return out;
}

const stem = (file: string) => basename(file, extname(file));

/** A refused flow's report, as the path form prints it: `<file> has errors:` and the diagnostics with code frames. */
export function refusedText(r: Refused): string {
  return `${r.file} has errors:\n${formatDiagnostics(r.errors, r.sources)}`;
}

/** A flow by name (in the flows dir, modules included) or by path to a .yaml file; throws with the reason. */
export async function loadFlow(ref: string, flowsDir = 'flows', environment = envOf()): Promise<CompiledFlow> {
  if (isCallerScriptName(ref)) throw new Error(callerScriptNotFlow(ref));
  const opts = environment !== undefined ? { environment } : {};
  if (/\.ya?ml$/.test(ref) && existsSync(ref)) {
    const text = await readFlowText(ref);
    // a flow that enters modules is linked with the flows of its directory
    const one = await compileFlowFile(ref, text, opts);
    if (!one.flow) throw new Error(`${ref} has errors:\n${formatDiagnostics(one.errors, one.sources)}`);
    return one.flow;
  }
  const problem = await flowsDirProblem(flowsDir);
  if (problem)
    throw new Error(
      /\.ya?ml$/.test(ref)
        ? `no such file ${ref}; and no flow named "${ref}": ${problem}`
        : `no flow "${ref}": ${problem}`,
    );
  const { texts } = await readFlows(flowsDir);
  const { flows: served, report } = compileAll(texts, opts);
  const flows = [...served, ...(report.modules ?? [])];
  const found = flows.find((f) => f.name === ref);
  if (found) return found;
  const refused = refusedByName(texts, report).get(ref);
  if (refused) throw new Error(refusedText(refused));
  throw new Error(
    `no flow named "${ref}" in ${flowsDir} (flows: ${flows.map((f) => f.name).join(', ') || 'none'})` +
      (/\.ya?ml$/.test(ref) ? `; and no such file ${ref}` : ''),
  );
}
