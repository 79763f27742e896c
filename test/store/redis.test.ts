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

it.skipIf(!!missing)(
  "history keys: a path and a record share their call's hash tag; the index is one slot",
  async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const s = new RedisStore(REDIS_URL, { prefix });
    await s.ready();
    await s.appendPath('42', 'e', 10, 60_000);
    await s.addFinished('42', 'r', 10, 60_000);
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await s.client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    expect(keys.sort()).toEqual([
      `${prefix}done:{42}`,
      `${prefix}history:{index}`,
      `${prefix}history:{index}:bytes`,
      `${prefix}history:{index}:seq`,
      `${prefix}path:{42}`,
      `${prefix}pathinfo:{42}`,
    ]);
    await s.close();
  },
);

it.skipIf(!!missing)(
  'delivery status keys: an SMS record and an event claim under the prefix, with their hash tags',
  async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const s = new RedisStore(REDIS_URL, { prefix });
    await s.ready();
    await s.smsSent('8242D945', 'x', 60_000);
    await s.smsReport('8242D945', 'ev-1', 'y', 10, 60_000);
    await s.claimEvent('ev-1', 60_000);
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await s.client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    expect(keys.sort()).toEqual([`${prefix}event:{ev-1}`, `${prefix}sms:{8242D945}`]);
    expect(await s.client.pttl(`${prefix}sms:{8242D945}`)).toBeGreaterThan(50_000);
    expect(await s.client.pttl(`${prefix}event:{ev-1}`)).toBeGreaterThan(50_000);
    await s.close();
  },
);

it.skipIf(!!missing)(
  'listLive gives pages of at most limit even when SCAN answers more keys than that, every call',
  async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const s = new RedisStore(REDIS_URL, { prefix });
    await s.ready();
    const ids = Array.from({ length: 300 }, (_, i) => String(5000 + i));
    await Promise.all(ids.map((id) => s.commit(id, undefined, `v${id}`, 60_000)));
    for (const limit of [1, 3, 7, 64, 500]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.listLive(cursor, limit);
        expect(page.values.length).toBeLessThanOrEqual(limit);
        seen.push(...page.values.map(([id]) => id));
        cursor = page.next;
      } while (cursor !== undefined);
      // at least once (SCAN may list a key twice if this shared Redis shrinks its table meanwhile)
      expect([...new Set(seen)].sort(), `limit ${limit}`).toEqual(ids);
    }
    await s.close();
  },
);
