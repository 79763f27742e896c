/**
 * A clock to inject and vitest's fake timers, moved on together (registered for the file's tests), and a promise
 * settled from outside: for the stages that time things (the deadline, the stall guard).
 */
import { afterEach, beforeEach, vi } from 'vitest';

export function fakeClock(): { clock: () => number; advance: (ms: number) => Promise<void> } {
  let now = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    now = 0;
  });
  afterEach(() => vi.useRealTimers());
  return {
    clock: () => now,
    /** Moves both the injected clock and the fake timers on. */
    advance: async (ms: number) => {
      now += ms;
      await vi.advanceTimersByTimeAsync(ms);
    },
  };
}

export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
