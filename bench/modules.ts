/**
 * `npm run bench:modules` (node --expose-gc --import tsx bench/modules.ts): what one big
 * module costs when many flows enter it (issue 21, item 5).
 *
 * A directory holds a generated module of BENCH_MODULE_STEPS steps (default 19,000, about
 * 1 MB: test/helpers/big-flow.ts, bigModule) and N tiny flows (about 120 bytes each) that
 * enter it, for each N of BENCH_CALLERS (default "1,5,30"). For each directory, in a fresh
 * process each (so that one's memory does not count in the other's):
 *   - `validate`: callscript validate on the directory (src/cli/validate.ts): wall and CPU
 *     time of the call, the process's peak RSS;
 *   - `load`: what `serve` does at start, Registry.fromDirectory: wall and CPU time, the
 *     heap held once loaded (after full garbage collections), the peak RSS;
 * then the cost of each caller past the first. Time includes the module's check (about a
 * second per megabyte), once: the figures to compare are the per-caller ones.
 *
 * The module's steps and machine states are made once and shared, but each caller's
 * machine holds them: the flows of a directory hold at most 100,000 steps of modules
 * (SUBFLOW_TOTAL_TOO_LARGE), so 5 callers of the 19,000-step module load and the 25 others
 * are refused. 1 to 5: what a caller costs; 1 to 30: what 30 cost in all, bounded.
 *
 * On a shared machine compare the CPU columns: wall time includes waiting for the CPU.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { bigModule, moduleCaller } from '../test/helpers/big-flow.js';

interface Figures {
  wallMs: number;
  cpuMs: number;
  /** Peak resident set size of the process, MB. */
  rssMb: number;
  /** Heap held once loaded (load only), MB. */
  heapMb?: number;
  /** What validate's summary line says, or the load's counts. */
  said: string;
}

const MB = 1024 * 1024;

async function child(what: string, dir: string): Promise<Figures> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let said: string;
  if (what === 'validate') {
    const { validate } = await import('../src/cli/validate.js');
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString();
        done();
      },
    });
    await validate([dir], sink);
    said = out.trim().split('\n').pop() ?? '';
  } else {
    const { Registry } = await import('../src/registry/registry.js');
    const { registry, report } = await Registry.fromDirectory(dir);
    said = `${registry.list().length} flows served, ${report.refused.length} refused`;
    (globalThis as { held?: unknown }).held = registry;
  }
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const out: Figures = {
    wallMs,
    cpuMs: (c.user + c.system) / 1000,
    rssMb: process.resourceUsage().maxRSS / 1024,
    said,
  };
  if (what === 'load' && global.gc) {
    for (let i = 0; i < 4; i++) global.gc();
    out.heapMb = process.memoryUsage().heapUsed / MB;
  }
  return out;
}

if (process.argv[2] === '--child') {
  console.log(JSON.stringify(await child(process.argv[3]!, process.argv[4]!)));
  process.exit(0);
}

const steps = Number(process.env.BENCH_MODULE_STEPS ?? 19_000);
const counts = (process.env.BENCH_CALLERS ?? '1,5,30').split(',').map(Number);
const module = bigModule(steps);
const self = fileURLToPath(import.meta.url);

function run(what: string, dir: string): Figures {
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--child', what, dir], {
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  });
  if (r.status !== 0) throw new Error(`${what} ${dir} failed (${r.status ?? r.signal}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Figures;
}

const f0 = (n: number) => n.toFixed(0);
const row = (label: string, f: Figures) =>
  console.log(
    `${label.padEnd(22)}${f0(f.wallMs).padStart(7)} ms wall ${f0(f.cpuMs).padStart(7)} ms cpu ` +
      `${f0(f.rssMb).padStart(6)} MB peak RSS` +
      (f.heapMb !== undefined ? ` ${f0(f.heapMb).padStart(6)} MB heap held` : '') +
      `  (${f.said})`,
  );

console.log(
  `a module of ${steps.toLocaleString('en-US')} steps (${(Buffer.byteLength(module) / MB).toFixed(2)} MiB) ` +
    `entered by tiny flows; node ${process.version}`,
);
const results = new Map<number, { validate: Figures; load: Figures }>();
for (const n of counts) {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-bench-modules-'));
  try {
    writeFileSync(join(dir, 'big-module.yaml'), module);
    for (let i = 0; i < n; i++) writeFileSync(join(dir, `c${i}.yaml`), moduleCaller(`c${i}`));
    console.log(`\n${n} caller${n === 1 ? '' : 's'}`);
    const validate = run('validate', dir);
    row('  validate', validate);
    const load = run('load', dir);
    row('  load (serve start)', load);
    results.set(n, { validate, load });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const lo = Math.min(...counts);
const a = results.get(lo)!;
for (const hi of counts.filter((n) => n > lo)) {
  const b = results.get(hi)!;
  const per = (x: number, y: number) => ((y - x) / (hi - lo)).toFixed(1);
  console.log(`\neach caller past ${lo} (from ${lo} to ${hi} callers):`);
  console.log(
    `  validate             ${per(a.validate.cpuMs, b.validate.cpuMs)} ms cpu, ` +
      `${per(a.validate.rssMb, b.validate.rssMb)} MB peak RSS`,
  );
  console.log(
    `  load (serve start)   ${per(a.load.cpuMs, b.load.cpuMs)} ms cpu, ` +
      `${per(a.load.heapMb ?? 0, b.load.heapMb ?? 0)} MB heap held`,
  );
}
