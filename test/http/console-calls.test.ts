/** The console's live-call list follows the listing's pages (src/http/console/assets/calls.js, in Node). */
import { expect, it } from 'vitest';

type Page = { calls: { callid: string }[]; next: string | null };
const { liveCalls } = (await import(new URL('../../src/http/console/assets/calls.js', import.meta.url).href)) as {
  liveCalls(get: (q: string) => Promise<Page>): Promise<Page>;
};

const calls = (...ids: string[]) => ids.map((callid) => ({ callid }));

it('follows next through short and empty pages (Redis among many other keys) until it has them all', async () => {
  const pages: Page[] = [
    { calls: [], next: 'a+/=' },
    { calls: calls('1'), next: 'b' },
    { calls: calls('2', '3'), next: null },
  ];
  const asked: string[] = [];
  const got = await liveCalls(async (q) => (asked.push(q), pages.shift()!));
  expect(got).toEqual({ calls: calls('1', '2', '3'), next: null });
  expect(asked).toEqual([
    'calls?status=live&limit=100',
    'calls?status=live&limit=100&cursor=a%2B%2F%3D',
    'calls?status=live&limit=99&cursor=b',
  ]);
});

it('stops at 100 calls, or after 20 pages, saying more are left', async () => {
  let n = 0;
  const limits: number[] = [];
  const full = await liveCalls(async (q) => {
    const limit = Number(/limit=([0-9]+)/.exec(q)![1]);
    limits.push(limit);
    return { calls: calls(...Array.from({ length: Math.min(limit, 60) }, () => String(n++))), next: 'x' };
  });
  expect(limits).toEqual([100, 40]);
  expect(full.calls).toHaveLength(100);
  expect(full.next).toBe('x');
  let asked = 0;
  const empty = await liveCalls(async () => (asked++, { calls: [], next: 'y' }));
  expect(asked).toBe(20);
  expect(empty).toEqual({ calls: [], next: 'y' });
});

it("reads a call's whole path: the detail's first page, then each next page (at most 50)", async () => {
  const { callPath } = (await import(new URL('../../src/http/console/assets/call.js', import.meta.url).href)) as {
    callPath(
      callid: string,
      detail: { path: { at: number }[]; pathNext: string | null },
      get: (q: string) => Promise<{ path: { at: number }[]; next: string | null }>,
    ): Promise<{ at: number }[]>;
  };
  const asked: string[] = [];
  const pages = [
    { path: [{ at: 3 }], next: 'c+/' },
    { path: [{ at: 4 }], next: null },
  ];
  const path = await callPath('42', { path: [{ at: 1 }, { at: 2 }], pathNext: 'b' }, async (q) => {
    asked.push(q);
    return pages.shift()!;
  });
  expect(path.map((e) => e.at)).toEqual([1, 2, 3, 4]);
  expect(asked).toEqual(['calls/42/path?cursor=b', 'calls/42/path?cursor=c%2B%2F']);
  expect(await callPath('42', { path: [{ at: 1 }], pathNext: null }, async () => ({ path: [], next: null }))).toEqual([
    { at: 1 },
  ]);
  let n = 0;
  await callPath('42', { path: [], pathNext: 'x' }, async () => (n++, { path: [{ at: n }], next: 'x' }));
  expect(n).toBe(50);
});
