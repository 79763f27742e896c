/** The CallStore contract: one suite run against every store (memory, Redis). */
import { describe, expect, it } from 'vitest';
import type { CallStore } from '../../src/store/types.js';

export interface StoreUnderTest {
  store: CallStore;
  /** Lets `ms` pass for the store's expiry (a fake clock, or real time). */
  advance: (ms: number) => Promise<void> | void;
}

export function storeContract(name: string, make: () => Promise<StoreUnderTest>, opts: { skip?: string } = {}): void {
  const d = opts.skip ? describe.skip : describe;
  d(`CallStore contract: ${name}${opts.skip ? ` (skipped: ${opts.skip})` : ''}`, () => {
    it('returns what was set, undefined for unknown calls', async () => {
      const { store } = await make();
      expect(await store.get('1')).toBeUndefined();
      expect(await store.load('1')).toEqual({});
      await store.set('18446744073709551615', '{"a":1}', 60_000);
      expect(await store.get('18446744073709551615')).toBe('{"a":1}');
      expect(await store.get('1844674407370955161')).toBeUndefined();
      await store.close();
    });

    it('overwrites, deletes and counts', async () => {
      const { store } = await make();
      await store.set('1', 'a', 60_000);
      await store.set('2', 'b', 60_000);
      await store.set('1', 'c', 60_000);
      expect(await store.size()).toBe(2);
      expect(await store.get('1')).toBe('c');
      await store.delete('1');
      await store.delete('404');
      expect(await store.get('1')).toBeUndefined();
      expect(await store.size()).toBe(1);
      await store.close();
    });

    it('forgets a call after its ttl without writes', async () => {
      const { store, advance } = await make();
      await store.set('1', 'a', 300);
      await advance(150);
      expect(await store.get('1')).toBe('a');
      await store.set('1', 'b', 300);
      await advance(150);
      expect(await store.get('1')).toBe('b');
      await advance(250);
      expect(await store.get('1')).toBeUndefined();
      await store.close();
    });

    it('commit is a compare-and-set on the revision: the first commit of a call expects none, each commit expects the last', async () => {
      const { store } = await make();
      expect(await store.commit('7', 3, 'x', 60_000)).toBeUndefined(); // no record: only `undefined` matches
      expect(await store.commit('7', undefined, 'a', 60_000)).toBe(1);
      expect(await store.commit('7', undefined, 'b', 60_000)).toBeUndefined();
      expect(await store.load('7')).toEqual({ call: { value: 'a', rev: 1 } });
      expect(await store.commit('7', 1, 'c', 60_000)).toBe(2);
      expect(await store.commit('7', 1, 'd', 60_000)).toBeUndefined(); // stale revision: nothing written
      expect(await store.load('7')).toEqual({ call: { value: 'c', rev: 2 } });
      await store.close();
    });

    it('of concurrent commits on one revision, exactly one wins', async () => {
      const { store } = await make();
      expect(await store.commit('9', undefined, 'start', 60_000)).toBe(1);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.commit('9', 1, `v${i}`, 60_000)));
      const winners = results.map((r, i) => [r, i] as const).filter(([r]) => r !== undefined);
      expect(winners.length).toBe(1);
      expect(winners[0]![0]).toBe(2);
      expect(await store.get('9')).toBe(`v${winners[0]![1]}`);
      // concurrent first commits of a new call: one wins too
      const first = await Promise.all(Array.from({ length: 10 }, (_, i) => store.commit('10', undefined, `n${i}`, 60_000)));
      expect(first.filter((r) => r !== undefined)).toEqual([1]);
      await store.close();
    });

    it('an aside is taken by the next load, kept across commits, and may come before any commit', async () => {
      const { store } = await make();
      await store.setAside('11', 'fallback', 60_000);
      expect(await store.load('11')).toEqual({ aside: 'fallback' });
      expect(await store.load('11')).toEqual({});
      expect(await store.commit('11', undefined, 'a', 60_000)).toBe(1);
      await store.setAside('11', 'again', 60_000);
      expect(await store.commit('11', 1, 'b', 60_000)).toBe(2);
      expect(await store.get('11')).toBe('b'); // get does not take it
      expect(await store.load('11')).toEqual({ call: { value: 'b', rev: 2 }, aside: 'again' });
      expect(await store.load('11')).toEqual({ call: { value: 'b', rev: 2 } });
      expect(await store.size()).toBe(1);
      await store.close();
    });

    it('an aside alone expires with its ttl', async () => {
      const { store, advance } = await make();
      await store.setAside('12', 'fb', 200);
      await advance(300);
      expect(await store.load('12')).toEqual({});
      await store.close();
    });

    it('answers ping while reachable', async () => {
      const { store } = await make();
      await expect(store.ping()).resolves.toBeUndefined();
      await store.close();
    });
  });
}
