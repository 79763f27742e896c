/**
 * What a client can make the call history keep (issue 21, item 1): request strings cut to a few hundred bytes, replays
 * and refused requests counted in the entry before them (not entries of their own), a call's path within its bytes,
 * the entries dropped counted; the writer's exact stored path after a flood of hostile requests.
 */
import { describe, expect, it } from 'vitest';
import {
  finishedRecordText,
  fitPath,
  parsePath,
  parseRecord,
  pathCount,
  pathEntry,
  textBytes,
} from '../../src/engine/history.js';
import { REQUEST_TEXT_BYTES, type StepEvent } from '../../src/engine/observe.js';
import { clipText } from '../../src/engine/size.js';
import { HistoryWriter, historyStore } from '../../src/http/history.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { CallStore } from '../../src/store/types.js';

function event(over: Partial<StepEvent> = {}): StepEvent {
  return {
    callid: '7',
    flow: 'desk',
    version: 'abcdef012345',
    outcome: 'ok',
    answer: 'answered',
    late: false,
    at: 1_800_000_000_000,
    ms: 1,
    request: { command: 'play', result: '0', error: '', callStatus: 'UP', commandId: 1 },
    from: 'welcome',
    step: 'menu',
    reply: { command: 'read', commandId: 2, params: { attempts: 1 } },
    isNew: false,
    ended: false,
    transitions: [],
    effects: [],
    errors: [],
    ...over,
  };
}

const RESULT = 'R'.repeat(40_000);
const ERROR = 'E'.repeat(20_000);
/** A hostile request of about 60 KB: a replay of command 1's report, or a stale one. */
const hostile = (outcome: 'replay' | 'stale', at: number) =>
  event({
    outcome,
    answer: outcome === 'replay' ? 'answered' : 'stale',
    at,
    request: {
      command: 'play',
      result: RESULT,
      error: ERROR,
      callStatus: 'UP',
      commandId: outcome === 'replay' ? 1 : 0,
    },
    reply: undefined,
    step: 'menu',
  });

describe('request strings are cut', () => {
  it('to REQUEST_TEXT_BYTES UTF-8 bytes, the cut marked with … and the size; a cut text is not cut again', () => {
    expect(REQUEST_TEXT_BYTES).toBe(256);
    const cut = clipText(RESULT, 256);
    expect(cut).toBe(`${'R'.repeat(256 - '…(40000 bytes)'.length - 2)}…(40000 bytes)`);
    expect(textBytes(cut)).toBe(256);
    expect(clipText(cut, 256)).toBe(cut);
    expect(clipText('R'.repeat(256), 256)).toBe('R'.repeat(256));
    // on a character boundary: € is 3 bytes, 😀 4 (a surrogate pair, never split)
    const euros = clipText('€'.repeat(100), 64);
    expect(euros).toBe(`${'€'.repeat(16)}…(300 bytes)`);
    expect(textBytes(euros)).toBeLessThanOrEqual(64);
    const faces = clipText('😀'.repeat(50), 40);
    expect(faces).toBe(`${'😀'.repeat(6)}…(200 bytes)`);
  });

  it("in path entries: the request's command, result and error", () => {
    const e = pathEntry(hostile('stale', 1));
    expect(e.result).toBe(clipText(RESULT, 256));
    expect(e.error).toBe(`${'E'.repeat(240)}…(20000 bytes)`);
    expect(pathEntry(event({ request: { ...event().request, command: 'x'.repeat(1000) } })).command).toBe(
      `${'x'.repeat(241)}…(1000 bytes)`,
    );
    expect(textBytes(JSON.stringify(e))).toBeLessThan(1000);
  });
});

describe('the path within its limits', () => {
  it('replays and refused requests are counted, other requests are entries', () => {
    expect(pathCount(event())).toBeUndefined();
    expect(pathCount(event({ outcome: 'replay' }))).toBe('replays');
    expect(pathCount(event({ outcome: 'stale' }))).toBe('refused');
    expect(pathCount(event({ outcome: 'rejected' }))).toBe('refused');
    expect(pathCount(event({ outcome: 'error' }))).toBeUndefined();
  });

  it('keeps the last entries within the bytes and the count (the newest always), the dropped ones counted', () => {
    const entries = ['a'.repeat(10), 'b'.repeat(20), 'c'.repeat(30), 'd'.repeat(40)];
    expect(fitPath({ entries, dropped: 2 }, { entries: 10, bytes: 70 })).toEqual({
      entries: ['c'.repeat(30), 'd'.repeat(40)],
      dropped: 4,
    });
    expect(fitPath({ entries, dropped: 0 }, { entries: 3, bytes: 1000 })).toEqual({
      entries: entries.slice(1),
      dropped: 1,
    });
    expect(fitPath({ entries, dropped: 0 }, { entries: 10, bytes: 5 })).toEqual({
      entries: ['d'.repeat(40)],
      dropped: 3,
    });
    // bytes are UTF-8 bytes: é is 2
    expect(fitPath({ entries: ['é'.repeat(10), 'x'], dropped: 0 }, { entries: 10, bytes: 20 }).dropped).toBe(1);
    expect(fitPath({ entries: ['é'.repeat(10), 'x'], dropped: 0 }, { entries: 10, bytes: 21 }).dropped).toBe(0);
  });

  it('a finished record keeps its path within the bytes and says how many entries were dropped', () => {
    const before = Array.from({ length: 50 }, (_, i) => JSON.stringify(pathEntry(event({ at: i }))));
    const one = textBytes(before[49]!); // the size of each entry of a two-digit `at`
    const { record, row } = finishedRecordText(
      event({ at: 99, ended: true, callOutcome: 'abandoned' }),
      { entries: before, dropped: 7 },
      { entries: 200, bytes: one * 10 },
    );
    const r = parseRecord(record)!;
    expect(r.path.map((p) => p.at)).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49, 99]);
    expect(r.dropped).toBe(7 + 41);
    expect(JSON.parse(row)).toEqual({
      callid: '7',
      flow: 'desk',
      version: 'abcdef012345',
      started: r.started,
      ended: r.ended,
      durationMs: r.durationMs,
      outcome: 'abandoned',
      status: 'UP',
      lastStep: 'menu',
    });
  });
});

describe('the writer after a flood of hostile requests', () => {
  const quiet = { error() {} };
  const settings = { keep: 10, ttlMs: 60_000, maxPath: 200, maxPathBytes: 8192, maxBytes: 1 << 20 };

  it('200 replays and stale requests of 60 KB on one call: one entry, counted, the path under its bytes', async () => {
    const store = new MemoryStore();
    const w = new HistoryWriter(store, settings, 60_000, quiet);
    w.step(event({ at: 1 }));
    await w.idle();
    // some in the batch of one turn, others a turn each
    for (let i = 0; i < 100; i++) w.step(hostile(i % 2 === 0 ? 'replay' : 'stale', 10 + i));
    await w.idle();
    for (let i = 100; i < 200; i++) {
      w.step(hostile(i % 2 === 0 ? 'replay' : 'stale', 10 + i));
      await w.idle();
    }
    const stored = await store.loadPath('7');
    expect(stored.dropped).toBe(0);
    expect(stored.entries).toHaveLength(1);
    expect(JSON.parse(stored.entries[0]!)).toEqual({ ...pathEntry(event({ at: 1 })), replays: 100, refused: 100 });
    expect(stored.entries[0]!.endsWith(',"replays":100,"refused":100}')).toBe(true);
    expect(store.historySize().pathBytes).toBe(textBytes(stored.entries[0]!));
    await store.close();
  });

  it('a replay after an entry of the same turn counts in it; one before it counts in the stored entry', async () => {
    const store = new MemoryStore();
    const w = new HistoryWriter(store, settings, 60_000, quiet);
    w.step(event({ at: 1 }));
    await w.idle();
    w.step(hostile('replay', 2)); // reports command 1 again: counted in the entry of at 1
    w.step(event({ at: 3, request: { ...event().request, command: 'read', commandId: 2 } }));
    w.step(hostile('stale', 4)); // counted in the entry of at 3
    w.step(hostile('stale', 5));
    await w.idle();
    const path = parsePath(await store.readPath('7'));
    expect(path.map((p) => [p.at, p.replays, p.refused])).toEqual([
      [1, 1, 0],
      [3, 0, 2],
    ]);
    await store.close();
  });

  it('hostile entries that do advance the call are cut: 200 of 60 KB keep the path within maxPathBytes', async () => {
    const store = new MemoryStore();
    const w = new HistoryWriter(store, settings, 60_000, quiet);
    for (let i = 0; i < 200; i++)
      w.step(
        event({ at: i, request: { command: 'read', result: RESULT, error: ERROR, callStatus: 'UP', commandId: i } }),
      );
    await w.idle();
    const stored = await store.loadPath('7');
    const bytes = stored.entries.reduce((n, e) => n + textBytes(e), 0);
    expect(bytes).toBeLessThanOrEqual(8192);
    expect(bytes).toBe(store.historySize().pathBytes);
    expect(stored.dropped + stored.entries.length).toBe(200);
    expect(parsePath(stored.entries).at(-1)!.at).toBe(199);
    w.step(event({ at: 500, ended: true, callOutcome: 'abandoned' }));
    await w.idle();
    const record = (await store.getFinished('7'))!;
    const r = parseRecord(record)!;
    expect(r.dropped + r.path.length).toBe(201);
    expect(r.path.reduce((n, e) => n + textBytes(JSON.stringify(e)), 0)).toBeLessThanOrEqual(8192);
    expect(textBytes(record)).toBeLessThan(8192 + 1024);
    await store.close();
  });
});

describe("a store of one's own written before these methods", () => {
  it('gets them made of its older ones: loadPath, listFinishedRows; countPaths counts nothing', async () => {
    const inner = new MemoryStore();
    const old = {
      appendPath: (c: string, e: string, max: number, ttl: number) => inner.appendPath(c, e, max, ttl),
      readPath: (c: string) => inner.readPath(c),
      dropPath: (c: string) => inner.dropPath(c),
      addFinished: (c: string, r: string, keep: number, ttl: number) => inner.addFinished(c, r, keep, ttl),
      listFinished: (o: number, l: number) => inner.listFinished(o, l),
      getFinished: (c: string) => inner.getFinished(c),
      listLive: (c: string | undefined, l: number) => inner.listLive(c, l),
    };
    const store = historyStore(old as unknown as CallStore);
    const w = new HistoryWriter(
      store,
      { keep: 10, ttlMs: 60_000, maxPath: 200, maxPathBytes: 8192, maxBytes: 1 << 20 },
      60_000,
      {
        error() {},
      },
    );
    w.step(event({ at: 1 }));
    await w.idle();
    w.step(hostile('replay', 2));
    w.step(event({ at: 3 }));
    await w.idle();
    expect(await store.loadPath('7')).toEqual({
      entries: [JSON.stringify(pathEntry(event({ at: 1 }))), JSON.stringify(pathEntry(event({ at: 3 })))],
      dropped: 0,
    });
    w.step(event({ at: 4, ended: true, callOutcome: 'abandoned' }));
    await w.idle();
    const rows = (await store.listFinishedRows(0, 10)).map((r) => JSON.parse(r) as Record<string, unknown>);
    expect(rows).toMatchObject([{ callid: '7', flow: 'desk', outcome: 'abandoned' }]);
    expect(Object.keys(rows[0]!)).toHaveLength(9);
    await inner.close();
  });
});
