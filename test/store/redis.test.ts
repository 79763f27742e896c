import { afterAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis.js';
import { storeContract } from './contract.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';

const missing = await redisMissing();
const prefixes: string[] = [];
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

storeContract(
  'redis',
  async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const store = new RedisStore(REDIS_URL, { prefix });
    await store.ready();
    return { store, advance: (ms) => new Promise((r) => setTimeout(r, ms)) };
  },
  missing ? { skip: missing } : {},
);

it.skipIf(!!missing)('keys of one call share a Redis Cluster hash tag, under the prefix', () => {
  const s = new RedisStore(REDIS_URL, { prefix: 'acme:' });
  expect(s.key('18446744073709551615')).toBe('acme:call:{18446744073709551615}');
  void s.close();
});

it.skipIf(!!missing)('an unreachable Redis fails fast with STORE_UNAVAILABLE, it does not hang', async () => {
  const s = new RedisStore('redis://127.0.0.1:1', { prefix: testPrefix(), redis: { connectTimeout: 200 } });
  const t0 = Date.now();
  await expect(s.load('1')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  await expect(s.commit('1', undefined, 'x', 1000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  expect(Date.now() - t0).toBeLessThan(5000); // fails at once (no offline queue); a generous bound
  await s.close();
});
