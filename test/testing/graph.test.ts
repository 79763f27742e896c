import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createMachine } from 'xstate';
import { graph } from '../../src/cli/graph.js';
import { compileAll } from '../../src/registry/registry.js';
import { dotString, toDot, toMermaid } from '../../src/testing/graph.js';
import { cmd, flow, hangup, say } from '../engine/helpers.js';

const small = () =>
  flow({
    name: 'small',
    handlers: { on: { read: { '0': 'bye' } } },
    steps: {
      menu: cmd('read', { max_digits: 1 }, { on: { '1': 'bye', TIMEOUT: { retry: 2, then: 'bye' } } }),
      bye: say('Bye "now" <&>', 'end'),
      end: hangup(),
    },
  });

/** Structural check of a dot graph: balanced braces and quotes, every edge's nodes declared. */
function checkDot(text: string): void {
  let depth = 0;
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    expect(depth).toBeGreaterThanOrEqual(0);
  }
  expect(inStr).toBe(false);
  expect(depth).toBe(0);
  const declared = new Set([...text.matchAll(/^ {2}(\w+) \[label=/gm)].map((m) => m[1]));
  const edges = [...text.matchAll(/^ {2}(\w+) -> (\w+) \[/gm)];
  expect(edges.length).toBeGreaterThan(0);
  for (const [, a, b] of edges) {
    expect(declared.has(a!), a).toBe(true);
    expect(declared.has(b!), b).toBe(true);
  }
}

describe('callscript graph', () => {
  it('mermaid: exact output for a small flow', () => {
    expect(toMermaid(small())).toBe(
      [
        'flowchart TD',
        '  start(("start"))',
        '  s0["menu<br/>read<br/>max_digits 1"]',
        '  s1["bye<br/>play: #34;Bye #34;now#34; #60;#38;#62;#34;"]',
        '  s2(["end<br/>hangup"])',
        '  flow_end(["end (hangup)"])',
        '  start --> s0',
        '  s0 -->|"1"| s1',
        '  s0 -->|"TIMEOUT ×2"| s0',
        '  s0 -->|"TIMEOUT (retries used up)"| s1',
        '  s0 -.->|"0 (flow-wide)"| s1',
        '  s0 -->|"default"| flow_end',
        '  s0 -->|"error"| flow_end',
        '  s1 -->|"default"| s2',
        '  s1 -->|"error"| flow_end',
        '',
      ].join('\n'),
    );
  });

  it('marks untaken edges with coverage data', () => {
    const cov = { flows: { small: { transitions: { 'menu:1': 3, 'menu:TIMEOUT': 1, 'bye:default': 3 } } } };
    const m = toMermaid(small(), { coverage: cov });
    expect(m).toContain('  s0 -->|"1 [3]"| s1');
    expect(m).toContain('  s0 -.->|"TIMEOUT (retries used up) (untaken)"| s1');
    expect(m).toContain('  s0 -.->|"0 (flow-wide) (untaken)"| s1');
    // untaken edges: links 3 (TIMEOUT then), 4 (0); a result or error with no branch ends the
    // flow through the machine's catch-all: no transition of the flow, as in the coverage report
    expect(m).toContain('  linkStyle 3,4 stroke:#d00,color:#d00');
    expect(m).toContain('  s0 -->|"default"| flow_end');
    const d = toDot(small(), { coverage: cov });
    expect(d).toContain(
      's0 -> s1 [label="TIMEOUT (retries used up) (untaken)", style=dashed, color=red, fontcolor=red];',
    );
    expect(d).toContain('s0 -> s1 [label="1 [3]"];');
    checkDot(d);
  });

  it('dot: escapes labels and parses structurally for every example flow', () => {
    expect(dotString('a "b" \\ c\nd')).toBe('"a \\"b\\" \\\\ c\\nd"');
    checkDot(toDot(small()));
    const dir = 'flows';
    const { flows } = compileAll(
      readdirSync(dir)
        .filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'))
        .map((f) => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') })),
    );
    expect(flows.length).toBeGreaterThan(0);
    for (const f of flows) {
      checkDot(toDot(f));
      const m = toMermaid(f);
      expect(m.startsWith('flowchart TD\n')).toBe(true);
      expect(m).not.toMatch(/\bend\b -->|--> end$/m);
    }
  });
});

describe('callscript graph --format xstate', () => {
  const capture = () => {
    let text = '';
    const w = new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) });
    return { w, text: () => text };
  };

  it('writes the JSON config of the machine that serves the flow, which xstate accepts as it is', async () => {
    const out = capture();
    const err = capture();
    expect(await graph('flows/front-desk.yaml', { format: 'xstate' }, out.w, err.w)).toBe(0);
    expect(err.text()).toBe('');
    const json = JSON.parse(out.text()) as {
      initial: string;
      states: {
        call: {
          initial: string;
          states: Record<string, { on?: Record<string, { guard?: unknown; target: string }[]> }>;
        };
      };
    };
    expect(json.initial).toBe('call');
    expect(json.states.call.initial).toBe('route');
    // The menu's "1" is a named, parameterised guard; targets are step ids.
    expect(json.states.call.states.menu!.on!.result).toContainEqual(
      expect.objectContaining({ guard: { type: 'match', params: { exact: '1' } }, target: 'sales' }),
    );
    // xstate takes the JSON with no change (guards and actions by name are resolved at run time).
    const m = createMachine(json as never);
    expect(Object.keys(m.states.call!.states)).toContain('menu');
  });

  it('refuses --coverage with xstate and an unknown format, with exit code 2', async () => {
    const err = capture();
    expect(await graph('flows/front-desk.yaml', { format: 'xstate', coverage: 'c.json' }, capture().w, err.w)).toBe(2);
    expect(err.text()).toBe('callscript graph: --coverage marks a diagram: use it with --format mermaid or dot\n');
    const err2 = capture();
    expect(await graph('flows/front-desk.yaml', { format: 'svg' }, capture().w, err2.w)).toBe(2);
    expect(err2.text()).toBe('callscript graph: --format is mermaid, dot or xstate, not "svg"\n');
  });
});

describe('graph labels', () => {
  it('a when step is labelled when, and an answered dialout "answered (bridged)", not default', async () => {
    let text = '';
    const out = new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) });
    expect(await graph('flows/front-desk.yaml', {}, out, new Writable({ write: (_c, _e, cb) => cb() }))).toBe(0);
    const lines = text.split('\n');
    expect(lines.find((l) => l.includes('"again<br/>'))).toMatch(/"again<br\/>when"/);
    expect(lines.find((l) => l.includes('"route<br/>'))).toMatch(/"route<br\/>switch"/);
    const sales = lines
      .find((l) => l.includes('"sales<br/>dialout'))!
      .trim()
      .split(/[[{(]/)[0]!;
    expect(lines).toContain(`  ${sales} -->|"answered (bridged)"| flow_end`);
    expect(lines.some((l) => l.startsWith(`  ${sales} -->|"default"|`))).toBe(false);
  });
});
