/**
 * foreach steps in the tools, which drive the one step function: transitions and coverage,
 * the graph, paths (zero, one and more items), and the simulator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileFlow } from '../../src/engine/compile.js';
import { checkFlow } from '../../src/flow/check.js';
import { generateCases } from '../../src/testing/paths.js';
import { toMermaid } from '../../src/testing/graph.js';
import { SimSession } from '../../src/testing/simulate.js';
import { flowEdges, flowTransitions } from '../../src/testing/transitions.js';
import { layoutGraph } from '../../src/testing/graph-layout.js';

const root = new URL('../..', import.meta.url).pathname;

function compiled(text: string, file = 'loop.yaml') {
  const { model, diagnostics } = checkFlow(text, file);
  if (!model) throw new Error(JSON.stringify(diagnostics));
  return compileFlow(model, text);
}

const LOOP = `version: 2
name: items
start: each
vars: { list: [a, b, c] }
steps:
  each:
    foreach: { in: vars.list, as: item, index: i }
    do: ask
    next: done
    error: sorry
  ask:
    read: { prompt: "Item {{ vars.item }}. 2 for the next, 9 to stop.", max_digits: 1 }
    on: { "2": each, "9": bye, default: each }
  done: { say: "Done.", next: bye }
  sorry: { say: "Sorry.", next: bye }
  bye: { say: "Bye.", next: end }
  end: { hangup: {} }
`;

describe('foreach in the tools', () => {
  it('lists the loop transitions at their place in the file', () => {
    const t = flowTransitions(compiled(LOOP));
    expect(t.all.slice(0, 4)).toEqual(['each:do', 'each:next', 'each:done', 'each:error']);
    expect(['each:do', 'each:next', 'each:done', 'each:error'].map((k) => t.pos.get(k)?.line)).toEqual([8, 8, 9, 10]);
  });

  it('draws the loop from its step, the body coming back to it', () => {
    const f = compiled(LOOP);
    const edges = flowEdges(f).filter((e) => e.from === 'each' || e.to === 'each');
    expect(edges.map((e) => `${e.from} -${e.kind}:${e.key}-> ${e.to} [${e.id}]`)).toEqual([
      'each -loop:not a list-> sorry [each:error]',
      'each -loop:each item-> ask [each:do]',
      'each -loop:done-> done [each:done]',
      'each -loop:next item-> ask [each:next]',
      'ask -key:2-> each [ask:2]',
      'ask -key:default-> each [ask:default]',
    ]);
    const mermaid = toMermaid(f);
    expect(mermaid).toContain('s0{{"each<br/>foreach item, i in vars.list"}}');
    expect(mermaid).toContain('s0 -->|"next item"| s1');
    expect(mermaid).toContain('s1 -->|"2"| s0');
  });

  it('paths finds a case for every loop transition: no item, items, the next one, the end, not a list', () => {
    const f = compiled(LOOP);
    const g = generateCases(f);
    expect(g.skipped).toEqual([]);
    const names = g.cases.map((c) => c.transition);
    expect(names).toEqual(expect.arrayContaining(['each:do', 'each:next', 'each:done', 'each:error', 'ask:9']));
    const text = (k: string) => g.cases.find((c) => c.transition === k)!.lines.join('\n');
    expect(text('each:error')).toMatch(/vars: \{ list: null \}/);
    expect(text('each:next')).toMatch(/result: "2"/);
  });

  it('paths on the example flow: the lookup answers the list the loop reads, empty, of one item and of two', () => {
    const file = join(root, 'flows/appointments.yaml');
    const f = compiled(readFileSync(file, 'utf8'), file);
    const want = ['count:case1', 'each:do', 'each:next', 'each:done', 'each:error'];
    const g = generateCases(f, want, { maxMs: 20_000 });
    expect(g.skipped).toEqual([]);
    const mocked = (k: string) =>
      /status: 200(, body: (.*))? \}/.exec(
        g.cases.find((c) => c.transition === k)!.lines.find((l) => l.includes('patients/appointments'))!,
      )?.[2];
    expect(want.map(mocked)).toEqual([
      '{"appointments":[]}',
      '{"appointments":[{}]}',
      '{"appointments":[{},{}]}',
      '{"appointments":[{}]}',
      undefined, // no body: no list, the loop's error way
    ]);
  });

  it("the console's diagram (its layout) has the loop's edges from its node, each with its transition", () => {
    const g = layoutGraph(compiled(LOOP));
    const node = (step: string) => g.nodes.find((n) => n.step === step)!.id;
    const edge = (k: string) => g.edges.find((e) => e.transitions.includes(k))!;
    for (const [k, to] of [
      ['each:do', 'ask'],
      ['each:next', 'ask'],
      ['each:done', 'done'],
      ['each:error', 'sorry'],
    ] as const)
      expect([k, edge(k).from, edge(k).to, edge(k).kind]).toEqual([k, node('each'), node(to), 'loop']);
    expect([edge('ask:2').from, edge('ask:2').to]).toEqual([node('ask'), node('each')]);
  });

  it('the simulator steps through the items, its path naming each step', () => {
    const s = new SimSession(compiled(LOOP));
    s.start();
    expect(s.question).toEqual({ kind: 'keys', command: 'read', maxDigits: 1 });
    s.answer({ kind: 'result', result: '2' });
    s.answer({ kind: 'result', result: '9' });
    expect(s.path.map((p) => `${p.step} ${p.command} ${p.outcome ?? ''}`.trim())).toEqual(['ask read 2', 'ask read 9']);
    expect(s.question).toMatchObject({ kind: 'menu', command: 'play' });
  });
});

describe('foreach: what paths says of a loop it cannot take', () => {
  it('names the list to give by hand', () => {
    const text = LOOP.replace('vars: { list: [a, b, c] }', 'vars: { other: 1 }').replace(
      'in: vars.list',
      'in: "has(vars.list) ? vars.list : []"',
    );
    const g = generateCases(compiled(text), ['each:do']);
    expect(g.skipped.map((s) => s.why)).toEqual([
      expect.stringMatching(
        /^not found: no call searched \(.*\) reached this loop with an item in its list `has\(vars\.list\) \? vars\.list : \[\]`; write this case by hand \(vars:, or a mocked lookup's body, giving that list\)$/,
      ),
    ]);
  });
});
