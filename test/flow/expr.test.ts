import { Liquid } from 'liquidjs';
import { describe, expect, it } from 'vitest';
import { EvalBudget, EvaluationLimit } from '../../src/flow/budget.js';
import { checkExpression, checkTemplate, evaluate, render, test as holds, type Scope } from '../../src/flow/expr.js';

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
    // a request whose budget is spent: liquid would refuse to render (EVALUATION_LIMIT), the compiled lookup does not
    const spent = new EvalBudget();
    spent.exhaust('spent for the test');
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
