/**
 * scripts/prepare.mjs, npm's `prepare` in this checkout: it builds when TypeScript is
 * installed, keeps a dist/ built before when it is not (npm ci --omit=dev), and fails
 * saying why when there is neither. Played in a temporary package whose `build` script
 * only writes a file.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function pkgDir(opts: { dist: boolean; typescript: boolean }): string {
  const d = mkdtempSync(join(tmpdir(), 'callscript-prepare-'));
  dirs.push(d);
  mkdirSync(join(d, 'scripts'));
  copyFileSync(join(root, 'scripts/prepare.mjs'), join(d, 'scripts/prepare.mjs'));
  writeFileSync(
    join(d, 'package.json'),
    JSON.stringify({
      name: 'p',
      version: '1.0.0',
      type: 'module',
      scripts: { build: "node -e \"require('fs').writeFileSync('built', 'yes')\"" },
    }),
  );
  if (opts.dist) {
    mkdirSync(join(d, 'dist/cli'), { recursive: true });
    writeFileSync(join(d, 'dist/cli/main.js'), '');
  }
  if (opts.typescript) {
    mkdirSync(join(d, 'node_modules/typescript'), { recursive: true });
    writeFileSync(
      join(d, 'node_modules/typescript/package.json'),
      JSON.stringify({ name: 'typescript', version: '5.9.0', main: 'index.js' }),
    );
    writeFileSync(join(d, 'node_modules/typescript/index.js'), '');
  }
  return d;
}

/** Runs the script as npm runs it (npm_execpath set when npm runs it; here `npm` from the PATH). */
const prepare = (cwd: string) => {
  const { npm_execpath: _drop, ...env } = process.env;
  return spawnSync(process.execPath, ['scripts/prepare.mjs'], { cwd, env, encoding: 'utf8' });
};

it('TypeScript installed: runs npm run build', () => {
  const d = pkgDir({ dist: false, typescript: true });
  const r = prepare(d);
  expect(r.status, r.stderr).toBe(0);
  expect(existsSync(join(d, 'built'))).toBe(true);
}, 60_000);

it('no TypeScript (--omit=dev) and dist/ built before: keeps it, says so, exit 0', () => {
  const d = pkgDir({ dist: true, typescript: false });
  const r = prepare(d);
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(
    'callscript: TypeScript is not installed (a production install, --omit=dev): dist/ as built before is used\n',
  );
  expect(existsSync(join(d, 'built'))).toBe(false);
}, 60_000);

it('no TypeScript and no dist/: exit 1 and what to do', () => {
  const d = pkgDir({ dist: false, typescript: false });
  const r = prepare(d);
  expect(r.status).toBe(1);
  expect(r.stderr).toBe(
    'callscript: dist/ is not built and TypeScript is not installed (--omit=dev): build first with the dev ' +
      'dependencies (npm ci, or a build stage: docs/deploy.md), then install with --omit=dev\n',
  );
}, 60_000);
