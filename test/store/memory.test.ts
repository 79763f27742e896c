import { expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import { storeContract } from './contract.js';

storeContract('memory', async () => {
  let now = 1_000_000;
  return { store: new MemoryStore(() => now), advance: (ms) => void (now += ms) };
});

it('memory store sweep drops only expired calls', async () => {
  let now = 0;
  const store = new MemoryStore(() => now);
  await store.set('a', 'x', 10);
  await store.set('b', 'y', 100);
  now = 50;
  expect(store.sweep()).toBe(1);
  expect(await store.size()).toBe(1);
  await store.close();
});
