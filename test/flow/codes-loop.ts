/**
 * Fixtures of the codes of foreach steps (version 2), added to the catalogue's fixtures in
 * codes.test.ts, and the other diagnostics a foreach step gives (exact code and position).
 */

/** A version 2 flow: top-level lines, then steps (their first line at 4 + top.length). */
export const loopFlow = (top: string[], ...steps: string[]) =>
  ['version: 2', ...top, 'start: a', 'steps:', ...steps].join('\n') + '\n';

/** A loop `a` over vars.list whose body `b` reads each item and comes back. */
export const LOOP_STEPS = [
  '  a:',
  '    foreach: { in: vars.list, as: item, index: i }',
  '    do: b',
  '    next: end',
  '  b: { say: "{{ vars.item }}", next: a }',
  '  end: { hangup: {} }',
];

export const LOOP_CASES = [
  {
    name: 'as: names a variable of vars:',
    code: 'LOOP_SHADOWS_VAR',
    text: loopFlow(['vars: { list: [1, 2], item: 0 }'], ...LOOP_STEPS),
    line: 6,
    column: 35,
    message: /^foreach 'a': as: 'item' is also a variable of the flow \(from vars: \(or a module param\)\)/,
    hint: /name of its own/,
  },
  {
    name: 'index: names a variable a set: writes',
    code: 'LOOP_SHADOWS_VAR',
    text: loopFlow(
      ['vars: { list: [1, 2] }'],
      ...LOOP_STEPS.slice(0, 4),
      '  b: { set: { i: 0 }, next: c }',
      '  c: { say: "{{ vars.item }}", next: a }',
      '  end: { hangup: {} }',
    ),
    line: 6,
    column: 48,
    message:
      /index: 'i' is also a variable of the flow \(from a save: or set:\): the loop would overwrite it with each index/,
  },
  {
    name: 'as: and index: one name',
    code: 'LOOP_VAR_REUSED',
    text: loopFlow(['vars: { list: [1] }'], ...LOOP_STEPS.map((l) => l.replace('index: i', 'index: item'))),
    line: 6,
    column: 48,
    message: /index: 'item' is also its as:/,
  },
  {
    name: 'a nested loop reusing the outer item name',
    code: 'LOOP_VAR_REUSED',
    text: loopFlow(
      ['vars: { list: [[1, 2], [3]] }'],
      '  a:',
      '    foreach: { in: vars.list, as: item }',
      '    do: inner',
      '    next: end',
      '  inner:',
      '    foreach: { in: vars.item, as: item }',
      '    do: b',
      '    next: a',
      '  b: { say: "{{ vars.item }}", next: inner }',
      '  end: { hangup: {} }',
    ),
    line: 10,
    column: 35,
    message: /^foreach 'inner' is inside the body of foreach 'a' and its as: 'item' is a variable of 'a' too/,
    hint: /as: entry/,
  },
  {
    name: 'a body that never comes back',
    code: 'LOOP_NEVER_BACK',
    text: loopFlow(
      ['vars: { list: [1, 2] }'],
      ...LOOP_STEPS.slice(0, 4),
      '  b: { say: "{{ vars.item }}", next: end }',
      '  end: { hangup: {} }',
    ),
    line: 7,
    column: 9,
    message: /no step of its body \(from do: 'b'\) comes back to 'a': the loop would take one item only/,
    hint: /next: <the foreach step>|next: a/,
  },
  {
    name: 'a body whose first step the rest of the flow reaches too',
    code: 'LOOP_NEVER_BACK',
    text: loopFlow(
      ['vars: { list: [1, 2] }'],
      '  a: { say: "Hello", next: loop }',
      '  loop:',
      '    foreach: { in: vars.list, as: item }',
      '    do: a',
      '    next: end',
      '  end: { hangup: {} }',
    ),
    line: 8,
    column: 9,
    message: /its do: 'a' is also reached from elsewhere in the flow/,
  },
  {
    name: 'do: the loop itself',
    code: 'LOOP_NEVER_BACK',
    text: loopFlow(['vars: { list: [1] }'], '  a:', '    foreach: { in: vars.list, as: item }', '    do: a'),
    line: 7,
    column: 9,
    message: /do: names the foreach step itself/,
  },
];
