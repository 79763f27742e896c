/**
 * Requests of one callid run one at a time in this process: a second request of a call that
 * arrives while the first runs waits for it (the service retries a request it thinks lost,
 * and a copy must see the first one's result). The queue of a call exists only while one of
 * its requests runs: calls that never overlap cost one map lookup.
 */
export class CallQueue {
  /** The tail of each call's queue: settles when its last request is done. */
  private readonly running = new Map<string, Promise<unknown>>();

  /** Runs `fn` after the requests of `callid` queued before it (whether they succeeded or not). */
  run<T>(callid: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.running.get(callid);
    const run = prev ? prev.then(fn, fn) : fn();
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(callid, tail);
    void tail.then(() => {
      if (this.running.get(callid) === tail) this.running.delete(callid);
    });
    return run;
  }

  /** A request of the call is running or waiting here. */
  has(callid: string): boolean {
    return this.running.has(callid);
  }
}
