/** Wakes the scheduler's loop: a call ended, a stop, an error. A wake with no one waiting is kept for the next wait. */
export class Waker {
  private resolve: (() => void) | undefined;
  private promise: Promise<void> | undefined;
  private pending = false;

  wait(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    this.promise ??= new Promise((r) => (this.resolve = r));
    return this.promise;
  }

  wake(): void {
    const r = this.resolve;
    if (!r) {
      this.pending = true;
      return;
    }
    this.resolve = undefined;
    this.promise = undefined;
    r();
  }
}
