/**
 * The load `npm run bench` puts on a server: whole front-desk calls (bench/front-desk.ts), a fresh
 * callid per call, at saturation with autocannon or at a fixed rate (bench/paced.ts), with the
 * server's CPU time per response (its own process.cpuUsage(), over IPC, just before and after).
 */
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import { cpuOf, type Server } from './children.js';
import type { BenchRedis } from './redis.js';
import { FRONT_DESK_CALL, rtBody } from './front-desk.js';
import { paced } from './paced.js';

/** Callids above 2^53 (the lossless path), a fresh one per call. */
export function callids(from = 10_000_000_000_000_000n): () => bigint {
  let next = from;
  return () => next++;
}

/** One front-desk call's request bodies, as functions of its callid. */
export const CALL = FRONT_DESK_CALL.map(
  ([command, id, result, status]) =>
    (callid: bigint) =>
      rtBody(callid, command, id, result, status),
);

function requests(path: string, newCallid: () => bigint): autocannon.Request[] {
  return CALL.map((body, i) => ({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    setupRequest: (req: autocannon.Request, context: object) => {
      const ctx = context as { callid?: bigint };
      if (i === 0) ctx.callid = newCallid();
      return { ...req, body: body(ctx.callid!) };
    },
  }));
}

/** One call over HTTP, checking every reply: the load must measure the call path, not errors. */
export async function checkCall(s: Server, callid: bigint): Promise<void> {
  for (const [command, id, result, status, want] of FRONT_DESK_CALL) {
    const res = await fetch(s.url + s.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rtBody(callid, command, id, result, status),
    });
    const text = await res.text();
    const got = res.status === 200 && want !== '' ? (JSON.parse(text) as { command?: string }).command : '';
    if (res.status !== 200 || got !== want)
      throw new Error(
        `bench call: after ${command || 'the first request'} (${id}) /rt ` +
          `answered ${res.status} ${text.slice(0, 200)}, expected ${want || 'the end'}`,
      );
  }
}

export interface Run {
  /** Responses per second. */
  rps: number;
  non2xx: number;
  errors: number;
  /** Exact percentiles from every response time, ms (autocannon's histogram keeps whole ms). */
  p50: number;
  p99: number;
  /** Server CPU time (user + system) per response, µs. */
  cpu: number;
  /** Of which system time, µs. */
  sys: number;
  /** redis-server's CPU time per response, µs (Redis mode only). */
  redisCpu?: number;
  /** Equal-rate phase: requests sent late because every connection was busy. */
  late?: number;
}

export interface LoadOptions {
  seconds: number;
  connections: number;
  newCallid: () => bigint;
  /** Requests per second (evenly spaced, bench/paced.ts); absent: saturation (autocannon). */
  rate?: number;
  redis?: BenchRedis;
}

async function saturate(s: Server, o: LoadOptions) {
  const times: number[] = [];
  // Without a callback, autocannon returns its instance: an event emitter that is also a promise.
  const instance = autocannon({
    url: s.url,
    connections: o.connections,
    duration: o.seconds,
    requests: requests(s.path, o.newCallid),
  }) as unknown as Promise<autocannon.Result> & EventEmitter;
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => times.push(ms));
  const result = await instance;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  const total = result.requests.total;
  return {
    total,
    rps: result.requests.average,
    non2xx: result.non2xx,
    errors: result.errors,
    p50: at(0.5),
    p99: at(0.99),
  };
}

/**
 * `amount` requests at saturation, unmeasured: code that has served that many is optimised (what
 * a request allocates depends on it: /rt's figure settles after some 5,000 requests).
 */
export async function warm(s: Server, amount: number, connections: number, newCallid: () => bigint): Promise<void> {
  if (amount > 0) await autocannon({ url: s.url, connections, amount, requests: requests(s.path, newCallid) });
}

/** Loads the server for o.seconds, at saturation or at o.rate. */
export async function load(s: Server, o: LoadOptions): Promise<Run> {
  const redisBefore = await o.redis?.cpu();
  const before = await cpuOf(s);
  const r =
    o.rate === undefined
      ? { ...(await saturate(s, o)), late: undefined }
      : await paced({ ...o, rate: o.rate, url: s.url, path: s.path, call: CALL }).then((p) => ({ ...p, rps: p.rate }));
  const after = await cpuOf(s);
  const redisAfter = await o.redis?.cpu();
  const n = r.total;
  const run: Run = {
    rps: r.rps,
    non2xx: r.non2xx,
    errors: r.errors,
    p50: r.p50,
    p99: r.p99,
    cpu: (after.user + after.system - before.user - before.system) / n,
    sys: (after.system - before.system) / n,
  };
  if (r.late !== undefined) run.late = r.late;
  if (redisBefore !== undefined && redisAfter !== undefined) run.redisCpu = (redisAfter - redisBefore) / n;
  return run;
}
