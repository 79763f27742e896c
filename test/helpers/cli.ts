/**
 * How a test starts `callscript` as a process: `node dist/cli/main.js` when dist/ was built
 * from the sources as they are (`npm ci` builds it; CI runs on that build), else
 * `node --import tsx src/cli/main.ts`. A process started from dist/ loads in about half the
 * CPU time (no TypeScript loader hooks); one started from the sources never runs stale
 * code: a source file edited after the last build (its mtime newer than dist's) sends every
 * test back to the sources until `npm run build`.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The newest modification time of a file under `dir` (recursively), in ms. */
function newest(dir: string): number {
  let max = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return max;
}

/** Whether dist/ holds a build of src/ as it is now. */
export function distFresh(root = ROOT): boolean {
  let built: number;
  try {
    built = statSync(join(root, 'dist/cli/main.js')).mtimeMs;
  } catch {
    return false;
  }
  return newest(join(root, 'src')) <= built;
}

/** node's arguments before callscript's own: the built entry point, or the sources through tsx (absolute paths). */
export const CLI: readonly string[] = distFresh()
  ? [join(ROOT, 'dist/cli/main.js')]
  : ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];
