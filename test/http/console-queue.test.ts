/**
 * A queue step's operations in a call's path (issue 24): the path entry keeps the queue, the op and a poll's wait
 * (src/engine/history.ts), the console's timeline shows them (src/http/console/assets/call.js, in Node), and so does
 * `callscript trace <callid>` (src/cli/calls-format.ts).
 */
import { describe, expect, it } from 'vitest';
import { pathEntry } from '../../src/engine/history.js';
import type { EffectEvent, StepEvent } from '../../src/engine/observe.js';
import { traceText } from '../../src/cli/calls-format.js';

const { effectsText } = (await import(new URL('../../src/http/console/assets/call.js', import.meta.url).href)) as {
  effectsText(list: unknown[]): string;
};

const EFFECTS: EffectEvent[] = [
  {
    kind: 'queue',
    step: 'wait_line',
    outcome: 'ok',
    value: 'wait',
    ms: 0.42,
    queue: { name: 'sales', op: 'poll', waited: 30 },
  },
  { kind: 'queue', step: 'wait_line', outcome: 'UNAVAILABLE', ms: 2, queue: { name: 'sales', op: 'poll' } },
  { kind: 'queue', step: 'wait_line', outcome: 'ok', value: 'left', ms: 1, queue: { name: 'sales', op: 'leave' } },
  { kind: 'sms', step: 'text', outcome: 'ok', value: 'SMS00001', ms: 12 },
];

function event(): StepEvent {
  return {
    callid: '7',
    flow: 'line',
    version: 'abcdef012345',
    outcome: 'ok',
    answer: 'answered',
    late: false,
    at: 1_800_000_000_000,
    ms: 1,
    request: { command: 'play', result: '0', error: '', callStatus: 'UP', commandId: 3 },
    from: 'wait_line',
    step: 'wait_line',
    reply: { command: 'wait', commandId: 4, params: { wait: 20 } },
    isNew: false,
    ended: false,
    transitions: ['wait_line:held', 'wait_line:wait'],
    effects: EFFECTS,
    errors: [],
  };
}

describe("a queue step's operations in a call's path", () => {
  it('the path entry keeps the queue, its op and the wait of a poll', () => {
    expect(pathEntry(event()).effects).toEqual([
      {
        kind: 'queue',
        step: 'wait_line',
        outcome: 'ok',
        value: 'wait',
        ms: 0.4,
        queue: { name: 'sales', op: 'poll', waited: 30 },
      },
      { kind: 'queue', step: 'wait_line', outcome: 'UNAVAILABLE', ms: 2, queue: { name: 'sales', op: 'poll' } },
      { kind: 'queue', step: 'wait_line', outcome: 'ok', value: 'left', ms: 1, queue: { name: 'sales', op: 'leave' } },
      { kind: 'sms', step: 'text', outcome: 'ok', value: 'SMS00001', ms: 12 },
    ]);
  });

  it("the console's timeline shows each operation with its queue and answer", () => {
    expect(effectsText(pathEntry(event()).effects)).toBe(
      'queue sales poll: wait, waited 30 s (0 ms); queue sales poll: UNAVAILABLE (2 ms); ' +
        'queue sales leave: left (1 ms); sms ok SMS00001 (12 ms)',
    );
  });

  it('callscript trace prints them under the request', () => {
    const text = traceText({
      callid: '7',
      status: 'live',
      flow: 'line',
      version: 'abcdef012345',
      started: '2027-01-15T08:00:00.000Z',
      commands: 4,
      vars: {},
      step: 'wait_line',
      lastSeen: null,
      path: [pathEntry(event())],
    });
    expect(text.split('\n').slice(-4)).toEqual([
      '      queue sales poll at wait_line: wait, waited 30 s (0.4ms)',
      '      queue sales poll at wait_line: UNAVAILABLE (2ms)',
      '      queue sales leave at wait_line: left (1ms)',
      '      sms at text: ok SMS00001 (12ms)',
    ]);
  });
});
