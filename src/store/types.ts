/**
 * Where call snapshots live between two requests: in this process (memory, the default) or
 * in Redis, shared by every instance that serves the same calls. Values are opaque strings
 * (the engine serialises its CallState), so both stores behave alike and the bytes per call
 * can be measured.
 *
 * A call's record has a revision: `commit` writes only if the revision is still the one
 * read (an atomic compare-and-set), so two instances racing on copies of one request
 * advance the call once, and the loser reads the winner's state and answers its reply.
 * No lock is ever held: a dead instance leaves nothing that blocks the others.
 *
 * Beside its value, a record may hold an aside: a short note written outside the
 * compare-and-set (the request a deadline fallback replaced, see src/engine/call.ts),
 * taken (read and removed) by the next `load`.
 *
 * `load`, `commit` and `setAside` need no timeout of the store's: the call step bounds its
 * waits for them (src/engine/stall.ts), so that a stalled store is ridden, not refused. A
 * store should keep them in order (a note set, then a load, find it), as one connection does.
 *
 * A store that holds its calls in this process (the memory store) may also answer `loadSync` and `commitSync`, the
 * same operations at once: the call step then takes no turn of the event loop for them (a request whose step waits
 * for nothing else is answered in one synchronous pass).
 */
import type { StoreFault } from './faults.js';
import type { SharedRecords } from './shared.js';
import type { QueueLines } from './queues.js';

export interface StoredCall {
  value: string;
  /** 1 for the first commit, then +1 per commit. */
  rev: number;
}

export interface LoadedCall {
  /** Absent when the call has no committed value (never seen, expired, or only an aside). */
  call?: StoredCall;
  /** The aside, if one was set since the last load (it is removed by this load). */
  aside?: string;
}

/**
 * What a store can do besides keeping calls, declared by the store: the server's composition
 * root (src/http/compose.ts) asks these, never the store's class, so a store of one's own gets
 * what it declares. A store that declares nothing is taken as shared (the safe assumption: its
 * calls may be answered by other processes) with no shared records.
 */
export interface StoreCapabilities {
  /**
   * Other processes serve the same calls through it (Redis): a call's requests may be answered
   * elsewhere (the live calls idle here are checked against it), and what it keeps leaves this
   * process (sensitive values should be sealed). False for the MemoryStore, which one process alone uses.
   */
  readonly shared: boolean;
  /** The records the instances share besides the calls: flow versions, pins, canaries, counts (src/store/shared.ts). */
  sharedRecords?(): SharedRecords;
  /** The queues' lines and agents (src/store/queues.ts): the `queue` step's; absent, its steps take `error`. */
  queues?(): QueueLines;
  /** Resolves once the store answers, or rejects after `timeoutMs` (start-up: a store that comes up after us). */
  ready?(timeoutMs: number): Promise<void>;
  /**
   * The fault the store is in, undefined when it serves (GET /health): what its operations met lately (writes
   * refused, timeouts, the connection down) after a check of its own. Without it, /health pings the store.
   */
  health?(): Promise<StoreFault | undefined>;
}

/** What `store` declares it can do (StoreCapabilities), or the defaults of a store that declares nothing. */
export function capabilitiesOf(store: object): StoreCapabilities {
  return (store as { capabilities?: StoreCapabilities }).capabilities ?? { shared: true };
}

export interface CallStore extends HistoryStore, OutboundStore {
  /** What the store can do besides keeping calls (absent: shared, nothing more; see capabilitiesOf). */
  readonly capabilities?: StoreCapabilities;
  /** The call's record and its aside (taken: the next load does not see it again, unless `keepAside`). */
  load(callid: string, keepAside?: boolean): Promise<LoadedCall>;
  /**
   * Stores `value` if the call's revision is `rev` (undefined: the call has no committed
   * value), for `ttlMs` (forget the call after that long without a commit). Returns the new
   * revision, or undefined when the revision had changed (nothing written).
   */
  commit(callid: string, rev: number | undefined, value: string, ttlMs: number): Promise<number | undefined>;
  /** Sets the call's aside (kept with the record; `ttlMs` if the record has no expiry yet). */
  setAside(callid: string, aside: string, ttlMs: number): Promise<void>;
  /** `load`, answered at once (a store in this process); the call step uses it when the store has it. */
  loadSync?(callid: string, keepAside?: boolean): LoadedCall;
  /** `commit`, answered at once (a store in this process); the call step uses it when the store has it. */
  commitSync?(callid: string, rev: number | undefined, value: string, ttlMs: number): number | undefined;
  /**
   * Each call's committed revision, in order (undefined: no value, expired): what the
   * live-call check reads (src/engine/live-check.ts). Optional for a store of one's own:
   * without it, a call answered or ended by another instance stays counted live here until
   * it has been idle here for the call TTL.
   */
  revisions?(callids: readonly string[]): Promise<(number | undefined)[]>;
  /** The call's value, without taking its aside (admin, tests). */
  get(callid: string): Promise<string | undefined>;
  /** Writes unconditionally (tests, tools). */
  set(callid: string, value: string, ttlMs: number): Promise<void>;
  delete(callid: string): Promise<void>;
  /** Number of calls held (health, benchmarks, tests; O(calls) on Redis). */
  size(): Promise<number>;
  /** Rejects when the store cannot be reached (health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The call history (docs/admin.md "Call history"): the path of each live call (a capped list
 * of entries, appended as its requests are handled) and the records of the last finished
 * calls. Entries and records are opaque strings here (src/engine/history.ts makes them), but
 * for two conventions: an entry is a JSON object, whose last members a count sets (countPaths);
 * a size is the UTF-8 bytes of a string.
 */
/** One entry to append to a call's path. */
export interface PathAppend {
  callid: string;
  entry: string;
}

/** Requests counted in the last entry of a call's path instead of entries of their own (countPaths). */
export interface PathCount {
  callid: string;
  replays: number;
  refused: number;
}

/** A call's path as stored: its entries, oldest first, and how many older ones were dropped (past its limits). */
export interface StoredPath {
  entries: string[];
  dropped: number;
}

/** Beside a finished record: its row (what a listing shows) and the bytes all finished records may hold. */
export interface FinishedExtra {
  row: string;
  maxBytes: number;
}

/** The counts at the end of a counted entry (countPaths). */
const COUNTS = /,"replays":([0-9]{1,15}),"refused":([0-9]{1,15})\}$/;

/**
 * A path entry with requests counted (countPaths's convention: its last members `"replays":<n>,"refused":<n>`, added
 * the first time); an entry that is no JSON object is given back as it is.
 */
export function countedEntry(entry: string, replays: number, refused: number): string {
  if (!entry.startsWith('{') || !entry.endsWith('}')) return entry;
  const tail = entry.slice(-64);
  const m = COUNTS.exec(tail);
  if (m) {
    const head = entry.slice(0, entry.length - tail.length + m.index);
    return `${head},"replays":${Number(m[1]) + replays},"refused":${Number(m[2]) + refused}}`;
  }
  const head = entry.slice(0, -1);
  return `${head}${head.trimEnd() === '{' ? '' : ','}"replays":${replays},"refused":${refused}}`;
}

export interface HistoryStore {
  /**
   * Appends an entry to the call's path, keeping its last `maxEntries`; the path expires `ttlMs` after its last append.
   */
  appendPath(callid: string, entry: string, maxEntries: number, ttlMs: number): Promise<void>;
  /**
   * appendPath for several entries at once, in order (one round trip on Redis): what the history writer sends per turn
   * of the event loop. Each path keeps its last `maxEntries`, of at most `maxBytes` in all (absent: no byte limit); the
   * newest entry is kept whatever its size, the entries dropped from the start are counted (loadPath's `dropped`).
   */
  appendPaths(entries: readonly PathAppend[], maxEntries: number, ttlMs: number, maxBytes?: number): Promise<void>;
  /**
   * Counts requests in the last entry of each call's path (a path that does not exist is not made; its expiry is left
   * as it is). The entry, a JSON object, ends with its counts: `,"replays":<n>,"refused":<n>}` (added the first time,
   * raised after), an entry that is no JSON object is left as it is. The path's bytes count the entry as it becomes;
   * past `maxBytes`, its oldest entries are dropped as appendPaths does.
   */
  countPaths(counts: readonly PathCount[], maxBytes?: number): Promise<void>;
  /** The call's path, oldest entry first ([] when none). */
  readPath(callid: string): Promise<string[]>;
  /** The call's path and the entries dropped from its start ({entries: [], dropped: 0} when none). */
  loadPath(callid: string): Promise<StoredPath>;
  dropPath(callid: string): Promise<void>;
  /**
   * Keeps a finished call's record for `ttlMs`, as the newest (a callid added again moves to
   * the front); past `keep` records, or past `extra.maxBytes` (the records and rows of all, the newest always kept),
   * the oldest go, their records with them. `extra.row`: what listFinishedRows answers for it.
   */
  addFinished(callid: string, record: string, keep: number, ttlMs: number, extra?: FinishedExtra): Promise<void>;
  /** Finished records, newest first, from `offset` (expired ones left out). */
  listFinished(offset: number, limit: number): Promise<string[]>;
  /**
   * As listFinished, each call's row instead of its record (small: what a listing shows); a record added without a row
   * is given whole.
   */
  listFinishedRows(offset: number, limit: number): Promise<string[]>;
  getFinished(callid: string): Promise<string | undefined>;
  /**
   * A page of the calls held (those with a value: tombstones and claims included, asides
   * alone not), in the store's own order, and the cursor of the next page (absent at the
   * end). The cursor is the store's: one it did not give is refused with BadCursor. A call
   * present through the whole walk is listed at least once.
   */
  listLive(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ values: [callid: string, value: string][]; next?: string }>;
}

/**
 * Delivery status of the SMS the flows sent (docs/webhooks.md), per SMS hash: who sent it
 * (the call history writes it when an sms step succeeded) and the delivery reports the
 * service POSTed to the webhook route, each once (by its event id); and the webhook event
 * ids handled, so that a retried event is recorded once. Values are opaque strings here
 * (src/engine/sms-delivery.ts makes them). A store without these methods (one of your own
 * written before them) keeps no delivery status: the webhook route is off.
 */
export interface SmsStatusStore {
  /**
   * Notes who sent the SMS (kept beside its reports, replacing an earlier note); the record expires `ttlMs` after its
   * last write.
   */
  smsSent(hash: string, sent: string, ttlMs: number): Promise<void>;
  /**
   * Adds a delivery report of the SMS, once per `eventId`, unless it has `maxReports`
   * already; the record expires `ttlMs` after its last write. Resolves whether it was added.
   */
  smsReport(hash: string, eventId: string, report: string, maxReports: number, ttlMs: number): Promise<boolean>;
  /**
   * The SMS's record: who sent it (absent when not known) and its reports (in no particular order); undefined when
   * there is neither.
   */
  smsStatus(hash: string): Promise<{ sent?: string; reports: string[] } | undefined>;
  /**
   * Claims a webhook event id for `ttlMs`: true the first time, false while it is claimed (a repeat, here or on another
   * instance).
   */
  claimEvent(eventId: string, ttlMs: number): Promise<boolean>;
  /** Gives a claim back (the event could not be handled: its retry will be). */
  releaseEvent(eventId: string): Promise<void>;
}

const SMS_STATUS_METHODS = ['smsSent', 'smsReport', 'smsStatus', 'claimEvent', 'releaseEvent'] as const;

/** Whether the store keeps delivery status (MemoryStore and RedisStore do). */
export function hasSmsStatus<T extends object>(store: T): store is T & SmsStatusStore {
  return SMS_STATUS_METHODS.every((m) => typeof (store as Record<string, unknown>)[m] === 'function');
}

/**
 * Outbound calls the server placed (POST /admin/calls, src/http/outbound.ts): a record per
 * call id (the `request_hash` of its requests), an opaque string, kept for `ttlMs`.
 */
export interface OutboundStore {
  /** Writes the record of outbound call `id` (replacing any), kept `ttlMs` from now. */
  putOutbound(id: string, record: string, ttlMs: number): Promise<void>;
  /** The record, undefined when unknown or expired. */
  getOutbound(id: string): Promise<string | undefined>;
}

/** A listing cursor the store did not give (or no longer understands). */
export class BadCursor extends Error {
  readonly code = 'BAD_CURSOR';
  constructor(
    message: string,
    /** The cursor was one the store gave, kept for a while that has passed. */
    readonly expired = false,
  ) {
    super(message);
  }
}

/** The store could not be reached or answered too late: the request fails fast, nothing is half-written. */
export class StoreUnavailable extends Error {
  readonly code = 'STORE_UNAVAILABLE';
}
