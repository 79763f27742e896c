/**
 * A request whose templates and conditions go over their evaluation budget (limits.
 * expression_cost, template_memory, template_ms) keeps none of its changes: the step that
 * issued the command takes its error branch with EVALUATION_LIMIT, with a quarter of a
 * budget; over it again, the call is hung up. Never a crash, never an effect sent from the
 * abandoned run.
 */
import { describe, expect, it } from 'vitest';
import { Call, OPTS, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';
import type { Outcome } from '../../src/engine/outcome.js';

const SORRY = 'sorry: { say: "Sorry ({{ error }}), n is {{ vars.n }}.", next: bye }';

const logsOf = (o: Outcome | undefined) =>
  o?.kind === 'reply' ? (o.log ?? []).map((l) => `${l.level} ${l.code ?? ''} ${l.msg}`) : [];
const LIST = `[${Array.from({ length: 1000 }, (_, i) => i).join(', ')}]`;
/** 10^9 additions if nothing stops it. */
const HEAVY = 'vars.l.map(x, vars.l.map(y, vars.l.map(z, x + y + z))).size() > 0';

const flow = (errorWay: string) => `
version: 1
name: heavy
start: ask
vars: { l: ${LIST}, n: 0 }
steps:
  ask:
    read: { prompt: "Your code?", max_digits: 4 }
    save: code
    on:
      error: ${errorWay}
    next: count
  count:
    set: { n: { expr: "vars.n + 1" } }
    next: check
  check:
    switch:
      - when: '${HEAVY}'
        goto: ask
    default: ask
  ${errorWay === 'sorry' ? SORRY : `again: { switch: [{ when: '${HEAVY}', goto: bye }], default: bye }`}
  bye: { hangup: {} }
`;

describe('the evaluation budget of a request', () => {
  it(
    'a condition that would run for minutes: its request keeps no change, the step takes its error branch ' +
      '(EVALUATION_LIMIT)',
    async () => {
      const c = new Call(await yamlFlow(flow('sorry')));
      expect(c.start()).toBe(reply('read', 1, { media_id: tts('Your code?'), max_digits: 4 }));
      expect(c.result('1234')).toBe(reply('play', 2, { media_id: tts('Sorry (EVALUATION_LIMIT), n is 0.') }));
      expect(c.state!.vars).toMatchObject({ n: 0 }); // count's n + 1 was dropped with the request
      expect(c.state!.vars.code).toBeUndefined(); // and the save
      expect(logsOf(c.last)).toEqual([
        `error EVALUATION_LIMIT when ${HEAVY} at check: the expressions of this request went over their budget ` +
          `of 100,000 cost units (limits.expression_cost)`,
        (
          "error EVALUATION_LIMIT when ${HEAVY} at check went over the request's evaluation budget (the " +
          'expressions of this request went over their budget of 100,000 cost units (limits.expression_cost)): ' +
          "this request's changes are dropped and ask takes its error branch (EVALUATION_LIMIT)"
        ).replace('${HEAVY}', HEAVY),
      ]);
      expect(c.result('0')).toBe(reply('hangup', 3));
    },
  );

  it('the error way gets a quarter of a budget: over it too, the call is hung up', async () => {
    const c = new Call(await yamlFlow(flow('again')));
    c.start();
    c.result('1234');
    expect(c.last).toMatchObject({ kind: 'reply', state: null, reply: { command: 'hangup', command_id: 2 } });
    expect(logsOf(c.last).at(-1)).toBe(
      "error EVALUATION_LIMIT the error branch went over the request's evaluation budget (the expressions of " +
        'this request went over their budget of 25,000 cost units (limits.expression_cost)) too: hanging up',
    );
  });

  it('limits come from the engine options: a larger budget lets a heavier (but finite) condition through', async () => {
    const f = await yamlFlow(flow('sorry').replace(HEAVY, 'vars.l.map(x, vars.l.map(y, x + y)).size() > 0'));
    const small = new Call(f);
    small.start();
    expect(small.result('1')).toBe(reply('play', 2, { media_id: tts('Sorry (EVALUATION_LIMIT), n is 0.') }));
    const big = new Call(f, {
      ...OPTS,
      evalLimits: { celUnits: 10_000_000, templateMs: 60_000, templateMemory: 50_000 },
    });
    big.start();
    expect(big.result('1')).toBe(reply('read', 2, { media_id: tts('Your code?'), max_digits: 4 }));
    expect(big.state!.vars).toMatchObject({ n: 1, code: '1' });
  });

  it('a template looping over a range: the first request hangs up (no prior state to go back to)', async () => {
    const c = new Call(
      await yamlFlow(`
version: 1
name: loop
start: hi
steps:
  hi: { say: "{% for i in (1..20000000) %}x{% endfor %}", next: bye }
  bye: { hangup: {} }
`),
    );
    expect(c.start()).toBe(reply('hangup', 1));
    expect(c.last).toMatchObject({ kind: 'reply', state: null });
    expect(logsOf(c.last)).toEqual([
      'error EVALUATION_LIMIT play at hi: the templates of this request went over their memory budget of ' +
        '50,000 units (limits.template_memory)',
      "error EVALUATION_LIMIT the call's first steps went over the request's evaluation budget (the " +
        'templates of this request went over their memory budget of 50,000 units (limits.template_memory)): ' +
        'hanging up',
    ]);
  });

  it('an sms step after the budget ran out is not sent: the request is redone from the prior state', async () => {
    const c = new Call(
      await yamlFlow(`
version: 1
name: heavy-sms
start: ask
vars: { l: ${LIST} }
steps:
  ask:
    read: { prompt: "Go?", max_digits: 1 }
    on: { error: bye }
    next: weigh
  weigh:
    set: { ok: { expr: '${HEAVY}' } }
    next: text
  text:
    sms: { to: "+33612345678", from: Acme, body: "Hello" }
    next: bye
  bye: { hangup: {} }
`),
    );
    c.start();
    expect(c.result('1')).toBe(reply('hangup', 2));
    expect(c.effects).toEqual([]);
    expect(logsOf(c.last)[0]).toMatch(
      /^error EVALUATION_LIMIT set ok at weigh: the expressions of this request went over their budget/,
    );
  });
});
