import type { CallStore } from './types.js';

interface Entry {
  value: string;
  expires: number;
}

/**
 * The default store: a Map in this process. Entries expire `ttlMs` after their last
 * write (a call whose HANGUP request never came); expired entries are dropped on read
 * and by a sweep every `sweepMs` (unref'd: it never keeps the process alive).
 */
export class MemoryStore implements CallStore {
  private readonly calls = new Map<string, Entry>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    sweepMs = 60_000,
  ) {
    this.timer = setInterval(() => this.sweep(), sweepMs);
    this.timer.unref();
  }

  async get(callid: string): Promise<string | undefined> {
    const e = this.calls.get(callid);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.calls.delete(callid);
      return undefined;
    }
    return e.value;
  }

  async set(callid: string, value: string, ttlMs: number): Promise<void> {
    this.calls.set(callid, { value: flat(value), expires: this.now() + ttlMs });
  }

  async delete(callid: string): Promise<void> {
    this.calls.delete(callid);
  }

  async size(): Promise<number> {
    return this.calls.size;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.calls.clear();
  }

  /** Drops expired entries; returns how many. */
  sweep(): number {
    const now = this.now();
    let n = 0;
    for (const [k, e] of this.calls) {
      if (e.expires <= now) {
        this.calls.delete(k);
        n++;
      }
    }
    return n;
  }
}

/**
 * The same string, made flat before it is kept. A string built in pieces (JSON.stringify
 * builds its output in parts, which is how snapshots are made) is a tree of those pieces,
 * about 30% more heap than its characters: some 140 bytes per stored call. Converting it to
 * a number makes V8 copy it into one flat string (the trick of the flatstr package), and
 * the garbage collector then drops the pieces. bench/memory.ts measures the heap per call.
 */
function flat(s: string): string {
  Number(s);
  return s;
}
