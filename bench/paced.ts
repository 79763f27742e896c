/**
 * Load at a fixed request rate, spread evenly over time (the equal-rate phase of `npm run bench`).
 * autocannon's `overallRate` sends each connection's share of a second in one burst at the start
 * of the second, all connections together: the server runs saturated for part of each second and
 * idles the rest, which is saturation again. Here a request is due every 1/rate s (a timer checks
 * every millisecond how many are due); each of `connections` keep-alive connections plays whole
 * calls (one request in flight each, as autocannon does); a due request waits for a free
 * connection when all are busy (counted as late).
 */
import { Agent, request } from 'node:http';

export interface PacedOptions {
  url: string;
  path: string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  connections: number;
  /** The requests of one call, in order; each gets the call's id. */
  call: readonly ((callid: bigint) => string)[];
  newCallid(): bigint;
}

export interface PacedResult {
  /** Responses received. */
  total: number;
  /** Responses per second over the phase. */
  rate: number;
  non2xx: number;
  errors: number;
  /** Requests sent after their due time because every connection was busy. */
  late: number;
  /** Response times, ms. */
  p50: number;
  p99: number;
}

/** How long the requests still out at the end of a phase are waited for, ms. */
const DRAIN_MS = 10_000;

interface Caller {
  callid: bigint;
  next: number;
}

export function paced(o: PacedOptions): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections });
  const { hostname, port } = new URL(o.url);
  const idle: Caller[] = Array.from({ length: o.connections }, () => ({ callid: o.newCallid(), next: 0 }));
  const times: number[] = [];
  let sent = 0;
  let inFlight = 0;
  let non2xx = 0;
  let errors = 0;
  let late = 0;
  let due = 0;
  const start = performance.now();
  const end = start + o.seconds * 1000;

  return new Promise((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      agent.destroy();
      times.sort((a, b) => a - b);
      const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
      const total = times.length;
      resolve({ total, rate: total / o.seconds, non2xx, errors, late, p50: at(0.5), p99: at(0.99) });
    };
    const done = (c: Caller, ok: boolean) => {
      if (finished) return;
      inFlight--;
      c.next = ok && c.next + 1 < o.call.length ? c.next + 1 : 0;
      if (c.next === 0) c.callid = o.newCallid();
      idle.push(c);
      if (sent < due) {
        late++;
        send();
      } else if (timer === undefined && inFlight === 0) finish();
    };
    const send = () => {
      const c = idle.pop()!;
      const body = o.call[c.next]!(c.callid);
      const t0 = performance.now();
      let settled = false;
      const settle = (ok: boolean) => {
        if (settled) return;
        settled = true;
        done(c, ok);
      };
      sent++;
      inFlight++;
      const req = request(
        {
          agent,
          hostname,
          port,
          path: o.path,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            times.push(performance.now() - t0);
            if ((res.statusCode ?? 0) >= 300) non2xx++;
            settle((res.statusCode ?? 0) < 300);
          });
        },
      );
      req.on('error', () => {
        errors++;
        settle(false);
      });
      req.end(body);
    };
    let timer: NodeJS.Timeout | undefined = setInterval(() => {
      const now = performance.now();
      due = Math.floor(((Math.min(now, end) - start) / 1000) * o.rate);
      while (sent < due && idle.length > 0) send();
      if (now >= end && timer !== undefined) {
        clearInterval(timer);
        timer = undefined;
        if (inFlight === 0) finish();
        // a server that stops answering ends the phase all the same: what is still out counts as errors
        else
          setTimeout(() => {
            if (finished) return;
            errors += inFlight;
            finish();
          }, DRAIN_MS).unref();
      }
    }, 1);
  });
}
