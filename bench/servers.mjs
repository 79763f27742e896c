/**
 * One of the servers the benchmark compares, in a process of its own (a child of bench/rt.ts or
 * bench/alloc.ts, which load it): so that the CPU counters it reports are that server's only, not
 * the load generator's nor the other server's (its timers, its garbage). Plain JavaScript run by
 * plain `node`, importing the compiled server from dist/ as `npm start` runs it: no tsx in the
 * process (its transform wraps every closure of the sources and cost about 4% of /rt's CPU).
 *
 *   node --expose-gc bench/servers.mjs bare   a bare Fastify route answering a fixed JSON
 *   node --expose-gc bench/servers.mjs rt     callscript's /rt as `callscript serve` runs it (logger
 *                                             at BENCH_LOG_LEVEL, default info, request logging off),
 *                                             on flows/ (front-desk)
 *   node --expose-gc bench/servers.mjs redis <url> <prefix>
 *                                             the same on the Redis store, as `serve --store <url>`
 *                                             opens it (its keys under <prefix>)
 *
 * The three are the same process shape (same node, same flags, same Fastify from node_modules);
 * --expose-gc only lets the allocation phase empty the young generation before a batch.
 *
 * Talks to its parent over the IPC channel: sends `{ ready: port }` when listening, answers
 * `'cpu'` with `{ cpu: process.cpuUsage() }` (user + system µs of this process, all threads), and
 * `'alloc-begin'` / `'alloc-end'` around a batch of requests (bench/alloc-phase.ts) with
 * `{ alloc: 'begun' }` and `{ alloc: bytes, gc }`: the heap's growth over the batch and whether a
 * garbage collection ran in it (then the growth is not the batch's allocation). Logs go to this
 * process's stdout (the parent sends it to /dev/null): writing them is part of the cost.
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import Fastify from 'fastify';

const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const kind = process.argv[2];
const send = (m) => process.send(m);

async function start() {
  if (kind === 'bare') {
    const fixed = JSON.stringify({
      command: 'play',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Thank you for calling Acme.' },
      variables: {},
    });
    const bare = Fastify({ logger: false });
    bare.post('/bare', async (_req, reply) =>
      reply.header('content-type', 'application/json; charset=utf-8').send(fixed),
    );
    return bare;
  }
  const { buildServer } = await import(dist('http/server.js'));
  const level = process.env.BENCH_LOG_LEVEL ?? 'info';
  // BENCH_OBSERVERS=off: no call history and no metrics (what the step observers cost, by difference)
  const observers = process.env.BENCH_OBSERVERS === 'off' ? { history: false, metrics: false } : {};
  const options = {
    flowsDir: new URL('../flows', import.meta.url).pathname,
    logLevel: level === 'false' ? false : level,
    ...observers,
  };
  if (kind === 'rt') return buildServer(options);
  if (kind === 'redis') {
    const { openStore } = await import(dist('store/open.js'));
    const { STORE_DEFAULTS } = await import(dist('config/defaults.js'));
    const store = openStore({
      kind: 'redis',
      url: process.argv[3],
      prefix: process.argv[4],
      commandTimeoutMs: STORE_DEFAULTS.command_timeout_ms,
    });
    await store.ready();
    const app = await buildServer({ ...options, store });
    app.addHook('onClose', async () => store.close());
    return app;
  }
  throw new Error(`bench/servers.mjs: unknown server "${kind}" (bare, rt or redis)`);
}

/**
 * The allocation probe: the heap used before and after a batch, and the garbage collections seen
 * (their start times, from a PerformanceObserver: delivered a little later, hence the wait).
 */
function allocProbe() {
  const gcs = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push(e.startTime);
    if (gcs.length > 1000) gcs.splice(0, 500);
  }).observe({ entryTypes: ['gc'] });
  const turn = () => new Promise((r) => setImmediate(r));
  let begun;
  return {
    begin() {
      // an empty young generation: the batch's allocation fits in it without a scavenge
      globalThis.gc?.({ type: 'minor' });
      begun = { at: performance.now(), heap: process.memoryUsage().heapUsed };
    },
    async end() {
      // the call history writes after the replies (setImmediate): part of the requests' cost
      await turn();
      const heap = process.memoryUsage().heapUsed;
      const at = performance.now();
      await new Promise((r) => setTimeout(r, 5));
      return { alloc: heap - begun.heap, gc: gcs.some((t) => t >= begun.at && t <= at) };
    },
  };
}

const app = await start();
await app.listen({ port: 0, host: '127.0.0.1' });
// made at the first batch: the load phases run without a GC observer
let probe;
process.on('message', (m) => {
  if (m === 'cpu') send({ cpu: process.cpuUsage() });
  else if (m === 'alloc-begin') {
    probe ??= allocProbe();
    probe.begin();
    send({ alloc: 'begun' });
  } else if (m === 'alloc-end') void probe.end().then(send);
});
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
send({ ready: app.server.address().port });
