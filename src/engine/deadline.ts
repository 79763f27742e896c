/**
 * The reply deadline: every request is answered before it. One timer serves every pending
 * request: deadlines are all the same length, so they expire in arrival order and the timer
 * only ever waits for the oldest.
 */

interface Pending {
  at: number;
  fire(): void;
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

  /** Answers with the work, or with `late()` if the work is not done by the deadline. */
  race<T>(r: Race<T>): Promise<T> {
    return new Promise<T>((resolve) => {
      let done = false;
      const entry: Pending = {
        at: this.clock() + this.ms,
        fire: () => {
          if (done) return;
          done = true;
          void r.late().then(resolve);
        },
      };
      this.add(entry);
      r.work.then(
        (answer) => {
          this.pending.delete(entry);
          if (done) return;
          done = true;
          resolve(answer);
        },
        (err: unknown) => {
          this.pending.delete(entry);
          if (done) return r.failedLate(err);
          done = true;
          resolve(r.failed(err));
        },
      );
    });
  }

  /** Stops the timer (the server closes). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private add(p: Pending): void {
    this.pending.add(p);
    if (!this.timer) this.schedule(p.at);
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
      p.fire();
    }
  }
}
