/**
 * The admin API's calls (docs/admin.md "Calls"): live calls listed from the store (every
 * instance's, paged by the store's cursor), finished calls from the call history, one
 * call's detail with its path, and ending a live call. Registered by src/http/admin.ts
 * inside the admin scope (its credentials and guards apply).
 *
 * Answers are paged by size as well as by count: a listing page holds at most PAGE_BYTES of rows, a call's detail
 * the first PAGE_BYTES of its path (`pathNext` the cursor of the rest, GET /admin/calls/:callid/path).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { decodeState, ENDED } from '../engine/call-record.js';
import { type CallHandler } from '../engine/call.js';
import {
  endedByAdminRecord,
  parsePath,
  parseRecord,
  parseRow,
  textBytes,
  type FinishedRecord,
  type FinishedRow,
} from '../engine/history.js';
import { MASK, shownVars } from '../engine/mask.js';
import type { CallState } from '../engine/types.js';
import { UINT64_MAX } from '../protocol/formats.js';
import type { LiveCalls } from '../registry/live.js';
import type { Registry } from '../registry/registry.js';
import { hasSmsStatus, type CallStore } from '../store/types.js';
import { deliveryView, sentSms, type SmsDelivery } from '../engine/sms-delivery.js';
import type { PathEntry } from '../engine/history.js';
import { sendError as fail } from './envelope.js';
import type { HistoryWriter } from './history.js';

export interface CallsDeps {
  registry: Registry;
  live: LiveCalls;
  store: CallStore;
  /** The call history's writer; absent when the history is off (finished calls are still read from the store). */
  history?: HistoryWriter;
  /** Ends a live call (CallHandler.endCall); absent: no DELETE route. */
  endCall?: CallHandler['endCall'];
}

export const MAX_LIST_LIMIT = 500;
const DEFAULT_LIST_LIMIT = 50;
/** The longest cursor taken (those given are far shorter). */
const MAX_CURSOR_CHARS = 200;
/** Finished calls are paged by offset: never past this (keep is at most 100,000). */
const MAX_OFFSET = 1_000_000;
/** The most of a listing page's rows, or of a page of one call's path: UTF-8 bytes of their JSON. */
export const PAGE_BYTES = 256 * 1024;
/** Path entries are paged by their index since the call's start: never past this (max_path is at most 10,000). */
const MAX_PATH_INDEX = 1_000_000_000;

/**
 * A call's vars as the admin API shows them: sensitive ones masked, and sensitive values scrubbed from the others
 * (src/engine/mask.ts), by the call's flow version, else the flow's current version; when neither is loaded here,
 * every value is masked (which ones are sensitive is unknown).
 */
export function adminVars(registry: Registry, state: CallState): Record<string, unknown> {
  const flow = registry.get(state.flow, state.version) ?? registry.current(state.flow);
  if (flow) return shownVars(state, flow.tables.sensitive);
  return Object.fromEntries(Object.keys(state.vars).map((k) => [k, MASK]));
}

/** A finished record as the detail shows it: `status` is "finished", the call_status it ended with is `callStatus`. */
export function finishedView(r: FinishedRecord) {
  return { ...r, callStatus: r.status, status: 'finished' as const };
}

/** SMS shown per call, at most (the first a call sent). */
export const MAX_SMS_SHOWN = 100;

/** The SMS a call sent (from its path) with their delivery status (docs/webhooks.md). */
export async function smsOf(store: CallStore, path: readonly PathEntry[]): Promise<SmsDelivery[]> {
  const sent = sentSms(path).slice(0, MAX_SMS_SHOWN);
  if (sent.length === 0) return [];
  const read = hasSmsStatus(store) ? (hash: string) => store.smsStatus(hash) : async () => undefined;
  return Promise.all(sent.map(async (s) => deliveryView(s, await read(s.hash))));
}

/** The callid of a URL, canonical (digits, no leading zeros), or why not. */
function callidParam(raw: string): string | { problem: string } {
  if (!/^[0-9]{1,20}$/.test(raw) || BigInt(raw) > UINT64_MAX)
    return {
      problem:
        `the callid must be an unsigned 64-bit integer in decimal, got ` +
        `"${raw.length > 40 ? `${raw.slice(0, 40)}…` : raw}"`,
    };
  return BigInt(raw).toString();
}

type Query = { status: 'live' | 'finished'; limit: number; cursor: string | undefined };

/** The list's query string: status, limit, cursor (each once), or why not. */
function listQuery(q: Record<string, unknown>): Query | string {
  const one = (k: string) => {
    const v = q[k];
    return Array.isArray(v) ? null : (v as string | undefined);
  };
  const st = one('status');
  const status = st === undefined ? 'live' : st;
  if (status !== 'live' && status !== 'finished') return 'status must be live or finished (given once)';
  const l = one('limit');
  if (l === null || (l !== undefined && (!/^[0-9]{1,3}$/.test(l) || Number(l) < 1 || Number(l) > MAX_LIST_LIMIT)))
    return `limit must be an integer from 1 to ${MAX_LIST_LIMIT} (given once)`;
  const c = one('cursor');
  if (c === null) return 'give the cursor once';
  let cursor: string | undefined;
  if (c !== undefined && c !== '') {
    const inner = openCursor(c, status);
    if (inner === undefined)
      return `the cursor is not one this server gave for status=${status}: start again without it`;
    cursor = inner;
  }
  return { status, limit: l === undefined ? DEFAULT_LIST_LIMIT : Number(l), cursor };
}

/**
 * Cursors are opaque to clients: base64url of `l:<the store's cursor>`, `f:<offset>`, or `p:<callid>:<index>` (a
 * call's path from its entry `index`, counted from the call's start).
 */
function makeCursor(kind: 'live' | 'finished' | 'path', inner: string): string {
  return Buffer.from(`${kind[0]}:${inner}`).toString('base64url');
}

function openCursor(c: string, kind: 'live' | 'finished' | 'path'): string | undefined {
  if (c.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(c)) return undefined;
  const text = Buffer.from(c, 'base64url').toString('utf8');
  if (Buffer.from(text).toString('base64url') !== c) return undefined;
  if (!text.startsWith(`${kind[0]}:`)) return undefined;
  const inner = text.slice(2);
  if (kind === 'finished' && !(/^[1-9][0-9]{0,6}$/.test(inner) && Number(inner) <= MAX_OFFSET)) return undefined;
  return inner;
}

/** The index a path cursor gives for this call, 0 without one, or undefined when it is not this call's. */
function pathFrom(q: Record<string, unknown>, callid: string): number | undefined {
  const c = q.cursor;
  if (c === undefined || c === '') return 0;
  if (typeof c !== 'string') return undefined;
  const m = /^([0-9]{1,20}):([0-9]{1,10})$/.exec(openCursor(c, 'path') ?? '');
  return m && m[1] === callid && Number(m[2]) <= MAX_PATH_INDEX ? Number(m[2]) : undefined;
}

/** Items from the start while their JSON stays within `maxBytes` (one at least: a page always moves on). */
function byBytes<T>(items: readonly T[], bytes: (x: T) => number, maxBytes = PAGE_BYTES): T[] {
  let total = 0;
  let n = 0;
  while (n < items.length) {
    total += bytes(items[n]!);
    if (n > 0 && total > maxBytes) break;
    n++;
  }
  return items.slice(0, n);
}

/** A page of a call's path from its entry `from` (counted from the call's start, `dropped` ones gone) and the next. */
export function pathPage(
  callid: string,
  path: readonly PathEntry[],
  dropped: number,
  from: number,
): { path: PathEntry[]; pathNext: string | null } {
  const start = Math.max(0, from - dropped);
  const page = byBytes(path.slice(start), (e) => textBytes(JSON.stringify(e)));
  const end = start + page.length;
  return { path: page, pathNext: end < path.length ? makeCursor('path', `${callid}:${dropped + end}`) : null };
}

/** A store error as answered: 503 STORE_UNAVAILABLE, 400 for a cursor the store refused; else rethrown (a bug: 500). */
function storeFailure(reply: FastifyReply, err: unknown): FastifyReply {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'STORE_UNAVAILABLE')
    return fail(reply, 503, 'STORE_UNAVAILABLE', `the call store is unavailable (${(err as Error).message})`);
  if (code === 'BAD_CURSOR')
    return fail(
      reply,
      400,
      'BAD_ADMIN_QUERY',
      `the cursor is not one this server gave for ` +
        `status=live${(err as { expired?: boolean }).expired ? ', or it expired' : ''}: start again without it`,
    );
  throw err;
}

export function registerCalls(admin: FastifyInstance, d: CallsDeps): void {
  const iso = (ms: number) => new Date(ms).toISOString();

  admin.get('/calls', async (req, reply) => {
    const q = listQuery(req.query as Record<string, unknown>);
    if (typeof q === 'string') return fail(reply, 400, 'BAD_ADMIN_QUERY', q);
    try {
      if (q.status === 'finished') {
        const offset = q.cursor === undefined ? 0 : Number(q.cursor);
        // one more than asked: is there a next page? Then as many as PAGE_BYTES holds.
        const raw = await d.store.listFinishedRows(offset, q.limit + 1);
        const taken = byBytes(raw.slice(0, q.limit), textBytes);
        const calls = taken.map(parseRow).filter((r): r is FinishedRow => r !== undefined);
        const more = raw.length > taken.length && offset + taken.length <= MAX_OFFSET;
        return { calls, next: more ? makeCursor('finished', String(offset + taken.length)) : null };
      }
      const page = await d.store.listLive(q.cursor, q.limit);
      const calls = [];
      for (const [callid, raw] of page.values) {
        // tombstones of ended calls and claims of first requests are no live calls
        const s = raw === ENDED ? undefined : decodeState(raw);
        if (!s) continue;
        const seen = d.live.get(callid);
        calls.push({
          callid,
          flow: s.flow,
          version: s.version,
          step: s.step,
          started: iso(s.started),
          lastSeen: seen ? iso(seen.lastSeen) : null,
          commands: s.commands,
        });
      }
      return { calls, next: page.next === undefined ? null : makeCursor('live', page.next) };
    } catch (err) {
      return storeFailure(reply, err);
    }
  });

  /** The call as the detail shows it, its whole path (parsed) and the entries dropped before it; undefined: none. */
  const callOf = async (callid: string) => {
    const raw = await d.store.get(callid);
    const state = raw === undefined || raw === ENDED ? undefined : decodeState(raw);
    // without a state, a finished record wins over this process's bookkeeping (the call may have ended on another
    // instance)
    const record = state ? undefined : parseRecord(await d.store.getFinished(callid));
    if (record) {
      const { path, ...view } = finishedView(record);
      return { view: { ...view, dropped: record.dropped ?? 0 }, path, dropped: record.dropped ?? 0 };
    }
    const live = d.live.get(callid);
    if (!state && !live) return undefined;
    const stored = await d.store.loadPath(callid);
    const view = {
      callid,
      status: 'live' as const,
      flow: state?.flow ?? live!.flow,
      version: state?.version ?? live!.version,
      step: state?.step ?? live!.step,
      vars: state ? adminVars(d.registry, state) : {},
      commandId: state?.commandId ?? null,
      commands: state?.commands ?? null,
      started: state ? iso(state.started) : null,
      lastSeen: live ? iso(live.lastSeen) : null,
      dropped: stored.dropped,
    };
    return { view, path: parsePath(stored.entries), dropped: stored.dropped };
  };

  admin.get<{ Params: { callid: string } }>('/calls/:callid', async (req, reply) => {
    const callid = callidParam(req.params.callid);
    if (typeof callid !== 'string') return fail(reply, 400, 'BAD_CALLID', callid.problem);
    try {
      const c = await callOf(callid);
      if (!c) return fail(reply, 404, 'CALL_NOT_FOUND', `no live or finished call ${callid}`);
      return { ...c.view, ...pathPage(callid, c.path, c.dropped, 0), sms: await smsOf(d.store, c.path) };
    } catch (err) {
      return storeFailure(reply, err);
    }
  });

  // the rest of a call's path, from the cursor of the detail's pathNext (the next page's: next)
  admin.get<{ Params: { callid: string } }>('/calls/:callid/path', async (req, reply) => {
    const callid = callidParam(req.params.callid);
    if (typeof callid !== 'string') return fail(reply, 400, 'BAD_CALLID', callid.problem);
    const from = pathFrom(req.query as Record<string, unknown>, callid);
    if (from === undefined)
      return fail(
        reply,
        400,
        'BAD_ADMIN_QUERY',
        `the cursor is not one this server gave for the path of call ${callid}: start again without it`,
      );
    try {
      const c = await callOf(callid);
      if (!c) return fail(reply, 404, 'CALL_NOT_FOUND', `no live or finished call ${callid}`);
      const page = pathPage(callid, c.path, c.dropped, from);
      return { callid, status: c.view.status, dropped: c.dropped, path: page.path, next: page.pathNext };
    } catch (err) {
      return storeFailure(reply, err);
    }
  });

  const endCall = d.endCall;
  if (!endCall) return;
  admin.delete<{ Params: { callid: string } }>('/calls/:callid', async (req, reply) => {
    const callid = callidParam(req.params.callid);
    if (typeof callid !== 'string') return fail(reply, 400, 'BAD_CALLID', callid.problem);
    let r: Awaited<ReturnType<CallHandler['endCall']>>;
    try {
      r = await endCall(callid);
    } catch (err) {
      return storeFailure(reply, err);
    }
    if (r.kind === 'not_live') return fail(reply, 404, 'CALL_NOT_FOUND', `no live call ${callid}`);
    if (r.kind === 'busy')
      return fail(
        reply,
        409,
        'CALL_BUSY',
        `call ${callid} is in a step another instance is running (an effect, until ${iso(r.until)} at the ` +
          `latest): nothing was changed, try again in a moment`,
      );
    const s = r.state;
    req.log.warn(
      { code: 'CALL_ENDED_BY_ADMIN', callid, flow: s.flow, version: s.version, step: s.step },
      `call ${callid} (${s.flow}, at ${s.step}) ended by the admin API: its next request is answered hangup`,
    );
    const vars = adminVars(d.registry, s);
    let record: FinishedRecord | undefined;
    if (d.history) {
      record = await d.history.endedByAdmin(callid, s, vars).catch((err: unknown) => {
        req.log.error(
          { code: 'HISTORY_WRITE_FAILED', callid, err: err instanceof Error ? err.message : String(err) },
          `call ${callid}: its history record could not be written (the call is ended)`,
        );
        return undefined;
      });
    }
    const { path, ...view } = finishedView(
      record ??
        endedByAdminRecord(
          { callid, flow: s.flow, version: s.version, started: s.started, step: s.step, commands: s.commands },
          vars,
          { entries: [], dropped: 0 },
          Date.now(),
          { entries: 1, bytes: 1 },
        ).record,
    );
    return {
      ...view,
      ...pathPage(callid, path, view.dropped, 0),
      sms: await smsOf(d.store, path).catch(() => []),
    };
  });
}
