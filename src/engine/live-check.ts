/**
 * Live calls that went on elsewhere. With a shared store (Redis), the service may send a
 * call's requests to any instance or worker, and its end to any of them: the process that
 * answered a request counts the call live (src/registry/live.ts) but never hears of the
 * requests other processes answer. So, now and then, the calls idle here are checked
 * against the store: one whose stored revision is no longer the one this process committed
 * was answered, ended or dropped elsewhere, and leaves this process's count. A call is thus
 * counted by the process that answered its latest request; the figures summed over the
 * processes (metrics, health) are the calls live, within a check's interval.
 *
 * Off the request path: one read of a revision per idle call, in batches, at most every
 * `intervalMs`; a call with a request running here is left alone.
 */

/** What the check reads of the store: each call's committed revision (undefined: none). */
export interface RevisionReader {
  revisions(callids: readonly string[]): Promise<(number | undefined)[]>;
}

/** What it reads and changes of the live-call bookkeeping. */
export interface SettlingLive {
  idleSince(since: number): Iterable<[string, number]>;
  settle(callid: string, rev: number, storeRev: number | undefined): boolean;
}

/** Calls read from the store in one batch. */
export const LIVE_CHECK_BATCH = 500;
/** Calls checked in one run at most (the rest wait for the next run). */
export const LIVE_CHECK_MAX = 20_000;

/**
 * Forgets the calls idle here since `since` (epoch ms) that the store shows answered, ended or
 * expired elsewhere; `busy` calls (a request of theirs running here) are skipped. Returns how
 * many calls were forgotten. Rejects when the store does (nothing is forgotten then).
 */
export async function settleIdleCalls(
  live: SettlingLive,
  store: RevisionReader,
  since: number,
  busy: (callid: string) => boolean,
  max = LIVE_CHECK_MAX,
): Promise<number> {
  const idle: [string, number][] = [];
  for (const entry of live.idleSince(since)) {
    if (busy(entry[0])) continue;
    idle.push(entry);
    if (idle.length >= max) break;
  }
  let forgotten = 0;
  for (let i = 0; i < idle.length; i += LIVE_CHECK_BATCH) {
    const batch = idle.slice(i, i + LIVE_CHECK_BATCH);
    const revs = await store.revisions(batch.map(([callid]) => callid));
    batch.forEach(([callid, rev], j) => {
      // a request that started meanwhile commits a revision of its own: settle compares with it
      if (!busy(callid) && live.settle(callid, rev, revs[j])) forgotten++;
    });
  }
  return forgotten;
}

/** The bookkeeping the keeper sweeps and settles (src/registry/live.ts). */
export interface KeptLive extends Partial<SettlingLive> {
  /** Forgets calls idle past their TTL; the number forgotten. */
  purge(): number;
}

export interface LiveKeeperOptions {
  /** How often calls idle past their TTL leave the bookkeeping. */
  sweepMs: number;
  /**
   * With a store other processes share: how often the calls idle here that long are checked against it, and leave
   * when answered or ended elsewhere. Absent: no check (one process sees every request).
   */
  checkMs?: number;
  now?: () => number;
}

/**
 * Keeps the live-call bookkeeping true off the request path, on timers: forgets calls idle
 * past their TTL (a lost HANGUP), and, with a shared store, the calls answered or ended by
 * another process. `release` lets versions no live call uses go; `busy` says a request of
 * the call is running here.
 */
export class LiveKeeper {
  private readonly sweep: NodeJS.Timeout;
  private readonly checker: NodeJS.Timeout | undefined;
  private checking = false;
  private readonly now: () => number;

  constructor(
    private readonly live: KeptLive,
    private readonly store: Partial<RevisionReader>,
    private readonly release: () => void,
    private readonly busy: (callid: string) => boolean,
    o: LiveKeeperOptions,
  ) {
    this.now = o.now ?? Date.now;
    this.sweep = setInterval(() => this.purge(), o.sweepMs);
    this.sweep.unref?.();
    const every = o.checkMs;
    if (every !== undefined && store.revisions) {
      this.checker = setInterval(() => void this.check(every), every);
      this.checker.unref?.();
    }
  }

  /** Forgets calls idle past their TTL and releases the versions no call uses any more. */
  purge(): void {
    if (this.live.purge() > 0) this.release();
  }

  /**
   * Forgets the calls idle here for `idleMs` that were answered, ended or dropped elsewhere (a shared store); the
   * number forgotten. A failing store is tried again next time.
   */
  async check(idleMs: number): Promise<number> {
    const { live, store } = this;
    if (this.checking || !store.revisions || !live.idleSince || !live.settle) return 0;
    this.checking = true;
    try {
      const n = await settleIdleCalls(live as SettlingLive, store as RevisionReader, this.now() - idleMs, this.busy);
      if (n > 0) this.release();
      return n;
    } catch {
      return 0;
    } finally {
      this.checking = false;
    }
  }

  close(): void {
    clearInterval(this.sweep);
    if (this.checker) clearInterval(this.checker);
  }
}
