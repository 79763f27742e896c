/**
 * Which scenario files may test the flows of a directory, and which directories may hold the flow of a scenario
 * file: beside the flows, in their `tests/` folder, and for a `flows/` folder in the project's folder above it or its
 * `tests/` (a project with `flows/` and `tests/`). Bounded: a request reads at most MAX_SCENARIO_FILES of them and
 * MAX_SCENARIO_CHARS of text in all, each file as the registry reads a flow file (a regular file inside its folder,
 * at most the size a flow may have). */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MAX_FILE_BYTES } from '../flow/yaml.js';
import { readFlowText } from '../registry/load.js';

/** The most scenario files one request reads (every folder together). */
export const MAX_SCENARIO_FILES = 2000;
/** The most scenario text one request reads, in characters (every file together). */
export const MAX_SCENARIO_CHARS = 64 * 1024 * 1024;
/** How many files are read at once (one after the other, each read would wait its turn of the I/O threads). */
const READ_AT_ONCE = 32;

const isScenarioName = (n: string) => /\.test\.ya?ml$/.test(n) && !n.startsWith('.');

/**
 * The folders whose scenario files may test the flows of `flowsDir`: it and its `tests/`; for a folder named `flows`,
 * also the project's folder above it and that folder's `tests/`.
 */
export function scenarioDirs(flowsDir: string): string[] {
  const up = dirname(flowsDir);
  const project = basename(flowsDir) === 'flows' ? [up, join(up, 'tests')] : [];
  return [...new Set([flowsDir, join(flowsDir, 'tests'), ...project])];
}

/** The directories that may hold the flow a scenario file names (the inverse of scenarioDirs). */
export function flowDirsOf(scenario: string): string[] {
  const here = dirname(scenario);
  const up = dirname(here);
  const above = basename(here) === 'tests' ? [up, join(up, 'flows')] : [];
  return [...new Set([here, join(here, 'flows'), ...above])];
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

/**
 * The texts of `files` that `keep` accepts (the others are dropped once read); `truncated` when the files hold more
 * than MAX_SCENARIO_CHARS in all (the rest are not read).
 */
export async function readScenarios(
  files: readonly string[],
  open: (path: string) => string | undefined,
  keep: (text: string) => boolean,
): Promise<{ texts: Map<string, string>; truncated: boolean }> {
  const texts = new Map<string, string>();
  let chars = 0;
  for (let i = 0; i < files.length; i += READ_AT_ONCE) {
    const batch = files.slice(i, i + READ_AT_ONCE);
    const read = await Promise.all(batch.map((path) => scenarioText(path, open)));
    for (const [j, text] of read.entries()) {
      if (text === undefined) continue;
      chars += text.length;
      if (chars > MAX_SCENARIO_CHARS) return { texts, truncated: true };
      if (keep(text)) texts.set(batch[j]!, text);
    }
  }
  return { texts, truncated: false };
}
