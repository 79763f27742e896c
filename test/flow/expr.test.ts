import { Liquid } from 'liquidjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EVAL_LIMITS, EvalBudget, EvaluationLimit } from '../../src/flow/budget.js';
import {
  MAX_TEMPLATE_LENGTH,
  checkExpression,
  checkTemplate,
  evaluate,
  render,
  test as holds,
  type Scope,
} from '../../src/flow/expr.js';
import { chargeRendering } from '../../src/flow/liquid-charge.js';

const scope: Scope = {
  vars: {
    name: 'Ann',
    n: 3,
    f: 1.5,
    yes: true,
    no: false,
    none: null,
    list: ['a', 'b'],
    obj: { k: 'v' },
    nested: { deep: { x: 'X' } },
  },
  call: { caller: '+33612345678', callid: '18446744073709551615' },
  result: '12',
  error: '',
};

describe('render', () => {
  // The reference: liquid itself, configured as src/flow/expr.ts configures it.
  const liquid = new Liquid({ strictFilters: true, strictVariables: false, ownPropertyOnly: true });
  const cases = [
    'plain text',
    'Hi {{ vars.name }}!',
    '{{vars.name}}{{ vars.n }}',
    '{{ vars.f }} {{ vars.yes }} {{ vars.no }} [{{ vars.none }}] [{{ vars.missing }}] [{{ vars.missing.deeper }}]',
    '{{ vars.list }} {{ vars.list.size }} {{ vars.list.first }}',
    '{{ vars.obj }} {{ vars.nested.deep.x }}',
    '{{ call.caller }} {{ call.callid }} {{ result }} {{ error }}',
    '{{ vars.name | upcase }} {{ vars.missing | default: "caller" }}',
    '{% if vars.yes %}yes{% endif %} {{- vars.name -}} !',
    '{{ vars.constructor }} {{ vars.toString }} {{ vars.__proto__ }}',
    // `| default:` with a quoted text: compiled to a lookup (the common whisper and greeting)
    "[{{ vars.missing | default: 'none' }}] [{{ vars.none | default: 'nil' }}] [{{ vars.no | default: 'no' }}]",
    "[{{ error | default: 'empty' }}] [{{ vars.n | default: 'x' }}] [{{ vars.yes|default:'y' }}]",
    '[{{ vars.name | default: "caller" }}] [{{ vars.list | default: "l" }}] [{{ vars.obj | default: "o" }}]',
    "[{{ vars.missing.deeper | default: '' }}] [{{ vars.f | default: 'f' }}] {{ result | default: 'r' }}",
    '{{ call.caller | downcase }} {{ vars.name | upcase }} {{ vars.name|capitalize }} {{ vars.missing | downcase }}',
    "{{ vars.n | upcase }} {{ vars.yes | capitalize }} {{ vars.none | downcase | default: 'nil' }}",
    '[{{ vars.no | upcase }}]',
    "{{ vars.missing | default: 'mIxEd' | capitalize }} {{ error | default: 'e' | upcase | downcase }}",
    '{{ vars.list | downcase }} {{ vars.obj | upcase }}',
    '{{ vars.missing | default: \'a\' | upcase }} {{ vars.missing | default: "it\'s" }} {{ vars.no | default: "{x}" }}',
  ];
  it.each(cases)('renders %j exactly as liquid does', (tpl) => {
    expect(render(tpl, scope)).toBe(liquid.parseAndRenderSync(tpl, scope));
  });

  it("renders `| default: '...'`, downcase, upcase, capitalize without liquid (another filter, quotes: liquid)", () => {
    // a request whose budget is marked spent, its memory left: liquid would refuse to render (EVALUATION_LIMIT), the
    // compiled lookup does not
    const spent = new EvalBudget();
    spent.spent = 'spent for the test';
    const s: Scope = { ...scope, vars: { ...scope.vars, empty: '' }, budget: spent };
    expect(render("Front desk call. The caller chose {{ vars.empty | default: 'nothing' }}.", s)).toBe(
      'Front desk call. The caller chose nothing.',
    );
    expect(render('{{ vars.name | default: "x" }} {{ call.caller }}', s)).toBe('Ann +33612345678');
    expect(render("{{ vars.name | downcase }} ({{ call.status | default: 'HANGUP' | downcase }})", s)).toBe(
      'ann (hangup)',
    );
    expect(render("{{ vars.empty | default: 'a' | upcase }}", s)).toBe('A');
    expect(() => render("{{ vars.empty | append: 'a' }}", s)).toThrow(EvaluationLimit);
    expect(() => render('{{ vars.empty | default: "it\'s" }}', s)).toThrow(EvaluationLimit);
    expect(() => render('{{ vars.obj | default: "o" }}', s)).toThrow(EvaluationLimit);
  });

  // liquid charging its memory units as src/flow/expr.ts's engine does, to a meter of its own
  const metered = new Liquid({ strictFilters: true, strictVariables: false, ownPropertyOnly: true });
  let units = 0;
  chargeRendering(metered, () => ({ use: (n: number) => void (units += n), check: () => undefined }));
  const liquidUnits = (tpl: string, sc: Scope) => {
    units = 0;
    metered.parseAndRenderSync(tpl, sc);
    return units;
  };

  it.each(cases.filter((c) => c.includes('{{') && !/size|first|obj|list|\{%|-\}\}|\{\{-|"it's"/.test(c)))(
    'charges %j to the template memory exactly what liquid charges',
    (tpl) => {
      const budget = new EvalBudget();
      render(tpl, { ...scope, budget });
      expect(DEFAULT_EVAL_LIMITS.templateMemory - budget.templateMemoryLeft).toBe(liquidUnits(tpl, scope));
    },
  );

  it('hostile: many lookups of a long value are bounded by the template memory, as liquid bounds them', () => {
    const long = 'x'.repeat(10_000);
    const s: Scope = { ...scope, vars: { ...scope.vars, long } };
    // 4 lookups (40,000 characters written) fit the default 50,000 units; 6 do not
    expect(render('{{ vars.long }}'.repeat(4), { ...s, budget: new EvalBudget() })).toHaveLength(40_000);
    const budget = new EvalBudget();
    expect(() => render('{{ vars.long | upcase }}'.repeat(6), { ...s, budget })).toThrow(
      /went over their memory budget of 50,000 units/,
    );
    expect(budget.spent).toMatch(/memory budget/);
    // the units charged add up over a request's renders: the third render of 20,000 characters is refused
    const request = new EvalBudget();
    render('{{ vars.long }}{{ vars.long }}', { ...s, budget: request });
    render('{{ vars.long }}{{ vars.long }}', { ...s, budget: request });
    expect(request.templateMemoryLeft).toBe(50_000 - 2 * (2 * 8 + 20_000));
    expect(() => render('{{ vars.long }}{{ vars.long }}', { ...s, budget: request })).toThrow(EvaluationLimit);
    // a source past liquid's parseLimit is refused as liquid refuses it, whatever it holds
    const huge = '{{ vars.name }}'.repeat(Math.ceil(MAX_TEMPLATE_LENGTH / 15) + 1);
    expect(() =>
      render(huge, { ...s, budget: new EvalBudget({ ...DEFAULT_EVAL_LIMITS, templateMemory: 1e9 }) }),
    ).toThrow(/parse length limit exceeded/);
  });

  it('hostile: unclosed outputs, long paths, runs of spaces or filters cost time linear in their length', () => {
    // the fast path's pattern runs on the flow's text before liquid's parseLimit: each shape, 4 times longer, takes
    // less than 8 times as long (the least of 5 runs; quadratic backtracking would take 16 times)
    let seq = 0;
    const least = (make: (k: number) => string, k: number) => {
      let best = Infinity;
      for (let r = 0; r < 5; r++) {
        const sources = Array.from({ length: 4 }, () => `${make(k)} ${seq++}`);
        const t = performance.now();
        for (const src of sources) {
          try {
            render(src, { ...scope, budget: new EvalBudget() });
          } catch {
            // refused by liquid (an unclosed output, or past its parseLimit): what is timed is getting there
          }
        }
        best = Math.min(best, performance.now() - t);
      }
      return best;
    };
    const shapes: Record<string, (k: number) => string> = {
      'unclosed filters': (k) => '{{ vars.name' + ' | downcase'.repeat(k),
      'unclosed defaults': (k) => '{{ vars.name' + " | default: 'x'".repeat(k),
      'a run of spaces': (k) => '{{ vars.name' + ' '.repeat(11 * k),
      'a long path': (k) => '{{ vars' + '.a'.repeat(5 * k),
      'many unclosed outputs': (k) => '{{ vars.name | downcase '.repeat(k / 2),
    };
    for (const [name, make] of Object.entries(shapes)) {
      least(make, 512); // warm-up
      const ratio = least(make, 16_384) / least(make, 4_096);
      expect(ratio, name).toBeLessThan(8);
    }
  });

  it('throws on an unknown filter', () => {
    expect(() => render('{{ vars.name | nofilter }}', scope)).toThrow(/undefined filter/);
    expect(checkTemplate('{{ x | nofilter }}')).toMatch(/undefined filter: nofilter/);
    expect(checkTemplate('{{ vars.name }}')).toBeNull();
  });
});

describe('CEL expressions', () => {
  it('treats whole numbers as ints and returns JS numbers', () => {
    expect(evaluate('vars.n + 1', scope)).toBe(4);
    expect(evaluate('int(result) * 2', scope)).toBe(24);
    expect(evaluate('vars.list', scope)).toEqual(['a', 'b']);
    expect(holds('vars.n >= 3 && call.caller.startsWith("+33")', scope)).toBe(true);
    expect(holds('has(vars.missing)', scope)).toBe(false);
  });
  it('reports parse errors and never evaluates JavaScript', () => {
    expect(checkExpression('vars.n +')).not.toBeNull();
    expect(() => evaluate('process.exit(1)', scope)).toThrow();
  });
});

describe('dates print as written, whatever the server time zone', () => {
  it.each([
    ['{{ "2025-07-01" | date: "%-d %B %Y" }}', '1 July 2025'],
    ['{{ "2025-06-12T10:30:00" | date: "%-d %B at %H:%M" }}', '12 June at 10:30'],
    ['{{ "2025-06-12 23:30" | date: "%Y-%m-%d %H:%M" }}', '2025-06-12 23:30'],
    ['{{ "2025-06-12T10:30:00+02:00" | date: "%H:%M %z" }}', '10:30 +0200'],
    ['{{ "2025-06-12T10:30:00Z" | date: "%H:%M" }}', '10:30'],
  ])('%s', (tpl, want) => {
    expect(render(tpl, scope)).toBe(want);
  });
});
