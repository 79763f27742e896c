/**
 * `npm run bench:history` (node --expose-gc): what a client without credentials can make the
 * call history keep (issue 21, item 1). BENCH_CALLS calls (default 20) of flows/front-desk.yaml
 * are brought to the menu through the real server (fastify.inject on /rt/front-desk); each
 * then gets BENCH_REQUESTS (default 200) hostile requests of about 60 KB (a 40 000-character
 * command_result and a 20 000-character command_error): replays of the previous command_id
 * and stale ones (409), alternately, then a legit menu choice of the same size and the hang-up
 * (the finished record is kept). The process's RSS and heap are measured after full garbage
 * collections before and after, with the memory store and with Redis (REDIS_URL, its own key
 * prefix, removed at the end; on Redis the bytes of those keys too, MEMORY USAGE). Then the
 * admin API reads the finished calls: a listing of 50 and one call, their bytes and the event
 * loop's worst delay meanwhile.
 *
 * Target: growth <= 64 MB on each store. Each store runs in a child process of its own (RSS
 * does not shrink back between two runs in one process).
 */
import { execFileSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { buildServer } from '../src/http/server.js';
import { MemoryStore } from '../src/store/memory.js';
import { RedisStore } from '../src/store/redis.js';
import type { CallStore } from '../src/store/types.js';
import { dropPrefix, REDIS_URL } from '../test/helpers/redis.js';
import { rtBody } from './front-desk.js';

const TARGET_MB = 64;
const calls = Number(process.env.BENCH_CALLS ?? 20);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const which = process.argv[2];

if (which === undefined) {
  // the parent: one child per store
  const self = fileURLToPath(import.meta.url);
  for (const store of ['memory', 'redis'])
    execFileSync(process.execPath, [...process.execArgv, self, store], { stdio: 'inherit' });
  process.exit(0);
}

if (!global.gc) throw new Error('run with node --expose-gc (npm run bench:history)');
const gc = global.gc;
const RESULT = 'R'.repeat(40_000);
const ERROR = 'E'.repeat(20_000);
const AUTH = `Basic ${Buffer.from('bench:bench-password').toString('base64')}`;

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

function memory(): { rss: number; heap: number } {
  for (let i = 0; i < 4; i++) gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external + m.arrayBuffers };
}

async function run(): Promise<void> {
  let store: CallStore;
  let redis: Redis | undefined;
  const prefix = `csbench:history:${process.pid}:`;
  if (which === 'redis') {
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => {});
    try {
      await redis.connect();
    } catch (err) {
      console.log(`redis: skipped, Redis does not answer at ${REDIS_URL} (${(err as Error).message})`);
      return;
    }
    store = new RedisStore(REDIS_URL, { prefix });
  } else store = new MemoryStore();
  const app = await buildServer({
    flowsDir: new URL('../flows', import.meta.url).pathname,
    logLevel: false,
    store,
    admin: { login: 'bench', password: 'bench-password' },
  });
  await app.ready();
  const post = async (payload: string) =>
    app.inject({ method: 'POST', url: '/rt/front-desk', headers: { 'content-type': 'application/json' }, payload });
  const settle = () => new Promise((r) => setTimeout(r, 200));
  const oneCall = async (callid: bigint, hostile: number) => {
    await post(rtBody(callid, '', 0, ''));
    await post(rtBody(callid, 'play', 1, '0')); // at the menu: its read is command 2
    for (let i = 0; i < hostile; i++) {
      // a replay of command 1's report, or a stale report of command 1 (409)
      const res = await post(
        i % 2 === 0 ? rtBody(callid, 'play', 1, RESULT, 'UP', ERROR) : rtBody(callid, 'play', 0, RESULT, 'UP', ERROR),
      );
      if (res.statusCode !== (i % 2 === 0 ? 200 : 409)) throw new Error(`unexpected ${res.statusCode} ${res.body}`);
    }
    await post(rtBody(callid, 'read', 2, RESULT.slice(0, 30_000), 'UP', ERROR.slice(0, 10_000)));
    await post(rtBody(callid, 'read', 3, '', 'HANGUP'));
  };
  // warm-up: whole calls, so that code, caches and maps are warm
  for (let i = 0; i < 20; i++) await oneCall(30_000_000_000n + BigInt(i), 4);
  await settle();
  const before = memory();
  const keysBefore = redis ? await keyBytes(redis, prefix) : 0;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await oneCall(10_000_000_000n + BigInt(i), requests);
  const seconds = (performance.now() - t0) / 1000;
  await settle();
  const after = memory();
  const keysAfter = redis ? await keyBytes(redis, prefix) : 0;
  const growth = after.rss - before.rss;
  const within = (bytes: number) => (bytes <= TARGET_MB * 2 ** 20 ? 'OK' : 'ABOVE TARGET');
  console.log(
    `${which}: ${calls} calls x ${requests} requests of ${((RESULT.length + ERROR.length) / 1000).toFixed(0)} KB ` +
      `(${seconds.toFixed(1)} s): RSS ${mb(before.rss)} -> ${mb(after.rss)} (+${mb(growth)}), heap ` +
      `+${mb(after.heap - before.heap)}; target <= ${TARGET_MB} MB: ${within(growth)}`,
  );
  if (redis)
    console.log(
      `redis: the bench's keys hold ${mb(keysAfter)} (+${mb(keysAfter - keysBefore)}, MEMORY USAGE); target <= ` +
        `${TARGET_MB} MB: ${within(keysAfter - keysBefore)}`,
    );

  // the admin API reads them: a page of 50 finished calls, then one call (and the rest of its path)
  const get = async (url: string) => {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    await new Promise((r) => setTimeout(r, 5));
    const res = await app.inject({ method: 'GET', url, headers: { authorization: AUTH } });
    await new Promise((r) => setTimeout(r, 5));
    h.disable();
    const status = res.statusCode === 200 ? '' : ` (${res.statusCode} ${res.body.slice(0, 200)})`;
    return `${res.rawPayload.length} bytes${status}, loop delay <= ${(h.max / 1e6).toFixed(0)} ms`;
  };
  console.log(
    `${which}: GET /admin/calls?status=finished&limit=50: ${await get('/admin/calls?status=finished&limit=50')}`,
  );
  console.log(`${which}: GET /admin/calls/:callid: ${await get(`/admin/calls/${10_000_000_000n}`)}`);
  await app.close();
  await store.close(); // the caller's store: the server leaves it open
  if (redis) {
    redis.disconnect();
    await dropPrefix(prefix);
  }
}

/** MEMORY USAGE of every key under `prefix`, summed. */
async function keyBytes(r: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let total = 0;
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) total += (await r.memory('USAGE', k)) ?? 0;
  } while (cursor !== '0');
  return total;
}

await run();
