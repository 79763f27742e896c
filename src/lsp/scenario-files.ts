/**
 * Which scenario files may test the flows of a directory, and which directories may hold the flow of a scenario
 * file: beside the flows, in their `tests/` folder, or in a `tests/` folder beside the flows directory (the layout
 * `flows/` + `tests/`). Bounded: a request reads at most MAX_SCENARIO_FILES of them, each as the registry reads a
 * flow file (a regular file inside its folder, at most the size a flow may have).
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MAX_FILE_BYTES } from '../flow/yaml.js';
import { readFlowText } from '../registry/load.js';

/** The most scenario files one request reads (every folder together). */
export const MAX_SCENARIO_FILES = 2000;

const isScenarioName = (n: string) => /\.test\.ya?ml$/.test(n) && !n.startsWith('.');

/** The folders whose scenario files may test the flows of `flowsDir`. */
export function scenarioDirs(flowsDir: string): string[] {
  return [...new Set([flowsDir, join(flowsDir, 'tests'), join(dirname(flowsDir), 'tests')])];
}

/** The directories that may hold the flow a scenario file names (the inverse of scenarioDirs). */
export function flowDirsOf(scenario: string): string[] {
  const here = dirname(scenario);
  if (basename(here) !== 'tests') return [here];
  return [...new Set([here, dirname(here), join(dirname(here), 'flows')])];
}

export interface ScenarioList {
  /** The files, sorted: those on disk and those open (`open`) in the folders. */
  files: string[];
  /** More than MAX_SCENARIO_FILES were found: `files` holds the first ones only. */
  truncated: boolean;
}

/** The scenario files of the folders that may test the flows of `flowsDir`. */
export async function scenarioFiles(flowsDir: string, open: Iterable<string>): Promise<ScenarioList> {
  const dirs = scenarioDirs(flowsDir);
  const found = new Set<string>();
  for (const dir of dirs)
    for (const n of await readdir(dir).catch(() => [] as string[])) if (isScenarioName(n)) found.add(join(dir, n));
  for (const path of open) if (dirs.includes(dirname(path)) && isScenarioName(basename(path))) found.add(path);
  const files = [...found].sort();
  return { files: files.slice(0, MAX_SCENARIO_FILES), truncated: files.length > MAX_SCENARIO_FILES };
}

/** A scenario file's text: the open document's, else the disk's; undefined when unreadable or over the size limit. */
export async function scenarioText(path: string, open: (path: string) => string | undefined) {
  const text = open(path) ?? (await readFlowText(path).catch(() => undefined));
  return text === undefined || text.length > MAX_FILE_BYTES ? undefined : text;
}
