import { expect, it } from 'vitest';
import { MAX_EVENT_CLAIMS, MAX_SMS_RECORDS, MemoryStore } from '../../src/store/memory.js';
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

it(
  'memory store history stays bounded: a flood of finished calls keeps `keep` records; sweep drops expired ' +
    'paths and records',
  async () => {
    let now = 0;
    const store = new MemoryStore(() => now);
    for (let i = 0; i < 20_000; i++) await store.addFinished(String(i), `r${i}`, 100, 1000);
    expect(store.historySize()).toEqual({ paths: 0, finished: 100, pathBytes: 0, finishedBytes: 600 });
    expect((await store.listFinished(0, 1))[0]).toBe('r19999');
    await store.appendPath('1', 'e', 5, 500);
    now = 2000;
    expect(store.sweep()).toBe(101);
    expect(store.historySize()).toEqual({ paths: 0, finished: 0, pathBytes: 0, finishedBytes: 0 });
    await store.close();
  },
);

it(
  'memory store delivery status stays bounded: the oldest SMS records and event claims go past their caps; ' +
    'sweep drops expired ones',
  async () => {
    let now = 0;
    const store = new MemoryStore(() => now);
    for (let i = 0; i <= MAX_SMS_RECORDS; i++) await store.smsSent(`H${i}`, 's', 1000);
    expect(await store.smsStatus('H0')).toBeUndefined(); // the oldest went
    expect(await store.smsStatus('H1')).toEqual({ sent: 's', reports: [] });
    for (let i = 0; i <= MAX_EVENT_CLAIMS; i++) await store.claimEvent(`E${i}`, 1000);
    expect(await store.claimEvent('E0', 1000)).toBe(true); // forgotten: claimable again
    now = 2000;
    expect(store.sweep()).toBe(MAX_SMS_RECORDS + MAX_EVENT_CLAIMS);
    expect(await store.smsStatus('H1')).toBeUndefined();
    await store.close();
  },
);
