/**
 * A list kept in order by a comparison, with binary search: the memory store's queues keep their lines, stale
 * deadlines, leases and agent states in these (src/store/memory-queues.ts). Finding a place is O(log n); inserting
 * or removing moves the items after it (a memmove: microseconds for the 10,000 callers a line holds at most), and
 * an item arriving last, as most do (times grow), goes at the end.
 *
 * Items are compared by keys the caller must not change while the item is in the list: remove it, change it,
 * insert it again. Keys are unique (a callid, a number), so an item is found by its keys.
 */
export class SortedList<T> {
  private readonly items: T[] = [];

  constructor(private readonly cmp: (a: T, b: T) => number) {}

  get length(): number {
    return this.items.length;
  }

  /** How many items come before `item` (in the list or not): its index when it is in. */
  rank(item: T): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmp(this.items[mid] as T, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(item: T): void {
    const n = this.items.length;
    if (n === 0 || this.cmp(this.items[n - 1] as T, item) < 0) this.items.push(item);
    else this.items.splice(this.rank(item), 0, item);
  }

  /** Removes the item with `item`'s keys; false when there was none. */
  remove(item: T): boolean {
    const i = this.rank(item);
    if (i >= this.items.length || this.cmp(this.items[i] as T, item) !== 0) return false;
    this.items.splice(i, 1);
    return true;
  }

  at(i: number): T | undefined {
    return this.items[i];
  }

  /** The first `n` items, in order (a copy). */
  first(n: number): T[] {
    return this.items.slice(0, Math.max(0, n));
  }
}

/** Compares strings as Redis orders a sorted set's members of one score (bytes; the same for ASCII). */
export function cmpText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
