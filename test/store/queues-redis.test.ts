import { afterAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis.js';
import { RedisQueues } from '../../src/store/redis-queues.js';
import { poll, queuesContract } from './queues-contract.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';

const missing = await redisMissing();
const prefixes: string[] = [];
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

async function stores(): Promise<[RedisStore, RedisStore, string]> {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const a = new RedisStore(REDIS_URL, { prefix, commandTimeoutMs: 10_000 });
  const b = new RedisStore(REDIS_URL, { prefix, commandTimeoutMs: 10_000 });
  await Promise.all([a.ready(), b.ready()]);
  return [a, b, prefix];
}

queuesContract(
  'redis',
  async () => {
    const [a, b, prefix] = await stores();
    return {
      queues: a.capabilities.queues!(),
      other: b.capabilities.queues!(),
      close: async () => {
        await Promise.all([a.close(), b.close()]);
        await dropPrefix(prefix);
      },
    };
  },
  missing ? { skip: missing } : {},
);

it.skipIf(!!missing)('every queue key is under the prefix, with one hash tag, and expires', async () => {
  const [a, b, prefix] = await stores();
  const q = a.capabilities.queues!();
  expect(q).toBeInstanceOf(RedisQueues);
  expect(a.capabilities.queues!()).toBe(q);
  expect((await poll(q, 'c1', 1000, { agents: ['101', '102'] })).kind).toBe('ring');
  expect((await poll(q, 'c2', 1001)).kind).toBe('wait');
  await q.done('sales', 'c1', 2000, 0);
  await q.pause('sales', '102', true, 2001);
  expect((await poll(q, 'c3', 2002)).kind).toBe('wait');
  expect((await poll(q, 'c2', 2003)).kind).toBe('ring');
  const keys = await a.client.keys(`${prefix}*`);
  expect(keys.sort()).toEqual(
    [
      'agents',
      'agents:at',
      'caller:sales',
      'claims',
      'handle:sales',
      'known:sales',
      'lease:sales',
      'line:sales',
      'meta:sales',
      'names',
      'paused:sales',
      'ringing:sales',
      'stale:sales',
    ].map((k) => `${prefix}q{queues}:${k}`),
  );
  for (const k of keys) expect(await a.client.pttl(k)).toBeGreaterThan(0);
  // the line's keys: 2 x staleMs + maxWaitMs + leaseMs after the last poll; the rest a day
  expect(await a.client.pttl(`${prefix}q{queues}:line:sales`)).toBeLessThanOrEqual(2 * 60_000 + 600_000 + 120_000);
  expect(await a.client.pttl(`${prefix}q{queues}:names`)).toBeGreaterThan(86_000_000);
  await Promise.all([a.close(), b.close()]);
});

it.skipIf(!!missing)('an unreachable Redis fails the queue operations with STORE_UNAVAILABLE', async () => {
  const s = new RedisStore('redis://127.0.0.1:1', { prefix: testPrefix(), redis: { connectTimeout: 200 } });
  const q = s.capabilities.queues!();
  await expect(poll(q, 'c1', 1000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  await expect(q.leave('sales', 'c1', 1000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  await expect(q.view(1000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  await s.close();
});
