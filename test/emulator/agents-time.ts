/**
 * Time that a test drives, for real-time calls (agents tests): the emulator's clock and sleep are this object's;
 * a sleep ends when the test moves the clock past its end. `drive` runs every live call to its end as a discrete
 * event simulation: it waits until each live call is asleep (the customer server answered), then moves the clock
 * to the earliest wake-up, and again. No real time is guessed: each wait is for a condition, with a bound.
 */
import type { Emulator } from '../../src/emulator/server.js';
import type { Clock, Sleep } from '../../src/emulator/time.js';

export const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);

interface Timer {
  at: number;
  wake: () => void;
}

export interface ManualTime {
  clock: Clock;
  sleep: Sleep;
  /** Every sleep asked, in ms, in order. */
  asked: number[];
  /** Sleeps not over yet. */
  pending(): number;
  /** Moves the clock to the earliest pending sleep's end and wakes those due; false when none is pending. */
  next(): boolean;
}

export function manualTime(start = T0): ManualTime {
  let now = start;
  const timers: Timer[] = [];
  const asked: number[] = [];
  return {
    clock: { now: () => now },
    sleep: (ms) =>
      new Promise<void>((wake) => {
        asked.push(ms);
        timers.push({ at: now + Math.max(0, ms), wake });
      }),
    asked,
    pending: () => timers.length,
    next() {
      if (timers.length === 0) return false;
      now = Math.min(...timers.map((t) => t.at));
      for (let i = timers.length - 1; i >= 0; i--) {
        if (timers[i]!.at <= now) {
          timers[i]!.wake();
          timers.splice(i, 1);
        }
      }
      return true;
    },
  };
}

/** Waits (real time, polled) for `ok`, at most `boundMs`; throws with `what` past it. */
export async function until(ok: () => boolean, what: string, boundMs = 10_000): Promise<void> {
  const end = performance.now() + boundMs;
  while (!ok()) {
    if (performance.now() > end) throw new Error(`not reached within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Every live call asleep (none is waiting for the customer server). */
export function settled(emu: Emulator, time: ManualTime): Promise<void> {
  return until(() => time.pending() === emu.ctx.live.size, 'every live call asleep');
}

/**
 * Runs the live calls to their end, `onStep` called each time they are all asleep (before the clock moves); the
 * steps taken. `maxSteps` bounds a test that would never end.
 */
export async function drive(
  emu: Emulator,
  time: ManualTime,
  onStep: () => void = () => undefined,
  maxSteps = 10_000,
): Promise<number> {
  for (let step = 0; step < maxSteps; step++) {
    await settled(emu, time);
    if (emu.ctx.live.size === 0) {
      await Promise.allSettled([...emu.ctx.background]);
      return step;
    }
    onStep();
    time.next();
  }
  throw new Error(`the calls did not end within ${maxSteps} steps`);
}
