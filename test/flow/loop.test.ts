/**
 * The checker on foreach steps (version 2): each mistake one diagnostic, at its exact
 * position; what a loop body may be (commands or not), and the bounds.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { LOOP_STEPS, loopFlow } from './codes-loop.js';

const diags = (text: string) =>
  checkFlow(text, 'flows/t.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code}`);
const LIST = ['vars: { list: [1, 2] }'];

describe('foreach: the step', () => {
  it('checks clean, its item and index readable in the body', () => {
    expect(checkFlow(loopFlow(LIST, ...LOOP_STEPS), 't.yaml').diagnostics).toEqual([]);
  });

  it('is version 2', () => {
    const text = loopFlow(LIST, ...LOOP_STEPS).replace('version: 2', 'version: 1');
    expect(diags(text)).toEqual(['6:5 error NEEDS_VERSION_2']);
  });

  it.each([
    ['no in:', '    foreach: { as: item }', ['6:5 error MISSING_KEY']],
    ['no as:', '    foreach: { in: vars.list }', ['6:5 error MISSING_KEY']],
    ['a misspelt key', '    foreach: { inn: vars.list, in: vars.list, as: item }', ['6:16 error UNKNOWN_KEY']],
    ['not a map', '    foreach: vars.list', ['6:14 error TYPE_MISMATCH']],
    ['a bad expression', '    foreach: { in: "vars.list +", as: item }', ['6:20 error BAD_EXPRESSION']],
    ['a bad name', '    foreach: { in: vars.list, as: 1x }', ['6:35 error BAD_NAME']],
    ['a reserved word', '    foreach: { in: vars.list, as: in }', ['6:35 error BAD_NAME']],
    ['max: 0', '    foreach: { in: vars.list, as: item, max: 0 }', ['6:46 error OUT_OF_BOUNDS']],
    ['max: 1001', '    foreach: { in: vars.list, as: item, max: 1001 }', ['6:46 error OUT_OF_BOUNDS']],
    ['max: a string', '    foreach: { in: vars.list, as: item, max: "20" }', ['6:46 error TYPE_MISMATCH']],
    ['an unknown list', '    foreach: { in: vars.lst, as: item }', ['6:20 warning UNKNOWN_VARIABLE']],
  ])('%s: one diagnostic', (_name, line, want) => {
    const steps = [...LOOP_STEPS];
    steps[1] = line;
    expect(diags(loopFlow(LIST, ...steps))).toEqual(want);
  });

  it('an unknown list var has a did-you-mean', () => {
    const steps = [...LOOP_STEPS];
    steps[1] = '    foreach: { in: vars.lists, as: item }';
    const d = checkFlow(loopFlow(LIST, ...steps), 't.yaml').diagnostics;
    expect(d.map((x) => [x.code, x.message, x.hint])).toEqual([
      [
        'UNKNOWN_VARIABLE',
        "vars.lists is read here but nothing sets it (no vars:, save:, set: or foreach of 'lists')",
        "did you mean 'list'?",
      ],
    ]);
  });

  it('no do: is MISSING_KEY; an unknown do: is UNKNOWN_STEP', () => {
    // its body, named nowhere else, is unreachable too
    expect(diags(loopFlow(LIST, ...LOOP_STEPS.filter((l) => !l.includes('do: b'))))).toEqual([
      '6:5 error MISSING_KEY',
      '8:3 error UNREACHABLE_STEP',
    ]);
    expect(diags(loopFlow(LIST, ...LOOP_STEPS.map((l) => l.replace('do: b', 'do: bb'))))).toEqual([
      '7:9 error UNKNOWN_STEP',
    ]);
  });

  it('a key of other steps is MISPLACED_KEY; loop: is UNKNOWN_KEY meaning foreach', () => {
    expect(diags(loopFlow(LIST, ...LOOP_STEPS.map((l) => l.replace('next: end', 'default: end'))))).toEqual([
      '8:5 error MISPLACED_KEY',
    ]);
    const d = checkFlow(loopFlow(LIST, ...LOOP_STEPS.map((l) => l.replace('foreach:', 'loop:'))), 't.yaml').diagnostics;
    expect(d.map((x) => `${x.line}:${x.column} ${x.code} ${x.hint}`)).toEqual([
      "6:5 UNKNOWN_KEY did you mean 'foreach'? (foreach: { in: vars.list, as: item } with do: and next:)",
    ]);
  });

  it('step-level error: on a command step is MISPLACED_KEY saying to write it under on:', () => {
    const d = checkFlow(
      loopFlow(LIST, '  a: { say: "x", error: a, next: end }', '  end: { hangup: {} }'),
      't.yaml',
    ).diagnostics;
    expect(d.map((x) => `${x.line}:${x.column} ${x.code}`)).toEqual(['5:18 MISPLACED_KEY']);
    expect(d[0]!.hint).toMatch(/on: \{ error: \.\.\. \}/);
  });

  it('a loop item name used by two loops one after the other is no mistake', () => {
    const text = loopFlow(
      LIST,
      ...LOOP_STEPS.map((l) => l.replace('next: end', 'next: again')),
      '  again:',
      '    foreach: { in: vars.list, as: item, index: i }',
      '    do: c',
      '    next: end',
      '  c: { say: "again {{ vars.item }}", next: again }',
    );
    expect(diags(text)).toEqual([]);
  });
});

describe('foreach: the body', () => {
  it('a body of logic steps only is no EVENTLESS_LOOP (each way back takes the next item)', () => {
    const text = loopFlow(
      ['vars: { list: [1, 2], total: 0 }'],
      '  a:',
      '    foreach: { in: vars.list, as: item }',
      '    do: add',
      '    next: say',
      '  add: { set: { total: { expr: "vars.total + vars.item" } }, next: a }',
      '  say: { say: "{{ vars.total }}", next: end }',
      '  end: { hangup: {} }',
    );
    expect(diags(text)).toEqual([]);
  });

  it('a loop of logic steps inside the body still is', () => {
    const text = loopFlow(
      LIST,
      ...LOOP_STEPS.slice(0, 4),
      '  b: { when: "vars.item > 1", then: c, else: a }',
      '  c: { set: { x: 1 }, next: b }',
      '  end: { hangup: {} }',
    );
    expect(diags(text)).toEqual(['9:3 error EVENTLESS_LOOP']);
  });

  it('nested loops: the inner loop done goes on with the outer one', () => {
    const text = loopFlow(
      ['vars: { rows: [[1, 2], [3]] }'],
      '  a:',
      '    foreach: { in: vars.rows, as: row, index: r }',
      '    do: inner',
      '    next: end',
      '  inner:',
      '    foreach: { in: vars.row, as: cell, index: c }',
      '    do: b',
      '    next: a',
      '  b: { say: "{{ vars.r }} {{ vars.c }} {{ vars.cell }}", next: inner }',
      '  end: { hangup: {} }',
    );
    expect(diags(text)).toEqual([]);
  });

  it('a foreach in the hangup handler is a logic step', () => {
    const text = loopFlow(
      ['vars: { list: [1, 2], n: 0 }', 'handlers: { hangup: count }'],
      '  a: { say: "Hi", next: end }',
      '  end: { hangup: {} }',
      '  count:',
      '    foreach: { in: vars.list, as: item }',
      '    do: add',
      '  add: { set: { n: { expr: "vars.n + 1" } }, next: count }',
    );
    expect(diags(text)).toEqual([]);
  });

  it('at most 100 foreach steps: TOO_MANY_ENTRIES once, at the 101st', () => {
    const steps: string[] = [];
    for (let k = 0; k < 102; k++)
      steps.push(
        `  l${k}:`,
        `    foreach: { in: vars.list, as: item }`,
        `    do: b${k}`,
        `    next: ${k < 101 ? `l${k + 1}` : 'end'}`,
        `  b${k}: { say: "x", next: l${k} }`,
      );
    const text = loopFlow(LIST, '  a: { say: "go", next: l0 }', ...steps, '  end: { hangup: {} }');
    const d = checkFlow(text, 't.yaml').diagnostics;
    expect(d.map((x) => `${x.line}:${x.column} ${x.code}`)).toEqual([`${6 + 100 * 5 + 1}:5 TOO_MANY_ENTRIES`]);
  });
});

describe('foreach: sensitive items', () => {
  it('an item listed in sensitive: is a variable the flow sets (no UNKNOWN_VARIABLE)', () => {
    const text = loopFlow(['vars: { list: [1, 2] }', 'sensitive: [item]'], ...LOOP_STEPS).replace(
      'say: "{{ vars.item }}"',
      'say: "Next."',
    );
    expect(diags(text)).toEqual([]);
  });
});
