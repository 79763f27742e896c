/** The CallStore contract: one suite run against every store. */
import { describe, expect, it } from 'vitest';
import type { CallStore } from '../../src/store/types.js';

export function storeContract(name: string, make: () => Promise<{ store: CallStore; advance: (ms: number) => void }>): void {
  describe(`CallStore contract: ${name}`, () => {
    it('returns what was set, undefined for unknown calls', async () => {
      const { store } = await make();
      expect(await store.get('1')).toBeUndefined();
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
      await store.set('1', 'a', 1000);
      advance(999);
      expect(await store.get('1')).toBe('a');
      await store.set('1', 'b', 1000);
      advance(999);
      expect(await store.get('1')).toBe('b');
      advance(2);
      expect(await store.get('1')).toBeUndefined();
      await store.close();
    });
  });
}
