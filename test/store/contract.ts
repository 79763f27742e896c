/** The CallStore contract: one suite run against every store (memory, Redis). */
import { describe, expect, it } from 'vitest';
import { hasSmsStatus, type CallStore, type SmsStatusStore } from '../../src/store/types.js';

export interface StoreUnderTest {
  store: CallStore;
  /** Lets `ms` pass for the store's expiry (a fake clock, or real time). */
  advance: (ms: number) => Promise<void> | void;
}

export function storeContract(name: string, make: () => Promise<StoreUnderTest>, opts: { skip?: string } = {}): void {
  const d = opts.skip ? describe.skip : describe;
  d(`CallStore contract: ${name}${opts.skip ? ` (skipped: ${opts.skip})` : ''}`, () => {
    it('returns what was set, undefined for unknown calls', async () => {
      const { store } = await make();
      expect(await store.get('1')).toBeUndefined();
      expect(await store.load('1')).toEqual({});
      await store.set('18446744073709551615', '{"a":1}', 60_000);
      expect(await store.get('18446744073709551615')).toBe('{"a":1}');
      expect(await store.get('1844674407370955161')).toBeUndefined();
      await store.close();
    });

    it('overwrites, deletes and counts', async () => {
      const { store } = await make();
      await store.set('1', 'a', 60_000);
      await store.set('2', 'b', 60_000);
      await store.set('1', 'c', 60_000);
      expect(await store.size()).toBe(2);
      expect(await store.get('1')).toBe('c');
      await store.delete('1');
      await store.delete('404');
      expect(await store.get('1')).toBeUndefined();
      expect(await store.size()).toBe(1);
      await store.close();
    });

    it('forgets a call after its ttl without writes', async () => {
      const { store, advance } = await make();
      await store.set('1', 'a', 300);
      await advance(150);
      expect(await store.get('1')).toBe('a');
      await store.set('1', 'b', 300);
      await advance(150);
      expect(await store.get('1')).toBe('b');
      await advance(250);
      expect(await store.get('1')).toBeUndefined();
      await store.close();
    });

    it(
      'commit is a compare-and-set on the revision: the first commit of a call expects none, each commit ' +
        'expects the last',
      async () => {
        const { store } = await make();
        expect(await store.commit('7', 3, 'x', 60_000)).toBeUndefined(); // no record: only `undefined` matches
        expect(await store.commit('7', undefined, 'a', 60_000)).toBe(1);
        expect(await store.commit('7', undefined, 'b', 60_000)).toBeUndefined();
        expect(await store.load('7')).toEqual({ call: { value: 'a', rev: 1 } });
        expect(await store.commit('7', 1, 'c', 60_000)).toBe(2);
        expect(await store.commit('7', 1, 'd', 60_000)).toBeUndefined(); // stale revision: nothing written
        expect(await store.load('7')).toEqual({ call: { value: 'c', rev: 2 } });
        await store.close();
      },
    );

    it(
      "revisions: each call's committed revision, in order; none for an unknown call, an aside alone or an " +
        'expired call',
      async () => {
        const { store, advance } = await make();
        expect(await store.revisions!([])).toEqual([]);
        expect(await store.commit('21', undefined, 'a', 60_000)).toBe(1);
        expect(await store.commit('21', 1, 'b', 60_000)).toBe(2);
        expect(await store.commit('18446744073709551615', undefined, 'x', 300)).toBe(1);
        await store.setAside('23', 'only an aside', 60_000);
        expect(await store.revisions!(['21', '404', '18446744073709551615', '23', '21'])).toEqual([
          2,
          undefined,
          1,
          undefined,
          2,
        ]);
        await advance(600);
        expect(await store.revisions!(['18446744073709551615', '21'])).toEqual([undefined, 2]);
        await store.close();
      },
    );

    it('of concurrent commits on one revision, exactly one wins', async () => {
      const { store } = await make();
      expect(await store.commit('9', undefined, 'start', 60_000)).toBe(1);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.commit('9', 1, `v${i}`, 60_000)));
      const winners = results.map((r, i) => [r, i] as const).filter(([r]) => r !== undefined);
      expect(winners.length).toBe(1);
      expect(winners[0]![0]).toBe(2);
      expect(await store.get('9')).toBe(`v${winners[0]![1]}`);
      // concurrent first commits of a new call: one wins too
      const first = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.commit('10', undefined, `n${i}`, 60_000)),
      );
      expect(first.filter((r) => r !== undefined)).toEqual([1]);
      await store.close();
    });

    it('an aside is taken by the next load, kept across commits, and may come before any commit', async () => {
      const { store } = await make();
      await store.setAside('11', 'fallback', 60_000);
      expect(await store.load('11')).toEqual({ aside: 'fallback' });
      expect(await store.load('11')).toEqual({});
      expect(await store.commit('11', undefined, 'a', 60_000)).toBe(1);
      await store.setAside('11', 'again', 60_000);
      expect(await store.commit('11', 1, 'b', 60_000)).toBe(2);
      expect(await store.get('11')).toBe('b'); // get does not take it
      expect(await store.load('11')).toEqual({ call: { value: 'b', rev: 2 }, aside: 'again' });
      expect(await store.load('11')).toEqual({ call: { value: 'b', rev: 2 } });
      expect(await store.size()).toBe(1);
      await store.close();
    });

    it('an aside alone expires with its ttl', async () => {
      const { store, advance } = await make();
      await store.setAside('12', 'fb', 200);
      await advance(300);
      expect(await store.load('12')).toEqual({});
      await store.close();
    });

    it('load may leave the aside in place (keepAside): the next load still takes it', async () => {
      const { store } = await make();
      expect(await store.commit('13', undefined, 'a', 60_000)).toBe(1);
      await store.setAside('13', 'fb', 60_000);
      expect(await store.load('13', true)).toEqual({ call: { value: 'a', rev: 1 }, aside: 'fb' });
      expect(await store.load('13')).toEqual({ call: { value: 'a', rev: 1 }, aside: 'fb' });
      expect(await store.load('13')).toEqual({ call: { value: 'a', rev: 1 } });
      await store.close();
    });

    it('loadSync and commitSync, where a store has them, are load and commit answered at once', async (ctx) => {
      const { store, advance } = await make();
      const { loadSync, commitSync } = store;
      if (!loadSync || !commitSync) {
        await store.close();
        return ctx.skip();
      }
      const load = (callid: string, keep?: boolean) => loadSync.call(store, callid, keep);
      const commit = (callid: string, rev: number | undefined, v: string, ttl = 60_000) =>
        commitSync.call(store, callid, rev, v, ttl);
      expect(load('31')).toEqual({});
      expect(commit('31', 3, 'x')).toBeUndefined();
      expect(commit('31', undefined, 'a')).toBe(1);
      expect(commit('31', undefined, 'b')).toBeUndefined();
      expect(await store.commit('31', 1, 'c', 60_000)).toBe(2); // one record, whichever way it is reached
      expect(commit('31', 1, 'd')).toBeUndefined();
      expect(load('31')).toEqual({ call: { value: 'c', rev: 2 } });
      await store.setAside('31', 'fb', 60_000);
      expect(commit('31', 2, 'e')).toBe(3); // the aside is kept across commits
      expect(load('31', true)).toEqual({ call: { value: 'e', rev: 3 }, aside: 'fb' });
      expect(await store.load('31')).toEqual({ call: { value: 'e', rev: 3 }, aside: 'fb' });
      expect(load('31')).toEqual({ call: { value: 'e', rev: 3 } });
      expect(await store.revisions!(['31'])).toEqual([3]);
      // an aside alone, then a first commit; a call expired starts again from no record
      await store.setAside('32', 'fb', 60_000);
      expect(load('32')).toEqual({ aside: 'fb' });
      expect(commit('32', undefined, 'a', 200)).toBe(1);
      await advance(300);
      expect(load('32')).toEqual({});
      expect(commit('32', 1, 'b')).toBeUndefined();
      expect(commit('32', undefined, 'b')).toBe(1);
      expect(await store.get('32')).toBe('b');
      await store.close();
    });

    it('a path keeps its last maxEntries entries in order, per call, and is dropped', async () => {
      const { store } = await make();
      expect(await store.readPath('20')).toEqual([]);
      for (let i = 1; i <= 7; i++) await store.appendPath('20', `e${i}`, 5, 60_000);
      await store.appendPath('21', 'other', 5, 60_000);
      expect(await store.readPath('20')).toEqual(['e3', 'e4', 'e5', 'e6', 'e7']);
      expect(await store.readPath('21')).toEqual(['other']);
      await store.dropPath('20');
      await store.dropPath('404');
      expect(await store.readPath('20')).toEqual([]);
      expect(await store.readPath('21')).toEqual(['other']);
      // a path is not a call
      expect(await store.get('21')).toBeUndefined();
      expect(await store.size()).toBe(0);
      expect((await store.listLive(undefined, 10)).values).toEqual([]);
      await store.close();
    });

    it(
      "appendPaths writes a batch of several calls' entries " + 'in order, each path kept to its last maxEntries',
      async () => {
        const { store } = await make();
        await store.appendPaths([], 3, 60_000);
        await store.appendPaths(
          [
            { callid: '40', entry: 'a1' },
            { callid: '41', entry: 'b1' },
            { callid: '40', entry: 'a2' },
            { callid: '40', entry: 'a3' },
            { callid: '40', entry: 'a4' },
            { callid: '41', entry: 'b2' },
          ],
          3,
          60_000,
        );
        expect(await store.readPath('40')).toEqual(['a2', 'a3', 'a4']);
        expect(await store.readPath('41')).toEqual(['b1', 'b2']);
        await store.close();
      },
    );

    it('a path expires ttlMs after its last append', async () => {
      const { store, advance } = await make();
      await store.appendPath('22', 'a', 10, 300);
      await advance(150);
      await store.appendPath('22', 'b', 10, 300);
      await advance(200);
      expect(await store.readPath('22')).toEqual(['a', 'b']);
      await advance(200);
      expect(await store.readPath('22')).toEqual([]);
      await store.close();
    });

    it(
      'finished records: newest first, paged; past keep the oldest go with their records; a callid added again ' +
        'moves to the front',
      async () => {
        const { store } = await make();
        expect(await store.listFinished(0, 10)).toEqual([]);
        for (let i = 1; i <= 6; i++) await store.addFinished(String(i), `r${i}`, 4, 60_000);
        expect(await store.listFinished(0, 10)).toEqual(['r6', 'r5', 'r4', 'r3']);
        expect(await store.listFinished(1, 2)).toEqual(['r5', 'r4']);
        expect(await store.listFinished(4, 2)).toEqual([]);
        expect(await store.getFinished('2')).toBeUndefined(); // trimmed: its record is gone too
        expect(await store.getFinished('3')).toBe('r3');
        await store.addFinished('3', 'r3b', 4, 60_000);
        expect(await store.listFinished(0, 10)).toEqual(['r3b', 'r6', 'r5', 'r4']);
        await store.addFinished('7', 'r7', 4, 60_000);
        expect(await store.listFinished(0, 10)).toEqual(['r7', 'r3b', 'r6', 'r5']);
        expect(await store.getFinished('4')).toBeUndefined();
        expect(await store.getFinished('404')).toBeUndefined();
        await store.close();
      },
    );

    it('finished records expire with their ttl, and leave the listing', async () => {
      const { store, advance } = await make();
      await store.addFinished('30', 'old', 10, 200);
      await advance(100);
      await store.addFinished('31', 'new', 10, 600);
      expect(await store.listFinished(0, 10)).toEqual(['new', 'old']);
      await advance(200);
      expect(await store.getFinished('30')).toBeUndefined();
      expect(await store.listFinished(0, 10)).toEqual(['new']);
      expect(await store.getFinished('31')).toBe('new');
      await store.close();
    });

    it('a path keeps its last entries within maxBytes (UTF-8; the newest always), the dropped counted', async () => {
      const { store } = await make();
      expect(await store.loadPath('50')).toEqual({ entries: [], dropped: 0 });
      const e = (c: string, n: number) => c.repeat(n);
      await store.appendPaths(
        [
          { callid: '50', entry: e('a', 40) },
          { callid: '50', entry: e('b', 40) },
          { callid: '50', entry: e('é', 20) }, // 40 bytes
        ],
        10,
        60_000,
        100,
      );
      expect(await store.loadPath('50')).toEqual({ entries: [e('b', 40), e('é', 20)], dropped: 1 });
      await store.appendPaths([{ callid: '50', entry: e('c', 500) }], 10, 60_000, 100);
      expect(await store.loadPath('50')).toEqual({ entries: [e('c', 500)], dropped: 3 });
      // past maxEntries too, counted the same way
      for (let i = 0; i < 5; i++) await store.appendPaths([{ callid: '50', entry: `x${i}` }], 2, 60_000, 100);
      expect(await store.loadPath('50')).toEqual({ entries: ['x3', 'x4'], dropped: 7 });
      expect(await store.readPath('50')).toEqual(['x3', 'x4']);
      await store.dropPath('50');
      expect(await store.loadPath('50')).toEqual({ entries: [], dropped: 0 });
      await store.appendPaths([{ callid: '50', entry: 'y' }], 2, 60_000, 100);
      expect(await store.loadPath('50')).toEqual({ entries: ['y'], dropped: 0 });
      await store.close();
    });

    it(
      "countPaths counts requests in a path's last entry: its last members, added then raised; bytes counted; no " +
        'path made',
      async () => {
        const { store } = await make();
        await store.appendPaths(
          [
            { callid: '51', entry: '{"at":1,"result":",\\"replays\\":5,\\"refused\\":5}"}' },
            { callid: '51', entry: '{"at":2,"effects":[]}' },
            { callid: '52', entry: 'not an object' },
            { callid: '53', entry: '{}' },
          ],
          10,
          60_000,
          1000,
        );
        await store.countPaths(
          [
            { callid: '51', replays: 1, refused: 0 },
            { callid: '52', replays: 1, refused: 1 },
            { callid: '53', replays: 0, refused: 2 },
            { callid: '54', replays: 3, refused: 3 },
          ],
          1000,
        );
        await store.countPaths([{ callid: '51', replays: 2, refused: 7 }], 1000);
        expect(await store.readPath('51')).toEqual([
          '{"at":1,"result":",\\"replays\\":5,\\"refused\\":5}"}',
          '{"at":2,"effects":[],"replays":3,"refused":7}',
        ]);
        expect(await store.readPath('52')).toEqual(['not an object']);
        expect(await store.readPath('53')).toEqual(['{"replays":0,"refused":2}']);
        expect(await store.loadPath('54')).toEqual({ entries: [], dropped: 0 });
        // the counts grow the entry: past maxBytes the oldest go
        const first = (await store.readPath('51'))[0]!;
        await store.countPaths([{ callid: '51', replays: 1000, refused: 0 }], first.length + 45);
        expect(await store.loadPath('51')).toEqual({
          entries: ['{"at":2,"effects":[],"replays":1003,"refused":7}'],
          dropped: 1,
        });
        await store.close();
      },
    );

    it('200 hostile requests on one path: counted in one entry; 200 appends of 2 KB stay within 8 KB', async () => {
      const { store } = await make();
      const entry = (i: number) => JSON.stringify({ at: i, result: 'R'.repeat(2000) });
      await store.appendPaths([{ callid: '55', entry: entry(0) }], 200, 60_000, 8192);
      for (let i = 0; i < 200; i++)
        await store.countPaths([{ callid: '55', replays: i % 2, refused: 1 - (i % 2) }], 8192);
      expect(await store.loadPath('55')).toEqual({
        entries: [`${entry(0).slice(0, -1)},"replays":100,"refused":100}`],
        dropped: 0,
      });
      await store.appendPaths(
        Array.from({ length: 200 }, (_, i) => ({ callid: '56', entry: entry(i) })),
        200,
        60_000,
        8192,
      );
      const p = await store.loadPath('56');
      expect(p.entries).toEqual([entry(196), entry(197), entry(198), entry(199)]);
      expect(p.dropped).toBe(196);
      await store.close();
    });

    it(
      'finished rows: listed instead of records (a record added without a row whole); past maxBytes of records ' +
        'and rows the oldest go (the newest kept)',
      async () => {
        const { store } = await make();
        const add = (id: string, size: number, maxBytes: number) =>
          store.addFinished(id, `r${id}`.padEnd(size, '.'), 100, 60_000, { row: `w${id}`, maxBytes });
        await add('1', 98, 1000); // 100 bytes with its row
        await add('2', 98, 1000);
        await store.addFinished('3', 'r3', 100, 60_000);
        expect(await store.listFinishedRows(0, 10)).toEqual(['r3', 'w2', 'w1']);
        expect(await store.listFinishedRows(1, 1)).toEqual(['w2']);
        await add('4', 798, 1000); // 1002 bytes in all: 1 goes
        expect(await store.listFinishedRows(0, 10)).toEqual(['w4', 'r3', 'w2']);
        expect(await store.getFinished('1')).toBeUndefined();
        await add('2', 198, 1000); // added again: its old bytes no longer count (802 + 200)
        expect(await store.listFinishedRows(0, 10)).toEqual(['w2', 'w4']);
        expect(await store.getFinished('3')).toBeUndefined();
        await add('5', 5000, 1000); // bigger than all: kept alone
        expect(await store.listFinishedRows(0, 10)).toEqual(['w5']);
        expect(await store.listFinished(0, 10)).toEqual(['r5'.padEnd(5000, '.')]);
        await add('6', 98, 1_000_000);
        expect(await store.listFinishedRows(0, 10)).toEqual(['w6', 'w5']);
        await store.close();
      },
    );

    it('finished rows of records that expired leave the listing, and their bytes are freed', async () => {
      const { store, advance } = await make();
      await store.addFinished('60', 'old', 10, 800, { row: 'w-old', maxBytes: 1000 });
      await store.addFinished('61', 'new', 10, 200, { row: 'w-new', maxBytes: 1000 });
      expect(await store.listFinishedRows(0, 10)).toEqual(['w-new', 'w-old']);
      await advance(300);
      expect(await store.listFinishedRows(0, 10)).toEqual(['w-old']);
      // 8 + 992 bytes: within 1000 once the expired record's 8 are no longer counted
      await store.addFinished('62', 'x'.repeat(988), 10, 800, { row: 'w-62', maxBytes: 1000 });
      expect(await store.listFinishedRows(0, 10)).toEqual(['w-62', 'w-old']);
      await store.close();
    });

    it(
      "listLive pages through every call with a value, each once, with the store's cursor; asides alone are " +
        'left out',
      async () => {
        const { store } = await make();
        const ids = Array.from({ length: 23 }, (_, i) => String(1000 + i));
        for (const id of ids) await store.commit(id, undefined, `v${id}`, 60_000);
        await store.setAside('999', 'fb', 60_000);
        const seen: [string, string][] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.listLive(cursor, 5);
          expect(page.values.length).toBeLessThanOrEqual(5);
          seen.push(...page.values);
          cursor = page.next;
          expect(++pages).toBeLessThan(100);
        } while (cursor !== undefined);
        expect(seen.map(([id]) => id).sort()).toEqual(ids);
        expect(new Set(seen.map(([id]) => id)).size).toBe(23);
        for (const [id, v] of seen) expect(v).toBe(`v${id}`);
        // one page holds them all; a limit of 1 gives one (on Redis, a page may come back empty when other keys
        // fill the SCANs it may make, MAX_SCANS_PER_PAGE: the next one goes on, as a listing does)
        expect((await store.listLive(undefined, 500)).values).toHaveLength(23);
        let one = await store.listLive(undefined, 1);
        for (let n = 0; one.values.length === 0 && one.next !== undefined && n < 1000; n++)
          one = await store.listLive(one.next, 1);
        expect(one.values).toHaveLength(1);
        expect(typeof one.next).toBe('string');
        await store.close();
      },
    );

    it('listLive refuses a cursor it did not give', async () => {
      const { store } = await make();
      await store.commit('1', undefined, 'x', 60_000);
      for (const bad of ['', 'abc', '-1', '1e3', '0.0.0.0', '99999.0.0', 'x'.repeat(300), '__proto__']) {
        await expect(store.listLive(bad, 10), bad).rejects.toMatchObject({ code: 'BAD_CURSOR' });
      }
      await store.close();
    });

    const smsStore = async () => {
      const made = await make();
      if (!hasSmsStatus(made.store)) throw new Error('the store has no delivery status methods');
      return made as StoreUnderTest & { store: CallStore & SmsStatusStore };
    };

    it('SMS delivery status: who sent it and its reports, each event once, at most maxReports; per hash', async () => {
      const { store } = await smsStore();
      expect(await store.smsStatus('8242D945')).toBeUndefined();
      await store.smsSent('8242D945', 'sent-1', 60_000);
      expect(await store.smsStatus('8242D945')).toEqual({ sent: 'sent-1', reports: [] });
      expect(await store.smsReport('8242D945', 'ev-1', 'PENDING', 3, 60_000)).toBe(true);
      expect(await store.smsReport('8242D945', 'ev-1', 'PENDING again', 3, 60_000)).toBe(false); // a repeat
      expect(await store.smsReport('8242D945', 'ev-2', 'SENT', 3, 60_000)).toBe(true);
      expect(await store.smsReport('8242D945', 'ev-3', 'RECEIVED', 3, 60_000)).toBe(true);
      expect(await store.smsReport('8242D945', 'ev-4', 'one too many', 3, 60_000)).toBe(false); // full
      const r = await store.smsStatus('8242D945');
      expect(r?.sent).toBe('sent-1');
      expect([...r!.reports].sort()).toEqual(['PENDING', 'RECEIVED', 'SENT']);
      // a report may come before the note of who sent it; the note replaces an earlier one
      expect(await store.smsReport('AAAA0001', 'ev-1', 'PENDING', 3, 60_000)).toBe(true);
      expect(await store.smsStatus('AAAA0001')).toEqual({ reports: ['PENDING'] });
      await store.smsSent('AAAA0001', 'sent-a', 60_000);
      await store.smsSent('AAAA0001', 'sent-b', 60_000);
      expect(await store.smsStatus('AAAA0001')).toEqual({ sent: 'sent-b', reports: ['PENDING'] });
      // none of this is a call
      expect(await store.size()).toBe(0);
      expect((await store.listLive(undefined, 10)).values).toEqual([]);
      await store.close();
    });

    it('an SMS record expires ttlMs after its last write', async () => {
      const { store, advance } = await smsStore();
      await store.smsSent('BBBB0001', 's', 300);
      await advance(150);
      await store.smsReport('BBBB0001', 'ev-1', 'SENT', 10, 300);
      await advance(200);
      expect(await store.smsStatus('BBBB0001')).toEqual({ sent: 's', reports: ['SENT'] });
      await advance(200);
      expect(await store.smsStatus('BBBB0001')).toBeUndefined();
      await store.close();
    });

    it('of concurrent reports with one event id, exactly one is added', async () => {
      const { store } = await smsStore();
      const added = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.smsReport('CCCC0001', 'ev-same', `r${i}`, 50, 60_000)),
      );
      expect(added.filter((a) => a)).toHaveLength(1);
      expect((await store.smsStatus('CCCC0001'))!.reports).toHaveLength(1);
      await store.close();
    });

    it(
      'webhook event claims: once while claimed, again once ' + 'given back or expired; concurrent claims, one wins',
      async () => {
        const { store, advance } = await smsStore();
        expect(await store.claimEvent('e1', 60_000)).toBe(true);
        expect(await store.claimEvent('e1', 60_000)).toBe(false);
        await store.releaseEvent('e1');
        await store.releaseEvent('never-claimed');
        expect(await store.claimEvent('e1', 60_000)).toBe(true);
        expect(await store.claimEvent('e2', 200)).toBe(true);
        await advance(300);
        expect(await store.claimEvent('e2', 200)).toBe(true);
        const many = await Promise.all(Array.from({ length: 10 }, () => store.claimEvent('e3', 60_000)));
        expect(many.filter((c) => c)).toHaveLength(1);
        expect(await store.size()).toBe(0);
        await store.close();
      },
    );

    it(
      'outbound records: put and get by id, replaced by a later put, undefined when unknown, gone after their ' + 'ttl',
      async () => {
        const { store, advance } = await make();
        expect(await store.getOutbound('8242D945')).toBeUndefined();
        await store.putOutbound('8242D945', '{"app":"A1"}', 300);
        await store.putOutbound('8242D946', '{"app":"A2"}', 60_000);
        expect(await store.getOutbound('8242D945')).toBe('{"app":"A1"}');
        await store.putOutbound('8242D945', '{"app":"A1","callid":"42"}', 300);
        expect(await store.getOutbound('8242D945')).toBe('{"app":"A1","callid":"42"}');
        // outbound records are no calls: not listed, not counted
        expect(await store.size()).toBe(0);
        expect((await store.listLive(undefined, 10)).values).toEqual([]);
        await advance(400);
        expect(await store.getOutbound('8242D945')).toBeUndefined();
        expect(await store.getOutbound('8242D946')).toBe('{"app":"A2"}');
        await store.close();
      },
    );

    it('answers ping while reachable', async () => {
      const { store } = await make();
      await expect(store.ping()).resolves.toBeUndefined();
      await store.close();
    });
  });
}
