/**
 * The emulator's data: one account's applications, SMS, call transcripts, DID routes,
 * per-number caller scripts, and the id generator's state. Kept in memory; every change
 * is one `Op`, applied here and handed to the sink (persist/journal.ts with --data), which
 * makes it durable. A reply waits for `saved()`, so nothing is acknowledged before it is
 * on disk.
 */
import { Ids } from './ids.js';
import type { Transcript } from './driver/transcript.js';
import type { SmsRecord } from './sms/record.js';
import type { AppRecord } from './rpc/apps.js';
import type { HookRecord } from './webhooks/hooks.js';

export const DATA_VERSION = 1;

export type CallerEntry = { text: string; file: string };

/** The data file's shape (a snapshot; persist/ adds the changes made since in a journal). */
export interface EmulatorData {
  version: number;
  /** Which journal continues this snapshot (persist/format.ts); 0 when absent. */
  generation?: number;
  ids: string;
  apps: AppRecord[];
  sms: SmsRecord[];
  calls: Transcript[];
  /** DID (E.164) -> app hash. */
  dids: Record<string, string>;
  /** Number (E.164) -> caller script (as written) used when the emulator calls that number. */
  callers: Record<string, CallerEntry>;
  /** Webhook subscriptions (webhooks.subscribe); absent in data files written before them. */
  hooks?: HookRecord[];
}

/** One change: an object written whole, a route or script set (or removed: null), a reset. */
export type Op =
  | { op: 'app'; v: AppRecord }
  | { op: 'sms'; v: SmsRecord }
  | { op: 'call'; v: Transcript }
  | { op: 'did'; k: string; v: string | null }
  | { op: 'caller'; k: string; v: CallerEntry | null }
  | { op: 'hook'; k: string; v: HookRecord | null }
  | { op: 'reset' };

/** Where changes go: `record` is called once per change, with the id generator's state after it. */
export interface StoreSink {
  record(op: Op, ids: string): void;
  /** Resolves once every change recorded so far is durable; rejects if it could not be written. */
  saved(): Promise<void>;
}

const SAVED = Promise.resolve();

/** SMS the emulator keeps by default (the oldest are forgotten past it): GET /sms lists them all. */
export const DEFAULT_MAX_SMS = 100_000;

export class EmulatorStore {
  private readonly appMap = new Map<string, AppRecord>();
  private readonly smsMap = new Map<string, SmsRecord>();
  private readonly callMap = new Map<string, Transcript>();
  private readonly didMap = new Map<string, string>();
  private readonly callerMap = new Map<string, CallerEntry>();
  private readonly hookMap = new Map<string, HookRecord>();
  ids: Ids;
  sink: StoreSink | undefined;

  constructor(
    seed: string,
    private readonly maxCalls: number,
    /** SMS kept, at most: the oldest go first (the same on a replay of the journal). */
    private readonly maxSms = DEFAULT_MAX_SMS,
  ) {
    this.ids = new Ids(seed);
  }

  get apps(): ReadonlyMap<string, AppRecord> {
    return this.appMap;
  }
  get sms(): ReadonlyMap<string, SmsRecord> {
    return this.smsMap;
  }
  get calls(): ReadonlyMap<string, Transcript> {
    return this.callMap;
  }
  get dids(): ReadonlyMap<string, string> {
    return this.didMap;
  }
  get callers(): ReadonlyMap<string, CallerEntry> {
    return this.callerMap;
  }
  get hooks(): ReadonlyMap<string, HookRecord> {
    return this.hookMap;
  }

  /** A new 8-character hash unused by any object. */
  newHash(): string {
    return this.ids.hash((h) => this.appMap.has(h) || this.smsMap.has(h) || this.callMap.has(h) || this.hookMap.has(h));
  }

  putApp(a: AppRecord): void {
    this.commit({ op: 'app', v: a });
  }
  /** Stores the SMS as it is now (after a status change too). */
  putSms(r: SmsRecord): void {
    this.commit({ op: 'sms', v: r });
  }
  /** Stores the transcript as it is now; the oldest beyond the limit are forgotten. */
  putCall(t: Transcript): void {
    this.commit({ op: 'call', v: t });
  }
  setDid(number: string, app: string): void {
    this.commit({ op: 'did', k: number, v: app });
  }
  /** false when the number was not routed. */
  deleteDid(number: string): boolean {
    return this.drop('did', this.didMap, number);
  }
  setCaller(number: string, c: CallerEntry): void {
    this.commit({ op: 'caller', k: number, v: c });
  }
  /** false when the number had no script. */
  deleteCaller(number: string): boolean {
    return this.drop('caller', this.callerMap, number);
  }
  putHook(h: HookRecord): void {
    this.commit({ op: 'hook', k: h.hash, v: h });
  }
  /** false when there was no such subscription. */
  deleteHook(hash: string): boolean {
    return this.drop('hook', this.hookMap, hash);
  }
  /** Forgets every object (the id generator goes on). */
  reset(): void {
    this.commit({ op: 'reset' });
  }

  /** Resolves once every change so far is durable (at once without --data). */
  saved(): Promise<void> {
    return this.sink ? this.sink.saved() : SAVED;
  }

  private drop(op: 'did' | 'caller' | 'hook', map: Map<string, unknown>, k: string): boolean {
    if (!map.has(k)) return false;
    this.commit({ op, k, v: null });
    return true;
  }

  private commit(op: Op): void {
    this.apply(op);
    this.sink?.record(op, this.ids.stateText);
  }

  /** Applies one change (also when the journal is replayed at start). */
  apply(op: Op): void {
    switch (op.op) {
      case 'app':
        this.appMap.set(op.v.hash, op.v);
        break;
      case 'sms':
        this.smsMap.set(op.v.hash, op.v);
        while (this.smsMap.size > this.maxSms) this.smsMap.delete(this.smsMap.keys().next().value as string);
        break;
      case 'call':
        this.callMap.delete(op.v.id);
        this.callMap.set(op.v.id, op.v);
        while (this.callMap.size > this.maxCalls) this.callMap.delete(this.callMap.keys().next().value as string);
        break;
      case 'did':
        if (op.v === null) this.didMap.delete(op.k);
        else this.didMap.set(op.k, op.v);
        break;
      case 'caller':
        if (op.v === null) this.callerMap.delete(op.k);
        else this.callerMap.set(op.k, op.v);
        break;
      case 'hook':
        if (op.v === null) this.hookMap.delete(op.k);
        else this.hookMap.set(op.k, op.v);
        break;
      case 'reset':
        for (const m of [this.appMap, this.smsMap, this.callMap, this.didMap, this.callerMap, this.hookMap]) m.clear();
        break;
    }
  }

  toJSON(): EmulatorData {
    return {
      version: DATA_VERSION,
      ids: this.ids.stateText,
      apps: [...this.appMap.values()],
      sms: [...this.smsMap.values()],
      calls: [...this.callMap.values()],
      dids: Object.fromEntries(this.didMap),
      callers: Object.fromEntries(this.callerMap),
      hooks: [...this.hookMap.values()],
    };
  }

  /** Replaces everything with `data` (read from the data file). */
  load(data: EmulatorData): void {
    this.apply({ op: 'reset' });
    this.ids = new Ids(data.ids);
    for (const a of data.apps) this.appMap.set(a.hash, a);
    for (const s of data.sms) this.smsMap.set(s.hash, s);
    for (const c of data.calls) this.callMap.set(c.id, c);
    for (const [k, v] of Object.entries(data.dids)) this.didMap.set(k, v);
    for (const [k, v] of Object.entries(data.callers)) this.callerMap.set(k, v);
    for (const h of data.hooks ?? []) this.hookMap.set(h.hash, h);
  }
}
