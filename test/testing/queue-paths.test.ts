/**
 * The queue step in `callscript paths` (explore.ts, branch-executor.ts): a poll answers ring, wait, timeout, empty or
 * fails, leave and done answer at once; the waiting loop's states repeat, so the search walks them once; the cases
 * written give each queue operation its answer, and pass as `callscript test` runs them. A flow that loops through
 * its queue for ever is searched within the search's bounds.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateCases } from '../../src/testing/paths.js';
import { explore } from '../../src/testing/explore.js';
import { flowTransitions } from '../../src/testing/transitions.js';
import { BARE, compiled, LINE } from './queue-fixture.js';

const text = (g: ReturnType<typeof generateCases>, k: string) =>
  g.cases.find((c) => c.transition === k)!.lines.join('\n');

describe('the queue step in callscript paths', () => {
  it('finds a case for every transition of a queue, each answer written on its queue step', () => {
    const f = compiled(LINE);
    const g = generateCases(f);
    expect(g.skipped).toEqual([]);
    expect(g.cases.map((c) => c.transition)).toEqual(flowTransitions(f).all);
    expect(text(g, 'wait_line:noanswer')).toBe(
      [
        '  - name: "wait_line:noanswer"',
        '    steps:',
        '      - expect: play',
        '        result: "0"',
        '      - expect: queue',
        '        answer: { result: ring, agent: "+442079460001" }',
        '      # takes wait_line:noanswer',
        '      - expect: dialout',
        '        result: "NOANSWER"',
        '      - expect: queue',
        '        answer: { result: ring, agent: "+442079460001" }',
        '      - expect: dialout',
      ].join('\n'),
    );
    expect(text(g, 'wait_line:held')).toContain(
      [
        '      - expect: queue',
        '        answer: { result: wait }',
        '      # takes wait_line:held',
        '      - expect: play',
        '        result: "0"',
      ].join('\n'),
    );
    expect(text(g, 'wait_line:error')).toContain('        answer: { error: UNAVAILABLE }');
    expect(text(g, 'wait_line:abandoned')).toMatch(
      /# takes wait_line:abandoned\n {6}- expect: play\n {8}status: HANGUP$/,
    );
  });

  it('without a hangup handler, the call ending while ringing (bridged) or waiting (abandoned) is searched', () => {
    const g = generateCases(compiled(BARE));
    expect(g.skipped).toEqual([]);
    expect(text(g, 'q:bridged')).toBe(
      [
        '  - name: "q:bridged"',
        '    steps:',
        '      - expect: queue',
        '        answer: { result: ring, agent: "+442079460009" }',
        '      # takes q:bridged',
        '      - expect: dialout',
        '        status: HANGUP',
      ].join('\n'),
    );
    expect(text(g, 'q:abandoned')).toContain('      # takes q:abandoned\n      - expect: wait\n        status: HANGUP');
  });

  it("the example call-centre: every transition, the queues' agents from a var and from a list with a template", () => {
    const f = compiled(readFileSync('flows/call-centre.yaml', 'utf8'), 'flows/call-centre.yaml');
    const g = generateCases(f);
    expect(g.skipped).toEqual([]);
    expect(text(g, 'sales_queue:ring')).toContain('answer: { result: ring, agent: "+442079460201" }');
    expect(text(g, 'support_queue:ring')).toContain('answer: { result: ring, agent: "+442079460301" }');
  });

  it('hostile: a flow looping through its queue for ever is searched within bounds, its far branch not found', () => {
    const LOOP = `version: 2
name: loop
start: init
steps:
  init: { set: { n: 0 }, next: q }
  q:
    queue:
      name: help
      agents: ["+442079460009", "+442079460008", "+442079460007"]
      hold: ["One.", "Two.", { wait: 5 }]
      announce: { every: 10, say: "Round {{ vars.n }}." }
    save: place
    on:
      timeout: again
      empty: { goto: again, say: "Nobody." }
      error: { goto: again, say: "Sorry." }
      bridged: done
  again: { set: { n: { expr: "vars.n + 1" } }, next: check }
  check: { when: "vars.n > 1000", then: far, else: q }
  far: { say: "Far.", next: end }
  done: { set: { n: 0 } }
  end: { hangup: {} }
vars: { n: 0 }
`;
    const f = compiled(LOOP);
    const ex = explore(f, ['check:case1', 'q:held'], [], [], { maxStates: 600 });
    expect(ex.states).toBe(600);
    expect([...ex.found.keys()]).toEqual(['q:held']);
    const g = generateCases(f, ['check:case1', 'far:default'], { maxStates: 600 });
    expect(g.cases).toEqual([]);
    expect(g.skipped.map((s) => s.transition)).toEqual(['check:case1', 'far:default']);
    expect(g.skipped[0]!.why).toMatch(/^not found: no call searched \(600 call states from \d+ starts?\) reached/);
  });
});
