/**
 * The call step's observers (src/engine/observe.ts): one event per request, after its work,
 * with the transitions the machine took, the command answered, effects with their timings,
 * how the call ended, and sensitive values masked.
 */
import { describe, expect, it } from 'vitest';
import { CallHandler } from '../../src/engine/call.js';
import { type CallLogger } from '../../src/engine/ports.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import type { StepEvent } from '../../src/engine/observe.js';
import { MemoryStore } from '../../src/store/memory.js';
import { StoreUnavailable } from '../../src/store/types.js';
import { req, smsExecutor, versionsOf } from './helpers.js';
import { yamlFlow } from './yaml.js';

const quiet: CallLogger = { info() {}, warn() {}, error() {}, debug() {} };

const FLOW = `
version: 2
name: pinline
start: ask
sensitive: [pin]
steps:
  ask:
    read: { media_id: "Your PIN?", max_digits: 4 }
    save: pin
    on:
      TIMEOUT: ask
      default: text
  text:
    sms: { to: "+33612345678", body: "PIN {{ pin }} entered" }
    next: bye
    on: { error: bye }
  bye:
    play: { media_id: "Bye {{ pin }}." }
    next: end
  end:
    hangup: {}
`;

function handler(
  f: CompiledFlow,
  events: StepEvent[],
  transitions = true,
  deadlineMs = 4000,
  perform = async () => ({ ok: true as const, value: 'SMS-1' }),
): CallHandler {
  return new CallHandler(
    {
      versions: versionsOf(f),
      store: new MemoryStore(),
      live: { set() {}, end: () => true, purge: () => 0, started() {}, error() {}, size: 0 },
      release() {},
      executor: smsExecutor(perform),
    },
    {
      deadlineMs,
      callTtlMs: 60_000,
      unknownCall: 'reject',
      routes: { apps: {}, numbers: {} },
      observer: { transitions, step: (e) => events.push(e) },
    },
  );
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe('step observers', () => {
  it(
    'tell each request: transitions taken, the command answered, effects, and how the call ended; sensitive ' +
      'values masked',
    async () => {
      const f = await yamlFlow(FLOW);
      const events: StepEvent[] = [];
      const h = handler(f, events);
      await h.handle(req({ callid: '9' }), f.name, quiet);
      await h.handle(req({ callid: '9', command: 'read', command_id: 1, command_result: '4821' }), f.name, quiet);
      await h.handle(req({ callid: '9', command: 'play', command_id: 2, command_result: '' }), f.name, quiet);
      await h.handle(req({ callid: '9', command: 'hangup', command_id: 3, call_status: 'HANGUP' }), f.name, quiet);
      await settle();
      expect(events.map((e) => [e.outcome, e.from, e.step, e.reply?.command, e.isNew, e.ended])).toEqual([
        ['ok', undefined, 'ask', 'read', true, false],
        ['ok', 'ask', 'bye', 'play', false, false],
        ['ok', 'bye', 'end', 'hangup', false, false],
        ['ok', 'end', 'end', 'hangup', false, true],
      ]);
      const [first, pin, , last] = events as [StepEvent, StepEvent, StepEvent, StepEvent];
      expect(first.flow).toBe('pinline');
      expect(first.version).toBe(f.version);
      expect(pin.request).toEqual({ command: 'read', result: '***', error: '', callStatus: 'UP', commandId: 1 });
      expect(pin.transitions).toEqual(['ask:default', 'text:default']);
      expect(pin.effects).toHaveLength(1);
      expect(pin.effects[0]).toMatchObject({ kind: 'sms', step: 'text', outcome: 'ok', value: 'SMS-1' });
      // a sensitive var renders empty
      expect(pin.reply).toEqual({ command: 'play', commandId: 2, params: { media_id: 'TTS|TTS_EN-GB_SERENA|Bye .' } });
      expect(JSON.stringify(events)).not.toContain('4821');
      expect(last.callOutcome).toBe('completed');
      expect(last.summary).toMatchObject({ callid: '9', flow: 'pinline', lastStep: 'end', vars: { pin: '***' } });
      h.close();
    },
  );

  it(
    'tells replays, stale requests, unknown flows and a ' + 'caller who hung up early; no transitions unless asked',
    async () => {
      const f = await yamlFlow(FLOW);
      const events: StepEvent[] = [];
      const h = handler(f, events, false);
      await h.handle(req({ callid: '1' }), f.name, quiet);
      await h.handle(req({ callid: '1' }), f.name, quiet);
      await h.handle(req({ callid: '2' }), 'nope', quiet);
      await h.handle(req({ callid: '1', command: 'read', command_id: 1, command_result: 'TIMEOUT' }), f.name, quiet);
      await h.handle(req({ callid: '1', command: 'read', command_id: 0 }), f.name, quiet);
      await h.handle(req({ callid: '1', command: 'read', command_id: 2, call_status: 'HANGUP' }), f.name, quiet);
      await settle();
      expect(events.map((e) => [e.outcome, e.answer, e.code])).toEqual([
        ['ok', 'answered', undefined],
        ['replay', 'answered', undefined],
        ['no_route', 'not_found', 'UNKNOWN_FLOW'],
        ['ok', 'answered', undefined],
        ['stale', 'stale', 'STALE_REQUEST'],
        ['ok', 'answered', undefined],
      ]);
      expect(events.every((e) => e.transitions.length === 0)).toBe(true);
      expect(events[5]!.callOutcome).toBe('abandoned');
      h.close();
    },
  );

  it('a late step gives one event, marked late, when it lands', async () => {
    const f = await yamlFlow(FLOW);
    const events: StepEvent[] = [];
    const slow = () =>
      new Promise<{ ok: true; value: string }>((r) => setTimeout(() => r({ ok: true, value: 'SMS-2' }), 400));
    const h = handler(f, events, true, 150, slow);
    await h.handle(req({ callid: '5' }), f.name, quiet);
    const a = await h.handle(req({ callid: '5', command: 'read', command_id: 1, command_result: '1' }), f.name, quiet);
    expect(a.kind === 'answered' && a.body).toContain('"command":"wait"');
    expect(events).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 600));
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ outcome: 'ok', late: true, step: 'bye' });
    expect(events[1]!.effects[0]).toMatchObject({ outcome: 'ok', value: 'SMS-2' });
    expect(events[1]!.ms).toBeGreaterThanOrEqual(300);
    h.close();
  });

  it('a store that cannot be reached: the event says store_unavailable and 503, as the answer does', async () => {
    const f = await yamlFlow(FLOW);
    const events: StepEvent[] = [];
    const store = new MemoryStore();
    // its loads fail, whether asked for a promise or at once (loadSync, which the call step prefers)
    store.load = async () => {
      throw new StoreUnavailable('Redis: connection refused');
    };
    store.loadSync = () => {
      throw new StoreUnavailable('Redis: connection refused');
    };
    const h = new CallHandler(
      {
        versions: { get: () => f, pick: () => f },
        store,
        live: { set() {}, end: () => true, purge: () => 0, started() {}, error() {}, size: 0 },
        release() {},
        executor: smsExecutor(() => ({ ok: true, value: 'x' })),
      },
      {
        deadlineMs: 4000,
        callTtlMs: 60_000,
        unknownCall: 'reject',
        routes: { apps: {}, numbers: {} },
        observer: { step: (e) => events.push(e) },
      },
    );
    const a = await h.handle(req({ callid: '4' }), f.name, quiet);
    expect(a).toMatchObject({ kind: 'unavailable', code: 'STORE_UNAVAILABLE' });
    expect(events.map((e) => [e.outcome, e.answer, e.code])).toEqual([
      ['store_unavailable', 'unavailable', 'STORE_UNAVAILABLE'],
    ]);
    h.close();
  });

  it('an observer that throws does not change the answer', async () => {
    const f = await yamlFlow(FLOW);
    const h = new CallHandler(
      {
        versions: { get: () => f, pick: () => f },
        store: new MemoryStore(),
        live: { set() {}, end: () => true, purge: () => 0, started() {}, error() {}, size: 0 },
        release() {},
        executor: smsExecutor(() => ({ ok: true, value: 'x' })),
      },
      {
        deadlineMs: 4000,
        callTtlMs: 60_000,
        unknownCall: 'reject',
        routes: { apps: {}, numbers: {} },
        observer: {
          step: () => {
            throw new Error('boom');
          },
        },
      },
    );
    const errors: unknown[] = [];
    const a = await h.handle(req({ callid: '3' }), f.name, { ...quiet, error: (o) => errors.push(o) });
    expect(a.kind).toBe('answered');
    await settle();
    expect(errors).toHaveLength(1);
    h.close();
  });
});
