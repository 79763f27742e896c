/**
 * The compiled server the benchmarks load (dist/, what `npm start` runs): built first with
 * `npm run build` when dist/ is missing or older than a file under src/ (newest source file
 * against dist/index.js, which every build writes). A clean clone after `npm ci` has no dist/
 * yet: the first `npm run bench` builds it (about a minute on 2 cores).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/** A file of dist/ as a URL to import. */
export const distUrl = (path: string): string => new URL(`../dist/${path}`, import.meta.url).href;

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Builds dist/ unless it is newer than every source file; says so on stderr. */
export function ensureDist(): void {
  const built = join(root, 'dist/index.js');
  const why = !existsSync(built)
    ? 'dist/ is missing'
    : newest(join(root, 'src')) > statSync(built).mtimeMs
      ? 'src/ changed since dist/ was built'
      : undefined;
  if (!why) return;
  process.stderr.write(`bench: ${why}: npm run build\n`);
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status ?? r.signal})`);
}
