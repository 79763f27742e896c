/**
 * The live calls, as the HTTP layer sees them: which flow version and step each call is
 * at, and per version how many calls started there and how many errors they met. A call
 * enters on its first reply and leaves when its state is dropped (or after `ttlMs` with no
 * request, like the store's snapshot). The registry asks it which versions are still in use.
 *
 * With a shared store, the requests of one call may go to several instances or workers, and
 * its end to any of them: a call this process answered but that went on (or ended)
 * elsewhere leaves through `settle`, once the store shows a later revision than the one
 * committed here (src/engine/live-check.ts asks the store about the calls idle here). A call
 * is then counted live by the process that answered its latest request.
 */
export interface LiveCall {
  callid: string;
  flow: string;
  version: string;
  step: string;
  /** Epoch ms of the call's last request. */
  lastSeen: number;
  /** The store's revision of the call as this process last committed it (absent before its first commit). */
  rev?: number;
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

  /** Sets (or moves) a call, with the revision this process committed it at (when it did). */
  set(callid: string, flow: string, version: string, step: string, rev?: number): void {
    const prev = this.calls.get(callid);
    if (prev && prev.flow === flow && prev.version === version) {
      // Each request of a call lands here: the record is updated in place, so a live call
      // keeps one record and one callid string (the map's key), not one per request.
      prev.step = step;
      prev.lastSeen = this.now();
      if (rev !== undefined) prev.rev = rev;
      return;
    }
    if (prev) this.dec(prev);
    this.calls.set(callid, {
      callid,
      flow,
      version,
      step,
      lastSeen: this.now(),
      ...(rev !== undefined ? { rev } : {}),
    });
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

  /** Calls with no request here since `since` (epoch ms) whose revision is known: [callid, rev]. */
  *idleSince(since: number): Iterable<[string, number]> {
    for (const c of this.calls.values()) if (c.lastSeen < since && c.rev !== undefined) yield [c.callid, c.rev];
  }

  /**
   * The store holds the call at `storeRev` (undefined: not at all): when that is not the
   * revision this process committed (`rev`, still its latest), another instance or worker
   * answered it since (or ended it, or it expired), so it is not live here any more.
   * Returns true when the call was forgotten.
   */
  settle(callid: string, rev: number, storeRev: number | undefined): boolean {
    const c = this.calls.get(callid);
    if (!c || c.rev !== rev || storeRev === rev) return false;
    this.end(callid);
    return true;
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
