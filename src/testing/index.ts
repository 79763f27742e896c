/**
 * Flow tests (`callscript test`, docs/testing.md): scenario files, the runner, coverage,
 * and the text output shared by the CLI and the tests.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { CompiledFlow } from '../engine/compile.js';
import { compileAll } from '../registry/registry.js';
import { flowNear, flowsDirProblem, refusedByName, type Refused } from './flow-dir.js';
import {
  callerScriptNotFlow,
  isCallerScriptName,
  readFlows,
  readFlowText,
  unreadableReason,
} from '../registry/load.js';
import { Coverage } from './coverage.js';
import { compileFlowFile } from '../registry/linked-file.js';
import { checkWith } from './module-params.js';
import { checkStepNames } from './check-steps.js';
import { checkQueueNames } from './check-queues.js';
import { runCase, type CaseResult } from './runner.js';
import {
  formatScenarioError,
  parseScenario,
  ScenarioFileError,
  type Scenario,
  type ScenarioError,
} from './scenario.js';

export * from './scenario.js';
export * from './runner.js';
export * from './coverage.js';

export const SCENARIO_FILE = /\.test\.ya?ml$/;

/** Scenario files under the given files and directories (recursively), sorted; dotfiles and node_modules skipped. */
export async function collectScenarioFiles(paths: string[]): Promise<string[]> {
  const out = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const n of names.sort()) {
      if (n.startsWith('.') || n === 'node_modules') continue;
      const p = join(dir, n);
      const s = await stat(p).catch(() => undefined);
      if (s?.isDirectory()) await walk(p);
      else if (s?.isFile() && SCENARIO_FILE.test(n)) out.add(p);
    }
  };
  for (const p of paths) {
    const s = await stat(p).catch(() => undefined);
    if (s?.isDirectory()) await walk(p);
    else out.add(p); // a file given by name, whatever its name (unreadable ones fail on load)
  }
  return [...out];
}

export interface FlowSet {
  byName: Map<string, CompiledFlow>;
  /** Problems of flow files that did not compile ("file:line:col: message"). */
  problems: string[];
  /** The environment the flows were compiled in (version 2 environments:), if one was selected. */
  environment?: string;
  /** The directory the flows come from. */
  dir?: string;
  /** Why the directory gave no flows (missing, not a directory), if so. */
  missing?: string;
  /** The flow files the directory refused, by their flow's name (a scenario naming one says why). */
  refused?: Map<string, Refused>;
}

/** Compiles the flows of a directory (a missing directory gives no flows, and says so in `missing`). */
export async function loadFlowDir(dir: string, environment?: string): Promise<FlowSet> {
  const missing = await flowsDirProblem(dir);
  const { texts, unread } = await readFlows(dir).catch(() => ({ texts: [], unread: [] }));
  const { flows, report } = compileAll(texts, environment !== undefined ? { environment } : {});
  return {
    ...(environment !== undefined ? { environment } : {}),
    dir,
    ...(missing !== undefined ? { missing } : {}),
    refused: refusedByName(texts, report),
    // modules too: a scenario may test a module on its own (with: params, expect: { return })
    byName: new Map([...flows, ...(report.modules ?? [])].map((f) => [f.name, f])),
    problems: [
      ...unread.map((u) => `${u.file}: not read: ${u.why}`),
      ...report.diagnostics
        .filter((d) => d.severity === 'error')
        .map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`),
    ],
  };
}

export interface FileRun {
  file: string;
  /** Problems of the file itself (unreadable, invalid, unknown flow, a result no command returns): exit code 2. */
  errors: ScenarioError[];
  /** The cases run (but those whose result was refused, which are in `errors`). */
  cases: CaseResult[];
  /** The flow the file tests, when it was found. */
  flow?: string;
}

/** Loads and runs one scenario file (`fullDiff`: a failure shows its values whole, `--full-diff`). */
export async function runScenarioFile(
  file: string,
  flows: FlowSet,
  coverage?: Coverage,
  fullDiff = false,
): Promise<FileRun> {
  let text: string;
  try {
    text = await readFlowText(file);
  } catch (err) {
    return {
      file,
      errors: [{ file, line: 1, column: 1, message: `cannot read the file: ${unreadableReason(err)}` }],
      cases: [],
    };
  }
  let scenario: Scenario;
  try {
    scenario = parseScenario(text, file);
  } catch (err) {
    if (err instanceof ScenarioFileError) return { file, errors: err.errors, cases: [] };
    throw err;
  }
  let flow = await resolveFlow(scenario, flows);
  if ('error' in flow) return { file, errors: [flow.error], cases: [] };
  if (scenario.environment !== undefined && flow.flow.model.environment !== scenario.environment)
    flow = await inEnvironment(scenario, flow.flow, scenario.environment);
  if ('error' in flow) return { file, errors: [flow.error], cases: [] };
  const withErrors = [
    ...checkWith(scenario, flow.flow),
    ...checkStepNames(scenario, flow.flow),
    ...checkQueueNames(scenario, flow.flow),
  ];
  if (withErrors.length > 0) return { file, errors: withErrors, cases: [] };
  // a recording's params are compared in full (a param the flow adds since is a divergence)
  const opts = {
    ...(coverage ? { hooks: coverage.hooksFor(flow.flow) } : {}),
    ...(scenario.recorded ? { wholeParams: true } : {}),
    ...(fullDiff ? { fullDiff } : {}),
  };
  const cases = scenario.cases.map((c) => runCase(flow.flow, c, opts));
  // A result the command sent can never return is the file's mistake, reported as such.
  const errors = cases.flatMap((c) =>
    c.failure?.refused
      ? [{ file, line: c.failure.pos.line, column: c.failure.pos.col, message: c.failure.message }]
      : [],
  );
  return { file, errors, cases: cases.filter((c) => !c.failure?.refused), flow: flow.flow.name };
}

/** The flow compiled again in the scenario file's `environment:` (version 2 environments). */
async function inEnvironment(
  s: Scenario,
  flow: CompiledFlow,
  environment: string,
): Promise<{ flow: CompiledFlow } | { error: ScenarioError }> {
  const pos = s.environmentPos ?? s.flowPos;
  const at = (message: string) => ({ error: { file: s.file, line: pos.line, column: pos.col, message } });
  if (!flow.model.environments) return at(`environment: the flow ${flow.name} has no environments: to choose from`);
  if (!(environment in flow.model.environments))
    return at(
      `environment: the flow ${flow.name} has no environment "${environment}" (its ` +
        `environments: ${Object.keys(flow.model.environments).join(', ')})`,
    );
  // linked with the modules of its directory, as the flows dir and a flow given by path are
  const again = await compileIn(flow.model.file, environment);
  if ('error' in again)
    return at(`environment: ${flow.name} has errors in environment ${environment} (${again.error})`);
  return again;
}

async function resolveFlow(s: Scenario, flows: FlowSet): Promise<{ flow: CompiledFlow } | { error: ScenarioError }> {
  const at = (message: string) => ({ error: { file: s.file, line: s.flowPos.line, column: s.flowPos.col, message } });
  if (isCallerScriptName(s.flow)) return at(`flow: ${callerScriptNotFlow(s.flow)}`);
  if (/\.ya?ml$/.test(s.flow)) {
    const path = resolve(dirname(s.file), s.flow);
    let text: string;
    try {
      text = await readFlowText(path);
    } catch (err) {
      return at(`flow: cannot read ${s.flow}: ${unreadableReason(err)}`);
    }
    const one = await compileFlowFile(
      path,
      text,
      flows.environment !== undefined ? { environment: flows.environment } : {},
    );
    const compiled = one.flow ? [one.flow] : [];
    const first = one.errors[0];
    if (!compiled[0] || first)
      return at(
        `flow: ${s.flow} has errors ` +
          `(${first ? `${first.file}:${first.line}:${first.column}: ${first.message}` : 'not compiled'})`,
      );
    // The flows dir's version when it is the same flow (one coverage entry per flow).
    const same = flows.byName.get(compiled[0].name);
    return { flow: same && same.version === compiled[0].version ? same : compiled[0] };
  }
  const f = flows.byName.get(s.flow);
  if (f) return { flow: f };
  const dir = flows.dir ?? 'the flows directory';
  // the flow may be beside the scenario file, in a directory --flows did not name
  const near = await flowNear(s.flow, s.file, flows.dir ?? 'flows');
  const there = near
    ? `; ${near} is a flow "${s.flow}": give its directory with --flows ${dirname(near) || '.'} (or FLOWS_DIR), ` +
      `or its file as flow: ${relative(dirname(s.file), near)}`
    : '';
  if (flows.missing) return at(`flow: no flow named "${s.flow}": ${flows.missing}${there}`);
  const refused = flows.refused?.get(s.flow);
  if (refused) {
    // refused in the environment the flows were loaded in: the file's own environment: may be one it has
    if (s.environment !== undefined && s.environment !== flows.environment) {
      const again = await compileIn(refused.file, s.environment);
      if ('flow' in again) return again;
    }
    const first = refused.errors[0];
    const inEnv = flows.environment !== undefined ? ` in environment ${flows.environment}` : '';
    return at(
      `flow: ${s.flow} (${refused.file}) has errors${inEnv}` +
        (first ? ` (${first.file}:${first.line}:${first.column}: ${first.message})` : ''),
    );
  }
  const known = [...flows.byName.keys()].sort();
  return at(
    `flow: no flow named "${s.flow}" in ${dir}${known.length ? ` (flows: ${known.join(', ')})` : ''}` +
      (there ||
        '; give the directory of its flows with --flows <dir> (or FLOWS_DIR), or its file as flow: <file>.yaml'),
  );
}

/** A flow file compiled in `environment`, linked with the modules of its directory. */
async function compileIn(file: string, environment: string): Promise<{ flow: CompiledFlow } | { error: string }> {
  let text: string;
  try {
    text = await readFlowText(file);
  } catch (err) {
    return { error: `cannot read ${file}: ${unreadableReason(err)}` };
  }
  const one = await compileFlowFile(file, text, { environment });
  const first = one.errors[0];
  if (!one.flow || first)
    return { error: first ? `${first.file}:${first.line}:${first.column}: ${first.message}` : 'not compiled' };
  return { flow: one.flow };
}

/** The output lines of one case: `✓ file › name`, or `✗ ...` with the failure. */
export function formatCase(file: string, r: CaseResult): string[] {
  if (r.ok) return [`✓ ${file} › ${r.name}`];
  const f = r.failure!;
  const lines = [
    `✗ ${file} › ${r.name}`,
    `    ${file}:${f.pos.line}: ${f.label ?? `step ${f.step + 1}`}: ${f.message}`,
  ];
  if (f.expected !== undefined) lines.push(`      expected: ${f.expected}`);
  if (f.actual !== undefined) lines.push(`      actual:   ${f.actual}`);
  for (const d of f.diff ?? []) lines.push(`      ${d}`);
  return lines;
}

export { formatScenarioError };
