/**
 * The live calls, as the HTTP layer sees them: which flow version and step each call is
 * at, and per version how many calls started there and how many errors they met. A call
 * enters on its first reply and leaves when its state is dropped (or after `ttlMs` with no
 * request, like the store's snapshot). The registry asks it which versions are still in use.
 */
export interface LiveCall {
  callid: string;
  flow: string;
  version: string;
  step: string;
  /** Epoch ms of the call's last request. */
  lastSeen: number;
}

export interface VersionStats {
  /** Calls started on the version (since the process started). */
  calls: number;
  /** Requests on the version that logged an error, reported a command error, or got a 5xx. */
  errors: number;
}

const key = (flow: string, version: string) => `${flow}\u0000${version}`;

export class LiveCalls {
  private readonly calls = new Map<string, LiveCall>();
  private readonly counts = new Map<string, number>();
  private readonly stats = new Map<string, VersionStats>();
  private lastPurge: number;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastPurge = now();
  }

  /** Sets (or moves) a call; returns the version it left, if it moved to another one. */
  set(callid: string, flow: string, version: string, step: string): void {
    const prev = this.calls.get(callid);
    if (prev && prev.flow === flow && prev.version === version) {
      // Each request of a call lands here: the record is updated in place, so a live call
      // keeps one record and one callid string (the map's key), not one per request.
      prev.step = step;
      prev.lastSeen = this.now();
      return;
    }
    if (prev) this.dec(prev);
    this.calls.set(callid, { callid, flow, version, step, lastSeen: this.now() });
    const k = key(flow, version);
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }

  /** The call is over (its state dropped). */
  end(callid: string): LiveCall | undefined {
    const prev = this.calls.get(callid);
    if (!prev) return undefined;
    this.calls.delete(callid);
    this.dec(prev);
    return prev;
  }

  get(callid: string): LiveCall | undefined {
    return this.calls.get(callid);
  }

  /** Live calls on a version. */
  count(flow: string, version: string): number {
    return this.counts.get(key(flow, version)) ?? 0;
  }

  /** The live calls of a version (for impact reports). */
  *of(flow: string, version: string): Iterable<LiveCall> {
    for (const c of this.calls.values()) if (c.flow === flow && c.version === version) yield c;
  }

  get size(): number {
    return this.calls.size;
  }

  started(flow: string, version: string): void {
    this.statsOf(flow, version).calls++;
  }

  error(flow: string, version: string): void {
    this.statsOf(flow, version).errors++;
  }

  /** Counts of every version calls started on here: [flow, version, stats]. */
  *allStats(): Iterable<[string, string, VersionStats]> {
    for (const [k, st] of this.stats) {
      const at = k.indexOf('\u0000');
      yield [k.slice(0, at), k.slice(at + 1), st];
    }
  }

  /** The versions live calls are on here: [flow, version]. */
  *inUse(): Iterable<[string, string]> {
    for (const k of this.counts.keys()) {
      const at = k.indexOf('\u0000');
      yield [k.slice(0, at), k.slice(at + 1)];
    }
  }

  statsFor(flow: string, version: string): VersionStats {
    return { ...(this.stats.get(key(flow, version)) ?? { calls: 0, errors: 0 }) };
  }

  /** Forgets calls idle longer than the TTL; returns how many. Runs at most once per `every` ms unless forced. */
  purge(force = false, every = Math.min(this.ttlMs, 60_000)): number {
    const now = this.now();
    if (!force && now - this.lastPurge < every) return 0;
    this.lastPurge = now;
    let n = 0;
    for (const c of [...this.calls.values()]) {
      if (now - c.lastSeen > this.ttlMs) {
        this.end(c.callid);
        n++;
      }
    }
    return n;
  }

  private dec(c: LiveCall): void {
    const k = key(c.flow, c.version);
    const n = (this.counts.get(k) ?? 1) - 1;
    if (n <= 0) this.counts.delete(k);
    else this.counts.set(k, n);
  }

  private statsOf(flow: string, version: string): VersionStats {
    const k = key(flow, version);
    let s = this.stats.get(k);
    if (!s) this.stats.set(k, (s = { calls: 0, errors: 0 }));
    return s;
  }
}
