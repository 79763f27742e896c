/**
 * The call step riding a stalled store (src/engine/stall.ts, src/engine/call.ts): a store whose calls hang, then are
 * carried out in the order they were sent when it resumes, as a paused Redis does. Fake timers: the deadline (4 s),
 * the guard's limit (9 s) and the store's pause are exact.
 *
 * Found by attacking a running server (issue 21): the Redis store failed every command Redis had not answered within
 * 1 s, so a 3 s pause answered every request in flight 503, and the service ended those calls.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallHandler } from '../../src/engine/call.js';
import type { StepAnswer } from '../../src/engine/answer.js';
import type { CallLogger, SnapshotStore } from '../../src/engine/ports.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { liveExecutor } from '../../src/http/live-executor.js';
import { LiveCalls } from '../../src/registry/live.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { RtRequest } from '../../src/protocol/rt.js';
import { answerText, menu, reply, req, tts, versionsOf } from './helpers.js';
import { yamlFlow } from './yaml.js';

const CONFIRM = readFileSync(new URL('../fixtures/sms-flows/confirm.yaml', import.meta.url), 'utf8');
const DEADLINE_MS = 4000;
/** How long the store is waited for: the deadline, the fallback's second, the deadline of its report. */
const LIMIT_MS = 2 * DEADLINE_MS + 1000;

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** One process's connection to a store that may stall: held calls are carried out in order on resume. */
class Stalling implements SnapshotStore {
  private held: (() => void)[] | undefined;
  /** The notes of fallbacks sent, in order. */
  readonly asides: string[] = [];
  constructor(readonly memory: MemoryStore) {}
  stall(): void {
    this.held = [];
  }
  resume(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const run of held) run();
  }
  load = (callid: string, keepAside?: boolean) => this.call(() => this.memory.load(callid, keepAside));
  commit = (callid: string, rev: number | undefined, value: string, ttlMs: number) =>
    this.call(() => this.memory.commit(callid, rev, value, ttlMs));
  setAside = (callid: string, aside: string, ttlMs: number) => {
    this.asides.push(aside);
    return this.call(() => this.memory.setAside(callid, aside, ttlMs));
  };
  private call<T>(op: () => Promise<T>): Promise<T> {
    const held = this.held;
    if (!held) return op();
    return new Promise<T>((resolve, reject) => held.push(() => void op().then(resolve, reject)));
  }
}

type Line = [level: string, msg: string];
function logger(lines: Line[]): CallLogger {
  const at = (level: string) => (_o: object, msg: string) => void lines.push([level, msg]);
  return { info: at('info'), warn: at('warn'), error: at('error'), debug: () => {} };
}

function instance(
  f: CompiledFlow,
  store: SnapshotStore,
  sms: (budgetMs: number) => Promise<string> = async () => 'SMS1',
) {
  const lines: Line[] = [];
  const h = new CallHandler(
    {
      versions: versionsOf(f),
      store,
      live: new LiveCalls(60_000),
      release() {},
      executor: liveExecutor({ sms: (_msg, budget) => sms(budget) }, undefined),
    },
    {
      deadlineMs: DEADLINE_MS,
      callTtlMs: 60_000,
      unknownCall: 'reject',
      routes: { apps: {}, numbers: {}, default: f.name },
    },
  );
  const log = logger(lines);
  /** A request handled; its answer as text once it comes (status and code, or the body). */
  const send = (r: Partial<RtRequest>) => {
    const o: { answer?: string; late?: boolean } = {};
    void Promise.resolve(h.handle(req(r), undefined, log)).then((a: StepAnswer) => {
      o.answer = answerText(a);
      o.late = a.kind === 'answered' && a.late === true;
    });
    return o;
  };
  return { h, lines, send };
}

/** A menu call brought to its read (command 2), then the store paused. */
async function atTheMenu(i: ReturnType<typeof instance>, store: Stalling, callid: string) {
  const first = i.send({ callid });
  await vi.advanceTimersByTimeAsync(0);
  expect(first.answer).toBe(reply('play', 1, { media_id: tts('Hello.') }));
  const hello = i.send({ callid, command: 'play', command_id: 1, command_result: '0' });
  await vi.advanceTimersByTimeAsync(0);
  expect(hello.answer).toBe(reply('read', 2, { media_id: tts('Press 1.'), max_digits: 1 }));
  store.stall();
}

const PRESS_1 = { command: 'read', command_id: 2, command_result: '1' };
const WAIT_2 = { command: 'wait', command_id: 2, command_result: '0' };
const FALLBACK_2 = reply('wait', 2, { wait: 1 });
const BYE_3 = reply('play', 3, { media_id: tts('Bye.') });

/** The call's stored state: where it is, its revision. */
async function stored(memory: MemoryStore, callid: string) {
  const { call } = await memory.load(callid, true);
  const s = JSON.parse(call!.value) as { step: string; commandId: number };
  return { step: s.step, commandId: s.commandId, rev: call!.rev };
}

describe('a stalled store', () => {
  it('shorter than the deadline: the request waits and gets its reply when the store answers', async () => {
    const memory = new MemoryStore();
    const store = new Stalling(memory);
    const i = instance(menu(), store);
    await atTheMenu(i, store, 's1');
    const press = i.send({ callid: 's1', ...PRESS_1 });
    await vi.advanceTimersByTimeAsync(3000);
    expect(press.answer).toBeUndefined();
    store.resume();
    await vi.advanceTimersByTimeAsync(0);
    expect(press).toEqual({ answer: BYE_3, late: false });
    expect(await stored(memory, 's1')).toEqual({ step: 'bye', commandId: 3, rev: 3 });
    expect(i.lines).toEqual([]);
    i.h.close();
  });

  it("past the deadline: the fallback, the request kept; its report, queued, gets the request's reply", async () => {
    const memory = new MemoryStore();
    const store = new Stalling(memory);
    const i = instance(menu(), store);
    await atTheMenu(i, store, 's2');
    const press = i.send({ callid: 's2', ...PRESS_1 });
    await vi.advanceTimersByTimeAsync(DEADLINE_MS - 1);
    expect(press.answer).toBeUndefined();
    // the deadline: the fallback, after waiting a little for its note (the store holds it)
    await vi.advanceTimersByTimeAsync(201);
    expect(press).toEqual({ answer: FALLBACK_2, late: true });
    // the service plays it and reports it while the store is still paused
    const report = i.send({ callid: 's2', ...WAIT_2 });
    await vi.advanceTimersByTimeAsync(2000);
    expect(report.answer).toBeUndefined();
    store.resume();
    await vi.advanceTimersByTimeAsync(0);
    // the kept request was applied once; the report stood for it and got its reply
    expect(report).toEqual({ answer: BYE_3, late: false });
    expect(await stored(memory, 's2')).toEqual({ step: 'bye', commandId: 3, rev: 3 });
    expect(i.lines).toEqual([['warn', 'step missed the deadline: fallback answered']]);
    // the call goes on
    const bye = i.send({ callid: 's2', command: 'play', command_id: 3, command_result: '0' });
    await vi.advanceTimersByTimeAsync(0);
    expect(bye.answer).toBe(reply('hangup', 4));
    i.h.close();
  });

  it(
    'past what the fallback covers (twice the deadline and its second): 503 STORE_UNAVAILABLE, new requests at ' +
      'once; the note kept: the report sent again after the store is back goes on',
    async () => {
      const memory = new MemoryStore();
      const store = new Stalling(memory);
      const i = instance(menu(), store);
      await atTheMenu(i, store, 's3');
      const press = i.send({ callid: 's3', ...PRESS_1 });
      await vi.advanceTimersByTimeAsync(DEADLINE_MS + 200);
      expect(press.answer).toBe(FALLBACK_2);
      // its report waits behind it, past its own deadline: the fallback again (its note the request's, not its own)
      const report = i.send({ callid: 's3', ...WAIT_2 });
      await vi.advanceTimersByTimeAsync(DEADLINE_MS + 200);
      expect(report.answer).toBe(FALLBACK_2);
      const second = i.send({ callid: 's3', ...WAIT_2 });
      await vi.advanceTimersByTimeAsync(LIMIT_MS - 2 * (DEADLINE_MS + 200) - 1);
      expect(second.answer).toBeUndefined();
      // 9 s since the request's load was sent: given up; the reports after it are not sent to the store
      await vi.advanceTimersByTimeAsync(1);
      const UNAVAILABLE = '503 STORE_UNAVAILABLE';
      expect(second.answer).toBe(UNAVAILABLE);
      const fresh = i.send({ callid: 's4' });
      await vi.advanceTimersByTimeAsync(0);
      expect(fresh.answer).toBe(UNAVAILABLE);
      expect(i.lines).toEqual([
        ['warn', 'step missed the deadline: fallback answered'],
        ['warn', 'step missed the deadline: fallback answered'],
        ['error', 'a late step failed: the call stays where it was'],
        ['error', 'a late step failed: the call stays where it was'],
        ['error', 'the call store is unavailable: the service will retry'],
        ['error', 'the call store is unavailable: the service will retry'],
      ]);
      const note =
        '{"fb":"wait","command":"read","command_id":2,"command_result":"1","command_error":"","call_status":"UP"}';
      expect(store.asides).toEqual([note, note]);
      // back: the paused calls are carried out (the load given up on, the notes); the service sends the report again
      store.resume();
      await vi.advanceTimersByTimeAsync(0);
      const again = i.send({ callid: 's3', ...WAIT_2 });
      await vi.advanceTimersByTimeAsync(0);
      expect(again).toEqual({ answer: BYE_3, late: false });
      expect(await stored(memory, 's3')).toEqual({ step: 'bye', commandId: 3, rev: 3 });
      expect(await memory.get('s4')).toBeUndefined();
      i.h.close();
    },
  );

  it("the report's deadline passing while the request is kept: its fallback's note is the request's", async () => {
    const f = await yamlFlow(CONFIRM);
    const memory = new MemoryStore();
    const store = new Stalling(memory);
    // the SMS takes 1 s; the store pauses meanwhile: the step's commit waits, sent 1 s after the request
    const i = instance(f, store, async () => {
      store.stall();
      await new Promise((r) => setTimeout(r, 1000));
      return 'SMS1';
    });
    const first = i.send({ callid: 'c1' });
    await vi.advanceTimersByTimeAsync(DEADLINE_MS + 200);
    expect(first.answer).toBe(reply('wait', 0, { wait: 1 }));
    const report = i.send({ callid: 'c1', command: 'wait', command_id: 0, command_result: '0' });
    await vi.advanceTimersByTimeAsync(DEADLINE_MS + 200);
    expect(report.answer).toBe(reply('wait', 0, { wait: 1 }));
    // both notes stand for the first request: the report's is not its own (whatever the store keeps last, the
    // service's next report stands for the first request)
    const firstNote =
      '{"fb":"wait","command":"","command_id":0,"command_result":"","command_error":"","call_status":"UP"}';
    expect(store.asides).toEqual([firstNote, firstNote]);
    store.resume();
    await vi.advanceTimersByTimeAsync(0);
    const next = i.send({ callid: 'c1', command: 'wait', command_id: 0, command_result: '0' });
    await vi.advanceTimersByTimeAsync(0);
    expect(next.answer).toBe(reply('play', 1, { media_id: tts('Sent SMS1.') }));
    i.h.close();
  });

  it('an effect after the store was slow gets its time from its claim: the SMS is sent, not TIMEOUT', async () => {
    const f = await yamlFlow(CONFIRM);
    const store = new Stalling(new MemoryStore());
    const budgets: number[] = [];
    const i = instance(f, store, async (budget) => {
      budgets.push(budget);
      return 'SMS1';
    });
    store.stall();
    const first = i.send({ callid: 'c2' });
    await vi.advanceTimersByTimeAsync(3900);
    store.resume();
    await vi.advanceTimersByTimeAsync(0);
    expect(first).toEqual({ answer: reply('play', 1, { media_id: tts('Sent SMS1.') }), late: false });
    expect(budgets).toEqual([DEADLINE_MS - 250]);
    i.h.close();
  });
});

describe('two instances, one stalled', () => {
  it(
    "the fallback's report on the other instance, before the note reached the store: it waits for the note, " +
      'not answered stale',
    async () => {
      const memory = new MemoryStore();
      const toA = new Stalling(memory);
      const toB = new Stalling(memory);
      const a = instance(menu(), toA);
      const b = instance(menu(), toB);
      await atTheMenu(b, toA, 't1');
      // A's connection to the store pauses: the request gets the fallback, its note held on that connection
      const press = a.send({ callid: 't1', ...PRESS_1 });
      await vi.advanceTimersByTimeAsync(DEADLINE_MS + 200);
      expect(press.answer).toBe(FALLBACK_2);
      // the report goes to B, whose store answers: the call is at its read, and no note yet
      const report = b.send({ callid: 't1', ...WAIT_2 });
      await vi.advanceTimersByTimeAsync(300);
      expect(report.answer).toBeUndefined();
      // A's connection comes back: its load, its note, its step
      toA.resume();
      await vi.advanceTimersByTimeAsync(100);
      expect(report).toEqual({ answer: BYE_3, late: false });
      expect(await stored(memory, 't1')).toEqual({ step: 'bye', commandId: 3, rev: 3 });
      a.h.close();
      b.h.close();
    },
  );
});
