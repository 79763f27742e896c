/**
 * Calendars in conditions are charged to the request's evaluation budget: a condition
 * calling open() a thousand times is stopped (EVALUATION_LIMIT, the error branch), at
 * once; a calendar name computed at run time that names no calendar is a failed
 * condition (false, logged), never a crash.
 */
import { describe, expect, it } from 'vitest';
import { Call, OPTS, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';
import type { Outcome } from '../../src/engine/outcome.js';

const logsOf = (o: Outcome | undefined) =>
  o?.kind === 'reply' ? (o.log ?? []).map((l) => `${l.level} ${l.code ?? ''}`) : [];
const LIST = `[${Array.from({ length: 1000 }, (_, i) => i).join(', ')}]`;

const flow = `
version: 2
name: cal
start: ask
vars: { l: ${LIST}, which: nowhere }
calendars:
  office: { timezone: Europe/London, weekly: { mon-sun: "00:00-24:00" } }
steps:
  ask:
    read: { prompt: "Code?", max_digits: 1 }
    on: { "1": heavy, "2": unknown, "3": plain, error: sorry }
  heavy:
    when: 'vars.l.filter(x, open("office")).size() > 0'
    then: yes
    else: no
  unknown:
    when: 'open(vars.which)'
    then: yes
    else: no
  plain:
    when: 'open("office")'
    then: yes
    else: no
  yes: { say: "Open.", next: bye }
  no: { say: "Not open.", next: bye }
  sorry: { say: "Sorry ({{ error }}).", next: bye }
  bye: { hangup: {} }
`;

describe('calendars and the evaluation budget', () => {
  it('a thousand open() in one condition: EVALUATION_LIMIT, the error branch, in milliseconds', async () => {
    const c = new Call(await yamlFlow(flow));
    c.start();
    const t0 = performance.now();
    expect(c.result('1')).toBe(reply('play', 2, { media_id: tts('Sorry (EVALUATION_LIMIT).') }));
    expect(performance.now() - t0).toBeLessThan(200);
    expect(logsOf(c.last)).toContain('error EVALUATION_LIMIT');
  });
  it('a calendar name known only at run time that names none: the condition is false, logged', async () => {
    const c = new Call(await yamlFlow(flow));
    c.start();
    expect(c.result('2')).toBe(reply('play', 2, { media_id: tts('Not open.') }));
    expect(c.last?.kind === 'reply' ? c.last.log?.map((l) => l.msg) : []).toEqual([
      'open(vars.which) at unknown: there is no calendar "nowhere" (counted as false)',
    ]);
  });
  it('the engine reads its clock from the request options (now), not the system clock', async () => {
    const f = await yamlFlow(flow.replace('"00:00-24:00"', '"09:00-10:00"'));
    const at = (iso: string) => {
      const c = new Call(f, { ...OPTS, now: Date.parse(iso) });
      c.now = Date.parse(iso);
      c.start();
      return c.result('3');
    };
    expect(at('2026-06-15T08:30:00Z')).toBe(reply('play', 2, { media_id: tts('Open.') })); // 09:30 BST
    expect(at('2026-06-15T09:30:00Z')).toBe(reply('play', 2, { media_id: tts('Not open.') }));
  });
});
