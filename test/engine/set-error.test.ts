/**
 * A `set` whose assignment fails (an `expr:` or a template that cannot be evaluated) takes the step's error way
 * (issue 22 item 10): none of its assignments is kept, the flow's handlers.error takes over with `error` the failure's
 * code (RUNTIME_EXPRESSION, RUNTIME_TEMPLATE), and without one the flow ends; it used to skip that one assignment
 * silently and run the next ones.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/advance.js';
import type { Effect, EffectResult } from '../../src/engine/outcome.js';
import { Call, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const logs = (o: Outcome | undefined) => (o?.kind === 'reply' ? (o.log ?? []).map((l) => `${l.code}: ${l.msg}`) : []);

const LOOKUP = `
version: 2
name: lookup
start: lookup
handlers:
  error: { say: "Sorry, {{ error }}.", goto: menu }
steps:
  lookup:
    http: { url: "https://crm.example/customer" }
    save: customer
    on: { ok: greet, timeout: greet }
  greet:
    set:
      seen: true
      vip: { expr: "has(vars.customer.body.vip) && vars.customer.body.vip" }
      name: "{{ vars.customer.body.name }}"
    next: menu
  menu:
    read: { prompt: "Hello {{ vars.name | default: 'caller' }}.", max_digits: 1 }
    on: { "1": bye }
  bye: { hangup: {} }
`;

function answering(r: EffectResult) {
  return (e: Effect): EffectResult => (e.kind === 'http' ? r : { ok: true, value: 'SMS00001' });
}

describe('a failing set takes its error way', () => {
  it('a lookup that timed out saved nothing: has() on its field fails; handlers.error says, goes on', async () => {
    const c = new Call(await yamlFlow(LOOKUP));
    c.effectResult = answering({ ok: false, error: 'TIMEOUT' });
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Sorry, RUNTIME_EXPRESSION.') }));
    expect(c.state!.vars).toEqual({}); // seen: true is not kept either
    expect(logs(c.last)).toEqual([
      'EFFECT_FAILED: http at lookup failed: TIMEOUT',
      'RUNTIME_EXPRESSION: set vip = has(vars.customer.body.vip) && vars.customer.body.vip at greet: No such key: ' +
        'customer; none of its assignments is kept: handlers.error (error RUNTIME_EXPRESSION)',
    ]);
    expect(c.result('0')).toBe(reply('read', 2, { media_id: tts('Hello caller.'), max_digits: 1 }));
  });

  it('the same step with the lookup answered: every assignment made, in order', async () => {
    const c = new Call(await yamlFlow(LOOKUP));
    c.effectResult = answering({ ok: true, value: '200', data: { status: 200, body: { vip: true, name: 'Ann' } } });
    expect(c.start()).toBe(reply('read', 1, { media_id: tts('Hello Ann.'), max_digits: 1 }));
    expect(c.state!.vars).toMatchObject({ seen: true, vip: true, name: 'Ann' });
    expect(logs(c.last)).toEqual([]);
  });

  it('a failing template (RUNTIME_TEMPLATE); no handlers.error: the flow ends; a retry goes to then', async () => {
    const flow = (handlers: string) =>
      yamlFlow(`
version: 1
name: t
start: decode
vars: { token: "%%%" }
${handlers}
steps:
  decode:
    set:
      before: 1
      text: "{{ vars.token | base64_decode }}"
    next: hello
  hello: { say: "Hello.", next: bye }
  bye: { hangup: {} }
${handlers ? '  sorry: { say: "Sorry {{ error }}.", next: bye }' : ''}
`);
    const ends = new Call(await flow(''));
    expect(ends.start()).toBe(reply('hangup', 1));
    expect(ends.state!.vars).toEqual({ token: '%%%' });
    expect(logs(ends.last)).toEqual([
      'RUNTIME_TEMPLATE: set text at decode: set: invalid base64 provided to base64_decode, line:1, col:1; none ' +
        'of its assignments is kept, and with no handlers.error the flow ends',
    ]);
    const retried = new Call(await flow('handlers: { error: { retry: 2, then: sorry } }'));
    expect(retried.start()).toBe(reply('play', 1, { media_id: tts('Sorry RUNTIME_TEMPLATE.') }));
    expect(logs(retried.last)).toHaveLength(1); // evaluated once: the same values would fail again
  });

  it('none of the step is kept: the error way sees no half-assigned step', async () => {
    const c = new Call(
      await yamlFlow(`
version: 2
name: m
start: s
handlers: { error: oops }
steps:
  s:
    set:
      a: 1
      b: { expr: "1 / 0" }
    next: ok
  ok: { say: "OK {{ vars.a }}.", next: bye }
  oops: { say: "Oops {{ vars.a | default: 'none' }} {{ error }}.", next: bye }
  bye: { hangup: {} }
`),
    );
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Oops none RUNTIME_EXPRESSION.') }));
  });

  it('in a foreach body, handlers.error back to the loop takes the next item', async () => {
    const c = new Call(
      await yamlFlow(`
version: 2
name: sum
start: each
vars: { items: ["1", "x", "3"], total: 0 }
handlers: { error: each }
steps:
  each:
    foreach: { in: vars.items, as: item }
    do: add
    next: done
  add:
    set: { total: { expr: "vars.total + int(vars.item)" } }
    next: each
  done: { say: "Total {{ vars.total }}.", next: bye }
  bye: { hangup: {} }
`),
    );
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Total 4.') }));
    expect(logs(c.last).map((l) => l.split(':')[0])).toEqual(['RUNTIME_EXPRESSION']);
  });
});
