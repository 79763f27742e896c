/**
 * `npm run bench:handler`: the request path around the engine step, in this process, no HTTP: ns and heap bytes per
 * request of the call handler (src/engine/call.ts) on the memory store, as the server wires it (src/http/compose.ts:
 * the call history, the metrics, the tracing observer; a pino logger at info writing to /dev/null), each request's
 * body parsed as the /rt route does. Beside it, in the same run, the engine step alone (`advance` on the same
 * requests, parsed the same way, its state handed from one to the next as objects): what the handler adds around the
 * step is the difference.
 *
 * BENCH_CONNECTIONS (default 50) calls run at once, each a whole front-desk call (bench/front-desk.ts), a new callid
 * per call, as bench/rt.ts's connections play them.
 *
 * - ns per request: CPU time of this process (user + system, all its threads: the garbage collector's included; not
 *   wall time, which a shared machine stretches) over BENCH_REQUESTS (default 30 000) requests after a warm-up; the
 *   figure of each of BENCH_ROUNDS (3) rounds, then the median.
 * - bytes per request: heap allocated, heapUsed after the batch less heapUsed after a full GC before it, over
 *   batches small enough that no GC runs (a child process with a new space of 256 MB; a batch in which a GC ran
 *   anyway is left out), the call history's writes of the batch included (they run after the replies).
 *
 * BENCH_OBSERVERS=off: no call history and no metrics (what the observers cost, by difference).
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import Fastify from 'fastify';
import pino from 'pino';
import { advance } from '../src/engine/advance.js';
import type { CallHandler } from '../src/engine/call.js';
import type { CallState } from '../src/engine/types.js';
import { compose } from '../src/http/compose.js';
import { DEFAULT_RT_OPTIONS, type RtOptions } from '../src/http/options.js';
import { traceLogOptions } from '../src/http/tracing.js';
import { parseRtRequest } from '../src/protocol/request.js';
import { FRONT_DESK_CALL, rtBody } from './front-desk.js';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const total = Number(process.env.BENCH_REQUESTS ?? 30_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const observersOff = process.env.BENCH_OBSERVERS === 'off';
const FLOWS = new URL('../flows', import.meta.url).pathname;
const PER_CALL = FRONT_DESK_CALL.length;

let nextCall = 10_000_000_000_000_000n;

/** The bodies of `calls` whole calls, a new callid each. */
function bodies(calls: number): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < calls; i++) {
    const callid = nextCall++;
    out.push(FRONT_DESK_CALL.map(([command, id, result, status]) => rtBody(callid, command, id, result, status)));
  }
  return out;
}

interface Path {
  /** Plays one call's requests in order. */
  call(bodies: string[]): Promise<void>;
  /** Resolves once what the requests left to do in the background is done (the call history's writes). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** The call handler as the server wires it, its requests parsed as the route does. */
async function handlerPath(): Promise<Path> {
  const app = Fastify({ logger: false });
  const opts: RtOptions = { ...DEFAULT_RT_OPTIONS, routes: { ...DEFAULT_RT_OPTIONS.routes } };
  const parts = await compose(
    app,
    { flowsDir: FLOWS, ...(observersOff ? { history: false as const, metrics: false as const } : {}) },
    opts,
  );
  const handler: CallHandler = parts.handler;
  const log = pino({ level: 'info', ...traceLogOptions }, pino.destination({ dest: '/dev/null', sync: true }));
  let checked = false;
  return {
    async call(list) {
      for (let i = 0; i < list.length; i++) {
        const parsed = parseRtRequest(list[i]!, { maxDepth: opts.bodyDepth });
        if (!parsed.ok) throw new Error(parsed.message);
        const answer = await handler.handle(parsed.request, 'front-desk', log, undefined);
        if (answer.kind !== 'answered') throw new Error(`${answer.kind} ${answer.code} ${answer.message}`);
        if (!checked) {
          const want = FRONT_DESK_CALL[i]![4];
          const got = want === '' ? '' : (JSON.parse(answer.body) as { command: string }).command;
          if (got !== want) throw new Error(`request ${i}: answered ${got}, expected ${want}`);
          if (i === list.length - 1) checked = true;
        }
      }
    },
    async idle() {
      await parts.history?.idle();
    },
    async close() {
      await app.close();
    },
  };
}

/** The engine step alone on the same requests, parsed as the handler's are. */
async function stepPath(): Promise<Path> {
  const { Registry } = await import('../src/registry/registry.js');
  const { registry } = await Registry.fromDirectory(FLOWS, { maxFileBytes: DEFAULT_RT_OPTIONS.maxFlowBytes });
  const flow = registry.pick('front-desk', '1')!;
  const opts = { unknownCall: DEFAULT_RT_OPTIONS.unknownCall };
  return {
    async call(list) {
      let state: CallState | undefined;
      for (const body of list) {
        const p = parseRtRequest(body, { maxDepth: DEFAULT_RT_OPTIONS.bodyDepth });
        if (!p.ok) throw new Error(p.message);
        const out = advance(flow, state, p.request, { ...opts, now: Date.now() });
        if (out.kind !== 'reply') throw new Error(`the step answered ${out.kind}`);
        state = out.state ?? undefined;
        // one turn of the event loop per request, as the handler's callers get
        await undefined;
      }
    },
    async idle() {},
    async close() {},
  };
}

/** Plays `calls` with `connections` of them at once. */
async function play(path: Path, calls: string[][]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < calls.length) await path.call(calls[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(connections, calls.length) }, lane));
  await path.idle();
}

async function nsPerRequest(path: Path): Promise<number> {
  const calls = Math.ceil(total / PER_CALL);
  await play(path, bodies(Math.ceil(calls / 5)));
  const list = bodies(calls);
  const t0 = process.cpuUsage();
  await play(path, list);
  const t = process.cpuUsage(t0);
  return ((t.user + t.system) * 1000) / (calls * PER_CALL);
}

/** Heap bytes per request over GC-free batches (run with --expose-gc and a big new space). */
async function bytesPerRequest(path: Path): Promise<{ bytes: number; batches: number }> {
  const gc = global.gc!;
  let gcs = 0;
  const obs = new PerformanceObserver((list) => (gcs += list.getEntries().length));
  obs.observe({ entryTypes: ['gc'] });
  await play(path, bodies(2000));
  const per: number[] = [];
  for (let b = 0; b < 30 && per.length < 12; b++) {
    const list = bodies(connections * 4);
    gc();
    gc();
    // the observer hears of those two later: let it, before counting
    await new Promise((r) => setTimeout(r, 20));
    const before = gcs;
    const h0 = process.memoryUsage().heapUsed;
    await play(path, list);
    const h1 = process.memoryUsage().heapUsed;
    await new Promise((r) => setTimeout(r, 20));
    if (process.env.BENCH_DEBUG) console.error(b, gcs - before, (h1 - h0) / (list.length * PER_CALL));
    if (gcs === before) per.push((h1 - h0) / (list.length * PER_CALL));
  }
  obs.disconnect();
  per.sort((a, b) => a - b);
  return { bytes: per[Math.floor(per.length / 2)] ?? NaN, batches: per.length };
}

/**
 * BENCH_HEAP_PROFILE=file: a sampling heap profile of the handler path, the objects collected since included (what
 * was allocated, not what stayed), for Chrome DevTools or a script.
 */
async function heapProfile(file: string): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const path = await handlerPath();
  await play(path, bodies(2000));
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as object);
  await play(path, bodies(2000));
  const { profile } = await session.post('HeapProfiler.stopSampling');
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
  await path.close();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (process.argv[2] === 'bytes') {
    if (process.env.BENCH_HEAP_PROFILE) return heapProfile(process.env.BENCH_HEAP_PROFILE);
    const out: Record<string, { bytes: number; batches: number }> = {};
    for (const [name, make] of [
      ['handler', handlerPath],
      ['step', stepPath],
    ] as const) {
      const path = await make();
      out[name] = await bytesPerRequest(path);
      await path.close();
    }
    process.stdout.write(JSON.stringify(out));
    return;
  }
  const handler = await handlerPath();
  const step = await stepPath();
  const ns: { handler: number[]; step: number[] } = { handler: [], step: [] };
  for (let r = 0; r < rounds; r++) {
    ns.handler.push(await nsPerRequest(handler));
    ns.step.push(await nsPerRequest(step));
  }
  await handler.close();
  const child = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--max-semi-space-size=256',
      '--min-semi-space-size=256',
      ...process.execArgv.filter((a) => !a.startsWith('--expose-gc')),
      new URL(import.meta.url).pathname,
      'bytes',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (child.status !== 0) throw new Error(`the bytes child exited with ${child.status}`);
  const bytes = JSON.parse(child.stdout) as Record<'handler' | 'step', { bytes: number; batches: number }>;
  const h = median(ns.handler);
  const s = median(ns.step);
  const f = (x: number) => x.toFixed(0).padStart(7);
  console.log(
    `front-desk calls, ${connections} at once, ${total} requests a round, ${rounds} rounds; ` +
      `observers ${observersOff ? 'off' : 'on'}`,
  );
  console.log(
    `parse + handler           ${f(h)} ns/req  [${ns.handler.map((x) => x.toFixed(0)).join(' ')}]` +
      `  ${f(bytes.handler.bytes)} B/req (${bytes.handler.batches} batches)`,
  );
  console.log(
    `parse + engine step       ${f(s)} ns/req  [${ns.step.map((x) => x.toFixed(0)).join(' ')}]` +
      `  ${f(bytes.step.bytes)} B/req (${bytes.step.batches} batches)`,
  );
  console.log(
    `around the step           ${f(h - s)} ns/req             ${f(bytes.handler.bytes - bytes.step.bytes)} B/req`,
  );
}

await main();
