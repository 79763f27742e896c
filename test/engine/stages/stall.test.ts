/** Waiting for a stalled store (src/engine/stall.ts): up to the limit, then failed; unsent while a stall lasts. */
import { describe, expect, it } from 'vitest';
import { StallGuard } from '../../../src/engine/stall.js';
import type { SnapshotStore } from '../../../src/engine/ports.js';
import { deferred, fakeClock } from './fake-clock.js';

const { clock, advance } = fakeClock();

/** How a guarded call came out, once it has: its value, or its error's code and message. */
function outcome<T>(p: Promise<T>): { current?: string } {
  const o: { current?: string } = {};
  p.then(
    (v) => (o.current = `ok ${String(v)}`),
    (e: { code?: string; message: string }) => (o.current = `${e.code ?? 'Error'} ${e.message}`),
  );
  return o;
}

describe('StallGuard', () => {
  it('waits for a call up to the limit: its value, or its own failure, as it comes', async () => {
    const g = new StallGuard(1000, clock);
    const slow = deferred<string>();
    const failing = deferred<string>();
    const a = outcome(g.run(() => slow.promise));
    const b = outcome(g.run(() => failing.promise));
    await advance(999);
    expect([a.current, b.current]).toEqual([undefined, undefined]);
    expect(g.stalledFor()).toBe(999);
    slow.resolve('value');
    failing.reject(Object.assign(new Error('Redis: Connection is closed.'), { code: 'STORE_UNAVAILABLE' }));
    await advance(0);
    expect([a.current, b.current]).toEqual(['ok value', 'STORE_UNAVAILABLE Redis: Connection is closed.']);
    expect(g.stalledFor()).toBe(0);
    g.close();
  });

  it('past the limit: failed STORE_UNAVAILABLE; its answer coming later changes nothing', async () => {
    const g = new StallGuard(1000, clock);
    const stuck = deferred<string>();
    const a = outcome(g.run(() => stuck.promise));
    await advance(400);
    const later = deferred<string>();
    const b = outcome(g.run(() => later.promise));
    await advance(600);
    expect([a.current, b.current]).toEqual(['STORE_UNAVAILABLE stalled: no answer for 1000 ms', undefined]);
    await advance(400);
    expect(b.current).toBe('STORE_UNAVAILABLE stalled: no answer for 1000 ms');
    stuck.resolve('too late');
    later.resolve('too late');
    await advance(0);
    expect([a.current, b.current]).toEqual([
      'STORE_UNAVAILABLE stalled: no answer for 1000 ms',
      'STORE_UNAVAILABLE stalled: no answer for 1000 ms',
    ]);
    g.close();
  });

  it('while a call has gone unanswered for the limit, new ones fail at once, unsent; sent once it is', async () => {
    const g = new StallGuard(1000, clock);
    const stuck = deferred<string>();
    void g.run(() => stuck.promise).catch(() => undefined);
    await advance(1000);
    let sent = 0;
    const op = () => {
      sent++;
      return Promise.resolve('fresh');
    };
    const refused = outcome(g.run(op));
    await advance(250);
    const again = outcome(g.run(op));
    await advance(0);
    expect([refused.current, again.current, sent]).toEqual([
      'STORE_UNAVAILABLE stalled: no answer for 1000 ms',
      'STORE_UNAVAILABLE stalled: no answer for 1250 ms',
      0,
    ]);
    // the store answers the call given up on (or fails it): the stall is over
    stuck.reject(new Error('Redis: Connection is closed.'));
    await advance(0);
    expect(g.stalledFor()).toBe(0);
    const served = outcome(g.run(op));
    await advance(0);
    expect([served.current, sent]).toEqual(['ok fresh', 1]);
    g.close();
  });

  it("guards a store's loads and commits; a fallback's note is sent whatever, unguarded", async () => {
    const g = new StallGuard(1000, clock);
    const stuck = deferred<{ call?: { value: string; rev: number } }>();
    const sent: string[] = [];
    const store: SnapshotStore = {
      load: (callid) => {
        sent.push(`load ${callid}`);
        return stuck.promise;
      },
      commit: async (callid, rev) => {
        sent.push(`commit ${callid} ${rev}`);
        return 2;
      },
      setAside: async (callid, aside) => void sent.push(`aside ${callid} ${aside}`),
      revisions: async (ids) => ids.map(() => 1),
    };
    const s = g.wrap(store);
    void s.load('c1').catch(() => undefined);
    await advance(1000);
    const commit = outcome(s.commit('c1', 1, 'v', 60_000));
    await s.setAside('c1', 'note', 60_000);
    expect(await s.revisions!(['c1', 'c2'])).toEqual([1, 1]);
    await advance(0);
    expect(commit.current).toBe('STORE_UNAVAILABLE stalled: no answer for 1000 ms');
    expect(sent).toEqual(['load c1', 'aside c1 note']);
    g.close();
  });
});
