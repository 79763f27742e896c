/**
 * One of the servers the benchmark compares, in a process of its own (a child of
 * bench/rt.ts, which runs autocannon): so that the CPU counters it reports are that
 * server's only, not autocannon's nor the other server's (its timers, its garbage).
 *
 *   node --import tsx bench/servers.ts bare   a bare Fastify route answering a fixed JSON
 *   node --import tsx bench/servers.ts rt     callscript's /rt as `callscript serve` runs it
 *                                             (logger at BENCH_LOG_LEVEL, default info, request
 *                                             logging off), on flows/ (front-desk)
 *   node --import tsx bench/servers.ts redis <url> <prefix>
 *                                             the same on the Redis store, as `serve --store <url>`
 *                                             opens it (its keys under <prefix>)
 *
 * Talks to its parent over the IPC channel: sends `{ ready: port }` when listening, answers
 * `'cpu'` with `{ cpu: process.cpuUsage() }` (user + system µs of this process, all threads).
 * Logs go to this process's stdout (the parent sends it to /dev/null): writing them is part
 * of the cost.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildServer } from '../src/http/server.js';
import { openStore } from '../src/store/open.js';
import type { RedisStore } from '../src/store/redis.js';
import { STORE_DEFAULTS } from '../src/config/defaults.js';

const kind = process.argv[2];
const send = (m: object) => process.send!(m);

async function start(): Promise<FastifyInstance> {
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
  const level = process.env.BENCH_LOG_LEVEL ?? 'info';
  // BENCH_OBSERVERS=off: no call history and no metrics (what the step observers cost, by difference)
  const observers = process.env.BENCH_OBSERVERS === 'off' ? { history: false as const, metrics: false as const } : {};
  const options = {
    flowsDir: new URL('../flows', import.meta.url).pathname,
    logLevel: level === 'false' ? (false as const) : level,
    ...observers,
  };
  if (kind === 'rt') return buildServer(options);
  if (kind === 'redis') {
    const store = openStore({
      kind: 'redis',
      url: process.argv[3]!,
      prefix: process.argv[4]!,
      commandTimeoutMs: STORE_DEFAULTS.command_timeout_ms,
    }) as RedisStore;
    await store.ready();
    const app = await buildServer({ ...options, store });
    app.addHook('onClose', async () => store.close());
    return app;
  }
  throw new Error(`bench/servers.ts: unknown server "${kind}" (bare, rt or redis)`);
}

const app = await start();
await app.listen({ port: 0, host: '127.0.0.1' });
process.on('message', (m) => {
  if (m === 'cpu') send({ cpu: process.cpuUsage() });
});
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
send({ ready: (app.server.address() as { port: number }).port });
