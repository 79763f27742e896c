import { expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import { MemoryQueues } from '../../src/store/memory-queues.js';
import { poll, queuesContract } from './queues-contract.js';

queuesContract('memory', async () => {
  const queues = new MemoryQueues();
  return { queues, other: queues, close: async () => {} };
});

it('the memory store gives one MemoryQueues, the same each time', async () => {
  const store = new MemoryStore();
  const q = store.capabilities.queues!();
  expect(q).toBeInstanceOf(MemoryQueues);
  expect(store.capabilities.queues!()).toBe(q);
  expect((await poll(q, 'c1', 1000)).kind).toBe('ring');
  expect((await poll(new MemoryStore().capabilities.queues!(), 'c1', 1000)).kind).toBe('ring');
  await store.close();
});
