/**
 * The cap on a call's stored state (limits.call_state_bytes, default 32 KB): a flow that
 * grows its variables is stopped at the cap, the request's changes are dropped and the step
 * takes its error way (STATE_TOO_LARGE), and a `set` chain that doubles a value within one
 * request is refused at each step instead of growing the process until it dies.
 */
import { describe, expect, it } from 'vitest';
import { Call, OPTS, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';
import { jsonSize } from '../../src/engine/size.js';
import type { Outcome } from '../../src/engine/outcome.js';
import type { Value } from '../../src/flow/model.js';

const logsOf = (o: Outcome | undefined) =>
  o?.kind === 'reply' ? (o.log ?? []).map((l) => `${l.level} ${l.code ?? ''} ${l.msg}`) : [];

/** Records messages and keeps every recording's name in one variable: it grows with each message. */
const APPENDING = `
version: 1
name: appending
start: rec
vars: { log: "" }
steps:
  rec:
    record: { max_duration: 60 }
    on:
      default: keep
      error: { say: "Your box is full ({{ error }}).", goto: bye }
  keep:
    set: { log: "{{ vars.log }}{{ result }};" }
    next: rec
  bye: { hangup: {} }
`;

describe('the call state cap', () => {
  it(
    'a request that would grow the state over the cap keeps none of its changes: the step takes its error ' +
      'branch (STATE_TOO_LARGE)',
    async () => {
      const f = await yamlFlow(APPENDING);
      const c = new Call(f, { ...OPTS, maxStateBytes: 4096 });
      const name = (i: number) => `rec-${i}-`.padEnd(1000, 'x');
      expect(c.start()).toBe(reply('record', 1, { max_duration: 60 }));
      expect(c.result(name(1))).toBe(reply('record', 2, { max_duration: 60 }));
      expect(c.result(name(2))).toBe(reply('record', 3, { max_duration: 60 }));
      const before = c.state!;
      expect(before.vars.log).toBe(`${name(1)};${name(2)};`);
      // the third name would make the state over 4 KB (the names in vars.log, the last result kept for templates)
      expect(c.result(name(3))).toBe(reply('play', 4, { media_id: tts('Your box is full (STATE_TOO_LARGE).') }));
      expect(c.state!.vars).toEqual(before.vars); // the third name was not kept
      expect(c.state!.step).toBe('rec');
      expect(logsOf(c.last)).toEqual([
        `error STATE_TOO_LARGE the call state went over the call state cap of 4096 bytes: this request's ` +
          `changes are dropped and rec takes its error branch (STATE_TOO_LARGE)`,
      ]);
      expect(c.result('0')).toBe(reply('hangup', 5));
    },
  );

  it('the default cap is 32 KB', async () => {
    const f = await yamlFlow(APPENDING);
    const c = new Call(f);
    c.start();
    let id = 1;
    for (; id < 40; id++) {
      c.result(`r${id}`.padEnd(1000, 'y'));
      if (c.state!.reply.startsWith('{"command":"play"')) break;
    }
    expect(id).toBeLessThan(40);
    const kept = c.state!.vars.log as string;
    expect(kept.length).toBe((id - 1) * 1001); // every name before the one refused
    expect(JSON.stringify(c.state).length).toBeLessThanOrEqual(32 * 1024);
    expect(JSON.stringify(c.state).length + 2 * 1001).toBeGreaterThan(32 * 1024); // and it was full
  });

  it('when the error branch goes over the cap too, the call is hung up and dropped', async () => {
    const f = await yamlFlow(`
version: 1
name: greedy
start: rec
vars: { log: "" }
handlers: { error: twice }
steps:
  rec:
    record: { max_duration: 60 }
    on: { "/^stop$/": bye, default: keep }
  keep:
    set: { log: "{{ vars.log }}{{ result }}" }
    next: rec
  twice:
    set: { log: "{{ vars.log }}{{ vars.log }}" }
    next: rec
  bye: { hangup: {} }
`);
    const c = new Call(f, { ...OPTS, maxStateBytes: 4096 });
    c.start();
    c.result('a'.repeat(1000));
    c.result('b'.repeat(1000));
    c.result('c'.repeat(1000)); // over the cap: the error way doubles the log, over the cap again
    expect(c.last).toMatchObject({ kind: 'reply', state: null, reply: { command: 'hangup', command_id: 4 } });
    expect(logsOf(c.last)).toEqual([
      "error STATE_TOO_LARGE the call state went over the call state cap of 4096 bytes: this request's " +
        'changes are dropped and rec takes its error branch (STATE_TOO_LARGE)',
      'error STATE_TOO_LARGE the error branch went over the call state cap of 4096 bytes too: hanging up',
    ]);
    // the call's summary shows its variables before the request
    expect(c.last!.kind === 'reply' && c.last!.summary?.vars.log).toBe('a'.repeat(1000) + 'b'.repeat(1000));
  });

  it(
    'a chain of set steps doubling a list is refused at the cap at each step: memory stays bounded, the call ' +
      'is hung up',
    async () => {
      const steps = Array.from(
        { length: 60 },
        (_, i) =>
          `  d${i}:\n    set: { l: { expr: "vars.l + vars.l" } }\n    next: ${i === 59 ? 'hello' : `d${i + 1}`}\n`,
      ).join('');
      const f = await yamlFlow(
        `version: 1\nname: doubling\nstart: d0\nvars: { l: ["${'z'.repeat(100)}"] }\nsteps:\n${steps}  hello: ` +
          `{ say: "Hello.", next: bye }\n  bye: { hangup: {} }\n`,
      );
      // a big expression budget, so that the state cap is what stops it (by default the budget stops it first: hostile
      // corpus)
      const c = new Call(f, {
        ...OPTS,
        evalLimits: { celUnits: 10_000_000, templateMs: 60_000, templateMemory: 50_000 },
      });
      expect(c.start()).toBe(reply('hangup', 1));
      expect(c.last).toMatchObject({ kind: 'reply', state: null });
      const logs = logsOf(c.last);
      // 2^8 copies of 102 characters pass 32 KB: d8 is the first refused (every later step is refused again, not
      // logged:
      // it follows from the first)
      expect(logs).toEqual([
        'error STATE_TOO_LARGE set l at d8: the value is over the call state cap of 32768 bytes; not assigned',
        "error STATE_TOO_LARGE the call's first steps went over the call state cap of 32768 bytes: hanging up",
      ]);
    },
  );

  it('jsonSize counts a value as its JSON text and stops early past the limit', () => {
    for (const v of ['', 'abc', 12, true, null, [], {}, ['a', 1, { b: [false, 'cd'] }], { 'k"ey': 'v' }] as Value[]) {
      expect(jsonSize(v, 1e9)).toBeGreaterThanOrEqual(JSON.stringify(v).length - 8);
    }
    const big = Array.from({ length: 100_000 }, () => 'x'.repeat(100));
    expect(jsonSize(big, 1000)).toBeGreaterThan(1000);
    expect(jsonSize({ a: 'x'.repeat(600), b: 'y'.repeat(600) }, 1000)).toBeGreaterThan(1000);
    const small = { a: 'x'.repeat(600), b: 'y'.repeat(300) };
    // an upper bound: one comma too many per object
    expect(jsonSize(small, 1000) - JSON.stringify(small).length).toBe(1);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonSize(deep as never, 1e9)).toBe(100_000 * 3 + 6); // no recursion: a deep value cannot overflow the stack
  });
});
