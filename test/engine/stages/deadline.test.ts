/** The reply deadline (src/engine/deadline.ts): one timer, the work or the fallback, failures either side. */
import { describe, expect, it, vi } from 'vitest';
import { DeadlineTimer } from '../../../src/engine/deadline.js';
import { deferred, fakeClock } from './fake-clock.js';

const { clock, advance } = fakeClock();

describe('DeadlineTimer', () => {
  it('answers with the work when it comes in time, and the fallback when it does not (the work going on)', async () => {
    const t = new DeadlineTimer(100, clock);
    const fast = deferred<string>();
    const slow = deferred<string>();
    const lateFailures: unknown[] = [];
    const race = (work: Promise<string>) =>
      t.race({ work, late: async () => 'fallback', failed: () => 'failed', failedLate: (e) => lateFailures.push(e) });
    const a = race(fast.promise);
    const b = race(slow.promise);
    fast.resolve('reply');
    expect(await a).toBe('reply');
    await advance(99);
    let bAnswer: string | undefined;
    void b.then((x) => (bAnswer = x));
    await Promise.resolve();
    expect(bAnswer).toBeUndefined();
    await advance(1);
    expect(await b).toBe('fallback');
    slow.resolve('late reply'); // lands after the fallback: nothing more to answer, nothing told
    await vi.advanceTimersByTimeAsync(0);
    expect(lateFailures).toEqual([]);
    t.close();
  });

  it('a failure before the deadline is answered; after it, it is told and not answered', async () => {
    const t = new DeadlineTimer(100, clock);
    const early = deferred<string>();
    const late = deferred<string>();
    const told: unknown[] = [];
    const race = (work: Promise<string>) =>
      t.race({
        work,
        late: async () => 'fallback',
        failed: (e) => `failed: ${(e as Error).message}`,
        failedLate: (e) => told.push((e as Error).message),
      });
    const a = race(early.promise);
    const b = race(late.promise);
    early.reject(new Error('store down'));
    expect(await a).toBe('failed: store down');
    await advance(100);
    expect(await b).toBe('fallback');
    late.reject(new Error('boom'));
    await vi.advanceTimersByTimeAsync(0);
    expect(told).toEqual(['boom']);
    t.close();
  });

  it('serves every pending request with one timer, in arrival order', async () => {
    const t = new DeadlineTimer(100, clock);
    const order: string[] = [];
    const never = new Promise<string>(() => {});
    const race = (name: string) =>
      t
        .race({ work: never, late: async () => name, failed: () => '', failedLate: () => {} })
        .then((x) => order.push(x));
    void race('a');
    await advance(30);
    void race('b');
    await advance(30);
    void race('c');
    expect(vi.getTimerCount()).toBe(1);
    await advance(40); // a's deadline
    expect(order).toEqual(['a']);
    await advance(60); // b's and c's
    expect(order).toEqual(['a', 'b', 'c']);
    expect(vi.getTimerCount()).toBe(0);
    t.close();
  });
});
