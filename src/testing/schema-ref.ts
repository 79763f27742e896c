/**
 * The `$schema` reference a generated scenario file gets (`# yaml-language-server:
 * $schema=...`), right for where the file is written: the nearest of, walking up from its
 * directory, the callscript repository's `schemas/` (a directory whose package.json is
 * callscript's) and a project's `node_modules/callscript/schemas/`, as a path relative to
 * the file. Neither: undefined (no line rather than a wrong path).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const SCENARIO_SCHEMA = 'scenario.schema.json';

function isCallscriptRoot(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'callscript';
  } catch {
    return false;
  }
}

/** The reference for a scenario file written at `file`, or undefined. */
export function scenarioSchemaRef(file: string): string | undefined {
  const from = dirname(resolve(file));
  for (let dir = from; ; dir = dirname(dir)) {
    const own = join(dir, 'schemas', SCENARIO_SCHEMA);
    const installed = join(dir, 'node_modules', 'callscript', 'schemas', SCENARIO_SCHEMA);
    const found = existsSync(own) && isCallscriptRoot(dir) ? own : existsSync(installed) ? installed : undefined;
    if (found) return relative(from, found).split(sep).join('/');
    if (dirname(dir) === dir) return undefined;
  }
}
