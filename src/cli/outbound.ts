/**
 * Placing an outbound call through a running server and following it to its end (the admin
 * API's POST /admin/calls and GET /admin/outbound/:id, docs/admin.md "Outbound calls"):
 * what `callscript dial` and `callscript campaign` share.
 *
 *   const server = adminServer(flags.server, process.env);      // ./admin-client.ts
 *   const placed = await placeCall(server, { app, number, vars });
 *   const { view, timedOut } = await followCall(server, placed.id, { timeoutMs: 120_000 });
 *
 * Both throw AdminRequestError (./admin-client.ts) when the server refuses or cannot be
 * reached: `code` (SERVICE_ERROR, BAD_ADMIN_BODY, UNREACHABLE...), `status`, `transient`
 * (worth trying again later), `exit` (the exit code a command gives for it).
 */
import { checkOutboundRequest, type OutboundRequest } from '../service/outbound-request.js';
import type { OutboundView } from '../http/outbound.js';
import { AdminRequestError, adminRequest, type AdminServer } from './admin-client.js';

export { adminServer, AdminRequestError, type AdminServer } from './admin-client.js';
export type { OutboundRequest, OutboundVars } from '../service/outbound-request.js';

/** POST /admin/calls's answer (201). */
export interface PlacedCall {
  /** The call's id: the request_hash of its requests, the key of GET /admin/outbound/:id. */
  id: string;
  app: string;
  number: string;
  /** ISO 8601 */
  placedAt: string;
}

/** GET /admin/outbound/:id's answer (src/http/outbound.ts). */
export type { OutboundView };

export interface FollowOptions {
  /** Give up after this long (the view then has status placed or live). Default 120 s. */
  timeoutMs?: number;
  /** Time between two reads. Default 1000 ms. */
  pollMs?: number;
  /** Stops following (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Told of each view read whose status changed. */
  onUpdate?: (view: OutboundView) => void;
}

export interface FollowResult {
  /** The last view read. */
  view: OutboundView;
  /** The call had not finished when timeoutMs ran out. */
  timedOut: boolean;
}

/** Reads that may fail in a row (the server restarting, a network blip) before followCall gives up. */
const MAX_READ_FAILURES = 5;

/** Places the call (checked first: an invalid request is a BAD_ADMIN_BODY error, nothing sent). */
export async function placeCall(
  server: AdminServer,
  req: OutboundRequest,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<PlacedCall> {
  const checked = checkOutboundRequest(req);
  if (!checked.ok) throw new AdminRequestError('BAD_ADMIN_BODY', 0, checked.message, 1);
  // the server waits for the service (10 s at most): a little longer here
  const data = (await adminRequest(server, 'POST', 'admin/calls', checked.value, {
    timeoutMs: opts.timeoutMs ?? 20_000,
    ...(opts.signal ? { signal: opts.signal } : {}),
  })) as PlacedCall;
  if (typeof data?.id !== 'string')
    throw new AdminRequestError('NOT_CALLSCRIPT', 201, `${server.shown} answered POST /admin/calls without an id`, 2);
  return data;
}

/** One read of GET /admin/outbound/:id. */
export async function outboundView(
  server: AdminServer,
  id: string,
  opts: { signal?: AbortSignal } = {},
): Promise<OutboundView> {
  return (await adminRequest(
    server,
    'GET',
    `admin/outbound/${encodeURIComponent(id)}`,
    undefined,
    opts,
  )) as OutboundView;
}

/**
 * Reads the call every pollMs until it is finished or timeoutMs has passed. Transient read
 * failures are tried again (MAX_READ_FAILURES in a row at most); others are thrown.
 */
export async function followCall(server: AdminServer, id: string, opts: FollowOptions = {}): Promise<FollowResult> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const pollMs = opts.pollMs ?? 1000;
  const until = Date.now() + timeoutMs;
  let last: OutboundView | undefined;
  let failures = 0;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const view = await outboundView(server, id, opts.signal ? { signal: opts.signal } : {});
      failures = 0;
      if (!last || last.status !== view.status) opts.onUpdate?.(view);
      last = view;
      if (view.status === 'finished') return { view, timedOut: false };
    } catch (e) {
      if (!(e instanceof AdminRequestError) || !e.transient || ++failures >= MAX_READ_FAILURES) throw e;
    }
    const left = until - Date.now();
    if (left <= 0) {
      if (last) return { view: last, timedOut: true };
      throw new AdminRequestError('TIMEOUT', 0, `no answer about call ${id} within ${timeoutMs} ms`, 2);
    }
    await sleep(Math.min(pollMs, left), opts.signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(t);
      reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}
