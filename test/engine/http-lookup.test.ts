/**
 * The http step's request builder (rendered bounds, header injection, secrets kept out of
 * messages), the lookups' bookkeeping (per-call cap, pending, timeout of a vanished owner),
 * and the depth bound of an answer (TOO_DEEP).
 */
import { describe, expect, it } from 'vitest';
import { httpBuilder } from '../../src/engine/http-params.js';
import { boundedResult, runEffects, runEffectsSync } from '../../src/engine/effects.js';
import { Lookups, MAX_BODY_DEPTH, type HttpOutcome } from '../../src/engine/http-wait.js';
import type { EffectResult, HttpEffect } from '../../src/engine/outcome.js';
import type { HttpSpec } from '../../src/flow/model.js';
import type { Scope } from '../../src/flow/expr.js';
import { DEFAULT_EVAL_LIMITS, EvalBudget } from '../../src/flow/budget.js';

const spec = (o: Partial<HttpSpec>): HttpSpec => ({
  method: 'GET',
  url: 'https://x.example/',
  headers: {},
  query: {},
  timeout_ms: 5000,
  retries: 0,
  ...o,
});
const scope =
  (vars: Record<string, string>, secrets: Record<string, string> = {}) =>
  () =>
    ({ vars, call: {}, result: '', error: '', secrets }) as unknown as Scope;

describe('the http request builder', () => {
  it('renders url, query, headers and a JSON body', () => {
    const b = httpBuilder(
      spec({
        method: 'POST',
        url: 'https://x.example/{{ vars.a }}',
        query: { q: '{{ vars.a }} b' },
        headers: { Authorization: 'Bearer {{ secrets.T }}' },
        body: { kind: 'literal', value: { a: ['{{ vars.a }}', 1] } },
      }),
    );
    expect(b.build(scope({ a: 'v' }, { T: 'tok' }), 1)).toEqual({
      method: 'POST',
      url: 'https://x.example/v?q=v+b',
      headers: { Authorization: 'Bearer tok' },
      timeout_ms: 5000,
      retries: 0,
      body: '{"a":["v",1]}',
    });
  });
  it('a secret read through a filter renders (the liquid path, not only the plain {{ a.b }} one)', () => {
    const b = httpBuilder(spec({ headers: { Authorization: "Bearer {{ secrets.T | prepend: 'x-' }}" } }));
    expect(b.build(scope({}, { T: 'tok' }), 1).headers).toEqual({ Authorization: 'Bearer x-tok' });
  });
  it('refuses a rendered URL that is not http(s), too long, or a header with a line break, without the values', () => {
    expect(() => httpBuilder(spec({ url: '{{ vars.u }}' })).build(scope({ u: 'file:///etc/passwd' }), 1)).toThrow(
      /scheme is file:/,
    );
    expect(() =>
      httpBuilder(spec({ url: 'https://x.example/{{ vars.u }}' })).build(scope({ u: 'a'.repeat(9000) }), 1),
    ).toThrow(/over 8192/);
    const inj = () =>
      httpBuilder(spec({ headers: { X: '{{ vars.h }}' } })).build(scope({ h: 'v\r\nHost: evil' }, { T: 'tok' }), 1);
    expect(inj).toThrow(/line break/);
    expect(inj).not.toThrow(/evil/);
    // a body over its bound, with a template memory that lets it be rendered (limits.template_memory raised)
    const budget = new EvalBudget({ ...DEFAULT_EVAL_LIMITS, templateMemory: 1_000_000 });
    const big = () => ({ ...scope({ b: 'x'.repeat(70000) })(), budget });
    expect(() => httpBuilder(spec({ body: { kind: 'literal', value: { a: '{{ vars.b }}' } } })).build(big, 1)).toThrow(
      /over 65536 bytes/,
    );
    // with the default template memory the render itself is refused first, as liquid refuses it
    expect(() =>
      httpBuilder(spec({ body: { kind: 'literal', value: { a: '{{ vars.b }}' } } })).build(
        scope({ b: 'x'.repeat(70000) }),
        1,
      ),
    ).toThrow(/memory budget of 50,000 units/);
  });
});

const effect = (o: Partial<HttpEffect> = {}): HttpEffect => ({
  kind: 'http',
  step: 's',
  callid: 'c1',
  params: { url: 'https://x/', timeout_ms: 1000 },
  filler: true,
  wait: false,
  ...o,
});

describe('lookups', () => {
  it('caps the lookups of a call (LIMIT)', async () => {
    const l = new Lookups({ run: async () => ({ ok: true, status: 200, body: null }), maxPerCall: 2 });
    expect((await l.perform(effect({ filler: false }), undefined, 2, 500)).result).toMatchObject({
      ok: false,
      error: 'LIMIT',
    });
    expect(await l.perform(effect({ filler: false }), undefined, 1, 500)).toMatchObject({
      result: { ok: true, value: '200', data: { status: 200, body: null } },
      started: true,
    });
  });
  it('answers pending with the record to keep, then the result from this process', async () => {
    let finish!: (o: HttpOutcome) => void;
    const l = new Lookups({ run: () => new Promise((r) => (finish = r)), maxPerCall: 20 });
    const first = await l.perform(effect(), undefined, 0, 50);
    expect(first.result).toEqual({ pending: true });
    expect(first.lk).toMatchObject({ step: 's' });
    finish({ ok: true, status: 404, body: { e: 1 } });
    expect((await l.perform(effect({ wait: true }), first.lk, 1, 50)).result).toEqual({
      ok: true,
      value: '404',
      data: { status: 404, body: { e: 1 } },
    });
    expect(l.size).toBe(0);
  });
  it('a lookup whose owner vanished is a timeout once its record expires', async () => {
    const l = new Lookups({
      run: () => new Promise(() => undefined),
      store: { get: async () => undefined, set: async () => undefined },
      pollMs: 5,
      maxPerCall: 20,
    });
    const lk = { id: 'gone', step: 's', started: Date.now() - 5000, until: Date.now() + 30 };
    expect((await l.perform(effect({ wait: true }), lk, 1, 1000)).result).toMatchObject({
      ok: false,
      error: 'TIMEOUT',
    });
  });
});

describe('the depth of an answer', () => {
  /** `levels` arrays inside one another (the outermost is level 1). */
  const nested = (levels: number): unknown => {
    let v: unknown = [];
    for (let i = 1; i < levels; i++) v = [v];
    return v;
  };

  it('a lookup answering deeper than MAX_BODY_DEPTH is the error TOO_DEEP, without a filler and with one', async () => {
    const body = nested(MAX_BODY_DEPTH + 1) as never;
    const l = new Lookups({ run: async () => ({ ok: true, status: 200, body }), maxPerCall: 20 });
    const tooDeep = {
      ok: false,
      error: 'TOO_DEEP',
      message: "the 200 response's body nests arrays and objects more than 64 levels deep",
    };
    expect((await l.perform(effect({ filler: false }), undefined, 0, 500)).result).toEqual(tooDeep);
    // with a filler: what is published for other instances is the error, not the body
    const published: string[] = [];
    const p = new Lookups({
      run: async () => ({ ok: true, status: 200, body }),
      store: { get: async () => undefined, set: async (_k, v) => void published.push(v) },
      maxPerCall: 20,
    });
    expect((await p.perform(effect(), undefined, 0, 500)).result).toEqual(tooDeep);
    expect(JSON.parse(published[0]!)).toMatchObject({ outcome: tooDeep });
    const ok = new Lookups({ run: async () => ({ ok: true, status: 200, body: nested(64) as never }), maxPerCall: 20 });
    expect((await ok.perform(effect({ filler: false }), undefined, 0, 500)).result).toMatchObject({ ok: true });
  });

  it("whoever answers (mocks, a person, a recording), data deeper than a lookup's is TOO_DEEP", async () => {
    const deep: EffectResult = { ok: true, value: '200', data: { status: 200, body: nested(65) as never } };
    const tooDeep = {
      ok: false,
      error: 'TOO_DEEP',
      message: 'the answer nests arrays and objects more than 64 levels deep',
    };
    expect(boundedResult(deep)).toEqual(tooDeep);
    const fine: EffectResult = { ok: true, value: '200', data: { status: 200, body: nested(64) as never } };
    expect(boundedResult(fine)).toBe(fine);
    expect(boundedResult({ pending: true })).toEqual({ pending: true });
    // the step is resumed with the bounded result, and the effect is reported with it
    const resumed: EffectResult[] = [];
    const outcome = {
      kind: 'effect' as const,
      effect: effect(),
      resume: (r: EffectResult) => (resumed.push(r), { kind: 'replay' as const, replyJson: '{}' }),
    };
    const ctx = { memo: {}, budgetMs: () => 1000, now: 0 };
    const ran = runEffectsSync(outcome, { perform: () => deep }, ctx);
    expect(resumed).toEqual([tooDeep]);
    expect(ran.effects[0]!.result).toEqual(tooDeep);
    const ranAsync = await runEffects(outcome, { perform: async () => deep }, ctx);
    expect(ranAsync.effects[0]!.result).toEqual(tooDeep);
  });
});
