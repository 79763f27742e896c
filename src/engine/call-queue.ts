/**
 * Requests of one callid run one at a time in this process: a second request of a call that
 * arrives while the first runs waits for it (the service retries a request it thinks lost,
 * and a copy must see the first one's result). The queue of a call exists only while one of
 * its requests runs: calls that never overlap cost one map lookup, and a request answered at
 * once (its step waited for nothing: src/engine/maybe.ts) never enters it.
 */
export class CallQueue {
  /** The work of each call's last request that has not settled yet. */
  private readonly running = new Map<string, Promise<unknown>>();

  /** Runs `fn` after the requests of `callid` queued before it (whether they succeeded or not). */
  run<T>(callid: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.running.get(callid);
    const run = prev ? prev.then(fn, fn) : fn();
    this.enter(callid, run);
    const leave = () => this.leave(callid, run);
    run.then(leave, leave);
    return run;
  }

  /** What a new request of `callid` waits for: the work of the call's last request (undefined: none running). */
  last(callid: string): Promise<unknown> | undefined {
    return this.running.get(callid);
  }

  /** `work` is the call's last request now: the next one waits for it. Its owner calls `leave` once it settles. */
  enter(callid: string, work: Promise<unknown>): void {
    this.running.set(callid, work);
  }

  /** `work` settled: the call leaves the queue, unless a request came after it. */
  leave(callid: string, work: Promise<unknown>): void {
    if (this.running.get(callid) === work) this.running.delete(callid);
  }

  /** A request of the call is running or waiting here. */
  has(callid: string): boolean {
    return this.running.has(callid);
  }
}
