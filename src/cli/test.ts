/**
 * `callscript test [paths...]`: runs scenario files (*.test.yaml) against the flows, in
 * process (docs/testing.md). Exit code: 0 all passed; 1 a case failed (or coverage under
 * --min-coverage); 2 a scenario file is unreadable or invalid.
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
  totalTransitionPercent,
} from '../testing/index.js';

export interface TestFlags {
  flows?: string;
  coverage?: boolean;
  coverageJson?: string;
  minCoverage?: string;
}

type Out = { write(s: string): unknown };

export async function test(paths: string[], flags: TestFlags, out: Out = process.stdout): Promise<number> {
  const flowsDir = flags.flows ?? 'flows';
  const print = (line: string) => out.write(line + '\n');
  let min: number | undefined;
  if (flags.minCoverage !== undefined) {
    min = Number(flags.minCoverage);
    if (!Number.isFinite(min) || min < 0 || min > 100) {
      print(`callscript test: --min-coverage must be a number from 0 to 100, not "${flags.minCoverage}"`);
      return 2;
    }
  }
  const wantCoverage = flags.coverage === true || flags.coverageJson !== undefined || min !== undefined;
  const files = await collectScenarioFiles(paths.length > 0 ? paths : [flowsDir, 'test'].filter((p, i, a) => a.indexOf(p) === i));
  const flows = await loadFlowDir(flowsDir);
  for (const p of flows.problems) print(`flow error: ${p}`);
  const coverage = wantCoverage ? new Coverage() : undefined;
  // Every flow of the directory is reported, tested or not.
  if (coverage) for (const f of flows.byName.values()) coverage.register(f);

  let passed = 0;
  let failed = 0;
  let invalid = 0;
  for (const file of files) {
    const shown = isAbsolute(file) ? relative(process.cwd(), file) || file : file;
    const run = await runScenarioFile(file, flows, coverage);
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
  if (files.length === 0) print(`no scenario files (*.test.yaml) found in ${paths.length > 0 ? paths.join(', ') : `${flowsDir}, test`}`);
  let code = failed > 0 ? 1 : 0;
  if (coverage) {
    const reports = coverage.report();
    if (flags.coverage || min !== undefined) for (const l of formatCoverage(reports)) print(l);
    if (flags.coverageJson) {
      await mkdir(dirname(flags.coverageJson), { recursive: true });
      await writeFile(flags.coverageJson, JSON.stringify(coverage.data, null, 2) + '\n');
    }
    if (min !== undefined) {
      const total = totalTransitionPercent(reports);
      if (total < min) {
        print(`transition coverage ${total}% is under --min-coverage ${min}%`);
        code = code || 1;
      }
    }
  }
  print('');
  if (invalid > 0) print(`${invalid} invalid scenario file${invalid === 1 ? '' : 's'}`);
  print(`${passed} passed, ${failed} failed`);
  return invalid > 0 ? 2 : code;
}
