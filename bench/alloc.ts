/**
 * `npm run bench:alloc`: bytes allocated per /rt request next to a bare Fastify route, each server
 * in a process of its own run from dist/ (bench/servers.mjs; dist/ is built first when missing or
 * older than src/, bench/dist.ts), measured over real HTTP as bench/alloc-phase.ts says: the heap's
 * growth over GC-free batches of one front-desk call each. `npm run bench` ends with the same phase.
 *
 * Target (issue 23): /rt allocates at most 12 KB per request more than the bare route.
 * Env: BENCH_ALLOC_BATCHES (call batches per server, default 40; as many empty ones),
 * BENCH_ALLOC_WARMUP (requests each server serves first, unmeasured, default 10 000: what /rt
 * allocates settles once its code is optimised, after some 5,000), BENCH_CONNECTIONS (of that
 * warm-up, 50), BENCH_LOG_LEVEL and BENCH_OBSERVERS as in bench/rt.ts.
 */
import { ensureDist } from './dist.js';
import { startServer, stopAll } from './children.js';
import { callids, checkCall } from './load.js';
import { allocPhase } from './alloc-phase.js';

const batches = Number(process.env.BENCH_ALLOC_BATCHES ?? 40);
const warmup = Number(process.env.BENCH_ALLOC_WARMUP ?? 10_000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

ensureDist();
const newCallid = callids();
const servers = await Promise.all([startServer('bare'), startServer('rt')]);
const [bare, rt] = servers;
try {
  await checkCall(rt, newCallid());
  for (const l of await allocPhase(bare, rt, { batches, warmup, connections, newCallid })) console.log(l);
} finally {
  await stopAll(servers);
}
