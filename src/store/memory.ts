import type { CallStore, LoadedCall } from './types.js';

interface Entry {
  /** Undefined while only an aside was set. */
  value: string | undefined;
  rev: number;
  aside: string | undefined;
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

  private live(callid: string): Entry | undefined {
    const e = this.calls.get(callid);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.calls.delete(callid);
      return undefined;
    }
    return e;
  }

  async load(callid: string): Promise<LoadedCall> {
    const e = this.live(callid);
    if (!e) return {};
    const out: LoadedCall = {};
    if (e.value !== undefined) out.call = { value: e.value, rev: e.rev };
    if (e.aside !== undefined) {
      out.aside = e.aside;
      e.aside = undefined;
    }
    return out;
  }

  async commit(callid: string, rev: number | undefined, value: string, ttlMs: number): Promise<number | undefined> {
    const e = this.live(callid);
    const current = e?.value === undefined ? undefined : e.rev;
    if (current !== rev) return undefined;
    const next = (e?.rev ?? 0) + 1;
    this.calls.set(callid, { value: flat(value), rev: next, aside: e?.aside, expires: this.now() + ttlMs });
    return next;
  }

  async setAside(callid: string, aside: string, ttlMs: number): Promise<void> {
    const e = this.live(callid);
    if (e) e.aside = aside;
    else this.calls.set(callid, { value: undefined, rev: 0, aside, expires: this.now() + ttlMs });
  }

  async get(callid: string): Promise<string | undefined> {
    return this.live(callid)?.value;
  }

  async set(callid: string, value: string, ttlMs: number): Promise<void> {
    const e = this.live(callid);
    this.calls.set(callid, { value: flat(value), rev: (e?.rev ?? 0) + 1, aside: e?.aside, expires: this.now() + ttlMs });
  }

  async delete(callid: string): Promise<void> {
    this.calls.delete(callid);
  }

  async size(): Promise<number> {
    let n = 0;
    for (const e of this.calls.values()) if (e.value !== undefined) n++;
    return n;
  }

  async ping(): Promise<void> {}

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
