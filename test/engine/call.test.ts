/**
 * The call step as a whole (src/engine/call.ts), without HTTP: requests of one call run one
 * at a time, concurrent copies of a request advance the call once and get the same bytes,
 * other calls are not held up, a late step answers the fallback, and a failing store
 * leaves the call where it was.
 */
import { describe, expect, it } from 'vitest';
import { CallHandler } from '../../src/engine/call.js';
import { type CallLogger, type SnapshotStore } from '../../src/engine/ports.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { MemoryStore } from '../../src/store/memory.js';
import { LiveCalls } from '../../src/registry/live.js';
import { hooked } from '../helpers/store.js';
import { LiveKeeper } from '../../src/engine/live-check.js';
import { answerText, menu, req, smsExecutor, versionsOf } from './helpers.js';

const quiet: CallLogger = { info() {}, warn() {}, error() {}, debug() {} };

/** A store whose reads and writes take `ms` (a slow network store); `writes` counts commits. */
function slowStore(ms: number): SnapshotStore & { writes: number } {
  const wait = () => new Promise<void>((r) => setTimeout(r, ms));
  const s = hooked(new MemoryStore(), { load: wait, commit: wait });
  return Object.defineProperty(s, 'writes', { get: () => s.commits }) as typeof s & { writes: number };
}

function handler(f: CompiledFlow, store: SnapshotStore, deadlineMs = 4000): CallHandler {
  const ended: string[] = [];
  return new CallHandler(
    {
      versions: versionsOf(f),
      store,
      live: { set() {}, end: (id) => ended.push(id), purge: () => 0, started() {}, error() {}, size: 0 },
      release() {},
      executor: smsExecutor(() => ({ ok: true, value: 'SMS1' })),
    },
    { deadlineMs, callTtlMs: 60_000, unknownCall: 'reject', routes: { apps: {}, numbers: {} } },
  );
}

const body = answerText;

describe('CallHandler', () => {
  it(
    'runs the requests of one call one at a time: ' + 'concurrent copies advance it once, with the same bytes',
    async () => {
      const f = menu();
      const store = slowStore(20);
      const h = handler(f, store);
      const first = await h.handle(req({ callid: '7' }), f.name, quiet);
      expect(body(first)).toContain('"command":"play","command_id":1');
      const writes = store.writes;
      const next = req({ callid: '7', command: 'play', command_id: 1, command_result: '0' });
      const [a, b, c] = await Promise.all([
        h.handle(next, f.name, quiet),
        h.handle(next, f.name, quiet),
        h.handle(next, f.name, quiet),
      ]);
      expect(body(a)).toContain('"command":"read","command_id":2');
      expect(body(b)).toBe(body(a));
      expect(body(c)).toBe(body(a));
      expect(store.writes).toBe(writes + 1); // the copies were replays: nothing stored
      h.close();
    },
  );

  it('does not hold up other calls behind a slow one', async () => {
    const f = menu();
    const h = handler(f, slowStore(5));
    const order: string[] = [];
    await Promise.all(
      ['1', '2', '3'].map((id) =>
        Promise.resolve(h.handle(req({ callid: id }), f.name, quiet)).then((a) => {
          order.push(id);
          expect(body(a)).toContain('"command_id":1');
        }),
      ),
    );
    expect(order.sort()).toEqual(['1', '2', '3']);
    h.close();
  });

  it('answers the fallback when the step is late, and the late step still lands', async () => {
    const f = menu();
    const store = slowStore(150);
    const h = handler(f, store, 100);
    const a = await h.handle(req({ callid: '9' }), f.name, quiet);
    expect(a).toMatchObject({ kind: 'answered', late: true });
    expect(body(a)).toBe('{"command":"wait","command_id":0,"params":{"wait":1},"variables":{}}');
    await new Promise((r) => setTimeout(r, 400));
    expect(store.writes).toBe(1);
    h.close();
  });

  it('a store that fails: 500 INTERNAL, and the call is where it was', async () => {
    const f = menu();
    const inner = new MemoryStore();
    let fail = false;
    const store = hooked(inner, {
      commit: () => {
        if (fail) throw new Error('store down');
      },
    });
    const h = handler(f, store);
    await h.handle(req({ callid: '5' }), f.name, quiet);
    const before = await inner.get('5');
    fail = true;
    const a = await h.handle(req({ callid: '5', command: 'play', command_id: 1, command_result: '0' }), f.name, quiet);
    expect(a).toEqual({ kind: 'failed', code: 'INTERNAL', message: 'the step failed; the call state was not changed' });
    expect(await inner.get('5')).toBe(before);
    fail = false;
    const b = await h.handle(req({ callid: '5', command: 'play', command_id: 1, command_result: '0' }), f.name, quiet);
    expect(body(b)).toContain('"command":"read","command_id":2');
    h.close();
    await inner.close();
  });

  it(
    'forgets calls idle past their TTL on a timer, without waiting for the next request, and releases their ' +
      'versions',
    async () => {
      const f = menu();
      let now = 1_000_000;
      const live = new LiveCalls(10_000, () => now);
      let released = 0;
      const h = new CallHandler(
        {
          versions: versionsOf(f),
          store: new MemoryStore(() => now),
          live,
          release: () => void released++,
          executor: smsExecutor(() => ({ ok: true, value: 'SMS1' })),
          now: () => now,
        },
        { deadlineMs: 4000, callTtlMs: 10_000, unknownCall: 'reject', routes: { apps: {}, numbers: {} } },
      );
      const keeper = new LiveKeeper(
        live,
        {},
        () => void released++,
        (id) => h.isRunning(id),
        { sweepMs: 10 },
      );
      for (const callid of ['1', '2', '3']) await h.handle(req({ callid }), f.name, quiet);
      expect(live.size).toBe(3);
      now += 10_001; // no request comes after this
      await new Promise((r) => setTimeout(r, 100));
      expect(live.size).toBe(0);
      expect(released).toBeGreaterThanOrEqual(1);
      h.close();
      keeper.close();
    },
  );
});

describe('the live-call cap (limits.max_live_calls)', () => {
  it('a new call past the cap is answered 503 CALL_LIMIT and left unknown; the live calls go on', async () => {
    const f = menu();
    const live = new LiveCalls(60_000);
    const h = new CallHandler(
      {
        versions: versionsOf(f),
        store: new MemoryStore(),
        live,
        release() {},
        executor: smsExecutor(() => ({ ok: true, value: 'SMS1' })),
      },
      {
        deadlineMs: 4000,
        callTtlMs: 60_000,
        maxLiveCalls: 2,
        unknownCall: 'reject',
        routes: { apps: {}, numbers: {} },
      },
    );
    for (const callid of ['1', '2']) expect((await h.handle(req({ callid }), f.name, quiet)).kind).toBe('answered');
    expect(await h.handle(req({ callid: '3' }), f.name, quiet)).toEqual({
      kind: 'unavailable',
      code: 'CALL_LIMIT',
      message:
        '2 calls are live here, the most limits.max_live_calls allows: the service may place it on another ' +
        'instance or retry',
    });
    expect(live.size).toBe(2);
    expect(
      (await h.handle(req({ callid: '1', command: 'play', command_id: 1, command_result: '0' }), f.name, quiet)).kind,
    ).toBe('answered');
    h.close();
  });
});
