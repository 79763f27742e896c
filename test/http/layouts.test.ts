/**
 * The console's layout thread (src/http/layouts.ts): graphs laid out off the event loop,
 * once per version; a graph too large or too slow is refused for good, and the next one
 * gets a new thread; a crashed thread is not the graph's fault.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { compileAll } from '../../src/registry/registry.js';
import { GraphLayouts, spawnLayoutWorker as spawnReal } from '../../src/http/layouts.js';
import { layoutGraph } from '../../src/testing/graph-layout.js';
import { DESK } from '../helpers/console-flows.js';
import { bigFlow } from '../helpers/big-flow.js';

const compile = (text: string, file = 'f.yaml') => compileAll([{ file, text }]).flows[0]!;
const desk = compile(DESK, 'desk.yaml');

let layouts: GraphLayouts | undefined;
afterEach(async () => {
  await layouts?.close();
  layouts = undefined;
});

describe('GraphLayouts', () => {
  it('lays a graph out on its thread, as on this one, once per version', async () => {
    layouts = new GraphLayouts();
    const p = layouts.get(desk);
    expect(layouts.get(desk)).toBe(p);
    const r = await p;
    expect(r).toEqual({ ok: true, graph: layoutGraph(desk) });
  });

  it('refuses a graph with more boxes than maxNodes, without laying it out', async () => {
    let spawned = 0;
    layouts = new GraphLayouts({
      maxNodes: 5,
      spawn: () => (spawned++, new Worker('setInterval(() => {}, 1000)', { eval: true })),
    });
    expect(await layouts.get(desk)).toEqual({
      ok: false,
      lasting: true,
      message:
        `the diagram of desk ${desk.version} has 13 boxes, more than the console draws (5): use callscript ` +
        `graph --format dot`,
    });
    expect(spawned).toBe(0);
  });

  it('gives up a graph not laid out in time (for good), and lays the next out on a new thread', async () => {
    const big = compile(bigFlow(150), 'big.yaml'); // seconds to lay out: 149 menus, each with a long back edge
    let spawned = 0;
    layouts = new GraphLayouts({ timeoutMs: 200, spawn: () => (spawned++, spawnReal()) });
    const slow = layouts.get(big);
    const next = layouts.get(desk);
    expect(await slow).toEqual({
      ok: false,
      lasting: true,
      message:
        `the diagram of big ${big.version} could not be laid out within 0.2 s (152 boxes, 746 arrows): use ` +
        `callscript graph --format dot`,
    });
    expect((await next).ok).toBe(true);
    expect(spawned).toBe(2);
    expect(await layouts.get(big)).toEqual(await slow); // not tried again
    expect(spawned).toBe(2);
  });

  it('a thread that dies is not the graph’s fault: the next request tries again', async () => {
    let spawned = 0;
    layouts = new GraphLayouts({
      spawn: () => (spawned++ === 0 ? new Worker('process.exit(3)', { eval: true }) : spawnReal()),
    });
    expect(await layouts.get(desk)).toEqual({
      ok: false,
      lasting: false,
      message: 'the layout failed: the layout thread exited (3)',
    });
    expect((await layouts.get(desk)).ok).toBe(true);
    expect(spawned).toBe(2);
  });

  it('answers what is pending when closed', async () => {
    layouts = new GraphLayouts({ spawn: () => new Worker('setInterval(() => {}, 1000)', { eval: true }) });
    const p = layouts.get(desk);
    await layouts.close();
    expect(await p).toEqual({ ok: false, lasting: false, message: 'the server is closing' });
    expect(await layouts.get(compile(DESK.replace('Goodbye.', 'Bye.')))).toEqual({
      ok: false,
      lasting: false,
      message: 'the server is closing',
    });
  });
});
