/**
 * http lookups on two instances sharing Redis: the filler answered by one, the result taken
 * by the other (published in the store); secrets never stored. Needs Redis (REDIS_URL).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { RedisStore } from '../../src/store/redis.js';
import { rtBody } from '../helpers/rt.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';

const missing = await redisMissing();
const FLOWS = new URL('../fixtures/http-lookups', import.meta.url).pathname;
const apps: FastifyInstance[] = [];
const prefix = testPrefix();
let base = '';
let hits = 0;
const server = http.createServer((req, res) => {
  hits++;
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"amount":12}');
  }, 900);
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const a of apps) await a.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  if (!missing) await dropPrefix(prefix);
});

async function instance(deadlineMs: number) {
  const store = new RedisStore(REDIS_URL, { prefix });
  await store.ready();
  const app = await buildServer({
    flowsDir: FLOWS,
    logLevel: false,
    store,
    watch: false,
    deadlineMs,
    http: { allowPrivate: true, secret: () => 'sup3r-s3cret' },
  });
  app.addHook('onClose', async () => store.close());
  apps.push(app);
  return { app, store };
}

describe.skipIf(!!missing)('http lookups across instances on Redis', () => {
  it('instance A answers the filler, instance B takes the result A published', async () => {
    const a = await instance(500);
    const b = await instance(2000);
    const post = (x: FastifyInstance, over: Record<string, unknown> = {}) =>
      x
        .inject({
          method: 'POST',
          url: '/rt/lookup',
          headers: { 'content-type': 'application/json' },
          payload: rtBody({ callid: '777001', variables: { api: base }, ...over }),
        })
        .then((r) => r.json());
    expect(await post(a.app)).toMatchObject({
      command: 'play',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|One moment please.' },
    });
    const stored = await a.store.get('777001');
    expect(stored).toContain('"lk":{');
    expect(stored).not.toContain('sup3r-s3cret');
    expect(await post(b.app, { command: 'play', command_id: 1, command_result: '0' })).toMatchObject({
      command: 'play',
      command_id: 2,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Your balance is 12.' },
    });
    expect(hits).toBe(1);
    const after = await b.store.get('777001');
    expect(after).not.toContain('"lk"');
    expect(after).not.toContain('sup3r-s3cret');
  });
});
