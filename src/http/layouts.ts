/**
 * The laid-out graphs of the web console (GET /admin/flows/:name/graph), one per flow
 * version, computed once and kept while the version is (a WeakMap on the compiled flow).
 *
 * dagre's layout is CPU-bound, and its cost grows fast with the size of a graph and the
 * length of its back edges: milliseconds for a usual flow, seconds for a hundred steps that
 * loop back far, minutes for a few hundred. Flows are untrusted input and the event loop
 * answers calls, so the layout runs on a thread of its own (layout-worker.ts), one graph at
 * a time, started by the first request and stopped when the server closes. A graph that is
 * not laid out within `timeoutMs` (counted once the thread is ready), or that has more
 * than `maxNodes` boxes, is not drawn:
 * the thread is stopped (a new one takes the next graph) and the answer says so, once and
 * for good for that version.
 */
import { Worker } from 'node:worker_threads';
import type { CompiledFlow } from '../engine/compile.js';
import { laidGraph, layoutInput, type LaidGraph } from '../testing/graph-layout.js';
import type { LayoutAnswer, LayoutRequest } from './layout-worker.js';
import { spawnModuleWorker } from '../registry/checker.js';

/** A failure is `lasting` when it is the graph's (too large, too slow): it is not tried again. */
export type LayoutResult = { ok: true; graph: LaidGraph } | { ok: false; message: string; lasting: boolean };

export interface LayoutsOptions {
  /** Longest layout of one graph (default 10 s). */
  timeoutMs?: number;
  /** Graphs with more nodes are not laid out (default 600). */
  maxNodes?: number;
  /** Starts the thread (default `spawnLayoutWorker`). */
  spawn?: () => Worker;
}

interface Job {
  id: number;
  flow: CompiledFlow;
  parts: ReturnType<typeof layoutInput>;
  done: (r: LayoutResult) => void;
}

export class GraphLayouts {
  private readonly cache = new WeakMap<CompiledFlow, Promise<LayoutResult>>();
  private readonly queue: Job[] = [];
  private worker: { worker: Worker; ready: boolean } | undefined;
  private running: { job: Job; timer: NodeJS.Timeout | undefined } | undefined;
  private nextId = 1;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly maxNodes: number;

  constructor(private readonly opts: LayoutsOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxNodes = opts.maxNodes ?? 600;
  }

  /** The graph of a flow version, laid out (from the cache when it was before). */
  get(flow: CompiledFlow): Promise<LayoutResult> {
    let p = this.cache.get(flow);
    if (!p) {
      p = this.lay(flow);
      this.cache.set(flow, p);
      // a failure that is not the graph's (the thread crashed, the server closes) is tried again next time
      void p.then((r) => {
        if (!r.ok && !r.lasting) this.cache.delete(flow);
      });
    }
    return p;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.done({ ok: false, message: 'the server is closing', lasting: false });
    if (this.running) {
      clearTimeout(this.running.timer);
      this.running.job.done({ ok: false, message: 'the server is closing', lasting: false });
      this.running = undefined;
    }
    const t = this.worker;
    this.worker = undefined;
    await t?.worker.terminate();
  }

  private lay(flow: CompiledFlow): Promise<LayoutResult> {
    const parts = layoutInput(flow);
    if (parts.nodes.length > this.maxNodes) {
      return Promise.resolve({
        ok: false,
        message:
          `the diagram of ${flow.name} ${flow.version} has ${parts.nodes.length} boxes, more than the console ` +
          `draws (${this.maxNodes}): use callscript graph --format dot`,
        lasting: true,
      });
    }
    if (this.closed) return Promise.resolve({ ok: false, message: 'the server is closing', lasting: false });
    return new Promise((done) => {
      this.queue.push({ id: this.nextId++, flow, parts, done });
      this.pump();
    });
  }

  private pump(): void {
    if (this.running || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    const t = this.thread();
    this.running = { job, timer: undefined };
    const msg: LayoutRequest = { id: job.id, input: job.parts.input };
    t.worker.postMessage(msg);
    if (t.ready) this.arm();
  }

  /** The running job's clock starts once the thread is ready (its start is not the graph's time). */
  private arm(): void {
    const r = this.running;
    if (!r || r.timer) return;
    const { job } = r;
    r.timer = setTimeout(() => {
      job.done({
        ok: false,
        message:
          `the diagram of ${job.flow.name} ${job.flow.version} could not be laid out ` +
          `within ${this.timeoutMs / 1000} s (${job.parts.nodes.length} boxes, ${job.parts.edges.length} ` +
          `arrows): use callscript graph --format dot`,
        lasting: true,
      });
      this.stopThread();
    }, this.timeoutMs);
  }

  private thread(): { worker: Worker; ready: boolean } {
    if (this.worker) return this.worker;
    const w = (this.opts.spawn ?? spawnLayoutWorker)();
    w.unref();
    const t = { worker: w, ready: false };
    // a thread that never says it is ready (its module fails to load without exiting) is given up
    const starting = setTimeout(() => {
      lost('the layout thread did not start within 30 s');
      void w.terminate();
    }, 30_000);
    starting.unref();
    w.on('message', (m: LayoutAnswer) => {
      if ('ready' in m) {
        clearTimeout(starting);
        t.ready = true;
        this.arm();
        return;
      }
      const r = this.running;
      if (!r || r.job.id !== m.id) return;
      clearTimeout(r.timer);
      this.running = undefined;
      if ('error' in m) r.job.done({ ok: false, message: `the layout failed: ${m.error}`, lasting: true });
      else r.job.done({ ok: true, graph: laidGraph(r.job.flow, r.job.parts, m.output) });
      this.pump();
    });
    const lost = (why: string) => {
      clearTimeout(starting);
      if (this.worker !== t) return;
      this.worker = undefined;
      const r = this.running;
      if (r) {
        clearTimeout(r.timer);
        this.running = undefined;
        r.job.done({ ok: false, message: `the layout failed: ${why}`, lasting: false });
      }
      this.pump();
    };
    w.on('error', (err) => lost(err.message));
    w.on('exit', (code) => lost(`the layout thread exited (${code})`));
    this.worker = t;
    return t;
  }

  private stopThread(): void {
    const t = this.worker;
    this.worker = undefined;
    this.running = undefined;
    void t?.worker.terminate();
    this.pump();
  }
}

/** Starts the layout thread (layout-worker.ts; layout-worker.js when built: see spawnModuleWorker). */
export function spawnLayoutWorker(): Worker {
  return spawnModuleWorker(import.meta.url, 'layout-worker');
}
