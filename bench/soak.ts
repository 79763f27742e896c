/**
 * `npm run bench:soak` (node --expose-gc): does the server hold its memory over many whole calls? Runs SOAK_REQUESTS
 * requests (default 200 000) of whole front-desk calls through the real /rt route (fastify inject, this process),
 * SOAK_CONCURRENCY calls at a time (default 50), on the memory store and then on the Redis store (REDIS_URL, keys under
 * callscript-soak:<pid>:, removed at the end; skipped with a message when Redis does not answer). The call history and
 * metrics are on, as `callscript serve` runs.
 *
 * A call is the bench's front-desk call (welcome, menu, the address, menu, sales, HANGUP); every 10th call also sends
 * what a careless or hostile client does: the previous request again (a replay) and one with an old command_id (stale,
 * 409), both with a 60 KB command_result.
 *
 * Ended calls are remembered for `server.ended_call_ttl_s` (10 min by default) and finished records for
 * `history.ttl_ms`; both are bounded by time, not by count, so the soak runs with both at 2 s: what is left over after
 * a checkpoint is then what leaks. At each tenth of the run, after the history's writes landed and full garbage
 * collections: heap used, RSS and the calls the store holds (ended ones included until the store drops them: the
 * memory store here sweeps every second, Redis expires them). The verdict compares the heap at the end with its
 * value at 30% of the run (warm: caches, JIT, the history's `keep` records all filled by then): growth over 4 MB is a
 * leak.
 */
import { buildServer } from '../src/http/server.js';
import { MemoryStore } from '../src/store/memory.js';
import { openStore } from '../src/store/open.js';
import type { CallStore } from '../src/store/types.js';
import { STORE_DEFAULTS } from '../src/config/defaults.js';
import { BenchRedis } from './redis.js';
import { FRONT_DESK_CALL, rtBody } from './front-desk.js';

if (!global.gc) throw new Error('run with node --expose-gc (npm run bench:soak)');
const gc = global.gc;
const total = Number(process.env.SOAK_REQUESTS ?? 200_000);
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 50);
const stores = (process.env.SOAK_STORES ?? 'memory,redis').split(',');
const FLOWS = new URL('../flows', import.meta.url).pathname;
const BIG = 'x'.repeat(60_000);
/** Heap growth past the warm checkpoint that counts as a leak, bytes. */
const LEAK_BYTES = 4 * 2 ** 20;

interface Checkpoint {
  requests: number;
  heap: number;
  rss: number;
  calls: number;
}

const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;

async function soak(name: string, store: CallStore): Promise<boolean> {
  const app = await buildServer({
    flowsDir: FLOWS,
    logLevel: false,
    store,
    endedTtlMs: 2000,
    history: { ttlMs: 2000 },
  });
  let sent = 0;
  let failures = 0;
  let nextCall = 40_000_000_000_000_000n;
  const post = async (payload: string, want: number, command?: string) => {
    sent++;
    const res = await app.inject({
      method: 'POST',
      url: '/rt/front-desk',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    const ok =
      res.statusCode === want && (command === undefined || command === '' || res.body.includes(`"${command}"`));
    if (!ok && failures++ < 5) console.log(`  unexpected: ${res.statusCode} ${res.body.slice(0, 160)}`);
  };
  const call = async (n: number) => {
    const callid = nextCall++;
    for (const [i, [command, id, result, status, want]] of FRONT_DESK_CALL.entries()) {
      await post(rtBody(callid, command, id, result, status), 200, want);
      if (n % 10 === 0 && i === 3) {
        await post(rtBody(callid, command, id, BIG, status), 200); // a replay of the request just answered
        await post(rtBody(callid, 'play', 1, BIG, status), 409); // stale
      }
    }
  };
  const checkpoints: Checkpoint[] = [];
  const measure = async () => {
    // the history writes after the replies (next turns of the loop); expired entries go when touched or swept
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 4; i++) gc();
    const m = process.memoryUsage();
    checkpoints.push({ requests: sent, heap: m.heapUsed, rss: m.rss, calls: await store.size() });
    const c = checkpoints.at(-1)!;
    console.log(
      `  ${String(c.requests).padStart(7)} requests   heap ${mb(c.heap).padStart(9)}   rss ${mb(c.rss).padStart(9)}` +
        `   calls in the store ${c.calls}`,
    );
  };
  console.log(`${name}: ${total} requests of whole front-desk calls, ${concurrency} at a time`);
  await measure();
  let calls = 0;
  const step = Math.ceil(total / 10);
  let mark = step;
  const worker = async () => {
    while (sent < total) {
      await call(calls++);
      if (sent >= mark) {
        mark += step;
        await measure();
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await measure();
  await app.close();
  const warm = checkpoints.find((c) => c.requests >= total * 0.3) ?? checkpoints[0]!;
  const end = checkpoints.at(-1)!;
  const growth = end.heap - warm.heap;
  const ok = growth <= LEAK_BYTES && failures === 0;
  console.log(
    `  heap from ${warm.requests} to ${end.requests} requests: ${growth >= 0 ? '+' : ''}${mb(growth)} ` +
      `(a leak past +${mb(LEAK_BYTES)}); unexpected answers ${failures}  ${ok ? 'OK' : 'GROWTH'}`,
  );
  return ok;
}

let ok = stores.includes('memory') ? await soak('memory store', new MemoryStore(Date.now, 1000)) : true;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (stores.includes('redis')) {
  const redis = await BenchRedis.open(redisUrl, `callscript-soak:${process.pid}:`);
  if (typeof redis === 'string') console.log(`skipped the Redis store: ${redis}`);
  else {
    const store = openStore({
      kind: 'redis',
      url: redisUrl,
      prefix: redis.prefix,
      commandTimeoutMs: STORE_DEFAULTS.command_timeout_ms,
    });
    try {
      ok = (await soak(`Redis store (${redisUrl})`, store)) && ok;
    } finally {
      await store.close?.();
      console.log(`removed ${await redis.close()} soak keys from Redis`);
    }
  }
}
process.exitCode = ok ? 0 : 1;
