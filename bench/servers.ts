/**
 * The two servers the benchmark compares, in one process (the child of bench/rt.ts): a
 * bare Fastify route answering a fixed JSON reply, and callscript's /rt, both without logs.
 * Prints `ready <barePort> <rtPort>` when listening.
 */
import Fastify from 'fastify';
import { buildServer } from '../src/http/server.js';

const fixed = JSON.stringify({ command: 'play', command_id: 1, params: { media_id: 'TTS|TTS_EN-GB_SERENA|Welcome to the benchmark line.' }, variables: {} });
const bare = Fastify({ logger: false });
bare.post('/bare', async (_req, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(fixed));
await bare.listen({ port: 0, host: '127.0.0.1' });

const rt = await buildServer({ flowsDir: new URL('./flows', import.meta.url).pathname, logLevel: false });
await rt.listen({ port: 0, host: '127.0.0.1' });

const port = (a: { server: { address(): unknown } }) => (a.server.address() as { port: number }).port;
process.stdout.write(`ready ${port(bare)} ${port(rt)}\n`);
process.on('SIGTERM', async () => {
  await Promise.all([bare.close(), rt.close()]);
  process.exit(0);
});
