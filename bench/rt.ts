/**
 * `npm run bench`: throughput, p99 latency and server CPU time per request of callscript's
 * /rt next to a bare Fastify route in the same run, and the bytes per stored call.
 *
 * Each server runs in a child process of its own (bench/servers.ts); autocannon loads them
 * from this one. The CPU per request is the server process's own CPU time
 * (process.cpuUsage(), user + system, all its threads, GC included), sampled over IPC just
 * before and just after each load phase, divided by the responses autocannon got in that
 * phase: what the server spent, not wall time, so autocannon's own CPU and the other
 * server's do not count.
 *
 * Each autocannon connection plays whole calls of flows/front-desk.yaml with a fresh callid
 * per call (above 2^53, to exercise the lossless path): welcome, menu, "3" (the address),
 * menu again, "1" (sales dialout), then the terminal HANGUP request once sales answered and
 * the call was over. The bare route gets the same bodies.
 *
 * /rt is loaded twice: on the memory store, and on the Redis store (REDIS_URL, default
 * redis://127.0.0.1:6379; keys under callscript-bench:<pid>:, removed at the end), whose
 * redis-server CPU per request (INFO cpu: all its clients) is printed beside. Without Redis
 * the bench says it skipped Redis mode and goes on.
 *
 * Targets (issue #2): /rt >= 50% of the bare route's requests/s, p99 <= 2x the bare
 * route's, < 2 KB per stored call; issue #8: CPU per request <= 1.8x the bare route's;
 * issue #10: /rt on Redis >= 85% of /rt on memory's requests/s.
 * Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (50), BENCH_ROUNDS (3: each round
 * loads bare, then /rt on memory, then on Redis; the ratios are taken per round, then the
 * median), BENCH_WARMUP (seconds of unmeasured load on each server first, default 3),
 * BENCH_OBSERVERS (off: the /rt servers run without call history and metrics, to see what
 * they cost), BENCH_LOG_LEVEL (the /rt servers' log level, default info as `callscript serve`; false
 * for no logger), BENCH_PROFILE (a directory: the /rt servers run with `node --cpu-prof`
 * and write their profiles into its memory/ and redis/ folders).
 * Heap per live call: `npm run bench:memory`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { buildServer } from '../src/http/server.js';
import { MemoryStore } from '../src/store/memory.js';
import { BenchRedis } from './redis.js';
import { FRONT_DESK_CALL, rtBody } from './front-desk.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const FLOWS = new URL('../flows', import.meta.url).pathname;

let nextCall = 10_000_000_000_000_000n;
function requests(path: string): autocannon.Request[] {
  return FRONT_DESK_CALL.map(([command, id, result, status], i) => ({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    setupRequest: (req: autocannon.Request, context: object) => {
      const ctx = context as { callid?: bigint };
      if (i === 0) ctx.callid = nextCall++;
      return { ...req, body: rtBody(ctx.callid!, command, id, result, status) };
    },
  }));
}

interface Server {
  child: ChildProcess;
  url: string;
  path: string;
}

function startServer(kind: 'bare' | 'rt' | 'redis', redis?: BenchRedis): Promise<Server> {
  // stdout to /dev/null: the /rt servers' log lines are written (a cost), not read.
  // a directory per server: each thread (tsx's loader runs on one of its own) writes a profile
  const dir = `${process.env.BENCH_PROFILE}/${kind === 'rt' ? 'memory' : kind}`;
  const profile = process.env.BENCH_PROFILE && kind !== 'bare' ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
  const args = redis ? [redis.url, redis.prefix] : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', new URL('./servers.ts', import.meta.url).pathname, kind, ...args],
    { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  );
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready?: number }) => {
      if (m.ready)
        resolve({ child, url: `http://127.0.0.1:${m.ready}`, path: kind === 'bare' ? '/bare' : '/rt/front-desk' });
    });
    child.once('exit', (code) => reject(new Error(`bench server ${kind} exited with ${code}`)));
  });
}

/** The server process's CPU time so far (user and system), µs. */
function cpuOf(s: Server): Promise<NodeJS.CpuUsage> {
  return new Promise((resolve) => {
    const on = (m: { cpu?: NodeJS.CpuUsage }) => {
      if (!m.cpu) return;
      s.child.off('message', on);
      resolve(m.cpu);
    };
    s.child.on('message', on);
    s.child.send('cpu');
  });
}

/** One call over HTTP, checking every reply: the load must measure the call path, not errors. */
async function checkCall(s: Server): Promise<void> {
  const callid = nextCall++;
  for (const [command, id, result, status, want] of FRONT_DESK_CALL) {
    const res = await fetch(s.url + s.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rtBody(callid, command, id, result, status),
    });
    const text = await res.text();
    const got = res.status === 200 && want !== '' ? (JSON.parse(text) as { command?: string }).command : '';
    if (res.status !== 200 || got !== want)
      throw new Error(
        `bench call: after ${command || 'the first request'} (${id}) /rt ` +
          `answered ${res.status} ${text.slice(0, 200)}, expected ${want || 'the end'}`,
      );
  }
}

interface Run {
  result: autocannon.Result;
  /** Exact percentiles from every response time (autocannon's histogram keeps whole ms). */
  p50: number;
  p99: number;
  /** Server CPU time (user + system) per response, µs. */
  cpu: number;
  /** Of which system time, µs. */
  sys: number;
  /** redis-server's CPU time per response, µs (Redis mode only). */
  redisCpu?: number;
}

async function load(s: Server, duration: number, redis?: BenchRedis): Promise<Run> {
  const times: number[] = [];
  const redisBefore = await redis?.cpu();
  const before = await cpuOf(s);
  // Without a callback, autocannon returns its instance: an event emitter that is also a promise.
  const instance = autocannon({
    url: s.url,
    connections,
    duration,
    requests: requests(s.path),
  }) as unknown as Promise<autocannon.Result> & import('node:events').EventEmitter;
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => times.push(ms));
  const result = await instance;
  const after = await cpuOf(s);
  const redisAfter = await redis?.cpu();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  const n = result.requests.total;
  const run: Run = {
    result,
    p50: at(0.5),
    p99: at(0.99),
    cpu: (after.user + after.system - before.user - before.system) / n,
    sys: (after.system - before.system) / n,
  };
  if (redisBefore !== undefined && redisAfter !== undefined) run.redisCpu = (redisAfter - redisBefore) / n;
  return run;
}

const reqs = (r: Run) => r.result.requests.average.toFixed(0);
function line(name: string, r: Run): string {
  const redis = r.redisCpu !== undefined ? `   redis-server ${r.redisCpu.toFixed(1)} µs/req` : '';
  return (
    `${name.padEnd(10)} ${reqs(r).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   ` +
    `p99 ${r.p99.toFixed(2).padStart(6)} ms   cpu ${r.cpu.toFixed(1).padStart(6)} µs/req ` +
    `(sys ${r.sys.toFixed(1)})   non-2xx ${r.result.non2xx}   errors ${r.result.errors}${redis}`
  );
}

/** `a : b` figures of one round: throughput, p99, CPU per request. */
function ratios(name: string, a: Run, b: Run): string {
  return (
    `${name}  throughput ${((a.result.requests.average / b.result.requests.average) * 100).toFixed(0)}%   ` +
    `p99 ${(a.p99 / b.p99).toFixed(2)}x   cpu per request ${(a.cpu / b.cpu).toFixed(2)}x`
  );
}

/** Snapshot bytes of a call held at the front-desk menu (in this process, through inject). */
async function snapshotBytes(n: number): Promise<number> {
  const store = new MemoryStore();
  const app = await buildServer({ flowsDir: FLOWS, logLevel: false, store });
  let total = 0;
  for (let i = 0; i < n; i++) {
    const id = 20_000_000_000_000_000n + BigInt(i);
    for (const [command, cid, result, status] of FRONT_DESK_CALL.slice(0, 2)) {
      await app.inject({
        method: 'POST',
        url: '/rt/front-desk',
        headers: { 'content-type': 'application/json' },
        payload: rtBody(id, command, cid, result, status),
      });
    }
    total += Buffer.byteLength((await store.get(String(id))) ?? '');
  }
  await app.close();
  return total / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = await BenchRedis.open(redisUrl, `callscript-bench:${process.pid}:`);
const servers = await Promise.all([
  startServer('bare'),
  startServer('rt'),
  ...(typeof redis === 'string' ? [] : [startServer('redis', redis)]),
]);
const [bareServer, rtServer, redisServer] = servers as [Server, Server, Server | undefined];
const onRedis = typeof redis === 'string' ? undefined : redis;
try {
  if (rounds < 1) throw new Error('BENCH_ROUNDS must be at least 1');
  await checkCall(rtServer);
  if (redisServer) await checkCall(redisServer);
  console.log(
    `callscript bench: ${connections} connections, ${seconds} s per target and round, front-desk calls ` +
      `of ${FRONT_DESK_CALL.length} requests; /rt logs at ${process.env.BENCH_LOG_LEVEL ?? 'info'}`,
  );
  console.log(
    typeof redis === 'string'
      ? `skipped Redis mode: ${redis} (set REDIS_URL or start redis-server)`
      : `Redis mode: ${redisUrl}, keys under ${redis.prefix} (removed at the end)`,
  );
  if (warmup > 0) {
    await load(bareServer, warmup);
    await load(rtServer, warmup);
    if (redisServer) await load(redisServer, warmup, onRedis);
  }
  // Alternate the targets so that noise from a shared machine hits them alike; each
  // round's ratios compare them under the same machine load.
  const runs: { bare: Run; rt: Run; redis?: Run }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const bare = await load(bareServer, seconds);
    const rt = await load(rtServer, seconds);
    const onr = redisServer ? await load(redisServer, seconds, onRedis) : undefined;
    runs.push({ bare, rt, ...(onr ? { redis: onr } : {}) });
    console.log(`round ${round}:`);
    console.log(`  ${line('bare', bare)}`);
    console.log(`  ${line('/rt memory', rt)}`);
    if (onr) console.log(`  ${line('/rt redis', onr)}`);
    console.log(`  ${ratios('/rt : bare', rt, bare)}`);
    if (onr) console.log(`  ${ratios('redis : memory', onr, rt)}`);
  }
  // The median round keeps a noisy round (a neighbour's burst) from deciding.
  const throughput = median(runs.map((r) => r.rt.result.requests.average / r.bare.result.requests.average));
  const p99 = median(runs.map((r) => r.rt.p99 / r.bare.p99));
  const cpu = median(runs.map((r) => r.rt.cpu / r.bare.cpu));
  const onRedisRuns = runs.flatMap((r) => (r.redis ? [{ ...r, redis: r.redis }] : []));
  const redisCpu = onRedisRuns.length
    ? `, /rt on Redis ${median(onRedisRuns.map((r) => r.redis.cpu)).toFixed(1)} µs/req (and ` +
      `redis-server ${median(onRedisRuns.map((r) => r.redis.redisCpu ?? NaN)).toFixed(1)} µs/req)`
    : '';
  console.log(
    `medians of ${rounds} rounds: bare ${median(runs.map((r) => r.bare.cpu)).toFixed(1)} µs/req, ` +
      `/rt ${median(runs.map((r) => r.rt.cpu)).toFixed(1)} µs/req${redisCpu} of server CPU`,
  );
  console.log(
    `throughput ratio /rt : bare = ${(throughput * 100).toFixed(0)}% (target >= 50%) ` +
      ` ${throughput >= 0.5 ? 'OK' : 'BELOW TARGET'}`,
  );
  console.log(`p99 ratio /rt : bare = ${p99.toFixed(2)}x (target <= 2x)  ${p99 <= 2 ? 'OK' : 'ABOVE TARGET'}`);
  console.log(
    `cpu per request ratio /rt : bare = ${cpu.toFixed(2)}x (target <= 1.8x)  ${cpu <= 1.8 ? 'OK' : 'ABOVE TARGET'}`,
  );
  if (onRedisRuns.length) {
    const r = median(onRedisRuns.map((x) => x.redis.result.requests.average / x.rt.result.requests.average));
    const c = median(onRedisRuns.map((x) => x.redis.cpu / x.rt.cpu));
    console.log(
      `throughput ratio Redis : memory = ${(r * 100).toFixed(0)}% (target >= 85%) ` +
        ` ${r >= 0.85 ? 'OK' : 'BELOW TARGET'}; cpu per request ${c.toFixed(2)}x`,
    );
  } else console.log('throughput ratio Redis : memory: skipped (no Redis)');
  const snapshot = await snapshotBytes(1000);
  console.log(
    `stored call at the menu: ${snapshot.toFixed(0)} bytes of snapshot (target < ` +
      `2048) ${snapshot < 2048 ? 'OK' : 'ABOVE TARGET'}; heap per live call: npm run bench:memory`,
  );
} finally {
  // the servers stop (and write their profiles) before the bench's keys go
  await Promise.all(
    servers.map((s) =>
      s.child.exitCode === null && s.child.connected
        ? new Promise((r) => (s.child.once('exit', r), s.child.disconnect()))
        : undefined,
    ),
  );
  if (onRedis) console.log(`removed ${await onRedis.close()} bench keys from Redis`);
}
