#!/usr/bin/env node
/**
 * `npm test`'s static checks, run at the same time (each takes a core for some 20 s): the type
 * check (`tsc --noEmit`, sources and tests) and `npm run lint` (prettier, then eslint). Each
 * one's output is printed once it ends, in that order; exits 1 if either failed.
 */
import { spawn } from 'node:child_process';

const checks = [
  ['tsc', ['--noEmit', '-p', 'tsconfig.json']],
  ['npm', ['run', '--silent', 'lint']],
];

const runs = checks.map(
  ([cmd, args]) =>
    new Promise((resolve) => {
      const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (out += d));
      c.on('error', (e) => resolve({ name: `${cmd} ${args.join(' ')}`, code: 1, out: `${out}${e.message}\n` }));
      c.on('close', (code) => resolve({ name: `${cmd} ${args.join(' ')}`, code, out }));
    }),
);

let failed = false;
for (const run of runs) {
  const { name, code, out } = await run;
  process.stdout.write(out);
  if (code !== 0) {
    process.stderr.write(`${name}: exit ${code}\n`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
