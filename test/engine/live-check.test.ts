/**
 * Live calls on several instances (src/engine/live-check.ts): two CallHandlers on one store,
 * as two instances (or workers) on one Redis, the requests of a call going to either. Each
 * counts a call live while it answered the call's latest request; the check of the calls
 * idle here makes a call that went on or ended elsewhere leave, so that the two counts add
 * up to the calls live.
 */
import { expect, it } from 'vitest';
import { CallHandler } from '../../src/engine/call.js';
import { type CallLogger } from '../../src/engine/ports.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { MemoryStore } from '../../src/store/memory.js';
import { LiveCalls } from '../../src/registry/live.js';
import { LiveKeeper, settleIdleCalls } from '../../src/engine/live-check.js';
import { menu, req, smsExecutor, versionsOf } from './helpers.js';

const quiet: CallLogger = { info() {}, warn() {}, error() {}, debug() {} };

function instance(f: CompiledFlow, store: MemoryStore, clock: { now: number }) {
  const live = new LiveCalls(3_600_000, () => clock.now);
  let released = 0;
  const h = new CallHandler(
    {
      versions: versionsOf(f),
      store,
      live,
      release: () => void released++,
      executor: smsExecutor(() => ({ ok: true, value: 'SMS1' })),
      now: () => clock.now,
    },
    {
      deadlineMs: 4000,
      callTtlMs: 3_600_000,
      unknownCall: 'reject',
      routes: { apps: {}, numbers: {} },
    },
  );
  // the check of the calls idle here against the shared store (its timers far off: the test runs it)
  const keeper = new LiveKeeper(
    live,
    store,
    () => void released++,
    (callid) => h.isRunning(callid),
    {
      sweepMs: 3_600_000,
      checkMs: 3_600_000,
      now: () => clock.now,
    },
  );
  return { h, keeper, live, released: () => released };
}

it(
  'a call whose requests alternate between two instances is live on the one that answered last, and on none ' +
    'once it ended',
  async () => {
    const f = menu();
    const store = new MemoryStore();
    const clock = { now: 1_000_000 };
    const a = instance(f, store, clock);
    const b = instance(f, store, clock);
    const send = async (on: typeof a, r: Parameters<typeof req>[0]) => {
      clock.now += 1000;
      const answer = await on.h.handle(req({ callid: '42', ...r }), f.name, quiet);
      expect(answer.kind).toBe('answered');
    };
    await send(a, {});
    await send(b, { command: 'play', command_id: 1, command_result: '0' });
    // both answered the call: each counts it until it checks
    expect([a.live.size, b.live.size]).toEqual([1, 1]);
    clock.now += 5000;
    expect(await a.keeper.check(1000)).toBe(1); // B answered since: A lets it go
    expect(await b.keeper.check(1000)).toBe(0); // B answered last: it stays live there
    expect([a.live.size, b.live.size]).toEqual([0, 1]);
    expect(a.released()).toBe(1);

    await send(a, { command: 'read', command_id: 2, command_result: '1' }); // back on A
    expect(a.live.get('42')).toMatchObject({ step: 'bye' });
    clock.now += 5000;
    expect([await b.keeper.check(1000), await a.keeper.check(1000)]).toEqual([1, 0]);
    expect([a.live.size, b.live.size]).toEqual([1, 0]);

    await send(b, { command: 'play', command_id: 3, command_result: '0' }); // hangup answered by B
    await send(b, { command: 'hangup', command_id: 4, call_status: 'HANGUP' }); // the end, on B
    expect(b.live.size).toBe(0);
    clock.now += 5000;
    expect(await a.keeper.check(1000)).toBe(1); // ended on B (a tombstone at a later revision)
    expect([a.live.size, b.live.size]).toEqual([0, 0]);
    for (const i of [a, b]) {
      i.h.close();
      i.keeper.close();
    }
  },
);

it(
  'leaves calls alone that were active here lately, that have a request running here, or that the store cannot ' +
    'tell about',
  async () => {
    const live = new LiveCalls(3_600_000, () => 10_000);
    live.set('1', 'desk', 'v1', 'menu', 4);
    live.set('2', 'desk', 'v1', 'menu', 4);
    const asked: string[][] = [];
    const store = {
      revisions: async (ids: readonly string[]) => {
        asked.push([...ids]);
        return ids.map(() => 9);
      },
    };
    // idle since 5,000? none: both were seen at 10,000
    expect(await settleIdleCalls(live, store, 5_000, () => false)).toBe(0);
    expect(asked).toEqual([]);
    // call 2 has a request running here: not asked about, kept
    expect(await settleIdleCalls(live, store, 20_000, (id) => id === '2')).toBe(1);
    expect(asked).toEqual([['1']]);
    expect(live.get('2')).toBeDefined();
    // a store that fails: nothing forgotten, the error goes to the caller (LiveKeeper.check swallows it, next time
    // tries again)
    const down = { revisions: async () => Promise.reject(new Error('down')) };
    await expect(settleIdleCalls(live, down, 20_000, () => false)).rejects.toThrow('down');
    expect(live.size).toBe(1);
    let released = 0;
    const keeper = new LiveKeeper(
      live,
      down,
      () => void released++,
      () => false,
      { sweepMs: 3_600_000 },
    );
    expect(await keeper.check(0)).toBe(0);
    expect([live.size, released]).toEqual([1, 0]);
    keeper.close();
  },
);

it('asks the store in batches of 500, and about 20,000 calls at most a run', async () => {
  const live = new LiveCalls(3_600_000, () => 0);
  for (let i = 0; i < 25_000; i++) live.set(String(i), 'desk', 'v1', 'menu', 1);
  const sizes: number[] = [];
  const n = await settleIdleCalls(
    live,
    { revisions: async (ids) => (sizes.push(ids.length), ids.map(() => 2)) },
    1,
    () => false,
  );
  expect(n).toBe(20_000);
  expect(sizes.length).toBe(40);
  expect(new Set(sizes)).toEqual(new Set([500]));
  expect(live.size).toBe(5_000);
});
