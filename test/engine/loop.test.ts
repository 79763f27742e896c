/**
 * foreach (version 2): a list read one item at a time through the step function, with the
 * exact commands sent; the next item, an early way out, the end of the list, max:, a value
 * that is not a list, nested loops, and the request's budget.
 */
import { describe, expect, it } from 'vitest';
import type { Value } from '../../src/flow/model.js';
import { compileAll } from '../../src/registry/files.js';
import { Call, OPTS, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const APPTS = `version: 2
start: each
vars:
  appointments:
    - { when: "Monday 10:00", doctor: "Dr Smith" }
    - { when: "Tuesday 14:30", doctor: "Dr Jones" }
    - { when: "Friday 9:15", doctor: "Dr Brown" }
steps:
  each:
    foreach: { in: vars.appointments, as: appt, index: i, max: 20 }
    do: read_one
    next: no_more
  read_one:
    read:
      prompt: >-
        Appointment {{ vars.i | plus: 1 }}: {{ vars.appt.when }} with {{ vars.appt.doctor }}.
        Press 1 to confirm, 2 for the next one, 9 to stop.
      max_digits: 1
    on:
      "1": confirmed
      "2": each
      "9": stopped
      TIMEOUT: each
      default: { retry: 1, say: "Sorry.", then: each }
  confirmed: { say: "Confirmed {{ vars.appt.when }}.", next: each }
  stopped: { say: "Stopped at {{ vars.appt.when }}.", next: end }
  no_more: { say: "That was all.", next: end }
  end: { hangup: {} }
`;
const READ = { max_digits: 1 };
const ask = (i: number, when: string, doctor: string) =>
  tts(`Appointment ${i}: ${when} with ${doctor}. Press 1 to confirm, 2 for the next one, 9 to stop.`);

describe('foreach', () => {
  it('reads each item in turn, then goes to next:', async () => {
    const c = new Call(await yamlFlow(APPTS));
    expect(c.start()).toBe(reply('read', 1, { media_id: ask(1, 'Monday 10:00', 'Dr Smith'), ...READ }));
    expect(c.state!.l).toEqual({ each: 1 });
    // the state as stored (JSON) keeps the loop's position
    c.state = JSON.parse(JSON.stringify(c.state)) as typeof c.state;
    expect(c.result('2')).toBe(reply('read', 2, { media_id: ask(2, 'Tuesday 14:30', 'Dr Jones'), ...READ }));
    expect(c.result('1')).toBe(reply('play', 3, { media_id: tts('Confirmed Tuesday 14:30.') }));
    expect(c.result('0')).toBe(reply('read', 4, { media_id: ask(3, 'Friday 9:15', 'Dr Brown'), ...READ }));
    expect(c.state!.vars.i).toBe(2);
    expect(c.result('2')).toBe(reply('play', 5, { media_id: tts('That was all.') }));
    expect(c.state!.l).toBeUndefined();
  });

  it('leaves early on a way out of the body', async () => {
    const c = new Call(await yamlFlow(APPTS));
    c.start();
    c.result('2');
    expect(c.result('9')).toBe(reply('play', 3, { media_id: tts('Stopped at Tuesday 14:30.') }));
    expect(c.result('0')).toBe(reply('hangup', 4));
  });
});

const OPTS_VARS = (vars: Record<string, Value>) => ({ ...OPTS, vars });

const flowOf = (vars: string, steps: string) => `version: 2
start: each
vars: ${vars}
steps:
${steps}`;

describe('foreach: the list', () => {
  const SIMPLE = `  each:
    foreach: { in: vars.list, as: item, max: 3 }
    do: say
    next: done
  say: { say: "Item {{ vars.item }}.", next: each }
  done: { say: "Done.", next: end }
  end: { hangup: {} }
`;

  it('an empty list goes to next: at once', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: [] }', SIMPLE)));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Done.') }));
    expect(c.state!.vars.item).toBeUndefined();
    expect(c.state!.l).toBeUndefined();
  });

  it('a list longer than max: stops at max, logged (LOOP_MAX)', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: [1, 2, 3, 4, 5] }', SIMPLE)));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Item 1.') }));
    expect(c.result('0')).toBe(reply('play', 2, { media_id: tts('Item 2.') }));
    expect(c.result('0')).toBe(reply('play', 3, { media_id: tts('Item 3.') }));
    expect(c.result('0')).toBe(reply('play', 4, { media_id: tts('Done.') }));
    const log = c.last!.kind === 'reply' ? c.last!.log : undefined;
    expect(log?.map((l) => [l.level, l.code, l.msg])).toEqual([
      ['warn', 'LOOP_MAX', 'foreach at each: the list has 5 items; the loop stopped at its max of 3'],
    ]);
  });

  it('a value that is not a list, without error:, is an empty list, logged (RUNTIME_LOOP)', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: { a: 1 } }', SIMPLE)));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Done.') }));
    const log = c.last!.kind === 'reply' ? c.last!.log : undefined;
    expect(log?.map((l) => [l.level, l.code, l.msg])).toEqual([
      ['warn', 'RUNTIME_LOOP', 'foreach at each: vars.list is a map, not a list; taken as an empty list'],
    ]);
  });

  it('a value that is not a list takes error: when the step has one', async () => {
    const steps = SIMPLE.replace('    next: done\n', '    next: done\n    error: sorry\n').replace(
      '  end:',
      '  sorry: { say: "Sorry.", next: end }\n  end:',
    );
    for (const [vars, why] of [
      ['{ list: "abc" }', 'vars.list is a string ("abc"), not a list'],
      ['{ other: 1 }', 'vars.list failed to evaluate: No such key: list'],
    ]) {
      const c = new Call(await yamlFlow(flowOf(vars!, steps)));
      expect(c.start()).toBe(reply('play', 1, { media_id: tts('Sorry.') }));
      const log = c.last!.kind === 'reply' ? c.last!.log : undefined;
      expect(log?.map((l) => [l.code, l.msg])).toEqual([
        ['RUNTIME_LOOP', `foreach at each: ${why}; taking its error way`],
      ]);
    }
  });

  it('reads the list again before each item: a body that changes it changes what comes next', async () => {
    const steps = SIMPLE.replace('do: say', 'do: grow').replace(
      '  say:',
      '  grow:\n' +
        '    set: { list: { expr: "size(vars.list) < 3 ? vars.list + [vars.item * 10] : vars.list" } }\n' +
        '    next: say\n  say:',
    );
    const c = new Call(await yamlFlow(flowOf('{ list: [1] }', steps)));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Item 1.') }));
    expect(c.result('0')).toBe(reply('play', 2, { media_id: tts('Item 10.') }));
    expect(c.result('0')).toBe(reply('play', 3, { media_id: tts('Item 100.') }));
    expect(c.result('0')).toBe(reply('play', 4, { media_id: tts('Done.') }));
  });

  it('a list from CEL (filter) is taken as computed', async () => {
    const steps = SIMPLE.replace('in: vars.list', 'in: "vars.list.filter(x, x % 2 == 0)"');
    const c = new Call(await yamlFlow(flowOf('{ list: [1, 2, 3, 4] }', steps)));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Item 2.') }));
    expect(c.result('0')).toBe(reply('play', 2, { media_id: tts('Item 4.') }));
    expect(c.result('0')).toBe(reply('play', 3, { media_id: tts('Done.') }));
  });
});

describe('foreach: ways into and out of the loop', () => {
  const MENU = `  each:
    foreach: { in: vars.list, as: item, index: i }
    do: ask
    next: menu
  ask:
    read: { prompt: "Item {{ vars.item }}. 2 next, 9 stop.", max_digits: 1 }
    on:
      "2": each
      "9": menu
      default: { retry: 1, say: "Again.", then: each }
      TIMEOUT: { goto: each, say: "Next one." }
  menu:
    read: { prompt: "Press 1 to hear them again.", max_digits: 1 }
    on: { "1": each, default: end }
  end: { hangup: {} }
`;
  const item = (n: number) => ({ media_id: tts(`Item ${n}. 2 next, 9 stop.`), max_digits: 1 });
  const menu = { media_id: tts('Press 1 to hear them again.'), max_digits: 1 };

  it('a way into the loop from outside its body starts it again from the first item', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: [1, 2, 3] }', MENU)));
    expect(c.start()).toBe(reply('read', 1, item(1)));
    expect(c.result('2')).toBe(reply('read', 2, item(2)));
    expect(c.result('9')).toBe(reply('read', 3, menu));
    expect(c.state!.l).toEqual({ each: 2 });
    expect(c.result('1')).toBe(reply('read', 4, item(1)));
    expect(c.state!.l).toEqual({ each: 1 });
  });

  it('a branch with say: into the loop takes the next item after the say', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: [1, 2] }', MENU)));
    c.start();
    expect(c.result('TIMEOUT')).toBe(reply('play', 2, { media_id: tts('Next one.') }));
    expect(c.result('0')).toBe(reply('read', 3, item(2)));
    expect(c.result('TIMEOUT')).toBe(reply('play', 4, { media_id: tts('Next one.') }));
    expect(c.result('0')).toBe(reply('read', 5, menu));
  });

  it('a retry stays on the item; its then: goes to the next one', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: [1, 2] }', MENU)));
    c.start();
    expect(c.result('5')).toBe(reply('play', 2, { media_id: tts('Again.') }));
    expect(c.result('0')).toBe(reply('read', 3, item(1)));
    expect(c.result('5')).toBe(reply('play', 4, { media_id: tts('Again.') }));
    expect(c.result('0')).toBe(reply('read', 5, item(2)));
  });

  it('the item and index keep the last values after the loop', async () => {
    const c = new Call(await yamlFlow(flowOf('{ list: [1, 2] }', MENU)));
    c.start();
    c.result('2');
    c.result('2');
    expect(c.state!.vars).toEqual({ list: [1, 2], item: 2, i: 1 });
  });
});

describe('foreach: nested loops and logic bodies', () => {
  it('nested loops: the inner loop runs in full for each outer item, then the outer goes on', async () => {
    const text = flowOf(
      '{ rows: [[1, 2], [3]] }',
      `  each:
    foreach: { in: vars.rows, as: row, index: r }
    do: inner
    next: done
  inner:
    foreach: { in: vars.row, as: cell, index: c }
    do: say
    next: each
  say: { say: "{{ vars.r }}.{{ vars.c }}={{ vars.cell }}", next: inner }
  done: { say: "Done.", next: end }
  end: { hangup: {} }
`,
    );
    const c = new Call(await yamlFlow(text));
    const said = [c.start()];
    for (let k = 0; k < 3; k++) said.push(c.result('0'));
    expect(said).toEqual([
      reply('play', 1, { media_id: tts('0.0=1') }),
      reply('play', 2, { media_id: tts('0.1=2') }),
      reply('play', 3, { media_id: tts('1.0=3') }),
      reply('play', 4, { media_id: tts('Done.') }),
    ]);
    expect(c.state!.l).toBeUndefined();
  });

  it('a body of logic steps runs the items within the request (a sum)', async () => {
    const text = flowOf(
      '{ list: [1, 2, 3, 4], total: 0 }',
      `  each:
    foreach: { in: vars.list, as: x }
    do: add
    next: say
  add: { set: { total: { expr: "vars.total + vars.x" } }, next: each }
  say: { say: "Total {{ vars.total }}.", next: end }
  end: { hangup: {} }
`,
    );
    const c = new Call(await yamlFlow(text));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Total 10.') }));
  });

  it('a body of logic steps over a long list is bounded by the request (ITERATION_LIMIT)', async () => {
    const text = flowOf(
      '{ total: 0 }',
      `  each:
    foreach: { in: vars.list, as: x, max: 1000 }
    do: add
    next: say
  add: { set: { total: { expr: "vars.total + 1" } }, next: each }
  say: { say: "Total {{ vars.total }}.", next: end }
  end: { hangup: {} }
`,
    );
    const c = new Call(await yamlFlow(text), OPTS_VARS({ list: Array.from({ length: 1000 }, (_, i) => i) }));
    expect(c.start()).toBe(reply('hangup', 1));
    const log = c.last!.kind === 'reply' ? c.last!.log : undefined;
    expect(log?.map((l) => l.code)).toEqual(['ITERATION_LIMIT']);
  });
});

describe('foreach: hostile lists', () => {
  const LOOP = `  each:
    foreach: { in: vars.list, as: x, index: i }
    do: say
    next: done
  say: { say: "{{ vars.i }}", next: each }
  done: { say: "Done.", next: end }
  end: { hangup: {} }
`;

  it('a 1,000,000-item list: the request goes over its evaluation budget, bounded in time, never a crash', async () => {
    const list = Array.from({ length: 1_000_000 }, (_, i) => i);
    const c = new Call(await yamlFlow(flowOf('{}', LOOP)), OPTS_VARS({ list }));
    const t0 = performance.now();
    expect(c.start()).toBe(reply('hangup', 1));
    expect(performance.now() - t0).toBeLessThan(2000);
    const log = c.last!.kind === 'reply' ? c.last!.log : undefined;
    expect(log?.map((l) => l.code)).toEqual(['EVALUATION_LIMIT', 'EVALUATION_LIMIT']);
    expect(log?.[0]?.msg).toMatch(/^foreach in vars\.list at each: /);
  });

  it('a list of 1,200 items in the state: max: stops the loop at 1000 items, one request each', async () => {
    const steps = LOOP.replace('as: x, index: i', 'as: x, index: i, max: 1000');
    const c = new Call(await yamlFlow(flowOf('{}', steps)), {
      ...OPTS_VARS({ list: Array.from({ length: 1200 }, () => 0) }),
      maxStateBytes: 1_000_000,
    });
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('0') }));
    let out = '';
    for (let k = 2; k <= 1001; k++) out = c.result('0');
    expect(out).toBe(reply('play', 1001, { media_id: tts('Done.') }));
    expect(c.state!.vars.i).toBe(999);
  });

  it('nested logic loops of 1000 x 1000 items end within one request (ITERATION_LIMIT)', async () => {
    const text = flowOf(
      '{ n: 0 }',
      `  each:
    foreach: { in: vars.list, as: x, max: 1000 }
    do: inner
    next: done
  inner:
    foreach: { in: vars.list, as: y, max: 1000 }
    do: add
    next: each
  add: { set: { n: { expr: "vars.n + 1" } }, next: inner }
  done: { say: "{{ vars.n }}", next: end }
  end: { hangup: {} }
`,
    );
    const c = new Call(await yamlFlow(text), OPTS_VARS({ list: Array.from({ length: 1000 }, (_, i) => i) }));
    const t0 = performance.now();
    expect(c.start()).toBe(reply('hangup', 1));
    expect(performance.now() - t0).toBeLessThan(2000);
    const log = c.last!.kind === 'reply' ? c.last!.log : undefined;
    expect(log?.map((l) => l.code)).toEqual(['ITERATION_LIMIT']);
  });
});

describe('foreach: sensitive lists', () => {
  it('the item of a sensitive list is sensitive (masked in the call-ended vars)', async () => {
    const text = `version: 2
start: each
sensitive: [cards]
vars: { cards: ["4111", "5500"] }
steps:
  each:
    foreach: { in: vars.cards, as: card }
    do: wait
    next: end
  wait: { wait: 1, next: each }
  end: { hangup: {} }
`;
    const f = await yamlFlow(text);
    expect([...f.tables.sensitive!.names].sort()).toEqual(['card', 'cards']);
  });
});

describe('foreach and subflows', () => {
  const SURVEY = `version: 2
name: survey
module: { params: { questions: required }, results: [done] }
start: each
steps:
  each:
    foreach: { in: vars.questions, as: q, index: n }
    do: ask
    next: finish
  ask:
    read: { prompt: "Question {{ vars.n | plus: 1 }}: {{ vars.q }}", max_digits: 1 }
    next: each
  finish: { return: done }
`;
  const MAIN = `version: 2
name: main
start: people
vars: { names: [Ann, Bob] }
steps:
  people:
    foreach: { in: vars.names, as: who }
    do: hello
    next: bye
  hello: { say: "Hello {{ vars.who }}.", next: survey }
  survey:
    subflow: { flow: survey, with: { questions: ["Happy?", "Again?"] } }
    on: { done: people }
  bye: { say: "Bye.", next: end }
  end: { hangup: {} }
`;

  it('a loop in a module entered from the body of a loop: each runs in full, the module loop afresh each time', () => {
    const { flows, report } = compileAll([
      { file: 'main.yaml', text: MAIN },
      { file: 'survey.yaml', text: SURVEY },
    ]);
    expect(report.diagnostics).toEqual([]);
    const c = new Call(flows.find((f) => f.name === 'main')!);
    const q = (n: number, text: string) => ({ media_id: tts(`Question ${n}: ${text}`), max_digits: 1 });
    const said = [c.start()];
    for (let k = 0; k < 6; k++) said.push(c.result(k % 3 === 0 ? '0' : '1'));
    expect(said).toEqual([
      reply('play', 1, { media_id: tts('Hello Ann.') }),
      reply('read', 2, q(1, 'Happy?')),
      reply('read', 3, q(2, 'Again?')),
      reply('play', 4, { media_id: tts('Hello Bob.') }),
      reply('read', 5, q(1, 'Happy?')),
      reply('read', 6, q(2, 'Again?')),
      reply('play', 7, { media_id: tts('Bye.') }),
    ]);
    expect(c.state!.l).toBeUndefined();
  });
});

describe('foreach: a module returning from inside its loop', () => {
  it('drops the position of the module loop it leaves; the caller loop goes on', () => {
    const survey = `version: 2
name: survey
module: { params: { questions: required }, results: [done, stop] }
start: each
steps:
  each:
    foreach: { in: vars.questions, as: q }
    do: ask
    next: finish
  ask:
    read: { prompt: "Question: {{ vars.q }}", max_digits: 1 }
    on: { "9": quit }
    next: each
  quit: { return: stop }
  finish: { return: done }
`;
    const main = `version: 2
name: main
start: people
vars: { names: [Ann, Bob] }
steps:
  people:
    foreach: { in: vars.names, as: who }
    do: survey
    next: end
  survey:
    subflow: { flow: survey, with: { questions: ["Q1", "Q2"] } }
    on: { done: people, stop: people }
  end: { hangup: {} }
`;
    const { flows } = compileAll([
      { file: 'main.yaml', text: main },
      { file: 'survey.yaml', text: survey },
    ]);
    const c = new Call(flows.find((f) => f.name === 'main')!);
    c.start();
    expect(c.state!.l).toEqual({ people: 1, 'survey:each': 1 });
    expect(c.result('9')).toBe(reply('read', 2, { media_id: tts('Question: Q1'), max_digits: 1 }));
    expect(c.state!.l).toEqual({ people: 2, 'survey:each': 1 });
    expect(c.state!.vars).toEqual({ questions: ['Q1', 'Q2'], q: 'Q1' });
    expect(c.result('9')).toBe(reply('hangup', 3));
    expect(c.state!.l).toBeUndefined();
  });
});
