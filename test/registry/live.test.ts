import { expect, it } from 'vitest';
import { LiveCalls } from '../../src/registry/live.js';

it('a call keeps one record while it stays on its version; moving version moves the counts', () => {
  let now = 1000;
  const live = new LiveCalls(60_000, () => now);
  live.set('18446744073709551615', 'desk', 'v1', 'welcome');
  const first = live.get('18446744073709551615');
  now = 2000;
  live.set('18446744073709551615', 'desk', 'v1', 'menu');
  expect(live.get('18446744073709551615')).toBe(first);
  expect(first).toEqual({ callid: '18446744073709551615', flow: 'desk', version: 'v1', step: 'menu', lastSeen: 2000 });
  expect(live.count('desk', 'v1')).toBe(1);
  live.set('18446744073709551615', 'desk', 'v2', 'menu');
  expect([live.count('desk', 'v1'), live.count('desk', 'v2'), live.size]).toEqual([0, 1, 1]);
  expect(live.end('18446744073709551615')).toMatchObject({ version: 'v2', step: 'menu' });
  expect([live.count('desk', 'v2'), live.size]).toEqual([0, 0]);
});

it('purges calls idle longer than the TTL, measured from their last request', () => {
  let now = 0;
  const live = new LiveCalls(10_000, () => now);
  live.set('1', 'desk', 'v1', 'welcome');
  now = 8_000;
  live.set('1', 'desk', 'v1', 'menu');
  now = 15_000;
  expect(live.purge(true)).toBe(0);
  now = 18_001;
  expect(live.purge(true)).toBe(1);
});

it(
  'settle: a call leaves when the store holds it at another revision than the one committed here (answered, ' +
    'ended or expired elsewhere)',
  () => {
    let now = 0;
    const live = new LiveCalls(60_000, () => now);
    live.set('1', 'desk', 'v1', 'welcome'); // a new call, before its first commit: no revision yet
    expect([...live.idleSince(10)]).toEqual([]);
    live.set('1', 'desk', 'v1', 'menu', 3);
    live.set('2', 'desk', 'v1', 'menu', 5);
    live.set('3', 'desk', 'v1', 'menu', 1);
    now = 100;
    live.set('3', 'desk', 'v1', 'bye', 2); // answered here again at 100: not idle since 50
    expect([...live.idleSince(50)]).toEqual([
      ['1', 3],
      ['2', 5],
    ]);
    expect(live.settle('1', 3, 3)).toBe(false); // the store is where this process left it
    expect(live.settle('1', 2, 9)).toBe(false); // asked about an older revision: this process committed since
    expect(live.settle('1', 3, 4)).toBe(true); // another instance answered its next request
    expect(live.settle('2', 5, undefined)).toBe(true); // gone from the store (ended and expired)
    expect(live.get('1')).toBeUndefined();
    expect([live.size, live.count('desk', 'v1')]).toEqual([1, 1]);
    expect(live.settle('1', 3, 4)).toBe(false); // already gone
  },
);
