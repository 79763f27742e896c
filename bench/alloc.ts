/**
 * `npm run bench:alloc`: bytes allocated per /rt request next to a bare Fastify route, each server
 * in a process of its own run from dist/ (bench/servers.mjs; dist/ is built first when missing or
 * older than src/, bench/dist.ts), measured over real HTTP as bench/alloc-phase.ts says: the heap's
 * growth over GC-free batches of one front-desk call each. `npm run bench` ends with the same phase.
 *
 * Target (issue 23): /rt allocates at most 12 KB per request more than the bare route.
 * Env: BENCH_ALLOC_BATCHES (call batches per server, default 40; as many empty ones), BENCH_WARMUP
 * (seconds of autocannon load on each server first, so that the code measured is optimised; default
 * 3), BENCH_CONNECTIONS (of that load, 50), BENCH_LOG_LEVEL and BENCH_OBSERVERS as in bench/rt.ts.
 */
import { ensureDist } from './dist.js';
import { startServer, stopAll } from './children.js';
import { CALL, callids, checkCall, load } from './load.js';
import { allocPhase } from './alloc-phase.js';

const batches = Number(process.env.BENCH_ALLOC_BATCHES ?? 40);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

ensureDist();
const newCallid = callids();
const servers = await Promise.all([startServer('bare'), startServer('rt')]);
const [bare, rt] = servers;
try {
  await checkCall(rt, newCallid());
  for (const s of servers) if (warmup > 0) await load(s, { seconds: warmup, connections, newCallid });
  const call = () => {
    const callid = newCallid();
    return CALL.map((body) => body(callid));
  };
  for (const l of await allocPhase(bare, rt, batches, call)) console.log(l);
} finally {
  await stopAll(servers);
}
