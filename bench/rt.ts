/**
 * `npm run bench`: throughput and p99 latency of callscript's /rt next to a bare Fastify
 * route in the same run, and the bytes per stored call.
 *
 * The servers run in a child process; autocannon loads them from this one. Each
 * autocannon connection plays whole calls of bench/flows/bench.yaml with a fresh callid
 * per call (above 2^53, to exercise the lossless path): first request, the result of each
 * command, then the HANGUP request. The bare route gets the same bodies.
 *
 * Targets (issue #2): /rt >= 50% of the bare route's requests/s, p99 <= 2x the bare
 * route's, < 2 KB per stored call. Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (50),
 * BENCH_ROUNDS (3: each round loads bare then /rt; the ratios are the median of the rounds').
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { buildServer } from '../src/http/server.js';
import { MemoryStore } from '../src/store/memory.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

let nextCall = 10_000_000_000_000_000n;
function body(callid: bigint, command: string, id: number, result: string, status = 'UP'): string {
  return (
    `{"app":"BENCHAPP","callid":${callid},"request_hash":null,"cli_name":"","cli_number":"+33612345678",` +
    `"date_started":"2026-11-22 10:00:00","number":"+33123456789","command":${JSON.stringify(command)},` +
    `"command_id":${id},"command_result":${JSON.stringify(result)},"command_error":"","call_status":"${status}",` +
    `"cdr_field":"","variables":{}}`
  );
}

/** One call of the bench flow: [command just finished, its id, its result, status]. */
const CALL: [string, number, string, string][] = [
  ['', 0, '', 'UP'], // -> play welcome (1)
  ['play', 1, '0', 'UP'], // -> read menu (2)
  ['read', 2, '1', 'UP'], // -> play news (3)
  ['play', 3, '0', 'UP'], // -> hangup (4)
  ['hangup', 4, '', 'HANGUP'], // -> end
];

function requests(path: string): autocannon.Request[] {
  return CALL.map(([command, id, result, status], i) => ({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    setupRequest: (req: autocannon.Request, context: object) => {
      const ctx = context as { callid?: bigint };
      if (i === 0) ctx.callid = nextCall++;
      return { ...req, body: body(ctx.callid!, command, id, result, status) };
    },
  }));
}

interface Run {
  result: autocannon.Result;
  /** Exact percentiles from every response time (autocannon's histogram keeps whole ms). */
  p50: number;
  p99: number;
}

async function load(url: string, path: string): Promise<Run> {
  const times: number[] = [];
  // Without a callback, autocannon returns its instance: an event emitter that is also a promise.
  const instance = autocannon({ url, connections, duration: seconds, requests: requests(path) }) as unknown as Promise<autocannon.Result> & import('node:events').EventEmitter;
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => times.push(ms));
  const result = await instance;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { result, p50: at(0.5), p99: at(0.99) };
}

function line(name: string, r: Run): string {
  return `${name.padEnd(10)} ${r.result.requests.average.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   non-2xx ${r.result.non2xx}   errors ${r.result.errors}`;
}

async function bytesPerCall(n: number): Promise<{ snapshot: number; heap: number }> {
  const store = new MemoryStore();
  const app = await buildServer({ flowsDir: new URL('./flows', import.meta.url).pathname, logLevel: false, store });
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) {
    const id = 20_000_000_000_000_000n + BigInt(i);
    await app.inject({ method: 'POST', url: '/rt/bench', headers: { 'content-type': 'application/json' }, payload: body(id, '', 0, '') });
    await app.inject({ method: 'POST', url: '/rt/bench', headers: { 'content-type': 'application/json' }, payload: body(id, 'play', 1, '0') });
  }
  global.gc?.();
  const heap = (process.memoryUsage().heapUsed - before) / n;
  let total = 0;
  for (let i = 0; i < n; i++) total += Buffer.byteLength((await store.get(String(20_000_000_000_000_000n + BigInt(i))))!);
  await app.close();
  return { snapshot: total / n, heap };
}

const child = spawn(process.execPath, ['--import', 'tsx', new URL('./servers.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
const ports = await new Promise<[number, number]>((resolve, reject) => {
  child.stdout.on('data', (d: Buffer) => {
    const m = /ready (\d+) (\d+)/.exec(d.toString());
    if (m) resolve([Number(m[1]), Number(m[2])]);
  });
  child.on('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
});
try {
  console.log(`callscript bench: ${connections} connections, ${seconds} s per target, calls of ${CALL.length} requests`);
  // Alternate the two targets so that noise from a shared machine hits both alike.
  let bare: Run | undefined;
  let rt: Run | undefined;
  const ratios: number[] = [];
  const p99s: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const b = await load(`http://127.0.0.1:${ports[0]}`, '/bare');
    const r = await load(`http://127.0.0.1:${ports[1]}`, '/rt/bench');
    console.log(`round ${round + 1}: bare ${b.result.requests.average.toFixed(0)} req/s p99 ${b.p99.toFixed(2)} ms, /rt ${r.result.requests.average.toFixed(0)} req/s p99 ${r.p99.toFixed(2)} ms`);
    ratios.push(r.result.requests.average / b.result.requests.average);
    p99s.push(r.p99 / b.p99);
    if (!bare || b.result.requests.average > bare.result.requests.average) bare = b;
    if (!rt || r.result.requests.average > rt.result.requests.average) rt = r;
  }
  if (!bare || !rt) throw new Error('BENCH_ROUNDS must be at least 1');
  console.log('best rounds:');
  console.log(line('bare', bare));
  console.log(line('/rt', rt));
  // Each round compares the two targets under the same machine load; the median round
  // keeps a noisy round (a neighbour's burst) from deciding.
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ratio = median(ratios);
  const p99 = median(p99s);
  console.log(`per round: throughput ${ratios.map((x) => `${(x * 100).toFixed(0)}%`).join(', ')}; p99 ${p99s.map((x) => `${x.toFixed(2)}x`).join(', ')} (medians below)`);
  console.log(`throughput ratio /rt : bare = ${(ratio * 100).toFixed(0)}% (target >= 50%)  ${ratio >= 0.5 ? 'OK' : 'BELOW TARGET'}`);
  console.log(`p99 ratio /rt : bare = ${p99.toFixed(2)}x (target <= 2x)  ${p99 <= 2 ? 'OK' : 'ABOVE TARGET'}`);
  const mem = await bytesPerCall(2000);
  console.log(`stored call: ${mem.snapshot.toFixed(0)} bytes of snapshot (target < 2048) ${mem.snapshot < 2048 ? 'OK' : 'ABOVE TARGET'}; heap ~${mem.heap.toFixed(0)} bytes per call in the memory store${global.gc ? '' : ' (run with --expose-gc for a steadier figure)'}`);
} finally {
  child.kill('SIGTERM');
}
