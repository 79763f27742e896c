/**
 * One of the servers the benchmark compares, in a process of its own (a child of
 * bench/rt.ts, which runs autocannon): so that the CPU counters it reports are that
 * server's only, not autocannon's nor the other server's (its timers, its garbage).
 *
 *   node --import tsx bench/servers.ts bare   a bare Fastify route answering a fixed JSON
 *   node --import tsx bench/servers.ts rt     callscript's /rt as `callscript serve` runs it
 *                                             (logger at BENCH_LOG_LEVEL, default info, request
 *                                             logging off), on flows/ (front-desk)
 *
 * Talks to its parent over the IPC channel: sends `{ ready: port }` when listening, answers
 * `'cpu'` with `{ cpu: process.cpuUsage() }` (user + system µs of this process, all threads).
 * Logs go to this process's stdout (the parent sends it to /dev/null): writing them is part
 * of the cost.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildServer } from '../src/http/server.js';

const kind = process.argv[2];
const send = (m: object) => process.send!(m);

async function start(): Promise<FastifyInstance> {
  if (kind === 'bare') {
    const fixed = JSON.stringify({ command: 'play', command_id: 1, params: { media_id: 'TTS|TTS_EN-GB_SERENA|Thank you for calling Acme.' }, variables: {} });
    const bare = Fastify({ logger: false });
    bare.post('/bare', async (_req, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(fixed));
    return bare;
  }
  if (kind === 'rt') {
    const level = process.env.BENCH_LOG_LEVEL ?? 'info';
    return buildServer({ flowsDir: new URL('../flows', import.meta.url).pathname, logLevel: level === 'false' ? false : level });
  }
  throw new Error(`bench/servers.ts: unknown server "${kind}" (bare or rt)`);
}

const app = await start();
await app.listen({ port: 0, host: '127.0.0.1' });
process.on('message', (m) => {
  if (m === 'cpu') send({ cpu: process.cpuUsage() });
});
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
send({ ready: (app.server.address() as { port: number }).port });
