/**
 * The console's diagram logic (src/http/console/assets/diagram.js, a browser module with no
 * DOM at load): the counts each edge shows, their colour levels, and a call's path matched
 * to the edges it took. Drawn in Chromium: console-browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { compileAll } from '../../src/registry/registry.js';
import { layoutGraph, type LaidGraph } from '../../src/testing/graph-layout.js';
import { DESK } from '../helpers/console-flows.js';

type Path = { edges: Map<string, number[]>; nodes: Set<string>; last: string | null };
type Entry = { from: string | null; step: string | null; transitions: string[] };
const diagram = (await import(new URL('../../src/http/console/assets/diagram.js', import.meta.url).href)) as {
  edgeCounts(g: LaidGraph, counts: Record<string, number> | null): Map<string, number | null>;
  levelOf(n: number, max: number): number;
  pathOf(g: LaidGraph, entries: Entry[]): Path;
};
const graph = layoutGraph(compileAll([{ file: 'desk.yaml', text: DESK }]).flows[0]!);
const byKey = (k: string) => graph.edges.find((e) => e.transitions.includes(k))!.id;
const ordered = (p: Path) =>
  [...p.edges.entries()]
    .flatMap(([id, ns]) => ns.map((n) => [n, id] as const))
    .sort((a, b) => a[0] - b[0])
    .map(([, id]) => id);

describe('edge counts and levels', () => {
  it('counts each edge’s transitions; a retry’s self-loop without the time its retries ran out', () => {
    const c = diagram.edgeCounts(graph, {
      'menu:TIMEOUT': 5,
      'menu:TIMEOUT:then': 2,
      'menu:1': 3,
      'handlers.on.read:0': 4,
    });
    expect(c.get(byKey('menu:TIMEOUT'))).toBe(3);
    expect(c.get(byKey('menu:TIMEOUT:then'))).toBe(2);
    expect(c.get(byKey('menu:1'))).toBe(3);
    expect(c.get(byKey('handlers.on.read:0'))).toBe(4);
    expect(c.get(byKey('menu:2'))).toBe(0);
    expect(c.get('e0')).toBeNull(); // the start: no transition
    expect(c.get('e2')).toBeNull(); // a result with no branch
    expect([...diagram.edgeCounts(graph, null).values()].every((n) => n === null)).toBe(true);
  });

  it('levels: 0 never taken, then quarters of the busiest', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => diagram.levelOf(n, 8))).toEqual([0, 1, 1, 2, 2, 3, 3, 4, 4]);
    expect(diagram.levelOf(1, 1000)).toBe(1);
    expect(diagram.levelOf(0, 0)).toBe(0);
  });
});

describe('a call’s path over the diagram', () => {
  it(
    'the start, then each key from where the call is; retries on the self-loop, then the edge where they ran ' + 'out',
    () => {
      const p = diagram.pathOf(graph, [
        { from: null, step: 'hello', transitions: [] },
        { from: 'hello', step: 'menu', transitions: ['hello:default'] },
        { from: 'menu', step: 'menu', transitions: ['menu:TIMEOUT'] },
        { from: 'menu', step: 'menu', transitions: ['menu:TIMEOUT'] },
        { from: 'menu', step: 'bye', transitions: ['menu:TIMEOUT', 'menu:TIMEOUT:then'] },
        { from: 'bye', step: 'end', transitions: ['bye:default'] },
      ]);
      expect(ordered(p)).toEqual([
        'e0',
        byKey('hello:default'),
        byKey('menu:TIMEOUT'),
        byKey('menu:TIMEOUT'),
        byKey('menu:TIMEOUT:then'),
        byKey('bye:default'),
      ]);
      expect(p.edges.get(byKey('menu:TIMEOUT'))).toEqual([3, 4]);
      expect(p.last).toBe('s8');
      expect([...p.nodes].sort()).toEqual(['s0', 's1', 's7', 's8', 'start']);
    },
  );

  it(
    'a flow-wide handler’s key from the step the call was at; ' + 'the hangup handler when the call ended elsewhere',
    () => {
      const p = diagram.pathOf(graph, [
        { from: null, step: 'hello', transitions: [] },
        { from: 'hello', step: 'menu', transitions: ['hello:default'] },
        { from: 'menu', step: 'operator', transitions: ['handlers.on.read:0'] },
        { from: 'operator', step: 'operator', transitions: ['log_end:next'] },
      ]);
      const handler = graph.edges.find((e) => e.kind === 'handler')!.id;
      expect(ordered(p)).toEqual([
        'e0',
        byKey('hello:default'),
        byKey('handlers.on.read:0'),
        handler,
        byKey('log_end:next'),
      ]);
      expect(p.last).toBe('s6');
    },
  );

  it('keys the diagram does not have are skipped (a path of another version); no entries, no path', () => {
    const p = diagram.pathOf(graph, [{ from: 'menu', step: 'nowhere', transitions: ['menu:9', 'gone:next'] }]);
    expect(p.edges.size).toBe(0);
    expect(p.last).toBe('s1');
    const none = diagram.pathOf(graph, []);
    expect([none.edges.size, none.nodes.size, none.last]).toEqual([0, 0, null]);
  });
});
