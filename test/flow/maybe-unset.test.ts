/**
 * MAYBE_UNSET (issue 22 item 10): validate warns where a `set` expression reads a variable that some way to its step
 * leaves unset, and only there: guarded reads, variables set on every way, a step's own earlier assignments and the
 * flow's vars: are fine. Bounded on a big flow.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { newCtx } from '../../src/flow/check-context.js';
import { checkMaybeUnset } from '../../src/flow/check-unset.js';

const unset = (text: string) =>
  checkFlow(text, 'f.yaml')
    .diagnostics.filter((d) => d.code === 'MAYBE_UNSET')
    .map((d) => `${d.line}:${d.column} ${d.message}`);

const LOOKUP = (expr: string, extra = '') => `
version: 2
name: lookup
start: lookup
handlers: { error: sorry }
steps:
  lookup:
    http: { url: "https://crm.example/customer" }
    save: customer
    on: { ok: greet, timeout: greet }
  greet:
    set:
      vip: { expr: '${expr}' }
    next: bye
  sorry: { say: "Sorry.", next: bye }
  bye: { hangup: {} }
${extra}`;

describe('MAYBE_UNSET', () => {
  it("the issue's example: a lookup that timed out saved nothing, has() on a field of it fails", () => {
    expect(unset(LOOKUP('has(vars.customer.body.vip) && vars.customer.body.vip'))).toEqual([
      "13:25 vars.customer may not be set when step 'greet' runs (coming from 'lookup' by its timeout branch): the " +
        'expression of vip then fails, and the step takes its error way (handlers.error)',
    ]);
  });

  it('guarded reads are fine: has(vars.customer), vars.?customer, a ternary on has()', () => {
    for (const e of [
      'has(vars.customer) && vars.customer.body.vip',
      'has(vars.customer) ? vars.customer.body.vip : false',
      'vars.?customer.orValue({}).size() > 0',
    ])
      expect(unset(LOOKUP(e)), e).toEqual([]);
  });

  it('a variable set on every way, in vars:, or earlier in the same step is fine', () => {
    const text = `
version: 1
name: f
start: ask
vars: { tries: 0 }
steps:
  ask:
    read: { prompt: "Code?", max_digits: 4 }
    save: code
    on: { "1": one, TIMEOUT: none }
    next: one
  none:
    set: { code: "0" }
    next: one
  one:
    set:
      tries: { expr: "vars.tries + 1" }
      twice: { expr: "vars.tries * 2" }
      n: { expr: "int(vars.code)" }
    next: bye
  bye: { hangup: {} }
`;
    expect(unset(text)).toEqual([]);
    // without the TIMEOUT way setting it: the read's error takes handlers.error... which it has none of: only
    // results lead to one, each saved
    expect(unset(text.replace('TIMEOUT: none', 'TIMEOUT: one'))).toEqual([]);
  });

  it('the hangup handler starts from the vars: alone (a call never answered runs it first)', () => {
    const text = `
version: 1
name: f
start: ask
vars: { takes: 0 }
handlers: { hangup: log }
steps:
  ask:
    read: { prompt: "Code?", max_digits: 4 }
    save: code
    next: bye
  bye: { hangup: {} }
  log:
    set:
      t: { expr: "vars.takes" }
      c: { expr: "vars.code" }
      g: { expr: "has(vars.code) ? vars.code : ''" }
`;
    expect(unset(text)).toEqual([
      "16:19 vars.code may not be set when step 'log' runs (the hangup handler starts from the flow's vars: " +
        'alone): the expression of c then fails, and the step takes its error way (no handlers.error: the flow ends)',
    ]);
  });

  it('hostile: 4,000 chained steps and 400 variables are checked in a bounded time', () => {
    const steps: string[] = [];
    for (let i = 0; i < 4000; i++)
      steps.push(`  s${i}:\n    set: { v${i % 400}: { expr: "vars.v${(i + 1) % 400} + 1" } }\n    next: s${i + 1}`);
    steps.push('  s4000: { hangup: {} }');
    const vars = Array.from({ length: 200 }, (_, i) => `v${i}: 0`).join(', ');
    const text = `version: 1\nname: big\nstart: s0\nvars: { ${vars} }\nsteps:\n${steps.join('\n')}\n`;
    const found = unset(text);
    // v200..v399 are set only from s199 on: s199 reads v200 before anything set it
    expect(found[0]).toMatch(/^\d+:\d+ vars\.v200 may not be set when step 's199' runs \(coming from 's198', where/);
    expect(found).toHaveLength(200);
    const m = checkFlow(text, 'f.yaml').model!;
    const input = { steps: m.steps, order: Object.keys(m.steps), start: m.start, handlers: m.handlers };
    const t0 = performance.now();
    checkMaybeUnset(newCtx('f.yaml', 'x'), { ...input, initial: Object.keys(m.vars) });
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});
