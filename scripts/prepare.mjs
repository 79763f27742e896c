#!/usr/bin/env node
/**
 * npm's `prepare` (run by `npm ci` and `npm install` in this checkout): builds dist/ with
 * `npm run build`. Under `npm ci --omit=dev` (a production install) TypeScript is not
 * installed: a dist/ built before (a build stage, CI) is kept as it is; without one, the
 * install fails and says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url);
let typescript = true;
try {
  createRequire(new URL('package.json', root)).resolve('typescript');
} catch {
  typescript = false;
}

if (!typescript) {
  if (existsSync(new URL('dist/cli/main.js', root))) {
    process.stdout.write(
      'callscript: TypeScript is not installed (a production install, --omit=dev): dist/ as built before is used\n',
    );
    process.exit(0);
  }
  process.stderr.write(
    'callscript: dist/ is not built and TypeScript is not installed (--omit=dev): build first with the dev ' +
      'dependencies (npm ci, or a build stage: docs/deploy.md), then install with --omit=dev\n',
  );
  process.exit(1);
}

// npm sets npm_execpath to its own script for the scripts it runs
const npm = process.env.npm_execpath;
const r = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
if (r.error) throw r.error;
process.exit(r.status ?? 1);
