import {
  BadCursor,
  countedEntry,
  type CallStore,
  type FinishedExtra,
  type LoadedCall,
  type PathAppend,
  type PathCount,
  type SmsStatusStore,
  type StoredPath,
  type StoreCapabilities,
} from './types.js';
import { MemoryQueues } from './memory-queues.js';

interface Entry {
  /** Undefined while only an aside was set. */
  value: string | undefined;
  rev: number;
  aside: string | undefined;
  expires: number;
  /** Order of the key's arrival in the map (kept while the key stays): the cursor of listLive. */
  seq: number;
}

interface Timed<T> {
  data: T;
  expires: number;
}

interface Path {
  entries: string[];
  /** UTF-8 bytes of the entries. */
  bytes: number;
  dropped: number;
  expires: number;
}

interface Finished {
  record: string;
  /** Absent when added without one (listFinishedRows gives the record). */
  row: string | undefined;
  /** UTF-8 bytes of the record and its row. */
  bytes: number;
  expires: number;
}

interface SmsEntry {
  sent: string | undefined;
  /** event id -> report */
  reports: Map<string, string>;
  expires: number;
}

/** SMS delivery records and webhook event claims kept at most (the oldest go first): memory stays bounded. */
export const MAX_SMS_RECORDS = 100_000;
export const MAX_EVENT_CLAIMS = 200_000;

/**
 * The default store: a Map in this process. Entries expire `ttlMs` after their last
 * write (a call whose HANGUP request never came); expired entries are dropped on read
 * and by a sweep every `sweepMs` (unref'd: it never keeps the process alive).
 *
 * The call history lives beside the calls: a path per live call (capped by its appends, in entries and bytes) and
 * the finished records in a Map whose insertion order is their age (the oldest first), so
 * that keeping the last `keep` (and at most the bytes given) drops from the front.
 *
 * Delivery status of SMS and webhook event claims (SmsStatusStore) are Maps too, with their
 * expiry, capped (MAX_SMS_RECORDS, MAX_EVENT_CLAIMS: the oldest are dropped first).
 */
export class MemoryStore implements CallStore, SmsStatusStore {
  /** One process alone uses it: nothing shared; its queues are this process's (./memory-queues.ts). */
  readonly capabilities: StoreCapabilities = { shared: false, queues: () => this.queueLines };
  private readonly queueLines = new MemoryQueues();
  private readonly calls = new Map<string, Entry>();
  private readonly paths = new Map<string, Path>();
  private readonly finished = new Map<string, Finished>();
  /** UTF-8 bytes of the finished records and rows held. */
  private finishedBytes = 0;
  private readonly smsRecords = new Map<string, SmsEntry>();
  private readonly events = new Map<string, number>();
  private readonly outbound = new Map<string, Timed<string>>();
  private readonly timer: NodeJS.Timeout;
  private seq = 0;

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

  async load(callid: string, keepAside = false): Promise<LoadedCall> {
    return this.loadSync(callid, keepAside);
  }

  loadSync(callid: string, keepAside = false): LoadedCall {
    const e = this.live(callid);
    if (!e) return NOTHING;
    if (e.aside === undefined) return e.value === undefined ? NOTHING : { call: { value: e.value, rev: e.rev } };
    const out: LoadedCall = { aside: e.aside };
    if (e.value !== undefined) out.call = { value: e.value, rev: e.rev };
    if (!keepAside) e.aside = undefined;
    return out;
  }

  async commit(callid: string, rev: number | undefined, value: string, ttlMs: number): Promise<number | undefined> {
    return this.commitSync(callid, rev, value, ttlMs);
  }

  commitSync(callid: string, rev: number | undefined, value: string, ttlMs: number): number | undefined {
    const e = this.live(callid);
    const current = e?.value === undefined ? undefined : e.rev;
    if (current !== rev) return undefined;
    const expires = this.now() + ttlMs;
    if (!e) {
      this.calls.set(callid, { value: flat(value), rev: 1, aside: undefined, expires, seq: ++this.seq });
      return 1;
    }
    // the entry changes in place: the call keeps its place in the Map (listLive's cursor) and one entry
    e.value = flat(value);
    e.rev++;
    e.expires = expires;
    return e.rev;
  }

  async setAside(callid: string, aside: string, ttlMs: number): Promise<void> {
    const e = this.live(callid);
    if (e) e.aside = aside;
    else this.calls.set(callid, { value: undefined, rev: 0, aside, expires: this.now() + ttlMs, seq: ++this.seq });
  }

  async revisions(callids: readonly string[]): Promise<(number | undefined)[]> {
    return callids.map((callid) => {
      const e = this.live(callid);
      return e?.value === undefined ? undefined : e.rev;
    });
  }

  async get(callid: string): Promise<string | undefined> {
    return this.live(callid)?.value;
  }

  async set(callid: string, value: string, ttlMs: number): Promise<void> {
    const e = this.live(callid);
    this.calls.set(callid, {
      value: flat(value),
      rev: (e?.rev ?? 0) + 1,
      aside: e?.aside,
      expires: this.now() + ttlMs,
      seq: e?.seq ?? ++this.seq,
    });
  }

  async delete(callid: string): Promise<void> {
    this.calls.delete(callid);
  }

  async size(): Promise<number> {
    let n = 0;
    for (const e of this.calls.values()) if (e.value !== undefined) n++;
    return n;
  }

  /** Cursor: the `seq` of the last call given (keys keep their place in the Map while they stay). */
  async listLive(cursor: string | undefined, limit: number): Promise<{ values: [string, string][]; next?: string }> {
    let after = 0;
    if (cursor !== undefined) {
      if (!/^[1-9][0-9]{0,14}$/.test(cursor)) throw new BadCursor('not a cursor of this store');
      after = Number(cursor);
    }
    const now = this.now();
    const values: [string, string][] = [];
    let last = after;
    for (const [callid, e] of this.calls) {
      if (e.seq <= after || e.value === undefined || e.expires <= now) continue;
      // one more than asked: is there a next page?
      if (values.length === limit) return { values, next: String(last) };
      values.push([callid, e.value]);
      last = e.seq;
    }
    return { values };
  }

  async appendPaths(
    entries: readonly PathAppend[],
    maxEntries: number,
    ttlMs: number,
    maxBytes = Infinity,
  ): Promise<void> {
    const now = this.now();
    for (const { callid, entry } of entries) {
      let p = this.paths.get(callid);
      if (!p || p.expires <= now) this.paths.set(callid, (p = { entries: [], bytes: 0, dropped: 0, expires: 0 }));
      p.entries.push(flat(entry));
      p.bytes += utf8(entry);
      trimPath(p, maxEntries, maxBytes);
      p.expires = now + ttlMs;
    }
  }

  async appendPath(callid: string, entry: string, maxEntries: number, ttlMs: number): Promise<void> {
    return this.appendPaths([{ callid, entry }], maxEntries, ttlMs);
  }

  async countPaths(counts: readonly PathCount[], maxBytes = Infinity): Promise<void> {
    const now = this.now();
    for (const c of counts) {
      const p = this.paths.get(c.callid);
      const last = p && p.expires > now ? p.entries.at(-1) : undefined;
      if (last === undefined) continue;
      const counted = countedEntry(last, c.replays, c.refused);
      p!.entries[p!.entries.length - 1] = counted;
      p!.bytes += utf8(counted) - utf8(last);
      trimPath(p!, Infinity, maxBytes);
    }
  }

  async readPath(callid: string): Promise<string[]> {
    return (await this.loadPath(callid)).entries;
  }

  async loadPath(callid: string): Promise<StoredPath> {
    const p = this.paths.get(callid);
    return p && p.expires > this.now() ? { entries: [...p.entries], dropped: p.dropped } : { entries: [], dropped: 0 };
  }

  async dropPath(callid: string): Promise<void> {
    this.paths.delete(callid);
  }

  async addFinished(callid: string, record: string, keep: number, ttlMs: number, extra?: FinishedExtra): Promise<void> {
    // deleted first: a callid added again moves to the newest end
    this.dropFinished(callid);
    const row = extra?.row;
    const bytes = utf8(record) + (row === undefined ? 0 : utf8(row));
    this.finished.set(callid, { record: flat(record), row, bytes, expires: this.now() + ttlMs });
    this.finishedBytes += bytes;
    const maxBytes = extra?.maxBytes ?? Infinity;
    for (const old of this.finished.keys()) {
      if (this.finished.size <= 1 || (this.finished.size <= keep && this.finishedBytes <= maxBytes)) break;
      this.dropFinished(old);
    }
  }

  async listFinished(offset: number, limit: number): Promise<string[]> {
    return this.finishedPage(offset, limit).map((r) => r.record);
  }

  async listFinishedRows(offset: number, limit: number): Promise<string[]> {
    return this.finishedPage(offset, limit).map((r) => r.row ?? r.record);
  }

  async getFinished(callid: string): Promise<string | undefined> {
    const r = this.finished.get(callid);
    return r && r.expires > this.now() ? r.record : undefined;
  }

  /** Finished records newest first, from `offset` (expired ones dropped on the way). */
  private finishedPage(offset: number, limit: number): Finished[] {
    const now = this.now();
    const all: Finished[] = [];
    for (const [callid, r] of this.finished) {
      if (r.expires <= now) this.dropFinished(callid);
      else all.push(r);
    }
    return all.reverse().slice(offset, offset + limit);
  }

  private dropFinished(callid: string): void {
    const r = this.finished.get(callid);
    if (!r) return;
    this.finished.delete(callid);
    this.finishedBytes -= r.bytes;
  }

  async smsSent(hash: string, sent: string, ttlMs: number): Promise<void> {
    const e = this.smsEntry(hash);
    e.sent = sent;
    e.expires = this.now() + ttlMs;
  }

  async smsReport(hash: string, eventId: string, report: string, maxReports: number, ttlMs: number): Promise<boolean> {
    const e = this.smsEntry(hash);
    if (e.reports.has(eventId) || e.reports.size >= maxReports) return false;
    e.reports.set(eventId, report);
    e.expires = this.now() + ttlMs;
    return true;
  }

  async smsStatus(hash: string): Promise<{ sent?: string; reports: string[] } | undefined> {
    const e = this.smsRecords.get(hash);
    if (!e || e.expires <= this.now() || (e.sent === undefined && e.reports.size === 0)) return undefined;
    return { ...(e.sent !== undefined ? { sent: e.sent } : {}), reports: [...e.reports.values()] };
  }

  async claimEvent(eventId: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const until = this.events.get(eventId);
    if (until !== undefined && until > now) return false;
    this.events.delete(eventId);
    this.events.set(eventId, now + ttlMs);
    if (this.events.size > MAX_EVENT_CLAIMS) this.events.delete(this.events.keys().next().value as string);
    return true;
  }

  async releaseEvent(eventId: string): Promise<void> {
    this.events.delete(eventId);
  }

  /** The SMS's entry, made (an expired one anew) as the newest when needed. */
  private smsEntry(hash: string): SmsEntry {
    let e = this.smsRecords.get(hash);
    if (e && e.expires > this.now()) return e;
    this.smsRecords.delete(hash);
    e = { sent: undefined, reports: new Map(), expires: 0 };
    this.smsRecords.set(hash, e);
    if (this.smsRecords.size > MAX_SMS_RECORDS) this.smsRecords.delete(this.smsRecords.keys().next().value as string);
    return e;
  }

  async putOutbound(id: string, record: string, ttlMs: number): Promise<void> {
    // deleted first: the Map's order stays the order of expiry for records of one ttl
    this.outbound.delete(id);
    this.outbound.set(id, { data: record, expires: this.now() + ttlMs });
  }

  async getOutbound(id: string): Promise<string | undefined> {
    const r = this.outbound.get(id);
    return r && r.expires > this.now() ? r.data : undefined;
  }

  /**
   * What the history holds (tests, benchmarks): paths of live calls and finished records, and their bytes (UTF-8 bytes
   * of the entries; of the records and their rows).
   */
  historySize(): { paths: number; finished: number; pathBytes: number; finishedBytes: number } {
    let pathBytes = 0;
    for (const p of this.paths.values()) pathBytes += p.bytes;
    return { paths: this.paths.size, finished: this.finished.size, pathBytes, finishedBytes: this.finishedBytes };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.calls.clear();
    this.paths.clear();
    this.finished.clear();
    this.finishedBytes = 0;
    this.smsRecords.clear();
    this.events.clear();
    this.outbound.clear();
  }

  /**
   * Drops expired entries (calls, paths, finished records, SMS records, outbound calls, event claims); returns how
   * many.
   */
  sweep(): number {
    const now = this.now();
    let n = 0;
    for (const [callid, r] of this.finished) {
      if (r.expires <= now) {
        this.dropFinished(callid);
        n++;
      }
    }
    for (const map of [this.calls, this.paths, this.smsRecords, this.outbound] as Map<string, { expires: number }>[]) {
      for (const [k, e] of map) {
        if (e.expires <= now) {
          map.delete(k);
          n++;
        }
      }
    }
    for (const [k, until] of this.events) {
      if (until <= now) {
        this.events.delete(k);
        n++;
      }
    }
    return n;
  }
}

/** What `load` answers for a call it does not hold (frozen: shared by every such answer). */
const NOTHING: LoadedCall = Object.freeze({});

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

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** Drops a path's oldest entries past `maxEntries` or `maxBytes` (the newest kept), counting them. */
function trimPath(p: Path, maxEntries: number, maxBytes: number): void {
  let drop = 0;
  while (p.entries.length - drop > 1 && (p.entries.length - drop > maxEntries || p.bytes > maxBytes))
    p.bytes -= utf8(p.entries[drop++]!);
  if (drop === 0) return;
  p.entries.splice(0, drop);
  p.dropped += drop;
}
