/**
 * Paging the live calls of the Redis store while Redis resizes its key table between two
 * pages (src/store/redis-history.ts listLive). On a redis-server of this file's own: the
 * shared one has other tests' keys coming and going, which would make "each call once"
 * depend on them (SCAN may list a key twice when the table shrinks).
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.js';
import { MAX_SCANS_PER_PAGE } from '../../src/store/redis-history.js';
import { Processes, freePort, redisServerMissing } from '../helpers/processes.js';

const missing = redisServerMissing();
const procs = new Processes();
let url = '';
afterAll(() => procs.killAll());
beforeAll(async () => {
  if (missing) return;
  const port = await freePort();
  await procs.redis(port);
  url = `redis://127.0.0.1:${port}`;
});

/** Fills the server with `n` keys that are no calls (the key table grows: Redis rehashes it). */
async function crowd(n: number, tag: string): Promise<void> {
  const r = new Redis(url);
  for (let i = 0; i < n; i += 1000) {
    const p = r.pipeline();
    for (let j = i; j < Math.min(n, i + 1000); j++) p.set(`other:${tag}:${j}`, 'x');
    await p.exec();
  }
  r.disconnect();
}

async function* pages(s: RedisStore, limit: number, afterFull?: () => Promise<void>) {
  let cursor: string | undefined;
  for (;;) {
    const page = await s.listLive(cursor, limit);
    expect(page.values.length).toBeLessThanOrEqual(limit);
    yield page;
    if (page.next === undefined) return;
    cursor = page.next;
    // a full page most often ends inside a SCAN batch: the next page starts from that batch
    if (page.values.length === limit) await afterFull?.();
  }
}

it.skipIf(!!missing)(
  'lists each call once when the key table grows between pages (a page read again would be another batch)',
  async () => {
    const s = new RedisStore(url, { prefix: 'grow:' });
    await s.ready();
    // five walks from an empty server, each with other callids (where they fall in the table differs)
    for (let walk = 0; walk < 5; walk++) {
      await s.client.flushall();
      const ids = Array.from({ length: 40 }, (_, i) => String(1000 * walk + 800 + i));
      for (const id of ids) await s.commit(id, undefined, `v${id}`, 60_000);
      await crowd(200, 'a'); // calls are a few of many keys: SCAN batches hold calls and others
      const seen: string[] = [];
      let n = 0;
      let crowded = 0;
      for await (const page of pages(s, 3, () => crowd(4000, `b${crowded++}`))) {
        seen.push(...page.values.map(([id]) => id));
        for (const [id, v] of page.values) expect(v).toBe(`v${id}`);
        expect(++n).toBeLessThan(1000);
      }
      expect(seen.sort(), `walk ${walk}`).toEqual(ids);
    }
    await s.close();
  },
);

it.skipIf(!!missing)(
  'a page asked again answers the same; the rest of a batch kept past its time is refused as expired',
  async () => {
    const s = new RedisStore(url, { prefix: 'again:' });
    await s.ready();
    await s.client.flushall();
    for (let i = 0; i < 30; i++) await s.commit(String(100 + i), undefined, 'v', 60_000);
    const first = await s.listLive(undefined, 2);
    // 30 calls in a small table: SCAN's first batch (COUNT 10) holds more than 2, the rest is kept
    expect(first.next).toMatch(/^0\.[0-9]+\.[0-9a-f]{32}$/);
    const second = await s.listLive(first.next, 2);
    expect(await s.listLive(first.next, 2)).toEqual(second);
    const token = first.next!.split('.')[2]!;
    const r = new Redis(url);
    expect(await r.pttl(`again:page:{${token}}`)).toBeGreaterThan(9 * 60_000);
    await r.del(`again:page:{${token}}`);
    r.disconnect();
    await expect(s.listLive(first.next, 2)).rejects.toMatchObject({
      code: 'BAD_CURSOR',
      expired: true,
      message: 'the cursor expired: start the listing again',
    });
    // a token of the right shape never given; a kept rest that is no list of callids
    await expect(s.listLive(`0.0.${'a'.repeat(32)}`, 2)).rejects.toMatchObject({ code: 'BAD_CURSOR', expired: true });
    await s.client.set(`again:page:{${'b'.repeat(32)}}`, '{"x":1}');
    await expect(s.listLive(`0.0.${'b'.repeat(32)}`, 2)).rejects.toMatchObject({
      code: 'BAD_CURSOR',
      expired: false,
      message: 'not a cursor of this store',
    });
    await expect(s.listLive('0.e.-', 2)).rejects.toMatchObject({ code: 'BAD_CURSOR' });
    await s.close();
  },
);

it.skipIf(!!missing)(
  'a page reads at most MAX_SCANS_PER_PAGE batches: few calls among many other keys are found over several short pages',
  async () => {
    const s = new RedisStore(url, { prefix: 'sparse:' });
    await s.ready();
    await s.client.flushall();
    await crowd(30_000, 'c');
    for (const id of ['1', '2', '3']) await s.commit(id, undefined, `v${id}`, 60_000);
    const scan = vi.spyOn(s.client as Redis, 'scan');
    const seen: string[] = [];
    let n = 0;
    for await (const page of pages(s, 10)) {
      seen.push(...page.values.map(([id]) => id));
      expect(scan.mock.calls.length, `page ${n}`).toBeLessThanOrEqual(MAX_SCANS_PER_PAGE);
      scan.mockClear();
      expect(++n).toBeLessThan(200);
    }
    // 30,000 keys at about 10 per SCAN: more than one page's worth of batches
    expect(n).toBeGreaterThan(1);
    expect(seen.sort()).toEqual(['1', '2', '3']);
    await s.close();
  },
);
