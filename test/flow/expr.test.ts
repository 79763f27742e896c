import { Liquid } from 'liquidjs';
import { describe, expect, it } from 'vitest';
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
  ];
  it.each(cases)('renders %j exactly as liquid does', (tpl) => {
    expect(render(tpl, scope)).toBe(liquid.parseAndRenderSync(tpl, scope));
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
