/**
 * foreach (version 2): a list read one item at a time through the step function, with the
 * exact commands sent; the next item, an early way out, the end of the list, max:, a value
 * that is not a list, nested loops, and the request's budget.
 */
import { describe, expect, it } from 'vitest';
import { Call, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const APPTS = `version: 2
start: each
vars:
  appointments:
    - { when: "Monday 10:00", doctor: "Dr Smith" }
    - { when: "Tuesday 14:30", doctor: "Dr Jones" }
    - { when: "Friday 9:15", doctor: "Dr Brown" }
steps:
  each:
    foreach: { in: vars.appointments, as: appt, index: i, max: 20 }
    do: read_one
    next: no_more
  read_one:
    read:
      prompt: >-
        Appointment {{ vars.i | plus: 1 }}: {{ vars.appt.when }} with {{ vars.appt.doctor }}.
        Press 1 to confirm, 2 for the next one, 9 to stop.
      max_digits: 1
    on:
      "1": confirmed
      "2": each
      "9": stopped
      TIMEOUT: each
      default: { retry: 1, say: "Sorry.", then: each }
  confirmed: { say: "Confirmed {{ vars.appt.when }}.", next: each }
  stopped: { say: "Stopped at {{ vars.appt.when }}.", next: end }
  no_more: { say: "That was all.", next: end }
  end: { hangup: {} }
`;
const READ = { max_digits: 1 };
const ask = (i: number, when: string, doctor: string) =>
  tts(`Appointment ${i}: ${when} with ${doctor}. Press 1 to confirm, 2 for the next one, 9 to stop.`);

describe('foreach', () => {
  it('reads each item in turn, then goes to next:', async () => {
    const c = new Call(await yamlFlow(APPTS));
    expect(c.start()).toBe(reply('read', 1, { media_id: ask(1, 'Monday 10:00', 'Dr Smith'), ...READ }));
    expect(c.state!.l).toEqual({ each: 1 });
    expect(c.result('2')).toBe(reply('read', 2, { media_id: ask(2, 'Tuesday 14:30', 'Dr Jones'), ...READ }));
    expect(c.result('1')).toBe(reply('play', 3, { media_id: tts('Confirmed Tuesday 14:30.') }));
    expect(c.result('0')).toBe(reply('read', 4, { media_id: ask(3, 'Friday 9:15', 'Dr Brown'), ...READ }));
    expect(c.state!.vars.i).toBe(2);
    expect(c.result('2')).toBe(reply('play', 5, { media_id: tts('That was all.') }));
    expect(c.state!.l).toBeUndefined();
  });

  it('leaves early on a way out of the body', async () => {
    const c = new Call(await yamlFlow(APPTS));
    c.start();
    c.result('2');
    expect(c.result('9')).toBe(reply('play', 3, { media_id: tts('Stopped at Tuesday 14:30.') }));
    expect(c.result('0')).toBe(reply('hangup', 4));
  });
});
