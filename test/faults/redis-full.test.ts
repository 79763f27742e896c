/**
 * Redis that answers but takes no write, on a redis-server of the test's own (not the shared
 * one) under an in-process server on the Redis store: full (`maxmemory` below what it uses,
 * `noeviction`), then a read-only replica. Requests are answered 503 STORE_UNAVAILABLE, and
 * /health, which a ping alone would find fine, answers 503 with the store's error (its kind,
 * Redis's code, since when) until a write succeeds again: then 200 and the call goes on where
 * it was. Needs redis-server on PATH: skipped with a message when it is not, failing under CI=true.
 */
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { RedisStore } from '../../src/store/redis.js';
import { Processes, freePort, redisServerMissing } from '../helpers/processes.js';
import { testPrefix } from '../helpers/redis.js';
import { rtBody } from '../helpers/rt.js';
import { DESK_V1, flowsDir } from './desk.js';

const missing = redisServerMissing();
const procs = new Processes();
afterAll(() => procs.killAll());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const iso = expect.stringMatching(ISO);
const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

describe.skipIf(!!missing)('Redis refusing writes under a serving instance', () => {
  const ctx: { app?: FastifyInstance; redis?: Redis } = {};
  afterAll(async () => {
    await ctx.app?.close();
    ctx.redis?.disconnect();
  });

  const post = async (fields: Parameters<typeof rtBody>[0]) => {
    const r = await ctx.app!.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { 'content-type': 'application/json' },
      payload: rtBody(fields),
    });
    return { status: r.statusCode, json: r.json() as Record<string, unknown> };
  };
  const health = async () => {
    const r = await ctx.app!.inject({ url: '/health' });
    return { status: r.statusCode, json: r.json() as Record<string, unknown> };
  };
  const refusedWith = (message: string) => ({
    status: 503,
    json: {
      error: {
        code: 'STORE_UNAVAILABLE',
        message: `the call store is unavailable (Redis: ${message}); nothing was changed, retry`,
      },
    },
  });

  it('full (maxmemory, noeviction): 503 STORE_UNAVAILABLE, /health 503 with OOM; room again: 200', async () => {
    const port = await freePort();
    await procs.redis(port);
    const redis = (ctx.redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 }));
    const store = new RedisStore(`redis://127.0.0.1:${port}`, { prefix: testPrefix() });
    const app = (ctx.app = await buildServer({ flowsDir: flowsDir(DESK_V1), logLevel: false, store, watch: false }));
    app.addHook('onClose', async () => store.close());
    await store.ready(5000);
    expect(await health()).toMatchObject({ status: 200, json: { status: 'ok', store: 'ok' } });
    expect((await post({ callid: '940000' })).json).toMatchObject({ command: 'read', command_id: 1 });

    expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    await redis.config('SET', 'maxmemory', '1'); // below what it uses: every write is refused
    // the call in progress and a new one: refused, nothing changed
    expect(await post({ callid: '940000', command: 'read', command_id: 1, command_result: '2' })).toEqual(
      refusedWith(OOM),
    );
    expect(await post({ callid: '940001' })).toEqual(refusedWith(OOM));
    await redis.ping(); // reads and pings still answer
    const down = await health();
    expect(down).toEqual({
      status: 503,
      json: {
        status: 'unavailable',
        reason: `the call store refuses writes: Redis: ${OOM}`,
        store: `writes refused: Redis: ${OOM}`,
        storeError: { kind: 'writes_refused', code: 'OOM', message: `Redis: ${OOM}`, since: iso, at: iso },
        flows: [expect.objectContaining({ name: 'desk' })],
        refused: [],
        calls: 1,
      },
    });
    const fault = down.json.storeError as { since: string; at: string };
    // the fault began with the first request refused, and /health's own write met it again
    expect(fault.since <= fault.at).toBe(true);
    expect(fault.since).toMatch(ISO);
    // still refused: the same fault, since when it began
    const again = await health();
    expect(again.status).toBe(503);
    expect((again.json.storeError as { since: string }).since).toBe(fault.since);

    await redis.config('SET', 'maxmemory', '0');
    // no request needed: /health's own write succeeds
    expect(await health()).toMatchObject({ status: 200, json: { status: 'ok', store: 'ok' } });
    expect((await health()).json.storeError).toBeUndefined();
    // the call goes on where it was: the refused request changed nothing
    expect((await post({ callid: '940000', command: 'read', command_id: 1, command_result: '2' })).json).toMatchObject({
      command: 'play',
      command_id: 2,
    });
  });

  it('a read-only replica: 503 STORE_UNAVAILABLE, /health 503 with READONLY; a master again: 200', async () => {
    const { redis } = ctx;
    if (!redis) return expect.unreachable('runs after the test above');
    const closed = await freePort();
    await redis.replicaof('127.0.0.1', String(closed)); // a master that never answers: read-only, stale data served
    const readOnly = "READONLY You can't write against a read only replica.";
    expect(await post({ callid: '940002' })).toEqual(refusedWith(readOnly));
    expect(await health()).toMatchObject({
      status: 503,
      json: {
        status: 'unavailable',
        reason: `the call store refuses writes: Redis: ${readOnly}`,
        storeError: { kind: 'writes_refused', code: 'READONLY', message: `Redis: ${readOnly}` },
      },
    });
    await redis.replicaof('NO', 'ONE');
    expect(await health()).toMatchObject({ status: 200, json: { status: 'ok', store: 'ok' } });
    expect((await post({ callid: '940002' })).json).toMatchObject({ command: 'read', command_id: 1 });
  });
});
