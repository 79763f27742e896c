/**
 * The call history's records (docs/admin.md "Call history"), built from the step events
 * (./observe.ts): pure data, no store here (src/http/history.ts writes them).
 *
 * - A path entry per request of a served call: what it reported (strings cut to REQUEST_TEXT_BYTES), the step it
 *   left and the one it reached, the command answered (params cut: strings over 200 characters end with …), the
 *   transitions the machine took, the effects and their timings. A replay or a refused request (stale, rejected)
 *   is no entry of its own: it is counted in the entry before it (`replays`, `refused`: pathCount).
 * - A finished record when the call ends: its summary (vars masked) and its path, kept within the path's limits
 *   (its last `entries`, at most `bytes` of them), the entries dropped counted.
 *
 * Sensitive values are masked in the events already, so nothing here sees them.
 */
import {
  REQUEST_TEXT_BYTES,
  type CallOutcome,
  type EffectEvent,
  type RequestOutcome,
  type StepEvent,
} from './observe.js';
import { clipText } from './size.js';

export interface PathEntry {
  /** Epoch ms the request arrived; its handling time in ms. */
  at: number;
  ms: number;
  /** The step whose command the request reports; null for the first request of a call. */
  from: string | null;
  /** The request: its command, result (*** when sensitive) and error. */
  command: string;
  result: string;
  error: string;
  /** The step of the command answered; null when none. */
  step: string | null;
  /** The command answered and its params (cut); null when none was built (a replay, an error). */
  reply: { command: string; params: Record<string, unknown> } | null;
  /** Coverage keys of the transitions taken (src/testing/transitions.ts). */
  transitions: string[];
  /** A queue step's operation also names its queue, its op and, for a poll, the caller's wait so far (seconds). */
  effects: {
    kind: string;
    step: string;
    outcome: string;
    value?: string;
    ms: number;
    queue?: { name: string; op: string; waited?: number };
  }[];
  /** The step landed after the deadline (a fallback was answered in its place). */
  late: boolean;
  outcome: RequestOutcome;
  /** The trace id of the request's span, when one was recording. */
  traceId?: string;
  /**
   * Requests counted here after this one, not kept as entries: retries answered the same reply again (`replays`),
   * refused ones (stale, rejected: `refused`). Both present once one is counted, as the entry's last members.
   */
  replays?: number;
  refused?: number;
}

export interface FinishedRecord {
  callid: string;
  flow: string;
  version: string;
  /** ISO 8601 times. */
  started: string;
  ended: string;
  durationMs: number;
  outcome: CallOutcome;
  /** The code of the engine error that ended the flow (outcome error), when one did. */
  error?: string;
  /** The call_status the call ended with (UP for a call ended by the admin API). */
  status: string;
  lastStep: string;
  commands: number;
  /** Sensitive ones masked. */
  vars: Record<string, unknown>;
  /** Entries dropped from the start of the path (past history.max_path or history.max_path_bytes). */
  dropped: number;
  path: PathEntry[];
}

/** A finished call as listed (GET /admin/calls?status=finished). */
export type FinishedRow = Pick<
  FinishedRecord,
  'callid' | 'flow' | 'version' | 'started' | 'ended' | 'durationMs' | 'outcome' | 'status' | 'lastStep'
>;

/** Longest string kept whole in a path entry's params. */
export const PARAM_CHARS = 200;

/** What a call's path keeps: its last `entries`, of at most `bytes` in all (UTF-8 bytes of their JSON text). */
export interface PathLimits {
  entries: number;
  bytes: number;
}

/** A call's path as stored: its entries' JSON text, oldest first, and how many older ones were dropped. */
export interface StoredPath {
  entries: readonly string[];
  dropped: number;
}

/**
 * Whether an event belongs in its call's path: requests the call's flow served (not a tombstone's hangup, not a refused
 * new call).
 */
export function inPath(e: StepEvent): boolean {
  if (e.flow === undefined) return false;
  if (e.outcome === 'ok' && e.reply === undefined) return false;
  return !(e.isNew && e.answer !== 'answered');
}

/**
 * How a request of the path is kept: counted in the entry before it (a replay: `replays`; a refused request: `refused`)
 * or an entry of its own (undefined). A client may send a call's last request again and again: each costs a count.
 */
export function pathCount(e: StepEvent): 'replays' | 'refused' | undefined {
  if (e.outcome === 'replay') return 'replays';
  return e.outcome === 'stale' || e.outcome === 'rejected' ? 'refused' : undefined;
}

export function pathEntry(e: StepEvent): PathEntry {
  const entry: PathEntry = {
    at: e.at,
    ms: round(e.ms),
    from: e.from ?? null,
    command: clipText(e.request.command, REQUEST_TEXT_BYTES),
    result: clipText(e.request.result, REQUEST_TEXT_BYTES),
    error: clipText(e.request.error, REQUEST_TEXT_BYTES),
    step: e.step ?? null,
    reply: e.reply ? { command: e.reply.command, params: cut(e.reply.params, 0) as Record<string, unknown> } : null,
    transitions: [...e.transitions],
    effects: e.effects.map(effect),
    late: e.late,
    outcome: e.outcome,
  };
  if (e.traceId !== undefined) entry.traceId = e.traceId;
  return entry;
}

/** The UTF-8 size of a text. */
export const textBytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The path kept within `limits`: its last entries (the newest always, whatever its size), the ones dropped from its
 * start added to `dropped`.
 */
export function fitPath(path: StoredPath, limits: PathLimits): { entries: string[]; dropped: number } {
  const all = path.entries;
  let i = all.length;
  let bytes = 0;
  while (i > 0 && all.length - i < limits.entries) {
    const n = textBytes(all[i - 1]!);
    if (i < all.length && bytes + n > limits.bytes) break;
    bytes += n;
    i--;
  }
  return { entries: all.slice(i), dropped: path.dropped + i };
}

/** A finished record's text and its row's (what a listing shows: FinishedRow). */
export interface FinishedText {
  record: string;
  row: string;
}

/**
 * The record of a call that ended with event `e` (its last entry), from its stored path before it, as JSON text made
 * from the stored entries as they are (not parsed again: cheaper for long paths); entries are the writer's own JSON
 * objects.
 */
export function finishedRecordText(e: StepEvent, before: StoredPath, limits: PathLimits): FinishedText {
  const fitted = fitPath(
    { entries: [...before.entries, JSON.stringify(pathEntry(e))], dropped: before.dropped },
    limits,
  );
  const path = fitted.entries;
  // the first entry's time and the commands, only needed without a summary (an engine failure)
  const firstAt = e.summary ? undefined : parsePath(path.slice(0, 1))[0]?.at;
  const commands = e.summary ? 0 : parsePath(path).filter((p) => p.reply !== null).length;
  const head = recordHead(e, firstAt, commands);
  const text = JSON.stringify({ ...head, dropped: fitted.dropped });
  return { record: `${text.slice(0, -1)},"path":[${path.join(',')}]}`, row: JSON.stringify(finishedRow(head)) };
}

function recordHead(
  e: StepEvent,
  firstAt: number | undefined,
  commands: number,
): Omit<FinishedRecord, 'path' | 'dropped'> {
  const s = e.summary;
  const durationMs = s?.durationMs ?? Math.max(0, e.at - (firstAt ?? e.at));
  return {
    callid: e.callid,
    flow: e.flow ?? s?.flow ?? '',
    version: e.version ?? s?.version ?? '',
    started: iso(e.at - durationMs),
    ended: iso(e.at),
    durationMs,
    outcome: e.callOutcome ?? 'abandoned',
    ...(s?.error !== undefined ? { error: s.error } : {}),
    status: s?.status ?? e.request.callStatus,
    lastStep: s?.lastStep ?? e.step ?? e.from ?? '',
    commands: s?.commands ?? commands,
    vars: s?.vars ?? {},
  };
}

/** The record of a live call ended from the admin API (its state as it was, vars masked), with its text. */
export function endedByAdminRecord(
  call: { callid: string; flow: string; version: string; started: number; step: string; commands: number },
  vars: Record<string, unknown>,
  stored: StoredPath,
  now: number,
  limits: PathLimits,
): { record: FinishedRecord; text: FinishedText } {
  const { entries, dropped } = fitPath(stored, limits);
  const head = {
    callid: call.callid,
    flow: call.flow,
    version: call.version,
    started: iso(call.started),
    ended: iso(now),
    durationMs: Math.max(0, now - call.started),
    outcome: 'ended_by_admin' as const,
    status: 'UP',
    lastStep: call.step,
    commands: call.commands,
    vars,
    dropped,
  };
  const text = JSON.stringify(head);
  return {
    record: { ...head, path: parsePath(entries) },
    text: { record: `${text.slice(0, -1)},"path":[${entries.join(',')}]}`, row: JSON.stringify(finishedRow(head)) },
  };
}

export function finishedRow(r: FinishedRow): FinishedRow {
  return {
    callid: r.callid,
    flow: r.flow,
    version: r.version,
    started: r.started,
    ended: r.ended,
    durationMs: r.durationMs,
    outcome: r.outcome,
    status: r.status,
    lastStep: r.lastStep,
  };
}

/** Path entries as stored; an entry that is not one (written by something else) is left out. */
export function parsePath(raw: readonly string[]): PathEntry[] {
  const out: PathEntry[] = [];
  for (const text of raw) {
    const e = parseObject(text) as PathEntry | undefined;
    if (e && typeof e.at === 'number' && typeof e.command === 'string') out.push(e);
  }
  return out;
}

/** A stored record, or undefined when it is not one. */
export function parseRecord(text: string | undefined): FinishedRecord | undefined {
  const r = text === undefined ? undefined : (parseObject(text) as FinishedRecord | undefined);
  return r && typeof r.callid === 'string' && typeof r.flow === 'string' && Array.isArray(r.path) ? r : undefined;
}

/** A listing's row (or a whole record, written without a row) as its row, or undefined when it is neither. */
export function parseRow(text: string): FinishedRow | undefined {
  const r = parseObject(text) as FinishedRow | undefined;
  return r && typeof r.callid === 'string' && typeof r.flow === 'string' ? finishedRow(r) : undefined;
}

function parseObject(text: string): object | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function effect(x: EffectEvent): PathEntry['effects'][number] {
  return {
    kind: x.kind,
    step: x.step,
    outcome: x.outcome,
    ...(x.value !== undefined ? { value: x.value } : {}),
    ms: round(x.ms),
    ...(x.queue ? { queue: { ...x.queue } } : {}),
  };
}

/**
 * Params with long strings cut (params are the command catalogue's: small and shallow; deeper than 8 levels is cut
 * too); the same object when nothing is cut.
 */
function cut(v: unknown, depth: number): unknown {
  return depth === 0 && !needsCut(v, 0) ? v : cutting(v, depth);
}

function needsCut(v: unknown, depth: number): boolean {
  if (typeof v === 'string') return v.length > PARAM_CHARS;
  if (v === null || typeof v !== 'object') return false;
  if (depth >= 8) return true;
  if (Array.isArray(v)) return v.some((x) => needsCut(x, depth + 1));
  for (const k in v) if (needsCut((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

function cutting(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return v.length > PARAM_CHARS ? `${v.slice(0, PARAM_CHARS)}…` : v;
  if (v === null || typeof v !== 'object') return v;
  if (depth >= 8) return '…';
  if (Array.isArray(v)) return v.map((x) => cutting(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = cutting(x, depth + 1);
  return out;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
const iso = (ms: number) => new Date(ms).toISOString();
