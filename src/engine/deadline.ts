/**
 * The reply deadline: every request is answered before it. One timer serves every pending
 * request: deadlines are all the same length, so they expire in arrival order and the timer
 * only ever waits for the oldest. A request answered at once (its step waited for nothing:
 * src/engine/maybe.ts) never starts one; one answered in time costs an entry in a Set, added
 * and deleted, and no timer of its own.
 */

/** A request's deadline, while it runs. */
export interface Pending {
  readonly at: number;
  /** Called at the deadline, unless the request was done before it. */
  readonly late: () => void;
}

export interface Race<T> {
  /** The request's work: its answer, if it comes in time. */
  work: Promise<T>;
  /** At the deadline, while the work goes on: the answer instead (the fallback). */
  late(): Promise<T>;
  /** The work failed before the deadline: the answer instead. */
  failed(err: unknown): T;
  /** The work failed after the deadline (the fallback was answered): told, nothing to answer. */
  failedLate(err: unknown): void;
}

export class DeadlineTimer {
  private readonly pending = new Set<Pending>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly ms: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** A request starts: `late` is called at its deadline, unless `done` came first. */
  start(late: () => void): Pending {
    const p: Pending = { at: this.clock() + this.ms, late };
    this.pending.add(p);
    if (!this.timer) this.schedule(p.at);
    return p;
  }

  /** The request's work is done: true when in time (its deadline is off), false when `late` was called. */
  done(p: Pending): boolean {
    return this.pending.delete(p);
  }

  /** Answers with the work, or with `late()` if the work is not done by the deadline. */
  race<T>(r: Race<T>): Promise<T> {
    return new Promise<T>((resolve) => {
      const p = this.start(() => void r.late().then(resolve));
      r.work.then(
        (answer) => {
          if (this.done(p)) resolve(answer);
        },
        (err: unknown) => {
          if (this.done(p)) resolve(r.failed(err));
          else r.failedLate(err);
        },
      );
    });
  }

  /** Stops the timer (the server closes). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(at: number): void {
    this.timer = setTimeout(() => this.sweep(), Math.max(1, Math.ceil(at - this.clock())));
    this.timer.unref?.();
  }

  /** Fires every pending request whose deadline has come (they expire in arrival order). */
  private sweep(): void {
    this.timer = undefined;
    const now = this.clock();
    for (const p of this.pending) {
      if (p.at > now) {
        this.schedule(p.at);
        return;
      }
      this.pending.delete(p);
      p.late();
    }
  }
}
