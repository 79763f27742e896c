/**
 * The call history's writer (docs/admin.md "Call history"): a step observer that appends
 * each served request to its call's path in the store and, when the call ends, turns the
 * path into a finished record (the last `keep` are kept, for `ttlMs`, `maxBytes` at most).
 * A replay or a refused request is counted in the entry before it, not appended: what a
 * client may make a call keep is its entries (cut: src/engine/history.ts), at most `maxPath`
 * of them and `maxPathBytes` in all.
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
import { codeDefaults, codeNumberProblem } from '../config/code.js';
import type { StepEvent, StepObserver } from '../engine/observe.js';
import {
  endedByAdminRecord,
  finishedRecordText,
  finishedRow,
  inPath,
  parseRecord,
  pathCount,
  pathEntry,
  type FinishedRecord,
  type PathEntry,
  type PathLimits,
} from '../engine/history.js';
import type { CallState } from '../engine/types.js';
import {
  hasSmsStatus,
  type CallStore,
  type HistoryStore,
  type PathAppend,
  type PathCount,
  type SmsStatusStore,
} from '../store/types.js';
import { sentText, SMS_HASH } from '../engine/sms-delivery.js';

/** The config file's `history:` in ms; defaults and bounds: the table of options (src/config/table-services.ts). */
export interface HistorySettings {
  /** Finished calls kept (the newest); 0: no history at all (history.keep). */
  keep: number;
  /** How long a finished record is kept (history.ttl_ms). */
  ttlMs: number;
  /** Entries kept per call path, its last ones (history.max_path). */
  maxPath: number;
  /** UTF-8 bytes of entries kept per call path (history.max_path_bytes). */
  maxPathBytes: number;
  /** UTF-8 bytes of all the finished records and rows (history.max_bytes). */
  maxBytes: number;
}

const NAMES = ['keep', 'ttlMs', 'maxPath', 'maxPathBytes', 'maxBytes'] as const;

/** The defaults, from the table of options. */
export const DEFAULT_HISTORY: HistorySettings = codeDefaults('history.', NAMES) as Record<
  (typeof NAMES)[number],
  number
>;

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
    const { text, record } = endedByAdminRecord(
      {
        callid,
        flow: state.flow,
        version: state.version,
        started: state.started,
        step: state.step,
        commands: state.commands,
      },
      vars,
      await this.store.loadPath(callid),
      this.now(),
      this.limits,
    );
    await this.store.addFinished(callid, text.record, this.settings.keep, this.settings.ttlMs, {
      row: text.row,
      maxBytes: this.settings.maxBytes,
    });
    await this.store.dropPath(callid);
    return record;
  }

  /** What a call's path keeps. */
  get limits(): PathLimits {
    return { entries: this.settings.maxPath, bytes: this.settings.maxPathBytes };
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
    // This turn's path entries in one write (one round trip on Redis), then the calls that ended (they read their
    // paths). A replay or a refused request is counted in its call's entry before it: one of this batch (counted
    // here), else the stored last one (countPaths, sent before the appends).
    const entries = new Map<string, PathEntry[]>();
    const counts = new Map<string, PathCount>();
    const ends: StepEvent[] = [];
    let events = 0;
    for (const e of batch) {
      if (this.sms) this.noteSms(e, this.sms);
      if (e.ended) {
        ends.push(e);
        continue;
      }
      events++;
      const count = pathCount(e);
      const mine = entries.get(e.callid);
      if (count === undefined) {
        if (mine) mine.push(pathEntry(e));
        else entries.set(e.callid, [pathEntry(e)]);
      } else if (mine) {
        const last = mine[mine.length - 1]!;
        last.replays ??= 0;
        last.refused ??= 0;
        last[count] = (last[count] ?? 0) + 1;
      } else {
        const c = counts.get(e.callid) ?? { callid: e.callid, replays: 0, refused: 0 };
        c[count]++;
        counts.set(e.callid, c);
      }
    }
    const appends: PathAppend[] = [];
    for (const [callid, list] of entries)
      for (const entry of list)
        try {
          appends.push({ callid, entry: JSON.stringify(entry) });
        } catch (err) {
          this.failed(err);
        }
    const { maxPath, maxPathBytes } = this.settings;
    // both sent at once, the counts first: a store sees them in this order, and before the next turn's writes (most
    // turns have one of the two: its promise alone)
    const counted = counts.size > 0 ? this.store.countPaths([...counts.values()], maxPathBytes) : undefined;
    const appended =
      appends.length > 0 ? this.store.appendPaths(appends, maxPath, this.pathTtlMs, maxPathBytes) : undefined;
    const written = counted && appended ? Promise.all([counted, appended]).then(() => {}) : (counted ?? appended);
    if (written) this.track(written, events);
    for (const e of ends) {
      const after = written ? written.catch(() => undefined) : Promise.resolve();
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
    const { record, row } = finishedRecordText(e, await this.store.loadPath(e.callid), this.limits);
    await this.store.addFinished(e.callid, record, this.settings.keep, this.settings.ttlMs, {
      row,
      maxBytes: this.settings.maxBytes,
    });
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
  for (const k of NAMES) {
    const problem = codeNumberProblem(`history.${k}`, s[k]);
    if (problem !== undefined) throw new Error(`callscript plugin: ${problem}`);
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

/**
 * The store itself when it has the history methods; else one that has none kept (its own methods by delegation). A
 * store of one's own written before some of them gets them made of its older ones: appendPaths of appendPath (entry by
 * entry), loadPath of readPath (none dropped), listFinishedRows of listFinished (rows of the records); countPaths
 * counts nothing (its replays and refused requests are not kept at all). Such a store keeps its own bounds: the byte
 * limits are given to the methods that take them.
 */
export function historyStore(store: CallStore): CallStore {
  const has = (m: string) => typeof (store as unknown as Record<string, unknown>)[m] === 'function';
  if (HISTORY_METHODS.every(has)) {
    const extra: Partial<HistoryStore> = {};
    if (!has('appendPaths'))
      extra.appendPaths = async (entries, max, ttl) => {
        for (const e of entries) await store.appendPath(e.callid, e.entry, max, ttl);
      };
    if (!has('countPaths')) extra.countPaths = async () => {};
    if (!has('loadPath')) extra.loadPath = async (callid) => ({ entries: await store.readPath(callid), dropped: 0 });
    if (!has('listFinishedRows'))
      extra.listFinishedRows = async (offset, limit) =>
        (await store.listFinished(offset, limit)).flatMap((text) => {
          const r = parseRecord(text);
          return r ? [JSON.stringify(finishedRow(r))] : [];
        });
    return Object.keys(extra).length === 0 ? store : withMethods(store, extra);
  }
  const none: HistoryStore = {
    appendPath: async () => {},
    appendPaths: async () => {},
    countPaths: async () => {},
    readPath: async () => [],
    loadPath: async () => ({ entries: [], dropped: 0 }),
    dropPath: async () => {},
    addFinished: async () => {},
    listFinished: async () => [],
    listFinishedRows: async () => [],
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
