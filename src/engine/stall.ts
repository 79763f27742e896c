/**
 * Riding a stalled store. A call store that is slow to answer (Redis paused or overloaded, a network stall) is waited
 * for, not given up on after a fixed command timeout: a request whose store answers before the deadline gets its
 * reply; past the deadline it gets the fallback (src/engine/call.ts) while its step goes on, applied when the store
 * answers, and the fallback's report, queued after it, finds it done. The wait is bounded by `limitMs`, what the
 * fallback covers: the request's deadline, the fallback's wait (a second) and the deadline of its report:
 * - a load or commit not answered within limitMs fails, STORE_UNAVAILABLE (its request already has the fallback: the
 *   failure is logged, the call stays where it was);
 * - while one has gone unanswered that long, new ones fail at once, unsent: the store is not coming back soon, and the
 *   requests not yet answered get 503 STORE_UNAVAILABLE, as when it is down. A call given up on stays counted until
 *   the store answers it (or fails it): the stall is over when it does.
 * The fallback's note (setAside) is not guarded: it is sent whatever (it lands when the store comes back, ahead of
 * the loads sent after it) and the fallback does not wait for it long.
 */
import type { SnapshotStore } from './ports.js';

/** A store call given up on. */
export class StoreStalled extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(ms: number) {
    super(`stalled: no answer for ${Math.round(ms)} ms`);
  }
}

/** A store call sent and not answered yet: when it was sent, and how to fail it. */
interface Unanswered {
  at: number;
  fail: (err: Error) => void;
}

/**
 * One promise per call and one timer for them all (calls are given up on in the order they were sent, so the timer
 * only ever waits for the oldest not given up on): this sits on every request's path.
 */
export class StallGuard {
  /** The store calls not answered yet (those given up on included), oldest first. */
  private readonly unanswered = new Set<Unanswered>();
  /** Those not given up on yet, oldest first: what the timer waits for. */
  private readonly waiting = new Set<Unanswered>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly limitMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The store, its loads and commits guarded (those it answers at once, loadSync and commitSync, need not be). */
  wrap(store: SnapshotStore): SnapshotStore {
    const guarded: SnapshotStore = {
      load: (callid, keepAside) => this.run(() => store.load(callid, keepAside)),
      commit: (callid, rev, value, ttlMs) => this.run(() => store.commit(callid, rev, value, ttlMs)),
      setAside: (callid, aside, ttlMs) => store.setAside(callid, aside, ttlMs),
    };
    if (store.revisions) guarded.revisions = store.revisions.bind(store);
    // what a store answers at once cannot stall: not guarded
    if (store.loadSync) guarded.loadSync = store.loadSync.bind(store);
    if (store.commitSync) guarded.commitSync = store.commitSync.bind(store);
    return guarded;
  }

  /** For how long the store has left a call unanswered (0: none pending). */
  stalledFor(): number {
    const oldest = this.unanswered.values().next();
    return oldest.done ? 0 : this.clock() - oldest.value.at;
  }

  /** `op`, waited for up to limitMs; failed at once while the store has left another unanswered that long. */
  run<T>(op: () => Promise<T>): Promise<T> {
    const stalled = this.stalledFor();
    if (stalled >= this.limitMs) return Promise.reject(new StoreStalled(stalled));
    let work: Promise<T>;
    try {
      work = op();
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => {
      const sent: Unanswered = { at: this.clock(), fail: reject };
      this.unanswered.add(sent);
      this.waiting.add(sent);
      if (!this.timer) this.schedule(sent.at);
      work.then(
        (value) => {
          this.answered(sent);
          resolve(value);
        },
        (err: unknown) => {
          this.answered(sent);
          reject(err);
        },
      );
    });
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private answered(u: Unanswered): void {
    this.unanswered.delete(u);
    this.waiting.delete(u);
  }

  private schedule(sentAt: number): void {
    this.timer = setTimeout(() => this.sweep(), Math.max(1, Math.ceil(sentAt + this.limitMs - this.clock())));
    this.timer.unref?.();
  }

  /** Fails every call unanswered for limitMs (kept counted until the store answers it); waits for the next one. */
  private sweep(): void {
    this.timer = undefined;
    const now = this.clock();
    for (const u of this.waiting) {
      if (u.at + this.limitMs > now) {
        this.schedule(u.at);
        return;
      }
      this.waiting.delete(u);
      u.fail(new StoreStalled(this.limitMs));
    }
  }
}
