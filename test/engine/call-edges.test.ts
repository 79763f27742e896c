/**
 * The call step on its edge paths (src/engine/call.ts and its stages): a new call lost to
 * another instance, a store failing after an effect, a late step failing, the lookup record
 * after a request without lookups, a replayed or stale sensitive input.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CallHandler } from '../../src/engine/call.js';
import type { StepEvent } from '../../src/engine/observe.js';
import type { CallLogger, SnapshotStore } from '../../src/engine/ports.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { liveExecutor } from '../../src/http/live-executor.js';
import { LiveCalls } from '../../src/registry/live.js';
import { MemoryStore } from '../../src/store/memory.js';
import { answerText, req, versionsOf } from './helpers.js';
import { yamlFlow } from './yaml.js';

const HELLO = 'version: 1\nname: hello\nstart: hi\nsteps:\n  hi: { say: "Hello.", next: bye }\n  bye: { hangup: {} }\n';
const CONFIRM = readFileSync(new URL('../fixtures/sms-flows/confirm.yaml', import.meta.url), 'utf8');

type Line = [level: string, msg: string, fields: Record<string, unknown>];
function logger(lines: Line[] = []): CallLogger {
  const at = (level: string) => (o: object, msg: string) => void lines.push([level, msg, o as Record<string, unknown>]);
  return { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

const storeDown = () => Object.assign(new Error('Redis: Command timed out'), { code: 'STORE_UNAVAILABLE' });

function instance(
  f: CompiledFlow,
  store: SnapshotStore,
  o: { deadlineMs?: number; events?: StepEvent[]; sms?: () => Promise<string> } = {},
) {
  let released = 0;
  const live = new LiveCalls(60_000);
  const h = new CallHandler(
    {
      versions: versionsOf(f),
      store,
      live,
      release: () => void released++,
      executor: liveExecutor({ sms: async () => (o.sms ? o.sms() : 'SMS1') }, undefined),
    },
    {
      deadlineMs: o.deadlineMs ?? 2000,
      callTtlMs: 60_000,
      unknownCall: 'reject',
      routes: { apps: {}, numbers: {}, default: f.name },
      ...(o.events ? { observer: { transitions: true, step: (e: StepEvent) => void o.events!.push(e) } } : {}),
    },
  );
  return { h, live, released: () => released };
}

/** A store whose `n`-th commit fails as an unreachable Redis would. */
function failingCommit(store: MemoryStore, n: number): SnapshotStore {
  let commits = 0;
  return {
    load: (c, k) => store.load(c, k),
    commit: async (...x) => {
      if (++commits === n) throw storeDown();
      return store.commit(...x);
    },
    setAside: (...x) => store.setAside(...x),
  };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('the call step on its edges', () => {
  it('a new call another instance started first: answered its reply, not counted live here', async () => {
    const f = await yamlFlow(HELLO);
    const store = new MemoryStore();
    const a = instance(f, store);
    let first = true;
    // B loads no record; A answers the same first request meanwhile and commits first: B's commit loses
    const raced: SnapshotStore = {
      load: async (c, k) => {
        const r = await store.load(c, k);
        if (first) {
          first = false;
          await a.h.handle(req({ callid: '77' }), undefined, logger());
        }
        return r;
      },
      commit: (...x) => store.commit(...x),
      setAside: (...x) => store.setAside(...x),
    };
    const events: StepEvent[] = [];
    const b = instance(f, raced, { events });
    const answer = await b.h.handle(req({ callid: '77' }), undefined, logger());
    expect(answerText(answer)).toContain('"command":"play","command_id":1');
    expect([a.live.size, b.live.size, b.released()]).toEqual([1, 0, 1]);
    await until(() => events.length > 0);
    expect(events.map((e) => [e.outcome, e.isNew])).toEqual([['replay', false]]);
    a.h.close();
    b.h.close();
  });

  it('the store failing at the commit after an SMS was sent: the event and the log say the SMS went', async () => {
    const f = await yamlFlow(CONFIRM);
    const events: StepEvent[] = [];
    const lines: Line[] = [];
    const i = instance(f, failingCommit(new MemoryStore(), 2), { events });
    const answer = await i.h.handle(req({ callid: '78' }), undefined, logger(lines));
    expect(answer).toMatchObject({ kind: 'unavailable', code: 'STORE_UNAVAILABLE' });
    await until(() => events.length > 0);
    expect(events[0]).toMatchObject({ outcome: 'store_unavailable', answer: 'unavailable', flow: f.name, isNew: true });
    expect(events[0]!.effects.map((e) => [e.kind, e.outcome])).toEqual([['sms', 'ok']]);
    expect(lines.map(([level, msg]) => `${level} ${msg}`)).toEqual([
      'error the call store is unavailable: the service will retry',
      'debug sms done',
    ]);
    expect(i.live.size).toBe(0); // no state kept: the new call is not live
    i.h.close();
  });

  it('a late step whose commit fails: the fallback was answered, the failure logged as late', async () => {
    const f = await yamlFlow(CONFIRM);
    const lines: Line[] = [];
    const events: StepEvent[] = [];
    const i = instance(f, failingCommit(new MemoryStore(), 2), {
      events,
      // the SMS is given deadline - 250 ms, and answers after the deadline
      deadlineMs: 400,
      sms: () => new Promise((r) => setTimeout(() => r('SMSLATE'), 600)),
    });
    const answer = await i.h.handle(req({ callid: '79' }), undefined, logger(lines));
    expect(answer).toMatchObject({ kind: 'answered', late: true });
    await until(() => events.length > 0);
    expect(lines.filter(([level]) => level !== 'debug').map(([level, msg]) => `${level} ${msg}`)).toEqual([
      'warn step missed the deadline: fallback answered',
      'error a late step failed: the call stays where it was',
    ]);
    expect(events[0]).toMatchObject({ late: true, answer: 'unavailable', code: 'STORE_UNAVAILABLE' });
    i.h.close();
  });

  it('the effect memo: lookups counted (hn) stay; a lookup record (lk) goes with a request without one', async () => {
    const f = await yamlFlow(
      'version: 1\nname: two\nstart: a\nsteps:\n  a: { say: "A.", next: b }\n  b: { say: "B.", next: c }\n' +
        '  c: { hangup: {} }\n',
    );
    const store = new MemoryStore();
    const i = instance(f, store);
    await i.h.handle(req({ callid: '80' }), undefined, logger());
    const stored = JSON.parse((await store.get('80'))!) as Record<string, unknown>;
    await store.set(
      '80',
      JSON.stringify({ ...stored, hn: 2, lk: { id: 'L', step: 'x', started: 1, until: 2 } }),
      60_000,
    );
    await i.h.handle(req({ callid: '80', command: 'play', command_id: 1, command_result: '0' }), undefined, logger());
    const after = JSON.parse((await store.get('80'))!) as Record<string, unknown>;
    expect([after.step, after.hn, after.lk]).toEqual(['b', 2, undefined]);
    i.h.close();
  });
});

describe("waiting for another instance's claim", () => {
  it("keeps its own fallback's note: the fallback's report is the request it replaced, after a failure", async () => {
    const f = await yamlFlow(CONFIRM);
    const memory = new MemoryStore();
    // an instance died while starting call c1: its claim alone, valid 0.6 s more
    await memory.set('c1', JSON.stringify({ v: 2, claim: { req: '0::UP', until: Date.now() + 600 } }), 60_000);
    const lines: Line[] = [];
    // waits for the claim past its deadline (fallback), takes the call over, sends the SMS; its commit fails
    const i = instance(f, failingCommit(memory, 2), { deadlineMs: 300 });
    const first = await i.h.handle(req({ callid: 'c1' }), undefined, logger(lines));
    expect(answerText(first)).toBe('{"command":"wait","command_id":0,"params":{"wait":1},"variables":{}}');
    await until(() => lines.some(([, msg]) => msg.startsWith('a late step failed')));
    // the claim its failed step left expires (deadline + 1 s after it was taken)
    const left = JSON.parse((await memory.get('c1'))!) as { claim: { until: number } };
    await new Promise((r) => setTimeout(r, Math.max(0, left.claim.until - Date.now() + 10)));
    // the service reports the fallback done: stepped as the first request it replaced (the note was kept)
    const report = req({ callid: 'c1', command: 'wait', command_id: 0, command_result: '0' });
    expect(answerText(await i.h.handle(report, undefined, logger()))).toContain('"command":"play","command_id":1');
    i.h.close();
  });
});

describe('a sensitive input seen by the observers', () => {
  const PIN = `version: 2
name: pin2
start: pin
sensitive: [pin]
steps:
  account:
    read: { prompt: "Account?", max_digits: 6 }
    save: account
    next: end
  pin:
    read: { prompt: "Enter your PIN.", max_digits: 4 }
    save: pin
    next: thanks
  thanks: { say: "Thanks.", next: account }
  end: { hangup: {} }
`;

  it('is masked when new, replayed or stale; a value that is not sensitive stays as it is', async () => {
    const f = await yamlFlow(PIN);
    const events: StepEvent[] = [];
    const i = instance(f, new MemoryStore(), { events });
    const log = logger();
    const pin = req({ callid: '90', command: 'read', command_id: 1, command_result: '4821' });
    await i.h.handle(req({ callid: '90' }), undefined, log);
    await i.h.handle(pin, undefined, log); // new
    await i.h.handle(pin, undefined, log); // the service retries it: replayed
    await i.h.handle(req({ callid: '90', command: 'play', command_id: 2, command_result: '0' }), undefined, log);
    await i.h.handle(pin, undefined, log); // a copy delivered late: stale
    const account = req({ callid: '90', command: 'read', command_id: 3, command_result: '123456' });
    await i.h.handle(account, undefined, log);
    await i.h.handle(account, undefined, log); // replayed, not sensitive
    await i.h.handle(req({ callid: '90', command: 'play', command_id: 2, command_result: '0' }), undefined, log);
    await until(() => events.length === 8);
    expect(events.map((e) => [e.outcome, e.request.result])).toEqual([
      ['ok', ''],
      ['ok', '***'],
      ['replay', '***'],
      ['ok', '0'],
      ['stale', '***'],
      ['ok', '123456'],
      ['replay', '123456'],
      ['stale', '0'],
    ]);
    i.h.close();
  });

  it('on a store that answers at once, a request whose effect waits holds its call, not the others', async () => {
    const f = await yamlFlow(CONFIRM);
    let release!: (hash: string) => void;
    const gate = new Promise<string>((r) => (release = r));
    let sent = 0;
    const events: StepEvent[] = [];
    // the first SMS waits for the gate; the others are sent at once
    const i = instance(f, new MemoryStore(), {
      events,
      sms: () => (++sent === 1 ? gate : Promise.resolve(`SMS${sent}`)),
    });
    const done: string[] = [];
    const first = Promise.resolve(i.h.handle(req({ callid: '95' }), undefined, logger())).then(
      (a) => (done.push('95'), a),
    );
    const copy = Promise.resolve(i.h.handle(req({ callid: '95' }), undefined, logger())).then(
      (a) => (done.push('95 copy'), a),
    );
    expect(i.h.isRunning('95')).toBe(true);
    const other = await i.h.handle(req({ callid: '96' }), undefined, logger());
    expect(answerText(other)).toContain('Sent SMS2.');
    // the other call's next request waits for nothing: answered, its call never queued
    const next = await i.h.handle(
      req({ callid: '96', command: 'play', command_id: 1, command_result: '' }),
      undefined,
      logger(),
    );
    expect(answerText(next)).toContain('"command":"hangup"');
    expect(i.h.isRunning('96')).toBe(false);
    expect(done).toEqual([]);
    release('SMS1');
    const [a, b] = await Promise.all([first, copy]);
    expect(done).toEqual(['95', '95 copy']);
    expect(answerText(a)).toContain('Sent SMS1.');
    expect(answerText(b)).toBe(answerText(a)); // the copy, behind it, replays its reply
    expect(sent).toBe(2);
    expect(i.h.isRunning('95')).toBe(false);
    expect(events.map((e) => [e.callid, e.outcome])).toEqual([
      ['96', 'ok'],
      ['96', 'ok'],
      ['95', 'ok'],
      ['95', 'replay'],
    ]);
    i.h.close();
  });
});
