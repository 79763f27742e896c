/**
 * The call history's records (src/engine/history.ts) and its writer (src/http/history.ts):
 * which events make path entries, their exact shape, params cut, records built with and
 * without a summary, stored text that is not a record, and the writer's bounds.
 */
import { describe, expect, it } from 'vitest';
import {
  finishedRecordText,
  finishedRow,
  inPath,
  parsePath,
  parseRecord,
  pathEntry,
  type FinishedRecord,
  type PathEntry,
} from '../../src/engine/history.js';
import type { StepEvent } from '../../src/engine/observe.js';
import { HistoryWriter, historySettings } from '../../src/http/history.js';
import { MemoryStore } from '../../src/store/memory.js';

function event(over: Partial<StepEvent> = {}): StepEvent {
  return {
    callid: '7',
    flow: 'desk',
    version: 'abcdef012345',
    outcome: 'ok',
    answer: 'answered',
    late: false,
    at: 1_800_000_000_000,
    ms: 1.234,
    request: { command: 'read', result: '1', error: '', callStatus: 'UP', commandId: 1 },
    from: 'menu',
    step: 'sales',
    reply: { command: 'dialout', commandId: 2, params: { targets: [{ number: '+33123456789', timeout: 30 }] } },
    isNew: false,
    ended: false,
    transitions: ['menu:1'],
    effects: [{ kind: 'sms', step: 'text', outcome: 'ok', value: 'H1', ms: 12.345 }],
    errors: [],
    ...over,
  };
}

/** The record of a call ended by `e`, from the entries before it, parsed. */
function finishedRecord(e: StepEvent, before: PathEntry[], max: number, bytes = 1 << 20, dropped = 0): FinishedRecord {
  const text = finishedRecordText(
    e,
    { entries: before.map((b) => JSON.stringify(b)), dropped },
    { entries: max, bytes },
  );
  return JSON.parse(text.record) as FinishedRecord;
}

describe('path entries', () => {
  it('have the exact shape: request, steps, reply, transitions, effects (ms to 0.1), trace id when given', () => {
    expect(pathEntry(event({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }))).toEqual({
      at: 1_800_000_000_000,
      ms: 1.2,
      from: 'menu',
      command: 'read',
      result: '1',
      error: '',
      step: 'sales',
      reply: { command: 'dialout', params: { targets: [{ number: '+33123456789', timeout: 30 }] } },
      transitions: ['menu:1'],
      effects: [{ kind: 'sms', step: 'text', outcome: 'ok', value: 'H1', ms: 12.3 }],
      late: false,
      outcome: 'ok',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
    const first = pathEntry(
      event({
        from: undefined,
        step: undefined,
        reply: undefined,
        effects: [{ kind: 'http', step: 'l', outcome: 'TIMEOUT', ms: 3 }],
        outcome: 'replay',
      }),
    );
    expect(first).toMatchObject({
      from: null,
      step: null,
      reply: null,
      effects: [{ kind: 'http', step: 'l', outcome: 'TIMEOUT', ms: 3 }],
      outcome: 'replay',
    });
    expect('traceId' in first).toBe(false);
  });

  it('cut strings over 200 characters, at any depth, and copy the params', () => {
    const params = {
      media_id: 'a'.repeat(500),
      list: [{ text: 'b'.repeat(201) }, 'c'.repeat(200)],
      n: 5,
      yes: true,
      none: null,
    };
    const e = pathEntry(event({ reply: { command: 'play', commandId: 2, params } }));
    expect(e.reply!.params).toEqual({
      media_id: `${'a'.repeat(200)}…`,
      list: [{ text: `${'b'.repeat(200)}…` }, 'c'.repeat(200)],
      n: 5,
      yes: true,
      none: null,
    });
    expect(params.media_id).toHaveLength(500);
    let deep: Record<string, unknown> = { x: 'end' };
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(
      JSON.stringify(pathEntry(event({ reply: { command: 'play', commandId: 2, params: deep } })).reply!.params),
    ).toBe('{"d":{"d":{"d":{"d":{"d":{"d":{"d":{"d":"…"}}}}}}}}');
  });

  it(
    "are kept for requests the call's flow served: not a tombstone's hangup, not a refused new call, not an " +
      'unrouted request',
    () => {
      expect(inPath(event())).toBe(true);
      expect(inPath(event({ outcome: 'replay', reply: undefined }))).toBe(true);
      expect(inPath(event({ outcome: 'stale', answer: 'stale', reply: undefined }))).toBe(true);
      expect(inPath(event({ flow: undefined, version: undefined }))).toBe(false);
      expect(inPath(event({ reply: undefined }))).toBe(false);
      expect(inPath(event({ isNew: true, outcome: 'rejected', answer: 'not_found', reply: undefined }))).toBe(false);
      expect(inPath(event({ isNew: true }))).toBe(true);
    },
  );
});

describe('finished records', () => {
  it('from the summary of the ending event, the path before it and its own entry, capped at maxPath', () => {
    const before = [1, 2, 3].map((i) => pathEntry(event({ at: 1_800_000_000_000 + i })));
    const e = event({
      at: 1_800_000_010_000,
      ended: true,
      callOutcome: 'completed',
      request: { command: 'hangup', result: '', error: '', callStatus: 'HANGUP', commandId: 4 },
      summary: {
        callid: '7',
        flow: 'desk',
        version: 'abcdef012345',
        status: 'HANGUP',
        commands: 4,
        durationMs: 10_000,
        lastStep: 'end',
        vars: { pin: '***' },
      },
    });
    const r = finishedRecord(e, before, 3);
    expect({ ...r, path: r.path.length }).toEqual({
      callid: '7',
      flow: 'desk',
      version: 'abcdef012345',
      started: new Date(1_800_000_000_000).toISOString(),
      ended: new Date(1_800_000_010_000).toISOString(),
      durationMs: 10_000,
      outcome: 'completed',
      status: 'HANGUP',
      lastStep: 'end',
      commands: 4,
      vars: { pin: '***' },
      dropped: 1,
      path: 3,
    });
    expect(r.path.map((p) => p.at)).toEqual([1_800_000_000_002, 1_800_000_000_003, 1_800_000_010_000]);
    expect(finishedRow(r)).toEqual({
      callid: '7',
      flow: 'desk',
      version: 'abcdef012345',
      started: r.started,
      ended: r.ended,
      durationMs: 10_000,
      outcome: 'completed',
      status: 'HANGUP',
      lastStep: 'end',
    });
  });

  it("without a summary: times from the path, the request's status, commands counted", () => {
    const before = [pathEntry(event({ at: 1000 }))];
    const r = finishedRecord(
      event({
        at: 5000,
        ended: true,
        callOutcome: 'error',
        request: { command: 'read', result: '', error: '', callStatus: 'HANGUP', commandId: 2 },
      }),
      before,
      10,
    );
    expect(r).toMatchObject({
      started: new Date(1000).toISOString(),
      ended: new Date(5000).toISOString(),
      durationMs: 4000,
      outcome: 'error',
      status: 'HANGUP',
      lastStep: 'sales',
      commands: 2,
      vars: {},
    });
  });

  it("as text from the stored entries (the writer's way): the same record", () => {
    const before = [1, 2, 3, 4].map((i) => pathEntry(event({ at: 1_800_000_000_000 + i, ms: i })));
    const ending = [
      event({
        at: 1_800_000_010_000,
        ended: true,
        callOutcome: 'completed',
        summary: {
          callid: '7',
          flow: 'desk',
          version: 'abcdef012345',
          status: 'HANGUP',
          commands: 4,
          durationMs: 10_000,
          lastStep: 'end',
          vars: { a: [1, 'x'] },
        },
      }),
      event({ at: 1_800_000_010_000, ended: true, callOutcome: 'error', reply: undefined }),
    ];
    for (const e of ending) {
      for (const max of [2, 5, 200]) {
        const text = finishedRecordText(
          e,
          { entries: before.map((b) => JSON.stringify(b)), dropped: 0 },
          {
            entries: max,
            bytes: 1 << 20,
          },
        );
        expect(JSON.parse(text.record)).toEqual(finishedRecord(e, before, max));
        expect(parseRecord(text.record)).toBeDefined();
        expect(JSON.parse(text.row)).toEqual(finishedRow(JSON.parse(text.record) as FinishedRecord));
      }
    }
  });

  it('stored text that is not an entry or a record is left out', () => {
    const good = JSON.stringify(pathEntry(event()));
    expect(parsePath(['{', 'null', '[1]', '"x"', '{"at":"1"}', good])).toHaveLength(1);
    expect(parseRecord(undefined)).toBeUndefined();
    expect(parseRecord('{"callid":1}')).toBeUndefined();
    expect(parseRecord('nope')).toBeUndefined();
    expect(parseRecord(JSON.stringify(finishedRecord(event({ ended: true }), [], 5)))?.callid).toBe('7');
  });
});

const SETTINGS = { keep: 10, ttlMs: 60_000, maxPath: 5, maxPathBytes: 65_536, maxBytes: 1 << 20 };

describe('the history writer', () => {
  const quiet = { error() {} };

  it(
    'queues on the request path and writes on the next turn ' + 'of the event loop; idle waits for the writes',
    async () => {
      const store = new MemoryStore();
      const w = new HistoryWriter(store, SETTINGS, 60_000, quiet);
      w.step(event());
      expect(await store.readPath('7')).toEqual([]);
      await w.idle();
      expect(parsePath(await store.readPath('7'))).toHaveLength(1);
      w.step(event({ ended: true, callOutcome: 'completed' }));
      await w.idle();
      expect(await store.readPath('7')).toEqual([]);
      expect(parseRecord(await store.getFinished('7'))?.path).toHaveLength(2);
      await store.close();
    },
  );

  it('drops events past 10,000 pending writes (a store that never answers): memory stays bounded', async () => {
    const stuck = Object.assign(new MemoryStore(), {
      appendPath: () => new Promise<void>(() => {}),
      appendPaths: () => new Promise<void>(() => {}),
    });
    const errors: object[] = [];
    const w = new HistoryWriter(stuck, SETTINGS, 60_000, {
      error: (o) => void errors.push(o),
    });
    for (let i = 0; i < 10_000; i++) w.step(event({ callid: String(i) }));
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 5; i++) w.step(event());
    expect(w.dropped).toBe(5);
    expect(errors).toEqual([expect.objectContaining({ code: 'HISTORY_WRITE_FAILED', failed: 1 })]);
    await w.close(10);
  });

  it('settings: defaults, false or keep 0 is off, bounds checked', () => {
    const bytes = { maxPathBytes: 131_072, maxBytes: 33_554_432 };
    expect(historySettings(undefined)).toEqual({ keep: 1000, ttlMs: 86_400_000, maxPath: 200, ...bytes });
    expect(historySettings({ keep: 5, maxPath: undefined })).toEqual({
      keep: 5,
      ttlMs: 86_400_000,
      maxPath: 200,
      ...bytes,
    });
    expect(() => historySettings({ maxPathBytes: 4095 })).toThrow(
      'history.maxPathBytes must be an integer from 4096 to 4194304, got 4095',
    );
    expect(historySettings(false)).toBeUndefined();
    expect(historySettings({ keep: 0 })).toBeUndefined();
    expect(() => historySettings({ keep: 100_001 })).toThrow(
      'history.keep must be an integer from 0 to 100000, got 100001',
    );
    expect(() => historySettings({ ttlMs: '5' as unknown as number })).toThrow('history.ttlMs must be an integer');
  });
});
