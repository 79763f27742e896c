/**
 * Sensitivity follows the value (src/flow/sensitive-flow.ts): the names a compiled flow masks are those listed in
 * `sensitive:` and those that may receive their values: a module's param through `with:`, a caller's variable saved
 * from a returned value, a `set:`. Checked on linked flows (check, link, compile), as the server loads them.
 */
import { describe, expect, it } from 'vitest';
import { load } from '../subflow/helpers.js';

/** The sensitive names of flow `name` once the files are linked and compiled (sorted). */
function names(files: Record<string, string>, name: string): string[] | undefined {
  const { flows, diagnostics } = load(files);
  expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const s = flows.get(name)!.tables.sensitive;
  return s && [...s.names].sort();
}

const CHECK = `version: 2
name: check
module:
  params: { code: required, label: "x" }
  results: [ok]
  returns: [echo, tag, upper]
start: s
steps:
  s:
    set: { copy: "{{ vars.code }}" }
    next: r
  r:
    return: { result: ok, values: { echo: "{{ vars.copy }}", tag: "{{ vars.label }}", upper: "{{ vars.label }}" } }
`;

const caller = (withText: string, extra = '') => `version: 2
name: main
sensitive: [pin]
vars: { plain: "a" }
start: ask
steps:
  ask:
    read: { prompt: "PIN?", max_digits: 4 }
    save: pin
    next: go
  go:
    subflow: { flow: check, with: ${withText} }
    save: { confirmed: echo, tagged: tag }
    next: end
${extra}  end: { hangup: {} }
`;

describe('sensitivity follows the value', () => {
  it('into a module through with:, through its set:, and back through return and save:', () => {
    expect(names({ 'main.yaml': caller('{ code: "{{ vars.pin }}" }'), 'check.yaml': CHECK }, 'main')).toEqual([
      'code',
      'confirmed',
      'copy',
      'pin',
    ]);
  });

  it('not from a value that reads no sensitive var', () => {
    expect(
      names(
        { 'main.yaml': caller('{ code: "{{ vars.plain }}", label: "{{ vars.pin }}" }'), 'check.yaml': CHECK },
        'main',
      ),
    ).toEqual(['label', 'pin', 'tagged']);
  });

  it('from vars read whole or by a computed key', () => {
    expect(names({ 'main.yaml': caller('{ code: "{{ vars }}" }'), 'check.yaml': CHECK }, 'main')).toContain('code');
    expect(names({ 'main.yaml': caller(`{ code: '{{ vars["pin"] }}' }`), 'check.yaml': CHECK }, 'main')).toContain(
      'code',
    );
  });

  it('from `result` where it is the input a sensitive save: took, not elsewhere', () => {
    expect(names({ 'main.yaml': caller('{ code: "{{ result }}" }'), 'check.yaml': CHECK }, 'main')).toContain('code');
    const afterMenu = caller('{ code: "{{ result }}" }').replace('next: go', 'next: menu');
    const menu = '  menu:\n    read: { prompt: "Menu?", max_digits: 1 }\n    next: go\n';
    expect(names({ 'main.yaml': afterMenu.replace('  end:', `${menu}  end:`), 'check.yaml': CHECK }, 'main')).toEqual([
      'pin',
    ]);
  });

  it('through modules nested in modules, both ways', () => {
    const outer = `version: 2
name: outer
module:
  params: { p: required }
  results: [ok]
  returns: [back]
start: s
steps:
  s:
    subflow: { flow: check, with: { code: "{{ vars.p }}" } }
    save: { got: echo }
    next: r
  r:
    return: { result: ok, values: { back: "{{ vars.got }}" } }
`;
    const main = caller('{ code: "{{ vars.pin }}" }')
      .replace('flow: check, with: { code:', 'flow: outer, with: { p:')
      .replace('save: { confirmed: echo, tagged: tag }', 'save: { confirmed: back }');
    expect(names({ 'main.yaml': main, 'outer.yaml': outer, 'check.yaml': CHECK }, 'main')).toEqual([
      'code',
      'confirmed',
      'copy',
      'got',
      'p',
      'pin',
    ]);
  });

  it('through a set: expression (CEL) as through a template', () => {
    const flow = [
      'version: 2',
      'name: solo',
      'sensitive: [pin]',
      'start: ask',
      'steps:',
      '  ask:',
      '    read: { prompt: "PIN?", max_digits: 4 }',
      '    save: pin',
      '    next: s',
      '  s: { set: { ok: { expr: "vars.pin == \'1234\'" }, n: { expr: "1 + 1" } }, next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    expect(names({ 'solo.yaml': flow }, 'solo')).toEqual(['ok', 'pin']);
  });

  it('a flow without sensitive: masks nothing (and pays nothing)', () => {
    const main = caller('{ code: "{{ vars.pin }}" }').replace('sensitive: [pin]\n', '');
    expect(names({ 'main.yaml': main, 'check.yaml': CHECK }, 'main')).toBeUndefined();
  });
});
