/**
 * Time as the campaign sees it: the scheduler reads the time and sleeps only through this,
 * so its tests drive a fake clock (test/campaign/fake-clock.ts) and assert no timing.
 */
export interface Clock {
  /** epoch ms */
  now(): number;
  /** Resolves after ms (at once when ms <= 0); rejects with the signal's reason when it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Work the scheduler waits for that takes no time of this clock (reading the CSV): a fake
   * clock does not move while it is pending, so what happens is the same on a slow disk.
   */
  io?<T>(work: Promise<T>): Promise<T>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = () => {
        signal?.removeEventListener('abort', abort);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      const abort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', abort, { once: true });
    }),
};
