/**
 * Flow text is untrusted: what a template or a CEL expression can do is bounded (no file,
 * linear-time patterns, a cost budget per request), and the bounds are deterministic where
 * they can be (CEL cost units, liquidjs memory units), so these tests assert exact outcomes,
 * never times.
 */
import { describe, expect, it } from 'vitest';
import { checkExpression, checkTemplate, evaluate, render, type Scope } from '../../src/flow/expr.js';
import { EvalBudget, EvaluationLimit, type EvalLimits } from '../../src/flow/budget.js';
import { compileLinear, estimateSize, linearError } from '../../src/flow/pattern.js';

const limits = (l: Partial<EvalLimits> = {}): EvalLimits => ({
  celUnits: 100_000,
  templateMs: 60_000,
  templateMemory: 50_000,
  ...l,
});
const scope = (vars: Scope['vars'] = {}, budget = new EvalBudget(limits()), call: Scope['call'] = {}): Scope => ({
  vars,
  call,
  result: '',
  error: '',
  budget,
});
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const deep = (n: number) => {
  let v: Record<string, unknown> = { x: 1 };
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
};

describe('patterns run on a linear-time engine', () => {
  it('a catastrophic pattern on a long input answers (RE2 has no backtracking)', () => {
    expect(compileLinear('^(?:(1+)+)$').test('1'.repeat(5000) + 'x')).toBe(false);
    expect(compileLinear('^(?:(1+)+)$').test('1'.repeat(5000))).toBe(true);
    expect(compileLinear('(a|aa)*b').test('a'.repeat(100_000))).toBe(false);
  });

  it('lookaround and backreferences are refused with what to do; JavaScript \\u escapes are taken', () => {
    expect(linearError('^(?=1)')).toMatch(
      /lookahead and lookbehind are not supported \(patterns run on a linear-time engine\)/,
    );
    expect(linearError('(a)\\1')).toMatch(/backreferences are not supported/);
    expect(compileLinear('^\\u00e9+$').test('éé')).toBe(true);
    expect(compileLinear('^\\u{1F600}$').test('😀')).toBe(true);
    expect(compileLinear('^\\\\u0041$').test('\\u0041')).toBe(true); // an escaped backslash stays one
    expect(linearError('x'.repeat(1001))).toBe('the pattern is 1001 characters long; at most 1000');
  });

  it(
    'big programs are refused before they are compiled: counted repetitions, Unicode classes, \\Q...\\E ' +
      'literals weighed',
    () => {
      expect(linearError('(.*){1000}b')).toMatch(
        /^the pattern compiles to (about )?4,00\d instructions; at most 1,000/,
      );
      expect(linearError('(?:\\pL|\\pN){300}x')).toMatch(
        /^the pattern's Unicode classes \(\\p\{\.\.\.\}\) weigh [\d,]+ to compile; at most 4,000/,
      );
      const qe = '\\Q[\\E(?:' + 'a'.repeat(980) + '){1000}\\Q]\\E'; // a [ inside \Q...\E is not a class
      expect(estimateSize(qe)).toBeGreaterThan(900_000);
      const c0 = process.cpuUsage();
      expect(linearError(qe)).toMatch(/^the pattern compiles to about 98\d,\d{3} instructions/);
      expect(process.cpuUsage(c0).user / 1000).toBeLessThan(2000); // refused unread: a generous CPU bound
      expect(linearError('^\\d{3}-\\d{4}$')).toBeNull();
      expect(linearError('[\\p{Greek}a-z]{10}')).toBeNull();
    },
  );

  it("CEL's matches() runs on it too, in both forms and inside macros", () => {
    const s = scope({ l: ['1'.repeat(40) + 'x', '111'], p: '^(1+)+$' });
    expect(evaluate('"1111111111111111111111111111111111111x".matches("^(1+)+$")', s)).toBe(false);
    expect(evaluate('matches("aaa", "^a+$")', s)).toBe(true);
    expect(evaluate('vars.l.filter(x, x.matches(vars.p))', s)).toEqual(['111']);
    // a lookahead is valid JavaScript: only RE2 refuses it, so this proves RE2 ran
    expect(() => evaluate('"aa".matches("a(?=a)")', s)).toThrow(/invalid or unsupported Perl syntax/);
  });
});

describe('CEL evaluation is bounded', () => {
  it('parse limits: list literals, nesting', () => {
    expect(checkExpression(`[${range(1001).join(',')}].size() > 0`)).toMatch(/Exceeded maxListElements \(1000\)/);
    expect(checkExpression(`${'('.repeat(70)}1${')'.repeat(70)} == 1`)).toMatch(/Exceeded maxDepth \(64\)/);
  });

  it('nested comprehensions over a list of 1,000 run out of the budget: EvaluationLimit, not minutes', () => {
    const s = scope({ l: range(1000) });
    expect(() => evaluate('vars.l.map(x, vars.l.map(y, vars.l.map(z, string(x + y + z)))).size()', s)).toThrow(
      EvaluationLimit,
    );
    expect(s.budget!.spent).toBe(
      'the expressions of this request went over their budget of 100,000 cost units (limits.expression_cost)',
    );
  });

  it('an error absorbed by || does not hide the spent budget', () => {
    const s = scope({ l: range(1000) });
    expect(() => evaluate('vars.l.map(x, vars.l.map(y, x + y)).size() > 0 || true', s)).toThrow(EvaluationLimit);
  });

  it("the budget is the request's: spent by every evaluation, then every evaluation fails at once", () => {
    const b = new EvalBudget(limits({ celUnits: 8000 }));
    const s = scope({ l: range(1000) }, b);
    expect(evaluate('vars.l.map(x, x * 2).size()', s)).toBe(1000);
    const spent = 8000 - b.celLeft;
    expect(spent).toBeGreaterThan(3000); // 1,000 steps of a few nodes each, and the list of 1,000 made
    expect(spent).toBeLessThan(7000);
    expect(() => evaluate('vars.l.map(x, x * 2).size()', s)).toThrow(EvaluationLimit);
    expect(() => evaluate('1 + 1', s)).toThrow(EvaluationLimit);
  });

  it('costs are deterministic: the same expression on the same values spends the same units', () => {
    const spent = () => {
      const b = new EvalBudget(limits());
      evaluate('vars.l.filter(x, x % 3 == 0).map(x, string(x) + "!").size()', scope({ l: range(500) }, b));
      return 100_000 - b.celLeft;
    };
    expect(spent()).toBe(spent());
  });

  it('strings built are charged by size: doubling a string runs out of the budget', () => {
    const s = scope({ s: 'x'.repeat(30_000), l: range(200) });
    expect(() => evaluate('vars.l.map(i, vars.s + vars.s + vars.s).size()', s)).toThrow(EvaluationLimit);
  });

  it(
    'a condition reads only the fields it names: a request variable 10,000 levels deep does not break the ' + 'others',
    () => {
      const s = scope({ n: 2 }, new EvalBudget(limits()), { caller: '+33612345678', variables: deep(10_000) as never });
      expect(evaluate('vars.n + 1 == 3 && call.caller.startsWith("+33")', s)).toBe(true);
      expect(() => evaluate('has(call.variables.a)', s)).toThrow('a value read is nested more than 65 levels deep');
    },
  );

  it(
    "reads any value a variable may hold (a lookup's 64-level answer saved whole: 65 levels), makes none deeper " +
      'than 64',
    () => {
      const s = () => scope({ r: { status: 200, body: deep(63) } as never, d: deep(65) as never });
      expect(evaluate('vars.r.status == 200', s())).toBe(true);
      expect(evaluate('vars.r.body', s())).toEqual(deep(63));
      expect(() => evaluate('vars.r', s())).toThrow('the value is nested more than 64 levels deep');
      expect(() => evaluate('{"a": vars.r.body}', s())).toThrow('the value is nested more than 64 levels deep');
      expect(() => evaluate('has(vars.d.a)', s())).toThrow('a value read is nested more than 65 levels deep');
    },
  );

  it("maps are maps: a request's variables with keys named constructor or __proto__ are data like any key", () => {
    const variables = JSON.parse('{"a":1,"constructor":"x","__proto__":{"y":2}}');
    const s = scope({}, new EvalBudget(limits()), { variables });
    expect(evaluate('call.variables.a == 1 && call.variables.constructor == "x" && size(call.variables) == 3', s)).toBe(
      true,
    );
    expect(evaluate('call.variables["__proto__"].y', s)).toBe(2);
    const out = evaluate('{"__proto__": 1, "b": 2}', s) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype); // an own key, not a prototype
    expect(out.b).toBe(2);
  });

  it('whole numbers stay CEL ints, in and out', () => {
    expect(evaluate('vars.n + 1', scope({ n: 41 }))).toBe(42);
    expect(evaluate('vars.m.a.b + 1', scope({ m: { a: { b: 1 } } }))).toBe(2);
    expect(evaluate('vars.l.map(x, x + 1)', scope({ l: [1, 2] }))).toEqual([2, 3]);
    expect(evaluate('vars.x * 2.0', scope({ x: 1.25 }))).toBe(2.5);
  });
});

describe('templates have no file system and a budget', () => {
  it('include, render and layout are not tags at all, whatever their argument', () => {
    for (const t of [
      "{% include 'package.json' %}",
      "{% render 'callscript.yaml' %}",
      "{% layout 'x' %}y",
      '{% include vars.f %}',
      "{% liquid\n include 'package.json' %}",
    ]) {
      expect(checkTemplate(t), t).toMatch(/tag "(include|render|layout)" not found/);
      expect(() => render(t, scope({ f: 'package.json' })), t).toThrow(/tag "(include|render|layout)" not found/);
    }
  });

  it('a loop over a range of 20,000,000 is refused at once (memory units)', () => {
    const s = scope();
    expect(() => render('{% for i in (1..20000000) %}x{% endfor %}', s)).toThrow(EvaluationLimit);
    expect(s.budget!.spent).toBe(
      'the templates of this request went over their memory budget of 50,000 units (limits.template_memory)',
    );
  });

  it('nested loops over a variable are charged per node rendered: refused, deterministically', () => {
    for (const t of [
      '{% for i in vars.l %}{% for j in vars.l %}{% endfor %}{% endfor %}',
      `{% for j in vars.l %}${'{{ j }}'.repeat(500)}{% endfor %}`,
    ]) {
      const s = scope({ l: range(16_000) });
      expect(() => render(t, s), t).toThrow(EvaluationLimit);
      expect(s.budget!.spent).toMatch(/memory budget of 50,000/);
    }
  });

  it(
    'what a template writes out, and what capture keeps, is charged: doubling a capture or printing a big ' +
      'variable in a loop runs out',
    () => {
      const double =
        `{% capture a %}${'x'.repeat(16)}{% endcapture ` +
        `%}${'{% capture a %}{{a}}{{a}}{% endcapture %}'.repeat(24)}{{ a | size }}`;
      const s1 = scope();
      expect(() => render(double, s1)).toThrow(EvaluationLimit);
      const s2 = scope({ s: 'y'.repeat(30_000) });
      expect(() => render('{% for i in (1..5000) %}{{ vars.s }}{% endfor %}', s2)).toThrow(EvaluationLimit);
      expect(s2.budget!.spent).toMatch(/memory budget of 50,000 units/);
    },
  );

  it("sort and sort_natural are charged their comparisons times the items' length", () => {
    const s = scope({ l: Array.from({ length: 4096 }, (_, i) => `${i}`.padEnd(12, 'z')) });
    expect(() => render('{{ vars.l | sort_natural | size }}', s)).toThrow(EvaluationLimit);
    expect(render('{{ vars.l | sort | first }}', scope({ l: ['b', 'a', 'c'] }))).toBe('a');
  });

  it('ordinary templates fit with room to spare, loops and filters included', () => {
    const s = scope({ l: range(100), name: 'Ada' });
    expect(
      render('{% for i in vars.l limit: 3 %}{{ i }},{% endfor %} {{ vars.name | upcase }} {{ vars.l | size }}', s),
    ).toBe('0,1,2, ADA 100');
    expect(render('{% for i in vars.l %}{% if i == 99 %}{{ i }}{% endif %}{% endfor %}', s)).toBe('99');
  });

  it('the time limit is a backstop: a request with no template time left renders nothing more', () => {
    const s = scope({ l: range(10) }, new EvalBudget(limits({ templateMs: 0 })));
    expect(() => render('{% for i in vars.l %}{{ i }}{% endfor %}', s)).toThrow(EvaluationLimit);
    // plain {{ a.b }} outputs take the fast path: no liquid, no budget needed
    expect(render('Hello {{ vars.l }}', scope({ l: 'you' }, new EvalBudget(limits({ templateMs: 0 }))))).toBe(
      'Hello you',
    );
  });

  it('a spent CEL budget stops templates too (one budget per request)', () => {
    const b = new EvalBudget(limits({ celUnits: 1000 }));
    const s = scope({ l: range(1000) }, b);
    expect(() => evaluate('vars.l.map(x, x).size()', s)).toThrow(EvaluationLimit);
    expect(() => render('{% if true %}x{% endif %}', s)).toThrow(EvaluationLimit);
  });
});
