/**
 * `npm run bench:date`: µs per render of the flows' `date` templates, through callscript's
 * render (names from cached formatters, src/flow/dates.ts) next to liquid's own `date`
 * filter (a new Intl.DateTimeFormat per name) in the same run, and how much the process's
 * resident memory grew over each run (run with --expose-gc for a steadier figure).
 */
import { Liquid } from 'liquidjs';
import { render, type Scope } from '../src/flow/expr.js';

const scope: Scope = {
  vars: { appointment: '2025-06-12T14:05:00Z', renewal: '2025-07-01T00:00:00Z' },
  call: {},
  result: '',
  error: '',
};
const TEMPLATES = [
  "{{ vars.appointment | date: '%A %-d %B at %-I:%M %p' }}",
  "{{ vars.renewal | date: '%-d %B %Y' }}",
  "{{ vars.appointment | date: '%d/%m %H:%M' }}",
];
const stock = new Liquid({
  strictFilters: true,
  strictVariables: false,
  ownPropertyOnly: true,
  cache: false,
  preserveTimezones: true,
});
const parsed = TEMPLATES.map((t) => stock.parse(t));

function run(fn: () => unknown, n: number): { us: number; rssMB: number } {
  for (let i = 0; i < 500; i++) fn();
  global.gc?.();
  const rss = process.memoryUsage().rss;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const us = Number(process.hrtime.bigint() - t0) / 1000 / n;
  global.gc?.();
  return { us, rssMB: (process.memoryUsage().rss - rss) / 2 ** 20 };
}

const n = Number(process.env.BENCH_RENDERS ?? 20_000);
for (const [i, tpl] of TEMPLATES.entries()) {
  if (render(tpl, scope) !== stock.renderSync(parsed[i]!, scope)) throw new Error(`different output for ${tpl}`);
}
// All of callscript's runs first: liquid's leave native garbage behind that would slow them.
const ours = TEMPLATES.map((tpl) => run(() => render(tpl, scope), n));
const theirs = TEMPLATES.map((_, i) => run(() => stock.renderSync(parsed[i]!, scope), n));
console.log(`date filter: µs per render (${n} renders each; growth of the resident memory over the run)`);
for (const [i, tpl] of TEMPLATES.entries()) {
  const a = ours[i]!;
  const b = theirs[i]!;
  console.log(
    `  ${tpl.padEnd(58)} callscript ${a.us.toFixed(1).padStart(6)} µs (${a.rssMB.toFixed(0).padStart(4)} MB) ` +
      `  liquid's date ${b.us.toFixed(1).padStart(6)} µs (${b.rssMB.toFixed(0).padStart(4)} MB)`,
  );
}
