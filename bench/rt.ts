/**
 * `npm run bench`: server CPU time per request, throughput and p99 latency of callscript's /rt
 * next to a bare Fastify route in the same run, at saturation and at an equal fixed rate; the
 * bytes allocated per request; the bytes per stored call.
 *
 * The servers run from dist/, as `npm start` runs callscript: compiled JavaScript under plain
 * `node`, no tsx (bench/servers.mjs). dist/ is built first (`npm run build`) when it is missing or
 * older than a file under src/ (bench/dist.ts): a clean clone after `npm ci` builds it on the first
 * run. Each server runs in a child process of its own, the same shape for bare and /rt; the load
 * generators run in this one. The CPU per request is the server process's own CPU time
 * (process.cpuUsage(), user + system, all its threads, GC included), sampled over IPC just before
 * and just after each load phase, divided by the responses of that phase: what the server spent,
 * not wall time, so the load generator's CPU and the other server's do not count.
 *
 * Each connection plays whole calls of flows/front-desk.yaml with a fresh callid per call (above
 * 2^53, to exercise the lossless path): welcome, menu, "3" (the address), menu again, "1" (sales
 * dialout), then the terminal HANGUP request once sales answered and the call was over. The bare
 * route gets the same bodies.
 *
 * Each round loads, for BENCH_SECONDS each:
 * - at saturation (autocannon, BENCH_CONNECTIONS connections): bare, /rt on the memory store, /rt
 *   on the Redis store (REDIS_URL, default redis://127.0.0.1:6379; keys under
 *   callscript-bench:<pid>:, removed at the end; redis-server's CPU per request, INFO cpu of all its
 *   clients, printed beside). Without Redis the bench says it skipped Redis mode and goes on.
 * - at an equal rate (bench/paced.ts: requests evenly spaced, the same connections): bare, then /rt
 *   on memory, both at BENCH_RATE_SHARE of the throughput /rt on memory reached at saturation in that
 *   round (or at BENCH_RATE). At saturation the server with the cheaper request gets more of the
 *   load generator's wake-ups per request batched together; at an equal rate both see the same
 *   arrivals, so the CPU ratio compares the request paths alone.
 * The ratios are taken per round, then the median of the rounds; BENCH_ROUNDS alternate the targets
 * so that a shared machine's noise hits them alike. Each line also says how busy the server was
 * (its CPU per request times requests/s, % of one core): at saturation, a server far below 100%
 * was held back by the load generator or the machine, not by its own work. The machine's load
 * average before the bench starts its processes is printed first, marked BUSY at 1 or more.
 * Then the allocation phase (bench/alloc-phase.ts; alone: `npm run bench:alloc`): bytes allocated
 * per request over GC-free batches of one call, bare and /rt, in the same (warm) server processes.
 *
 * Targets, the median of BENCH_ROUNDS rounds on a quiet machine. Issue 23: /rt CPU per request
 * <= 5x the bare route's at saturation and <= 4.5x at an equal rate, <= 12 KB allocated per request
 * beyond the bare route's, /rt on Redis >= 90% of /rt on memory's requests/s. Issue #2: /rt >= 50%
 * of the bare route's requests/s and p99 <= 2x its p99 at saturation, < 2 KB per stored call.
 *
 * Env: BENCH_SECONDS (default 10, each load phase), BENCH_CONNECTIONS (50), BENCH_ROUNDS (3),
 * BENCH_WARMUP (seconds of unmeasured saturation on each server first, 3), BENCH_RATE_SHARE (the
 * equal rate as a share of /rt's saturation throughput in the round, 0.5), BENCH_RATE (a fixed
 * equal rate in requests/s instead; 0 skips the equal-rate phase), BENCH_ALLOC_BATCHES (call batches
 * per server in the allocation phase, 40; 0 skips it), BENCH_ALLOC_WARMUP (requests each server
 * serves at saturation right before that phase, 10 000: /rt's figure settles once its code is
 * optimised), BENCH_OBSERVERS (off: the /rt servers run
 * without call history and metrics, to see what they cost), BENCH_LOG_LEVEL (the /rt servers' log
 * level, default info as `callscript serve`; false for no logger), BENCH_PROFILE (a directory: the
 * /rt servers run with `node --cpu-prof` and write their profiles into its memory/ and redis/
 * folders). Heap per live call: `npm run bench:memory`.
 */
import { availableParallelism, loadavg } from 'node:os';
import { BenchRedis } from './redis.js';
import { FRONT_DESK_CALL, rtBody } from './front-desk.js';
import { ensureDist, distUrl } from './dist.js';
import { startServer, stopAll, type Server } from './children.js';
import { callids, checkCall, load, type Run } from './load.js';
import { allocPhase } from './alloc-phase.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const rateShare = Number(process.env.BENCH_RATE_SHARE ?? 0.5);
const fixedRate = process.env.BENCH_RATE !== undefined ? Number(process.env.BENCH_RATE) : undefined;
const allocBatches = Number(process.env.BENCH_ALLOC_BATCHES ?? 40);
const allocWarmup = Number(process.env.BENCH_ALLOC_WARMUP ?? 10_000);
if (!(rounds >= 1)) throw new Error('BENCH_ROUNDS must be at least 1');
if (!(rateShare > 0)) throw new Error('BENCH_RATE_SHARE must be above 0');
const FLOWS = new URL('../flows', import.meta.url).pathname;

/**
 * How busy the server was, % of one core (its CPU per request times requests/s). At saturation a
 * server well below 100% was not what limited the throughput: the load generator or the machine was.
 */
const busy = (r: Run) => (r.cpu * r.rps) / 1e4;

function line(name: string, r: Run): string {
  const redis = r.redisCpu !== undefined ? `   redis-server ${r.redisCpu.toFixed(1)} µs/req` : '';
  const late = r.late !== undefined ? `   late ${r.late}` : '';
  return (
    `${name.padEnd(15)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   ` +
    `p99 ${r.p99.toFixed(2).padStart(6)} ms   cpu ${r.cpu.toFixed(1).padStart(6)} µs/req ` +
    `(sys ${r.sys.toFixed(1)}, busy ${busy(r).toFixed(0).padStart(3)}%)   non-2xx ${r.non2xx}   ` +
    `errors ${r.errors}${late}${redis}`
  );
}

/** `a : b` figures of one round: throughput, p99, CPU per request. */
function ratios(name: string, a: Run, b: Run): string {
  return (
    `${name}  throughput ${((a.rps / b.rps) * 100).toFixed(0)}%   ` +
    `p99 ${(a.p99 / b.p99).toFixed(2)}x   cpu per request ${(a.cpu / b.cpu).toFixed(2)}x`
  );
}

const verdict = (ok: boolean, bad: string) => (ok ? 'OK' : bad);

/** Snapshot bytes of a call held at the front-desk menu (in this process, dist's server, through inject). */
async function snapshotBytes(n: number): Promise<number> {
  const { buildServer } = (await import(distUrl('http/server.js'))) as typeof import('../src/http/server.js');
  const { MemoryStore } = (await import(distUrl('store/memory.js'))) as typeof import('../src/store/memory.js');
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

interface Round {
  bare: Run;
  rt: Run;
  redis?: Run;
  /** The equal-rate phase: its rate, and bare and /rt at it. */
  equal?: { rate: number; bare: Run; rt: Run };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const newCallid = callids();
ensureDist();
// What the machine's other work takes before the bench adds its own processes (2 or 3, and Redis).
const loadBefore = loadavg()[0]!;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = await BenchRedis.open(redisUrl, `callscript-bench:${process.pid}:`);
const onRedis = typeof redis === 'string' ? undefined : redis;
const servers = await Promise.all([
  startServer('bare'),
  startServer('rt'),
  ...(onRedis ? [startServer('redis', onRedis)] : []),
]);
const [bareServer, rtServer, redisServer] = servers as [Server, Server, Server | undefined];
const at = { seconds, connections, newCallid };
try {
  await checkCall(rtServer, newCallid());
  if (redisServer) await checkCall(redisServer, newCallid());
  const equalRate =
    fixedRate === 0
      ? 'skipped'
      : fixedRate
        ? `${fixedRate} req/s`
        : `${rateShare * 100}% of /rt's saturation throughput`;
  console.log(
    `callscript bench (servers from dist/, plain node): ${connections} connections, ${seconds} s per target and ` +
      `phase, front-desk calls of ${FRONT_DESK_CALL.length} requests; /rt logs at ` +
      `${process.env.BENCH_LOG_LEVEL ?? 'info'}; equal rate: ${equalRate}`,
  );
  console.log(
    `machine: ${availableParallelism()} cores, load average ${loadBefore.toFixed(2)} before the bench` +
      (loadBefore >= 1 ? ': BUSY (other work takes a core or more): figures are noisy, read them as such' : ''),
  );
  console.log(
    onRedis
      ? `Redis mode: ${redisUrl}, keys under ${onRedis.prefix} (removed at the end)`
      : `skipped Redis mode: ${redis} (set REDIS_URL or start redis-server)`,
  );
  if (warmup > 0) {
    for (const s of servers)
      await load(s, { ...at, seconds: warmup, ...(s === redisServer ? { redis: onRedis } : {}) });
  }
  const runs: Round[] = [];
  for (let round = 1; round <= rounds; round++) {
    const bare = await load(bareServer, at);
    const rt = await load(rtServer, at);
    const onr = redisServer ? await load(redisServer, { ...at, redis: onRedis }) : undefined;
    const r: Round = { bare, rt, ...(onr ? { redis: onr } : {}) };
    const rate = fixedRate ?? Math.max(1, Math.round(rt.rps * rateShare));
    if (rate > 0)
      r.equal = { rate, bare: await load(bareServer, { ...at, rate }), rt: await load(rtServer, { ...at, rate }) };
    runs.push(r);
    console.log(`round ${round}:`);
    console.log(`  ${line('bare', bare)}`);
    console.log(`  ${line('/rt memory', rt)}`);
    if (onr) console.log(`  ${line('/rt redis', onr)}`);
    if (r.equal) {
      console.log(`  ${line(`bare @${r.equal.rate}/s`, r.equal.bare)}`);
      console.log(`  ${line(`/rt @${r.equal.rate}/s`, r.equal.rt)}`);
    }
    console.log(`  ${ratios('/rt : bare', rt, bare)}`);
    if (r.equal)
      console.log(
        `  /rt : bare at ${r.equal.rate} req/s  cpu per request ${(r.equal.rt.cpu / r.equal.bare.cpu).toFixed(2)}x`,
      );
    if (onr) console.log(`  ${ratios('redis : memory', onr, rt)}`);
  }
  report(runs);
  if (allocBatches > 0) {
    const o = { batches: allocBatches, warmup: allocWarmup, connections, newCallid };
    for (const l of await allocPhase(bareServer, rtServer, o)) console.log(l);
  } else console.log('allocation per request: skipped (BENCH_ALLOC_BATCHES=0)');
  console.log(`load average ${loadavg()[0]!.toFixed(2)} at the end (the bench's own processes included)`);
  const snapshot = await snapshotBytes(1000);
  console.log(
    `stored call at the menu: ${snapshot.toFixed(0)} bytes of snapshot (target < 2048) ` +
      `${verdict(snapshot < 2048, 'ABOVE TARGET')}; heap per live call: npm run bench:memory`,
  );
} finally {
  // the servers stop (and write their profiles) before the bench's keys go
  await stopAll(servers);
  if (onRedis) console.log(`removed ${await onRedis.close()} bench keys from Redis`);
}

/** The medians of the rounds, against the targets. */
function report(runs: Round[]): void {
  // The median round keeps a noisy round (a neighbour's burst) from deciding.
  const throughput = median(runs.map((r) => r.rt.rps / r.bare.rps));
  const p99 = median(runs.map((r) => r.rt.p99 / r.bare.p99));
  const cpu = median(runs.map((r) => r.rt.cpu / r.bare.cpu));
  const onRedisRuns = runs.flatMap((r) => (r.redis ? [{ ...r, redis: r.redis }] : []));
  const redisCpu = onRedisRuns.length
    ? `, /rt on Redis ${median(onRedisRuns.map((r) => r.redis.cpu)).toFixed(1)} µs/req (and ` +
      `redis-server ${median(onRedisRuns.map((r) => r.redis.redisCpu ?? NaN)).toFixed(1)} µs/req)`
    : '';
  console.log(
    `medians of ${runs.length} rounds at saturation: bare ${median(runs.map((r) => r.bare.cpu)).toFixed(1)} µs/req, ` +
      `/rt ${median(runs.map((r) => r.rt.cpu)).toFixed(1)} µs/req${redisCpu} of server CPU`,
  );
  const equal = runs.flatMap((r) => (r.equal ? [r.equal] : []));
  if (equal.length)
    console.log(
      `medians of ${equal.length} rounds at an equal rate (${equal.map((e) => e.rate).join(', ')} req/s): ` +
        `bare ${median(equal.map((e) => e.bare.cpu)).toFixed(1)} µs/req, ` +
        `/rt ${median(equal.map((e) => e.rt.cpu)).toFixed(1)} µs/req of server CPU`,
    );
  console.log(
    `cpu per request /rt : bare at saturation = ${cpu.toFixed(2)}x (target <= 5x)  ` +
      verdict(cpu <= 5, 'ABOVE TARGET'),
  );
  if (equal.length) {
    const c = median(equal.map((e) => e.rt.cpu / e.bare.cpu));
    const short = equal.filter((e) => e.rt.rps < e.rate * 0.95 || e.bare.rps < e.rate * 0.95).length;
    const fell = short ? `; in ${short} round(s) a server fell 5% short of the rate` : '';
    console.log(
      `cpu per request /rt : bare at an equal rate = ${c.toFixed(2)}x (target <= 4.5x)  ` +
        `${verdict(c <= 4.5, 'ABOVE TARGET')}${fell}`,
    );
  } else console.log('cpu per request /rt : bare at an equal rate: skipped (BENCH_RATE=0)');
  console.log(
    `throughput /rt : bare = ${(throughput * 100).toFixed(0)}% (issue #2 target >= 50%)  ` +
      `${verdict(throughput >= 0.5, 'BELOW TARGET')}`,
  );
  console.log(`p99 /rt : bare = ${p99.toFixed(2)}x (issue #2 target <= 2x)  ${verdict(p99 <= 2, 'ABOVE TARGET')}`);
  if (onRedisRuns.length) {
    const r = median(onRedisRuns.map((x) => x.redis.rps / x.rt.rps));
    const c = median(onRedisRuns.map((x) => x.redis.cpu / x.rt.cpu));
    console.log(
      `throughput Redis : memory = ${(r * 100).toFixed(0)}% (target >= 90%)  ` +
        `${verdict(r >= 0.9, 'BELOW TARGET')}; cpu per request ${c.toFixed(2)}x`,
    );
  } else console.log('throughput Redis : memory: skipped (no Redis)');
}
