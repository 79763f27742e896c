/**
 * The metrics IPC of --workers N (src/http/metrics-cluster.ts) over fake processes: the
 * primary relays a gather to every serving worker and hands back their parts; it answers
 * without a worker that exits meanwhile, and after its wait without one that stays silent;
 * a worker whose primary is silent gets undefined after its own wait. (Real processes:
 * test/cli/metrics-workers.test.ts.)
 */
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { describe, expect, it } from 'vitest';
import { relayMetrics, workerMetricsLink, type ClusterEvents } from '../../src/http/metrics-cluster.js';

/**
 * A worker process and its handle in the primary, wired to each other (messages go through JSON, as cluster IPC does).
 */
function pair(id: number, primary: EventEmitter) {
  const proc = new EventEmitter() as EventEmitter & { send?: NodeJS.Process['send']; connected: boolean };
  const handle = new EventEmitter() as EventEmitter & {
    id: number;
    isConnected(): boolean;
    send(m: unknown): boolean;
    alive: boolean;
    mute: boolean;
  };
  handle.id = id;
  handle.alive = true;
  handle.mute = false;
  handle.isConnected = () => handle.alive;
  proc.connected = true;
  // primary -> worker
  handle.send = (m) => {
    if (handle.alive) setImmediate(() => proc.emit('message', JSON.parse(JSON.stringify(m))));
    return true;
  };
  // worker -> primary
  proc.send = ((m: unknown, _h?: unknown, _o?: unknown, cb?: (e: Error | null) => void) => {
    if (!handle.mute) setImmediate(() => primary.emit('message', handle, JSON.parse(JSON.stringify(m))));
    cb?.(null);
    return true;
  }) as NodeJS.Process['send'];
  return {
    proc: proc as unknown as NodeJS.Process,
    handle: handle as unknown as Worker & { alive: boolean; mute: boolean },
  };
}

function setup(n: number, partWaitMs = 300, gatherWaitMs = 1000) {
  const primary = new EventEmitter();
  const workers = Array.from({ length: n }, (_, i) => pair(i + 1, primary));
  const stop = relayMetrics(
    primary as unknown as ClusterEvents,
    () => workers.map((w) => w.handle).filter((h) => (h as unknown as { alive: boolean }).alive),
    partWaitMs,
  );
  const links = workers.map((w, i) => {
    const link = workerMetricsLink(w.proc, gatherWaitMs)!;
    link.answer(async (only) => [{ name: `m${i + 1}`, only: only ?? null }]);
    return link;
  });
  return { primary, workers, links, stop };
}

describe('metrics over the cluster IPC', () => {
  it("a gather gets every serving worker's part (the asker's too), `only` passed on", async () => {
    const { links, stop } = setup(3);
    const g = await links[1]!.gather(['callscript_transitions_total']);
    expect(g!.expected).toBe(3);
    expect(
      g!.parts
        .map((p) => p[0])
        .sort((a, b) => String((a as { name: string }).name).localeCompare((b as { name: string }).name)),
    ).toEqual([
      { name: 'm1', only: ['callscript_transitions_total'] },
      { name: 'm2', only: ['callscript_transitions_total'] },
      { name: 'm3', only: ['callscript_transitions_total'] },
    ]);
    stop();
  });

  it('a worker that exits while asked is not waited for', async () => {
    // the relay's wait is far past the test's timeout: only the exit can end the gather in time
    const { primary, workers, links, stop } = setup(2, 60_000, 60_000);
    workers[1]!.handle.mute = true;
    const pending = links[0]!.gather();
    setTimeout(() => {
      workers[1]!.handle.alive = false;
      primary.emit('exit', workers[1]!.handle);
    }, 50);
    const g = await pending;
    expect(g).toEqual({ parts: [[{ name: 'm1', only: null }]], expected: 2 });
    stop();
  });

  it('a worker that stays silent is left out after the wait', async () => {
    const { workers, links, stop } = setup(2, 200);
    workers[0]!.handle.mute = true;
    expect(await links[1]!.gather()).toEqual({ parts: [[{ name: 'm2', only: null }]], expected: 2 });
    stop();
  });

  it("no primary answer: undefined after the worker's wait; messages of others are ignored", async () => {
    const proc = new EventEmitter() as EventEmitter & { send: NodeJS.Process['send'] };
    const sent: unknown[] = [];
    proc.send = ((m: unknown, _h?: unknown, _o?: unknown, cb?: (e: Error | null) => void) => {
      sent.push(m);
      cb?.(null);
      return true;
    }) as NodeJS.Process['send'];
    const link = workerMetricsLink(proc as unknown as NodeJS.Process, 100)!;
    const pending = link.gather();
    proc.emit('message', { callscript: 'started', ok: true });
    proc.emit('message', { callscript: 'metrics-gathered', id: 'x' });
    proc.emit('message', null);
    expect(await pending).toBeUndefined();
    expect(sent).toEqual([{ callscript: 'metrics-gather', id: 0 }]);
    // no listener left behind
    expect(proc.listenerCount('message')).toBe(0);
  });

  it('a process without IPC has no link', () => {
    expect(workerMetricsLink({} as NodeJS.Process)).toBeUndefined();
  });

  it('stopping the relay answers the gathers in progress', async () => {
    const { workers, links, stop } = setup(2, 5000);
    workers[0]!.handle.mute = true;
    const pending = links[1]!.gather();
    await new Promise((r) => setTimeout(r, 50));
    stop();
    expect(await pending).toEqual({ parts: [[{ name: 'm2', only: null }]], expected: 2 });
  });
});
