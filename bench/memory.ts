/**
 * `npm run bench:memory` (node --expose-gc): heap bytes per live call. Holds BENCH_CALLS
 * (default 50 000) calls of flows/front-desk.yaml at its menu in the memory call store,
 * each brought there by real request handling (fastify.inject on /rt/front-desk: the first
 * request, then the welcome's result), after a warm-up of whole calls; the heap is measured
 * after full garbage collections, before and after. Everything the server keeps per call
 * counts: the store's entry and snapshot, the live-call record, anything else left behind.
 *
 * Target (issue #8): <= 1.1 KB per live call, the call history off. Then the same with the
 * history on (its default): each live call also holds its path, one entry per request so far.
 */
import { buildServer } from '../src/http/server.js';
import { MemoryStore } from '../src/store/memory.js';
import { rtBody } from './front-desk.js';

if (!global.gc) throw new Error('run with node --expose-gc (npm run bench:memory)');
const gc = global.gc;
const calls = Number(process.env.BENCH_CALLS ?? 50_000);
const warmup = Number(process.env.BENCH_WARMUP_CALLS ?? 2_000);

function heap(): number {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap per live call held by a server. `history`: the call history on (its default), which
 * keeps each live call's path (one entry per request) beside its state.
 */
async function measure(history: boolean): Promise<number> {
  const store = new MemoryStore();
  const app = await buildServer({
    flowsDir: new URL('../flows', import.meta.url).pathname,
    logLevel: false,
    store,
    ...(history ? {} : { history: false }),
  });
  const post = async (payload: string, want: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/rt/front-desk',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    if (res.statusCode !== 200 || (want && !res.body.startsWith(`{"command":"${want}"`)))
      throw new Error(`unexpected reply ${res.statusCode} ${res.body.slice(0, 200)}`);
  };
  /** Brings a call to the menu: first request (welcome), then the welcome's result (menu read). */
  const toMenu = async (callid: bigint) => {
    await post(rtBody(callid, '', 0, ''), 'play');
    await post(rtBody(callid, 'play', 1, '0'), 'read');
  };
  // the history's writes are made after the replies: let them land before measuring
  const settle = () => new Promise((r) => setTimeout(r, 50));

  // Warm-up: whole calls (to the menu, then hung up), so that code, caches and maps are warm.
  for (let i = 0; i < warmup; i++) {
    const id = 30_000_000_000_000_000n + BigInt(i);
    await toMenu(id);
    await post(rtBody(id, 'read', 2, '', 'HANGUP'), '');
  }
  await settle();
  const storedBefore = await store.size();
  const before = heap();
  for (let i = 0; i < calls; i++) await toMenu(10_000_000_000_000_000n + BigInt(i) * 7919n);
  await settle();
  const after = heap();
  const held = (await store.size()) - storedBefore;
  if (held !== calls) throw new Error(`the store holds ${held} more calls, expected ${calls}`);

  let snapshot = 0;
  for (let i = 0; i < 1000; i++)
    snapshot += Buffer.byteLength((await store.get(String(10_000_000_000_000_000n + BigInt(i) * 7919n)))!);
  const perCall = (after - before) / calls;
  console.log(
    `${calls} live calls at the front-desk menu (memory store, call history ${history ? 'on' : 'off'}, ` +
      `after ${warmup} warm-up calls): heap +${((after - before) / 2 ** 20).toFixed(1)} MB`,
  );
  if (!history)
    console.log(
      `heap per live call: ${perCall.toFixed(0)} bytes (target <= ` +
        `1126) ${perCall <= 1126 ? 'OK' : 'ABOVE TARGET'}; snapshot ${(snapshot / 1000).toFixed(0)} bytes of ` +
        `JSON`,
    );
  await app.close();
  return perCall;
}

// The engine's own figure (the target), then the call history's share: its paths, 2 entries per call here.
const engine = await measure(false);
const withHistory = await measure(true);
console.log(
  `with the call history (history.keep > 0, the default): ${withHistory.toFixed(0)} bytes per live call, its ` +
    `path ${(withHistory - engine).toFixed(0)} bytes (2 entries: ~${((withHistory - engine) / 2).toFixed(0)} ` +
    `bytes per request; bounded by history.max_path)`,
);
