/**
 * `callscript campaign numbers.csv --app HASH --server URL`: one outbound call per row of a
 * CSV through a running server (docs/campaign.md). Thin: the flags (src/campaign/options.ts),
 * the server (./outbound.ts, the admin API's POST /admin/calls and GET /admin/outbound/:id,
 * as `dial` uses it), the signals; the campaign itself is src/campaign/run.ts.
 *
 * SIGINT or SIGTERM stops placing calls, waits for the placements in flight (their answer,
 * 20 s at most) and follows the calls in progress for 10 s at most, then saves and exits 130
 * (SIGINT) or 143 (SIGTERM); a second signal (more than 1 s after the first: a terminal's
 * Ctrl-C may arrive twice) stops at once.
 */
import { campaignSettings, type CampaignFlags } from '../campaign/options.js';
import { guardOutput } from '../campaign/output.js';
import { runCampaignFile } from '../campaign/run.js';
import { Sending } from '../campaign/sending.js';
import { FollowInterrupted, PlaceError, type CallView, type CampaignRow, type Dialer } from '../campaign/types.js';
import { AdminRequestError, adminServer, followCall, placeCall, type AdminServer } from './outbound.js';

export interface CampaignCliFlags extends CampaignFlags {
  server?: string;
}

type Io = {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  err?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  signals?: NodeJS.EventEmitter;
  stopWaitMs?: number;
  /** Tests: how long a placement waits for the server's answer (default 20 s, placeCall's). */
  placeTimeoutMs?: number;
};

export async function campaign(csv: string, flags: CampaignCliFlags, io: Io = {}): Promise<number> {
  const env = io.env ?? process.env;
  const stderr = io.err ?? process.stderr;
  // a closed pipe (EPIPE) silences the progress, not the campaign
  const err = Object.assign(guardOutput(stderr).stream, {
    isTTY: stderr.isTTY === true,
    ...(stderr.columns ? { columns: stderr.columns } : {}),
  });
  const fail = (msg: string) => (err.write(`callscript campaign: ${msg}\n`), 2);
  const settings = campaignSettings(csv, flags, io.cwd);
  if (typeof settings === 'string') return fail(settings);
  const server = adminServer(flags.server, env);
  if (typeof server === 'string') return fail(server);

  const stop = new AbortController();
  const halt = new AbortController();
  const signals = io.signals ?? process;
  let stoppedBy: string | undefined;
  let stoppedAt = 0;
  const onSignal = (name: string) => () => {
    const now = Date.now();
    if (!stoppedBy) {
      stoppedBy = name;
      stoppedAt = now;
      err.write(
        `\n${name}: no more calls placed; waiting for the placements in flight (20 s at most) and following ` +
          `the calls in progress for 10 s at most (${name} again to stop at once), then saving\n`,
      );
      stop.abort();
    } else if (now - stoppedAt > 1000 && !halt.signal.aborted) {
      err.write(`${name} again: the calls in progress are left to the next run\n`);
      halt.abort();
    }
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  signals.on('SIGINT', onInt);
  signals.on('SIGTERM', onTerm);
  try {
    const code = await runCampaignFile(settings, {
      dialer: adminDialer(server, settings.app, settings.timeoutMs, settings.pollMs, io.placeTimeoutMs),
      stop: stop.signal,
      halt: halt.signal,
      err,
      tty: err.isTTY === true,
      ...(err.columns ? { columns: err.columns } : {}),
      ...(io.stopWaitMs !== undefined ? { stopWaitMs: io.stopWaitMs } : {}),
    });
    return code === 130 && stoppedBy === 'SIGTERM' ? 143 : code;
  } finally {
    signals.off('SIGINT', onInt);
    signals.off('SIGTERM', onTerm);
  }
}

/** The campaign's calls through the server's admin API. */
export function adminDialer(
  server: AdminServer,
  app: string,
  timeoutMs: number,
  pollMs: number,
  placeTimeoutMs?: number,
): Dialer {
  const sending = new Sending();
  return {
    async place(row: CampaignRow, signal: AbortSignal): Promise<string> {
      const vars = Object.keys(row.vars).length > 0 ? { vars: row.vars } : {};
      const r = await sending.watch(() =>
        placeCall(
          server,
          { app, number: row.number, ...vars },
          { signal, ...(placeTimeoutMs ? { timeoutMs: placeTimeoutMs } : {}) },
        ),
      );
      if (r.ok) return r.value.id;
      if (signal.aborted) {
        if (r.unsent) throw new PlaceError('transient', 'the campaign stopped before the request was sent: not placed');
        throw r.error;
      }
      if (!(r.error instanceof AdminRequestError)) throw r.error;
      throw placeError(r.error, r.unsent);
    },
    async follow(id: string, signal: AbortSignal): Promise<CallView> {
      try {
        return (await followCall(server, id, { timeoutMs, pollMs, signal })).view;
      } catch (e) {
        // the server down or refusing (not the call's fault): followed again by the next run; a call it does not know
        // (404) is lost
        if (!signal.aborted && e instanceof AdminRequestError && (e.transient || e.status === 401))
          throw new FollowInterrupted(`could not follow call ${id}: ${e.message}`);
        throw e;
      }
    },
  };
}

/** Refusals that every row would get: no account on the server, no admin API, not callscript, a proxy in the way. */
const EVERY_ROW = new Set([
  'SERVICE_UNCONFIGURED',
  'NOT_FOUND',
  'NOT_CALLSCRIPT',
  'CROSS_ORIGIN',
  'UNSUPPORTED_MEDIA_TYPE',
]);

/** Connection errors where the request never left: the call was not placed. */
const NOT_SENT =
  /\((ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|UND_ERR_CONNECT_TIMEOUT)\)/;

/**
 * The service's JSON-RPC codes (serviceCode of SERVICE_ERROR) that every call of the campaign would get: 20 the app not
 * found, 22 the server's account refused.
 */
const EVERY_CALL_SERVICE_CODES = new Set([20, 22]);
/** The service's codes of a passing refusal, not the number's: 24 too many calls at once. */
const PASSING_SERVICE_CODES = new Set([24]);

/**
 * What a failed placement means for the campaign, by whose fault it is (PlaceError):
 * - `fatal`, every row would get it: the server not reached with nothing sent (`unsent`, or
 *   a connection refused), credentials refused, no admin API, no account, an app the
 *   service does not know (20) or the server's account refused (22): the campaign stops;
 * - `unknown`, the call may have been placed: the request sent and no answer (a timeout, a
 *   connection cut), SERVICE_TIMEOUT, SERVICE_OUTCOME_UNKNOWN (the service's answer lost or
 *   unusable), the call placed but its vars not stored, an answer that is not callscript's
 *   after the request went through (201 without an id, a gateway's 5xx), a 5xx the server
 *   does not explain: never tried again;
 * - `transient`, not placed for a passing reason that is not the row's (429, the service not
 *   reached, the store down, the service busy): tried again later, not counted;
 * - `refused`, the service refused this call (another JSON-RPC error): perhaps the number's
 *   fault: counted, tried again after the delay;
 * - `row`, the row itself refused (BAD_ADMIN_BODY, another 4xx): `failed`.
 */
export function placeError(e: AdminRequestError, unsent = false): PlaceError {
  const c = e.code;
  const serviceCode = e.fields.serviceCode;
  if (c === 'BAD_ADMIN_BODY') return new PlaceError('row', e.message);
  if (e.status === 0) {
    if (unsent || NOT_SENT.test(e.message)) return new PlaceError('fatal', `${e.message}; no call was placed`);
    return new PlaceError('unknown', e.message);
  }
  if (c === 'SERVICE_TIMEOUT' || c === 'SERVICE_OUTCOME_UNKNOWN') return new PlaceError('unknown', e.message);
  if (c === 'STORE_UNAVAILABLE')
    return new PlaceError(
      typeof e.fields.id === 'string' ? 'unknown' : 'transient',
      typeof e.fields.id === 'string' ? `${e.message} (call ${e.fields.id})` : e.message,
    );
  if (c === 'NOT_CALLSCRIPT' && (e.status >= 500 || e.status === 201)) return new PlaceError('unknown', e.message);
  if (e.status === 401 || EVERY_ROW.has(c)) return new PlaceError('fatal', e.message);
  if (c === 'SERVICE_ERROR') {
    if (typeof serviceCode === 'number' && EVERY_CALL_SERVICE_CODES.has(serviceCode))
      return new PlaceError('fatal', e.message);
    if (typeof serviceCode === 'number' && PASSING_SERVICE_CODES.has(serviceCode))
      return new PlaceError('transient', e.message);
    return new PlaceError('refused', e.message);
  }
  if (e.status === 429 || c === 'SERVICE_UNREACHABLE') return new PlaceError('transient', e.message);
  if (e.status >= 500) return new PlaceError('unknown', e.message);
  if (e.exit === 2) return new PlaceError('fatal', e.message);
  return new PlaceError('row', e.message);
}
