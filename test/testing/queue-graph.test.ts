/**
 * The queue step in the flow's transitions and graph: its coverage keys at the step's line, its waiting loop drawn
 * as the machine has it (poll, hold, announce, ring), the ways out, in Mermaid, dot and the console's layout.
 */
import { describe, expect, it } from 'vitest';
import { toDot, toMermaid } from '../../src/testing/graph.js';
import { layoutGraph } from '../../src/testing/graph-layout.js';
import { flowEdges, flowTransitions } from '../../src/testing/transitions.js';
import { xstateConfig } from '../../src/flow/machine-config.js';
import { BARE, compiled, LINE } from './queue-fixture.js';

describe('the queue step in transitions and graphs', () => {
  it('lists its keys in the order the machine goes, at the lines written', () => {
    const t = flowTransitions(compiled(LINE));
    expect(t.all.filter((k) => k.startsWith('wait_line:'))).toEqual([
      'wait_line:ring',
      'wait_line:wait',
      'wait_line:announce',
      'wait_line:held',
      'wait_line:noanswer',
      'wait_line:bridged',
      'wait_line:timeout',
      'wait_line:empty',
      'wait_line:error',
      'wait_line:abandoned',
    ]);
    expect(
      ['wait_line:ring', 'wait_line:bridged', 'wait_line:timeout', 'wait_line:abandoned'].map(
        (k) => t.pos.get(k)?.line,
      ),
    ).toEqual([8, 18, 19, 8]);
  });

  it('a queue without announce: has no announce key; next: takes timeout and empty; no error way', () => {
    const t = flowTransitions(compiled(BARE));
    expect(t.all).toEqual([
      'q:ring',
      'q:wait',
      'q:held',
      'q:noanswer',
      'q:timeout',
      'q:empty',
      'q:bridged',
      'q:abandoned',
      'bye:default',
    ]);
    const f = compiled(BARE);
    expect(Object.keys(f.config.states).filter((s) => s.startsWith('q@'))).toEqual([
      'q@hold',
      'q@ring',
      'q@leave',
      'q@done',
    ]);
  });

  it('draws the waiting loop with the parts of the step, one edge per key', () => {
    const f = compiled(LINE);
    const edges = flowEdges(f).filter((e) => e.from.startsWith('wait_line') && e.kind !== 'status');
    expect(edges.map((e) => `${e.from} -${e.kind}:${e.key}${e.say ? ' + say' : ''}-> ${e.to} [${e.id}]`)).toEqual([
      'wait_line -queue:ring-> wait_line@ring [wait_line:ring]',
      'wait_line -queue:wait (announcement due)-> wait_line@announce [wait_line:wait]',
      'wait_line -queue:wait-> wait_line@hold [wait_line:wait]',
      'wait_line -key:timeout + say-> sorry [wait_line:timeout]',
      'wait_line -key:empty-> closed [wait_line:empty]',
      'wait_line -key:error-> closed [wait_line:error]',
      'wait_line@hold -queue:held-> wait_line [wait_line:held]',
      'wait_line@announce -queue:announced-> wait_line [wait_line:announce]',
      'wait_line@ring -queue:NOANSWER-> wait_line [wait_line:noanswer]',
      'wait_line@ring -queue:bridged (call ends)-> survey [wait_line:bridged]',
      'wait_line@hold -queue:abandoned (caller hangs up)-> noted [wait_line:abandoned]',
    ]);
  });

  it('mermaid: the step and its parts as nodes, the loop and the exits as edges', () => {
    const m = toMermaid(compiled(LINE)).split('\n');
    const at = (s: string) => m.filter((l) => l.includes(s));
    expect(at('s1')).toEqual([
      '  s1["wait_line<br/>queue sales<br/>2 agents, in_order<br/>max_wait 600 s"]',
      '  s1_hold["hold (looped)<br/>#34;Please hold.#34;, wait 20 s"]',
      '  s1_announce["announce every 60 s<br/>#34;You are number {{ vars.place.position }…#34;"]',
      '  s1_ring["ring the agent<br/>dialout, 15 s"]',
      '  s0 -->|"default"| s1',
      '  s1 -->|"ring"| s1_ring',
      '  s1 -->|"wait (announcement due)"| s1_announce',
      '  s1 -->|"wait"| s1_hold',
      '  s1 -->|"timeout + say"| s2',
      '  s1 -->|"empty"| s3',
      '  s1 -->|"error"| s3',
      '  s1_hold -->|"held"| s1',
      '  s1_announce -->|"announced"| s1',
      '  s1_ring -->|"NOANSWER"| s1',
      '  s1_ring -->|"bridged (call ends)"| s5',
      '  s1_hold -->|"abandoned (caller hangs up)"| s6',
    ]);
  });

  it('mermaid with coverage: the untaken parts of the loop are red and dashed', () => {
    const f = compiled(BARE);
    const transitions = { 'q:wait': 2, 'q:held': 2, 'q:ring': 1, 'q:bridged': 1 };
    const m = toMermaid(f, { coverage: { flows: { bare: { steps: {}, transitions, all: [] } } } });
    expect(m).toContain('  s0 -->|"wait [2]"| s0_hold\n');
    expect(m).toContain('  s0_ring -.->|"NOANSWER (untaken)"| s0\n');
    expect(m).toContain('  s0_ring -->|"bridged (call ends) [1]"| flow_end\n');
    expect(m).toContain('  s0 -.->|"timeout (untaken)"| s1\n');
    expect(m).not.toContain('s0_announce');
  });

  it('dot: the same nodes and edges', () => {
    const d = toDot(compiled(BARE));
    expect(d.split('\n').filter((l) => l.includes('s0'))).toEqual([
      '  s0 [label="q\\nqueue help\\n1 agent, in_order\\nmax_wait 900 s", shape=box];',
      '  s0_hold [label="hold (looped)\\nwait 10 s", shape=box];',
      '  s0_ring [label="ring the agent\\ndialout, 20 s", shape=box];',
      '  start -> s0 [label=""];',
      '  s0 -> s0_ring [label="ring"];',
      '  s0 -> s0_hold [label="wait"];',
      '  s0 -> s1 [label="timeout"];',
      '  s0 -> s1 [label="empty"];',
      '  s0 -> flow_end [label="error"];',
      '  s0_hold -> s0 [label="held"];',
      '  s0_ring -> s0 [label="NOANSWER"];',
      '  s0_ring -> flow_end [label="bridged (call ends)"];',
      '  s0_hold -> flow_end [label="abandoned (caller hangs up)"];',
    ]);
  });

  it("the console's layout: the parts are nodes of their step, each edge with its transition", () => {
    const g = layoutGraph(compiled(LINE));
    expect(g.nodes.filter((n) => n.partOf).map((n) => `${n.id} ${n.partOf} ${n.step}`)).toEqual([
      's1_hold wait_line null',
      's1_announce wait_line null',
      's1_ring wait_line null',
    ]);
    const edge = (k: string) => g.edges.filter((e) => e.transitions.includes(k)).map((e) => `${e.from}->${e.to}`);
    expect(edge('wait_line:wait')).toEqual(['s1->s1_announce', 's1->s1_hold']);
    expect(edge('wait_line:held')).toEqual(['s1_hold->s1']);
    expect(edge('wait_line:bridged')).toEqual(['s1_ring->s5']);
    expect(edge('wait_line:abandoned')).toEqual(['s1_hold->s6']);
  });

  it('xstate: the queue states with their guards and actions', () => {
    const x = xstateConfig(compiled(LINE).config) as { states: { call: { states: Record<string, unknown> } } };
    const states = Object.keys(x.states.call.states).filter((s) => s.startsWith('wait_line'));
    expect(states).toEqual([
      'wait_line@hold',
      'wait_line@announce',
      'wait_line@ring',
      'wait_line@leave',
      'wait_line@done',
      'wait_line',
    ]);
    expect(JSON.stringify(x.states.call.states.wait_line)).toContain(
      '"guard":{"type":"queueDue","params":{"step":"wait_line"}}',
    );
  });
});

describe('hostile: many queue steps', () => {
  it('300 queues in a chain: four nodes and a bounded set of edges each, every key drawn once', () => {
    const steps = Array.from(
      { length: 300 },
      (_, i) =>
        `  q${i}:\n    queue: { name: q${i}, agents: ["+442079460001"], announce: { every: 60, say: "Wait." } }\n` +
        `    on: { timeout: ${i === 299 ? 'end' : `q${i + 1}`}, empty: end, error: end, bridged: done }\n`,
    );
    const f = compiled(
      `version: 2\nname: many\nstart: q0\nsteps:\n${steps.join('')}  end: { hangup: {} }\n` +
        '  done: { set: { served: true } }\nvars: { served: false }\n',
    );
    const m = toMermaid(f);
    const lines = m.split('\n');
    expect(lines.filter((l) => /^ {2}s\d+(_\w+)?[[({]/.test(l))).toHaveLength(300 * 4 + 2);
    const keys = flowTransitions(f).all;
    expect(keys).toHaveLength(300 * 10 + 1); // and done:next
    const drawn = flowEdges(f).filter((e) => e.kind === 'queue' || e.kind === 'key' || e.kind === 'next');
    expect(new Set(drawn.map((e) => e.id)).size).toBe(keys.length);
  });
});
