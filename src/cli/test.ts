/**
 * `callscript test [paths...]`: runs scenario files (*.test.yaml) against the flows, in
 * process (docs/testing.md). Exit code: 0 all passed; 1 a case failed (or coverage under
 * --min-coverage or --min-coverage-per-flow); 2 a scenario file is unreadable or invalid.
 * Coverage covers the flows the given scenario files test (every flow when none is given), a module with what the flows
 * entering it covered of it. With no path, the scenario files of the flows directory run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, isAbsolute } from 'node:path';
import {
  collectScenarioFiles,
  Coverage,
  formatCase,
  formatCoverage,
  formatScenarioError,
  loadFlowDir,
  runScenarioFile,
  missedThresholds,
} from '../testing/index.js';
import { envOf, flowsDirOf } from '../testing/flow-dir.js';
import { printable } from '../terminal/printable.js';

export interface TestFlags {
  flows?: string;
  coverage?: boolean;
  coverageJson?: string;
  minCoverage?: string;
  minCoveragePerFlow?: string;
  /** The environment of version 2 flows (CALLSCRIPT_ENV); a scenario file's environment: wins. */
  env?: string;
  /** A failure shows the values it compares whole (no cut, no window). */
  fullDiff?: boolean;
}

type Out = { write(s: string): unknown };

export async function test(paths: string[], flags: TestFlags, out: Out = process.stdout): Promise<number> {
  const flowsDir = flowsDirOf(flags.flows);
  // one line each: a case's values, a file's problems quote scenario and flow text (control characters escaped)
  const print = (line: string) => out.write(printable(line) + '\n');
  const percent = (flag: string, v: string | undefined): number | undefined | string => {
    if (v === undefined) return undefined;
    const n = Number(v);
    return v.trim() !== '' && Number.isFinite(n) && n >= 0 && n <= 100
      ? n
      : `callscript test: ${flag} must be a number from 0 to 100, not "${v}"`;
  };
  const min = percent('--min-coverage', flags.minCoverage);
  const perFlow = percent('--min-coverage-per-flow', flags.minCoveragePerFlow);
  for (const bad of [min, perFlow]) {
    if (typeof bad === 'string') {
      print(bad);
      return 2;
    }
  }
  const thresholds = {
    ...(typeof min === 'number' ? { total: min } : {}),
    ...(typeof perFlow === 'number' ? { perFlow } : {}),
  };
  const wantCoverage =
    flags.coverage === true || flags.coverageJson !== undefined || min !== undefined || perFlow !== undefined;
  // no path: the scenario files of the flows directory (beside the flows), the one place every project has them
  const files = await collectScenarioFiles(paths.length > 0 ? paths : [flowsDir]);
  const env = envOf(flags.env);
  const flows = await loadFlowDir(flowsDir, env);
  for (const p of flows.problems) print(`flow error: ${p}`);
  const coverage = wantCoverage ? new Coverage() : undefined;
  // Scenario files given: the flows they test (registered as they run). None given: every
  // flow of the directory, tested or not.
  if (coverage && paths.length === 0) for (const f of flows.byName.values()) coverage.register(f);

  let passed = 0;
  let failed = 0;
  let invalid = 0;
  for (const file of files) {
    const shown = isAbsolute(file) ? relative(process.cwd(), file) || file : file;
    const run = await runScenarioFile(file, flows, coverage, flags.fullDiff === true);
    if (run.errors.length > 0) {
      invalid++;
      for (const e of run.errors) print(formatScenarioError({ ...e, file: shown }));
    }
    for (const c of run.cases) {
      for (const l of formatCase(shown, c)) print(l);
      if (c.ok) passed++;
      else failed++;
    }
  }
  if (files.length === 0)
    print(
      `no scenario files (*.test.yaml) found in ${paths.length > 0 ? paths.join(', ') : flowsDir}` +
        (paths.length > 0 ? '' : ' (name the files or folders of your scenarios: callscript test tests/)'),
    );
  let code = failed > 0 ? 1 : 0;
  if (coverage) {
    const reports = coverage.report();
    if (flags.coverage || min !== undefined || perFlow !== undefined) for (const l of formatCoverage(reports)) print(l);
    if (flags.coverageJson) {
      await mkdir(dirname(flags.coverageJson), { recursive: true });
      await writeFile(flags.coverageJson, JSON.stringify(coverage.merged(), null, 2) + '\n');
    }
    const missed = missedThresholds(reports, thresholds);
    for (const m of missed) print(m);
    if (missed.length > 0) code = code || 1;
  }
  print('');
  if (invalid > 0) print(`${invalid} invalid scenario file${invalid === 1 ? '' : 's'}`);
  print(`${passed} passed, ${failed} failed`);
  return invalid > 0 ? 2 : code;
}
