/**
 * `npm run bench:big` (node --import tsx bench/big-flow.ts): how big flows load.
 *
 * For generated flows of 2,000 and 10,000 steps (test/helpers/big-flow.ts: read menus
 * with four branches that each say something): the time of checkFlow, of loadYaml in it
 * (the quick loader, src/flow/yaml-quick.ts, takes these flows), of the yaml package's
 * parseDocument alone (what loadYaml runs on a file the quick loader declines), and of
 * compileFlow on top of the check. Then the time to format 9,999 diagnostics of the 10,000-step file (every menu's
 * max_digits made out of bounds) with their code frames. Wall and CPU milliseconds, the
 * median of BENCH_ROUNDS rounds (default 3) after a warm-up; sizes with BENCH_STEPS
 * (default "2000,10000").
 *
 * Target (issue #8): the 10,000-step flow checks in well under 5 s. On a shared machine
 * compare the CPU column: wall time includes waiting for the CPU.
 */
import { LineCounter, parseDocument } from 'yaml';
import { checkFlow } from '../src/flow/check.js';
import { loadYaml } from '../src/flow/yaml.js';

/** Big flows go past the default 2 MiB file limit: checked as with limits.flow_file_bytes raised. */
const BIG = { maxFileBytes: 64 * 1024 * 1024 };
import { compileFlow } from '../src/engine/compile.js';
import { formatDiagnostics } from '../src/flow/format.js';
import { bigFlow } from '../test/helpers/big-flow.js';

const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const sizes = (process.env.BENCH_STEPS ?? '2000,10000').split(',').map(Number);

interface Time {
  wall: number;
  cpu: number;
}

function time(f: () => void): Time {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

/** The median round of `f` (by wall time). */
function median(f: () => void): Time {
  const runs = Array.from({ length: rounds }, () => time(f)).sort((a, b) => a.wall - b.wall);
  return runs[Math.floor(runs.length / 2)]!;
}

const ms = (t: Time) => `${t.wall.toFixed(0).padStart(7)} ms wall ${t.cpu.toFixed(0).padStart(7)} ms cpu`;
const row = (label: string, t: Time, note = '') => console.log(`${label.padEnd(34)}${ms(t)}${note}`);

// warm-up: the checker's modules, liquid, CEL, the JIT
for (let i = 0; i < 3; i++) compileFlow(checkFlow(bigFlow(200), 'warm.yaml', BIG).model!, bigFlow(200));

console.log(`big flows: median of ${rounds} round(s), node ${process.version}`);
for (const steps of sizes) {
  const text = bigFlow(steps);
  const file = `big-${steps}.yaml`;
  const first = checkFlow(text, file, BIG);
  if (!first.model || first.diagnostics.length > 0)
    throw new Error(`the ${steps}-step flow does not check clean: ${JSON.stringify(first.diagnostics.slice(0, 3))}`);
  const model = first.model;
  console.log(`\n${steps.toLocaleString('en-US')} steps, ${(Buffer.byteLength(text) / 1024 / 1024).toFixed(2)} MiB`);
  row(
    '  checkFlow',
    median(() => void checkFlow(text, file, BIG)),
  );
  row(
    '    of which loadYaml',
    median(() => void loadYaml(text, file, BIG.maxFileBytes)),
  );
  row(
    '  yaml parseDocument (if declined)',
    median(
      () =>
        void parseDocument(text, {
          lineCounter: new LineCounter(),
          uniqueKeys: false,
          merge: true,
          prettyErrors: false,
          strict: true,
        }),
    ),
  );
  row(
    '  compileFlow (after the check)',
    median(() => void compileFlow(model, text)),
  );
}

const steps = Math.max(...sizes);
const broken = bigFlow(steps).replace(/max_digits: 1$/gm, 'max_digits: 99');
const { diagnostics } = checkFlow(broken, 'broken.yaml', BIG);
const sources = new Map([['broken.yaml', broken]]);
let out = '';
const t = median(() => void (out = formatDiagnostics(diagnostics, sources)));
console.log(
  `\nformatting ${diagnostics.length.toLocaleString('en-US')} diagnostics of ` +
    `the ${steps.toLocaleString('en-US')}-step file`,
);
row('  formatDiagnostics', t, ` (${(out.length / 1024 / 1024).toFixed(1)} MiB of text)`);
