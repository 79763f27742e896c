/**
 * Outbound calls placed by the server (docs/admin.md "Outbound calls"):
 *
 * - `POST /admin/calls` `{app, number, vars?, cdr_field?, cli?}` places the call through the
 *   service's calls.realtime (the account of `account:` / CALLSCRIPT_ACCOUNT), keeps its
 *   record (the vars with it) in the call store under the id the service returned, and
 *   answers 201 `{id, app, number, placedAt}`;
 * - the call's first request (its `request_hash` is that id) starts the flow with the vars
 *   (OutboundCalls.start, called by the engine: src/engine/outbound.ts), and tells the record
 *   its callid;
 * - `GET /admin/outbound/:id` follows it: placed (no request yet), live, finished (its
 *   outcome from the call history).
 *
 * The service may send the call's first request before calls.realtime's answer reaches us
 * (the emulator does): a first request whose id is not known yet waits for the placements in
 * progress (this instance's at once; another instance's, seen by a marker in the store, by
 * reading again for a short while).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ENDED } from '../engine/call-record.js';
import { parseRecord, type FinishedRecord } from '../engine/history.js';
import type { OutboundStarts } from '../engine/outbound.js';
import { isTerminal } from '../protocol/request.js';
import type { CallStatus } from '../protocol/commands.js';
import { ServiceError } from '../service/errors.js';
import type { ServiceClient } from '../service/jsonrpc.js';
import {
  checkOutboundRequest,
  RING_TIMEOUT_S,
  type OutboundRequest,
  type OutboundVars,
} from '../service/outbound-request.js';
import type { CallStore } from '../store/types.js';
import { sendError as fail } from './envelope.js';

/**
 * How long an outbound call's record is kept (its vars until it starts, then its callid for GET /admin/outbound/:id).
 */
export const OUTBOUND_TTL_MS = 6 * 60 * 60 * 1000;
/** The store key of the marker that placements are in progress (no call id has a "-"). */
const PLACING = '-placing';
/**
 * A first request whose id is unknown while placements are in progress elsewhere reads the store again this long, at
 * most.
 */
const WAIT_FOR_PLACEMENT_MS = 2000;
const POLL_MS = 25;
/** An outbound call's id, as the service gives them. */
const ID = /^[A-Za-z0-9]{1,64}$/;
/** A call whose first request came this recently and that has no state yet is taken as starting (live). */
const STARTING_MS = 30_000;
/** A call ended (tombstone) whose history record is not written yet: read again this long, at most. */
const RECORD_WAIT_MS = 1000;

/** What the store keeps per outbound call. */
interface OutboundRecord {
  app: string;
  number: string;
  /** epoch ms */
  placedAt: number;
  expiresAt: number;
  vars?: OutboundVars;
  cdr_field?: string;
  cli?: string;
  /** Learnt at its first request. */
  callid?: string;
  /** When its first request came (epoch ms) and its call_status. */
  seenAt?: number;
  firstStatus?: string;
}

/** An outbound call as GET /admin/outbound/:id shows it. */
export interface OutboundView {
  id: string;
  app: string;
  number: string;
  placedAt: string;
  callid: string | null;
  status: 'placed' | 'live' | 'finished';
  /**
   * Finished: the call history's outcome (completed, transferred, abandoned, error, ended_by_admin); null when the
   * history has no record of it.
   */
  outcome?: string | null;
  lastStep?: string | null;
  durationMs?: number | null;
  /** Finished: the call_status it ended with (HANGUP, NOANSWER, BUSY...). */
  callStatus?: string | null;
  /** Live: the step it is at, when known. */
  step?: string;
}

type Store = Pick<CallStore, 'putOutbound' | 'getOutbound' | 'get' | 'getFinished'>;

export class OutboundCalls implements OutboundStarts {
  /** Placements in progress on this instance (until their record is written). */
  private readonly placing = new Set<Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly opts: { ttlMs?: number; history: boolean; now?: () => number } = { history: true },
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /**
   * Places the call with calls.realtime and keeps its record; the id. Throws the client's ServiceError, or the store's
   * error.
   */
  async place(client: ServiceClient, req: OutboundRequest): Promise<{ id: string; placedAt: number }> {
    const work = (async () => {
      await this.store.putOutbound(PLACING, String(this.now()), client.timeoutMs + WAIT_FOR_PLACEMENT_MS);
      const options = {
        ...(req.cdr_field !== undefined ? { cdr_field: req.cdr_field } : {}),
        ...(req.cli !== undefined ? { cli: req.cli } : {}),
      };
      const id = await client.calls.realtime(req.app, { number: req.number, timeout: RING_TIMEOUT_S }, options);
      const placedAt = this.now();
      const ttl = this.opts.ttlMs ?? OUTBOUND_TTL_MS;
      const record: OutboundRecord = {
        app: req.app,
        number: req.number,
        placedAt,
        expiresAt: placedAt + ttl,
        ...(req.vars ? { vars: req.vars } : {}),
        ...options,
      };
      // a first request may have come already (and learnt the callid): keep what it wrote
      const before = parse(await this.store.getOutbound(id));
      if (before?.callid !== undefined)
        Object.assign(record, { callid: before.callid, seenAt: before.seenAt, firstStatus: before.firstStatus });
      try {
        await this.store.putOutbound(id, JSON.stringify(record), ttl);
      } catch (err) {
        throw Object.assign(err instanceof Error ? err : new Error(String(err)), { placedId: id });
      }
      return { id, placedAt };
    })();
    this.placing.add(work);
    const forget = () => {
      this.placing.delete(work);
      // no placement in progress here any more: the marker goes (first requests of calls placed by other tools need not
      // wait)
      if (this.placing.size === 0) void this.store.putOutbound(PLACING, '', 1).catch(() => undefined);
    };
    work.then(forget, forget);
    return work;
  }

  /** The engine, at a new call's first request with a request_hash: its vars, and the record learns the callid. */
  async start(id: string, callid: string, callStatus: string): Promise<Record<string, unknown> | undefined> {
    // the service's ids are short letters and digits: anything else is no call of ours (and no store key)
    if (!ID.test(id)) return undefined;
    let rec = parse(await this.store.getOutbound(id));
    // one wait in all, whichever instance places: a call placed by another tool is held up WAIT_FOR_PLACEMENT_MS at
    // most
    const until = this.now() + WAIT_FOR_PLACEMENT_MS;
    if (!rec && this.placing.size > 0) {
      await Promise.race([Promise.allSettled([...this.placing]), sleep(WAIT_FOR_PLACEMENT_MS)]);
      rec = parse(await this.store.getOutbound(id));
    }
    if (!rec && this.now() < until && (await this.store.getOutbound(PLACING)) !== undefined) {
      while (!rec && this.now() < until) {
        await sleep(POLL_MS);
        rec = parse(await this.store.getOutbound(id));
      }
    }
    if (!rec) return undefined;
    if (rec.callid === undefined) {
      const now = this.now();
      const left = rec.expiresAt - now;
      await this.store.putOutbound(
        id,
        JSON.stringify({ ...rec, callid, seenAt: now, firstStatus: callStatus }),
        Math.max(1000, left),
      );
    }
    return rec.vars ?? {};
  }

  /** GET /admin/outbound/:id: undefined when unknown (never placed here, or forgotten). */
  async view(id: string): Promise<OutboundView | undefined> {
    const rec = parse(await this.store.getOutbound(id));
    if (!rec) return undefined;
    const base = {
      id,
      app: rec.app,
      number: rec.number,
      placedAt: new Date(rec.placedAt).toISOString(),
      callid: rec.callid ?? null,
    };
    const callid = rec.callid;
    if (callid === undefined) return { ...base, status: 'placed' };
    let finished = parseRecord(await this.store.getFinished(callid));
    if (finished) return finishedView(base, finished);
    const raw = await this.store.get(callid);
    if (raw !== undefined && raw !== ENDED) return { ...base, status: 'live', ...stepOf(raw) };
    if (raw === ENDED && this.opts.history) {
      // ended: its history record is written just after the reply; wait for it a little
      for (const until = this.now() + RECORD_WAIT_MS; !finished && this.now() < until;) {
        await sleep(POLL_MS);
        finished = parseRecord(await this.store.getFinished(callid));
      }
      if (finished) return finishedView(base, finished);
    }
    if (
      raw === undefined &&
      rec.seenAt !== undefined &&
      this.now() - rec.seenAt < STARTING_MS &&
      !ended(rec.firstStatus)
    )
      return { ...base, status: 'live' };
    // over, with no record of how (the history is off, or forgot it): what the first request said
    const status = rec.firstStatus !== undefined && ended(rec.firstStatus) ? rec.firstStatus : null;
    return { ...base, status: 'finished', outcome: null, lastStep: null, durationMs: null, callStatus: status };
  }
}

function finishedView(base: Omit<OutboundView, 'status'>, r: FinishedRecord): OutboundView {
  return {
    ...base,
    status: 'finished',
    outcome: r.outcome,
    lastStep: r.lastStep === '' ? null : r.lastStep,
    durationMs: r.durationMs,
    callStatus: r.status,
  };
}

/** A terminal call_status (the call is over). */
function ended(status: string | undefined): boolean {
  return status !== undefined && isTerminal(status as CallStatus);
}

/** The step of a live call's stored state, when readable. */
function stepOf(raw: string): { step?: string } {
  try {
    const s = JSON.parse(raw) as { step?: unknown };
    return typeof s.step === 'string' ? { step: s.step } : {};
  } catch {
    return {};
  }
}

function parse(text: string | undefined): OutboundRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const r = JSON.parse(text) as OutboundRecord;
    return r &&
      typeof r === 'object' &&
      typeof r.app === 'string' &&
      typeof r.number === 'string' &&
      typeof r.placedAt === 'number'
      ? r
      : undefined;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}

export interface OutboundRouteDeps {
  outbound: OutboundCalls;
  /** The service's client, with the account; absent: 503 SERVICE_UNCONFIGURED. */
  service?: ServiceClient;
}

/** The routes, in the admin scope (its credentials and guards apply). */
export function registerOutbound(
  admin: FastifyInstance,
  d: OutboundRouteDeps,
  body: (req: { body: unknown }) => Record<string, unknown> | string,
): void {
  admin.post('/calls', async (req, reply) => {
    const b = body(req);
    if (typeof b === 'string') return fail(reply, 400, 'BAD_ADMIN_BODY', b);
    const checked = checkOutboundRequest(b);
    if (!checked.ok) return fail(reply, 400, 'BAD_ADMIN_BODY', checked.message);
    if (!d.service)
      return fail(
        reply,
        503,
        'SERVICE_UNCONFIGURED',
        'no service account is configured on this server: give account: { login, password } in ' +
          'callscript.yaml (or CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD) and api: (or CALLSCRIPT_API) where it runs',
      );
    const r = checked.value;
    let placed: { id: string; placedAt: number };
    try {
      placed = await d.outbound.place(d.service, r);
    } catch (err) {
      return serviceFailure(reply, err, d.service.url);
    }
    req.log.info(
      { code: 'OUTBOUND_PLACED', id: placed.id, app: r.app, number: r.number, vars: Object.keys(r.vars ?? {}) },
      `outbound call ${placed.id} placed to ${r.number} (app ${r.app})`,
    );
    return reply
      .code(201)
      .send({ id: placed.id, app: r.app, number: r.number, placedAt: new Date(placed.placedAt).toISOString() });
  });

  admin.get<{ Params: { id: string } }>('/outbound/:id', async (req, reply) => {
    const id = req.params.id;
    const view = ID.test(id) ? await d.outbound.view(id).catch((err: unknown) => err as Error) : undefined;
    if (view instanceof Error) return storeFailure(reply, view);
    if (!view)
      return fail(
        reply,
        404,
        'OUTBOUND_NOT_FOUND',
        `no outbound call ${id.length > 64 ? `${id.slice(0, 64)}…` : id} was placed by this server (or its ` +
          `record expired, ${OUTBOUND_TTL_MS / 3_600_000} h after it was placed)`,
      );
    return view;
  });
}

/**
 * A failed placement as answered: the service's refusal (502 SERVICE_ERROR with its code); not
 * sent (502 SERVICE_UNREACHABLE: no call); sent with no usable answer (504 SERVICE_TIMEOUT, 502
 * SERVICE_OUTCOME_UNKNOWN: a call may have been placed); the store (503).
 */
function serviceFailure(reply: FastifyReply, err: unknown, url: string): FastifyReply {
  if (!(err instanceof ServiceError)) return storeFailure(reply, err);
  if (typeof err.code === 'number') {
    const why = err.isAuth
      ? `the service refused the server's account (code 22, authentication failed): check account: in ` +
        `callscript.yaml or CALLSCRIPT_ACCOUNT where the server runs`
      : `the service refused the call: ${err.message}`;
    return fail(reply, 502, 'SERVICE_ERROR', why, { serviceCode: err.code });
  }
  if (err.code === 'SERVICE_TIMEOUT')
    return fail(reply, 504, 'SERVICE_TIMEOUT', `${err.message}: the call may or may not have been placed`);
  if (err.code === 'SERVICE_BAD_ARGS') return fail(reply, 400, 'BAD_ADMIN_BODY', err.message);
  if (err.unsent)
    return fail(reply, 502, 'SERVICE_UNREACHABLE', `${err.message} (the service at ${url}): no call was placed`);
  // sent, and no usable answer: the service may have placed the call
  return fail(
    reply,
    502,
    'SERVICE_OUTCOME_UNKNOWN',
    `${err.message} (the service at ${url}): the call may or may not have been placed; it is not tried again`,
  );
}

function storeFailure(reply: FastifyReply, err: unknown): FastifyReply {
  const placed = (err as { placedId?: unknown } | null)?.placedId;
  if ((err as { code?: unknown } | null)?.code === 'STORE_UNAVAILABLE') {
    const what =
      typeof placed === 'string'
        ? `call ${placed} was placed, but the call store is unavailable (${(err as Error).message}): the call ` +
          `starts without its vars`
        : `the call store is unavailable (${(err as Error).message}); no call was placed`;
    return fail(reply, 503, 'STORE_UNAVAILABLE', what, typeof placed === 'string' ? { id: placed } : undefined);
  }
  throw err;
}
