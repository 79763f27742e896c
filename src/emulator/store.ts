/**
 * The emulator's data: one account's applications, SMS, call transcripts, DID routes,
 * per-number caller scripts, and the id generator's state. Kept in memory; every change
 * calls `changed()`, which the persister (persist.ts) turns into an atomic file write.
 */
import { Ids } from './ids.js';
import type { Transcript } from './driver/transcript.js';
import type { SmsRecord } from './sms/record.js';
import type { AppRecord } from './rpc/apps.js';

export const DATA_VERSION = 1;

/** The JSON file's shape. */
export interface EmulatorData {
  version: number;
  ids: string;
  apps: AppRecord[];
  sms: SmsRecord[];
  calls: Transcript[];
  /** DID (E.164) -> app hash. */
  dids: Record<string, string>;
  /** Number (E.164) -> caller script (as written) used when the emulator calls that number. */
  callers: Record<string, { text: string; file: string }>;
}

export class EmulatorStore {
  readonly apps = new Map<string, AppRecord>();
  readonly sms = new Map<string, SmsRecord>();
  readonly calls = new Map<string, Transcript>();
  readonly dids = new Map<string, string>();
  readonly callers = new Map<string, { text: string; file: string }>();
  ids: Ids;

  constructor(
    seed: string,
    private readonly maxCalls: number,
    private readonly onChange: () => void = () => undefined,
  ) {
    this.ids = new Ids(seed);
  }

  changed(): void {
    this.onChange();
  }

  /** A new 8-character hash unused by any object. */
  newHash(): string {
    return this.ids.hash((h) => this.apps.has(h) || this.sms.has(h) || this.calls.has(h));
  }

  putCall(t: Transcript): void {
    this.calls.delete(t.id);
    this.calls.set(t.id, t);
    while (this.calls.size > this.maxCalls) {
      const oldest = this.calls.keys().next().value as string;
      this.calls.delete(oldest);
    }
    this.changed();
  }

  toJSON(): EmulatorData {
    return {
      version: DATA_VERSION,
      ids: this.ids.stateText,
      apps: [...this.apps.values()],
      sms: [...this.sms.values()],
      calls: [...this.calls.values()],
      dids: Object.fromEntries(this.dids),
      callers: Object.fromEntries(this.callers),
    };
  }

  /** Replaces everything with `data` (read from the data file). */
  load(data: EmulatorData): void {
    this.ids = new Ids(data.ids);
    this.apps.clear();
    this.sms.clear();
    this.calls.clear();
    this.dids.clear();
    this.callers.clear();
    for (const a of data.apps) this.apps.set(a.hash, a);
    for (const s of data.sms) this.sms.set(s.hash, s);
    for (const c of data.calls) this.calls.set(c.id, c);
    for (const [k, v] of Object.entries(data.dids)) this.dids.set(k, v);
    for (const [k, v] of Object.entries(data.callers)) this.callers.set(k, v);
  }

  /** Forgets every object (the id generator goes on). */
  reset(): void {
    this.apps.clear();
    this.sms.clear();
    this.calls.clear();
    this.dids.clear();
    this.callers.clear();
    this.changed();
  }
}

/** Checks the shape of a data file's content; a reason when it is not one of ours. */
export function checkData(v: unknown): string | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const o = v as Record<string, unknown>;
  if (o.version !== DATA_VERSION) return `unknown data version ${JSON.stringify(o.version)} (this emulator writes version ${DATA_VERSION})`;
  if (typeof o.ids !== 'string') return 'field ids must be a string';
  for (const k of ['apps', 'sms', 'calls']) if (!Array.isArray(o[k])) return `field ${k} must be an array`;
  for (const k of ['dids', 'callers']) if (!o[k] || typeof o[k] !== 'object' || Array.isArray(o[k])) return `field ${k} must be an object`;
  return null;
}
