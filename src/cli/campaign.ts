/**
 * `callscript campaign numbers.csv --app HASH --server URL`: one outbound call per row of a
 * CSV through a running server (docs/campaign.md). Thin: the flags (src/campaign/options.ts),
 * the server (./outbound.ts, the admin API's POST /admin/calls and GET /admin/outbound/:id,
 * as `dial` uses it), the signals; the campaign itself is src/campaign/run.ts.
 *
 * SIGINT or SIGTERM stops placing calls and follows those in progress for 10 s at most, then
 * saves and exits 130 (SIGINT) or 143 (SIGTERM); a second signal (more than 1 s after the
 * first: a terminal's Ctrl-C may arrive twice) stops following them at once.
 */
import { campaignSettings, type CampaignFlags } from '../campaign/options.js';
import { guardOutput } from '../campaign/output.js';
import { runCampaignFile } from '../campaign/run.js';
import { PlaceError, type CallView, type CampaignRow, type Dialer } from '../campaign/types.js';
import { AdminRequestError, adminServer, followCall, placeCall, type AdminServer } from './outbound.js';

export interface CampaignCliFlags extends CampaignFlags {
  server?: string;
}

type Io = { env?: NodeJS.ProcessEnv; cwd?: string; err?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }; signals?: NodeJS.EventEmitter; stopWaitMs?: number };

export async function campaign(csv: string, flags: CampaignCliFlags, io: Io = {}): Promise<number> {
  const env = io.env ?? process.env;
  const stderr = io.err ?? process.stderr;
  // a closed pipe (EPIPE) silences the progress, not the campaign
  const err = Object.assign(guardOutput(stderr).stream, { isTTY: stderr.isTTY === true, ...(stderr.columns ? { columns: stderr.columns } : {}) });
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
      err.write(`\n${name}: no more calls placed; following the calls in progress for 10 s at most (${name} again to stop at once), then saving\n`);
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
      dialer: adminDialer(server, settings.app, settings.timeoutMs, settings.pollMs),
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
export function adminDialer(server: AdminServer, app: string, timeoutMs: number, pollMs: number): Dialer {
  return {
    async place(row: CampaignRow, signal: AbortSignal): Promise<string> {
      try {
        const vars = Object.keys(row.vars).length > 0 ? { vars: row.vars } : {};
        return (await placeCall(server, { app, number: row.number, ...vars }, { signal })).id;
      } catch (e) {
        if (signal.aborted || !(e instanceof AdminRequestError)) throw e;
        throw placeError(e);
      }
    },
    async follow(id: string, signal: AbortSignal): Promise<CallView> {
      return (await followCall(server, id, { timeoutMs, pollMs, signal })).view;
    },
  };
}

/** Refusals that every row would get: no account on the server, no admin API, not callscript, a proxy in the way. */
const EVERY_ROW = new Set(['SERVICE_UNCONFIGURED', 'NOT_FOUND', 'NOT_CALLSCRIPT', 'CROSS_ORIGIN', 'UNSUPPORTED_MEDIA_TYPE']);

/** Connection errors where the request never left: the call was not placed. */
const NOT_SENT = /\((ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\)/;

/**
 * What a refused placement means for the campaign: the row is at fault (`row`), every row
 * would be (`fatal`: stop), it may work later (`transient`: tried again after the delay), or
 * the call may have been placed all the same (`unknown`: never tried again, no number is
 * called twice).
 */
export function placeError(e: AdminRequestError): PlaceError {
  const c = e.code;
  if (c === 'BAD_ADMIN_BODY') return new PlaceError('row', e.message);
  if (c === 'SERVICE_TIMEOUT' || c === 'TIMEOUT' || (c === 'UNREACHABLE' && !NOT_SENT.test(e.message))) return new PlaceError('unknown', e.message);
  if (c === 'STORE_UNAVAILABLE' && typeof e.fields.id === 'string') return new PlaceError('unknown', `${e.message} (call ${e.fields.id})`);
  if (e.status === 401 || EVERY_ROW.has(c) || (c === 'SERVICE_ERROR' && e.fields.serviceCode === 22)) return new PlaceError('fatal', e.message);
  if (e.transient) return new PlaceError('transient', e.message);
  if (e.exit === 2) return new PlaceError('fatal', e.message);
  return new PlaceError('row', e.message);
}
