/**
 * The call history's writer (docs/admin.md "Call history"): a step observer that appends
 * each served request to its call's path in the store and, when the call ends, turns the
 * path into a finished record (the last `keep` are kept, for `ttlMs`).
 *
 * On the request path it only queues the event (O(1)); the entries are built and written
 * on the next turn of the event loop, after the reply has gone, and never awaited by a
 * reply. A failed write is counted and logged (HISTORY_WRITE_FAILED, at most one line per
 * 10 s): the calls are not affected. Writes of one call are issued in order (the store
 * sees a call's appends before its end).
 *
 * An SMS a flow sent (an sms effect that succeeded) is noted too, under its hash: which
 * call and step sent it, so that the delivery reports of the webhook route
 * (src/http/webhooks.ts) are the call's (src/engine/sms-delivery.ts).
 */
import type { StepEvent, StepObserver } from '../engine/observe.js';
import {
  endedByAdminRecord,
  finishedRecordText,
  inPath,
  parsePath,
  pathEntry,
  type FinishedRecord,
} from '../engine/history.js';
import type { CallState } from '../engine/types.js';
import {
  hasSmsStatus,
  type CallStore,
  type HistoryStore,
  type PathAppend,
  type SmsStatusStore,
} from '../store/types.js';
import { sentText, SMS_HASH } from '../engine/sms-delivery.js';

export interface HistorySettings {
  /** Finished calls kept (the newest); 0: no history at all. */
  keep: number;
  /** How long a finished record is kept. */
  ttlMs: number;
  /** Entries kept per call path (its last ones). */
  maxPath: number;
}

export const DEFAULT_HISTORY: HistorySettings = { keep: 1000, ttlMs: 86_400_000, maxPath: 200 };

export const HISTORY_BOUNDS = { keep: [0, 100_000], ttlMs: [1000, 30 * 86_400_000], maxPath: [1, 10_000] } as const;

/** Writes queued or under way past which new events are dropped (a store far too slow): memory stays bounded. */
const MAX_PENDING = 10_000;
/** At most one log line of failed writes per this long. */
const LOG_EVERY_MS = 10_000;

interface Log {
  error(obj: object, msg: string): void;
}

export class HistoryWriter implements StepObserver {
  readonly transitions = true;
  /** Writes that failed, and events dropped because too many writes were pending (since the start). */
  failures = 0;
  dropped = 0;
  private queue: StepEvent[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private readonly inflight = new Set<Promise<void>>();
  /** Events whose writes are under way (a batch of path entries counts each). */
  private writing = 0;
  private lastLog = 0;
  private unlogged = 0;
  private quiet = false;
  /** Where the SMS sent are noted (the store, when it keeps delivery status). */
  private readonly sms: SmsStatusStore | undefined;

  constructor(
    private readonly store: HistoryStore,
    readonly settings: HistorySettings,
    /** How long a live call's path is kept after its last request (the call's own TTL). */
    private readonly pathTtlMs: number,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {
    this.sms = hasSmsStatus(store) ? store : undefined;
  }

  /** How long the note of an SMS sent (and its reports) is kept: as long as its call's record may be. */
  get smsTtlMs(): number {
    return this.settings.ttlMs + this.pathTtlMs;
  }

  step(e: StepEvent): void {
    if (!inPath(e)) return;
    if (this.queue.length + this.writing >= MAX_PENDING) {
      this.dropped++;
      this.failed(new Error(`${MAX_PENDING} history writes pending: the store is too slow, events are dropped`));
      return;
    }
    this.queue.push(e);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /**
   * The record of a call the admin API ended (its state before the tombstone), written after the call's pending writes.
   */
  async endedByAdmin(callid: string, state: CallState, vars: Record<string, unknown>): Promise<FinishedRecord> {
    await this.idle();
    const path = parsePath(await this.store.readPath(callid));
    const record = endedByAdminRecord(
      {
        callid,
        flow: state.flow,
        version: state.version,
        started: state.started,
        step: state.step,
        commands: state.commands,
      },
      vars,
      path,
      this.now(),
      this.settings.maxPath,
    );
    await this.store.addFinished(callid, JSON.stringify(record), this.settings.keep, this.settings.ttlMs);
    await this.store.dropPath(callid);
    return record;
  }

  /** Resolves once the events told so far are written (or failed). */
  async idle(): Promise<void> {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.flush();
    }
    await Promise.allSettled([...this.inflight]);
  }

  /**
   * Writes what is pending, waiting at most `waitMs` (the server closes); `quiet`: failures from now on are counted,
   * not logged (the store may be closed).
   */
  async close(waitMs = 2000, quiet = false): Promise<void> {
    if (quiet) this.quiet = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  private flush(): void {
    this.scheduled = undefined;
    const batch = this.queue;
    this.queue = [];
    // this turn's path entries in one write (one round trip on Redis), then the calls that ended (they read their
    // paths)
    const appends: PathAppend[] = [];
    const ends: StepEvent[] = [];
    for (const e of batch) {
      if (this.sms) this.noteSms(e, this.sms);
      if (e.ended) ends.push(e);
      else
        try {
          appends.push({ callid: e.callid, entry: JSON.stringify(pathEntry(e)) });
        } catch (err) {
          this.failed(err);
        }
    }
    const appended =
      appends.length > 0 ? this.store.appendPaths(appends, this.settings.maxPath, this.pathTtlMs) : undefined;
    if (appended) this.track(appended, appends.length);
    for (const e of ends) {
      const after = appended ? appended.catch(() => undefined) : Promise.resolve();
      this.track(
        after.then(() => this.finish(e)),
        1,
      );
    }
  }

  /**
   * The SMS the request's sms steps sent, noted under their hashes (which call and step): a write each, beside the
   * path's (SMS are few).
   */
  private noteSms(e: StepEvent, sms: SmsStatusStore): void {
    for (const x of e.effects) {
      if (x.kind === 'sms' && x.outcome === 'ok' && x.value !== undefined && SMS_HASH.test(x.value))
        this.track(sms.smsSent(x.value, sentText({ callid: e.callid, step: x.step, at: e.at }), this.smsTtlMs), 0);
    }
  }

  private async finish(e: StepEvent): Promise<void> {
    const record = finishedRecordText(e, await this.store.readPath(e.callid), this.settings.maxPath);
    await this.store.addFinished(e.callid, record, this.settings.keep, this.settings.ttlMs);
    await this.store.dropPath(e.callid);
  }

  private track(p: Promise<void>, events: number): void {
    this.writing += events;
    const t: Promise<void> = p.then(
      () => {
        this.inflight.delete(t);
        this.writing -= events;
      },
      (err: unknown) => {
        this.inflight.delete(t);
        this.writing -= events;
        this.failed(err);
      },
    );
    this.inflight.add(t);
  }

  private failed(err: unknown): void {
    this.failures++;
    this.unlogged++;
    const now = this.now();
    if (this.quiet) return;
    if (now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    const n = this.unlogged;
    this.unlogged = 0;
    this.log.error(
      { code: 'HISTORY_WRITE_FAILED', failed: n, err: err instanceof Error ? err.message : String(err) },
      `call history: ${n} write${n === 1 ? '' : 's'} failed (the calls are not ` +
        `affected): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * The history settings of plugin options (`false` or keep 0: off), checked; a problem is thrown as the plugin's other
 * options are.
 */
export function historySettings(o: false | Partial<HistorySettings> | undefined): HistorySettings | undefined {
  if (o === false) return undefined;
  const s = {
    ...DEFAULT_HISTORY,
    ...Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)),
  } as HistorySettings;
  for (const k of ['keep', 'ttlMs', 'maxPath'] as const) {
    const [lo, hi] = HISTORY_BOUNDS[k];
    if (!Number.isInteger(s[k]) || s[k] < lo || s[k] > hi)
      throw new Error(`callscript plugin: history.${k} must be an integer from ${lo} to ${hi}, got ${String(s[k])}`);
  }
  return s.keep === 0 ? undefined : s;
}

const HISTORY_METHODS = [
  'appendPath',
  'readPath',
  'dropPath',
  'addFinished',
  'listFinished',
  'getFinished',
  'listLive',
] as const;

/** The store itself when it has the history methods; else one that has none kept (its own methods by delegation). */
export function historyStore(store: CallStore): CallStore {
  if (HISTORY_METHODS.every((m) => typeof (store as unknown as Record<string, unknown>)[m] === 'function')) {
    if (typeof (store as Partial<HistoryStore>).appendPaths === 'function') return store;
    // a store of one's own written before appendPaths: its appendPath, entry by entry
    const appendPaths: HistoryStore['appendPaths'] = async (entries, max, ttl) => {
      for (const e of entries) await store.appendPath(e.callid, e.entry, max, ttl);
    };
    return withMethods(store, { appendPaths });
  }
  const none: HistoryStore = {
    appendPath: async () => {},
    appendPaths: async () => {},
    readPath: async () => [],
    dropPath: async () => {},
    addFinished: async () => {},
    listFinished: async () => [],
    getFinished: async () => undefined,
    listLive: async () => ({ values: [] }),
  };
  return withMethods(store, none);
}

/**
 * The store with `extra` methods in front; its own methods run on the store itself (bound), so a store whose methods
 * read private fields (`#x`) works through it.
 */
function withMethods(store: CallStore, extra: Partial<HistoryStore>): CallStore {
  return new Proxy(store, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(extra, prop)) return extra[prop as keyof HistoryStore];
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
