/**
 * `callscript dial <number> --app HASH [--vars k=v ...]`: one outbound call (docs/service.md).
 *
 * - With a server (--server URL, or CALLSCRIPT_SERVER): POST /admin/calls places it (the
 *   server's account; the flow starts with --vars), then GET /admin/outbound/:id is read until
 *   the call is over or --timeout runs out, and its outcome printed from the call history.
 *   Exit 0 when the call completed (the flow ran to its end) or was transferred (its dialout answered), 1 otherwise
 *   (abandoned, not
 *   answered, an error, refused by the service, still not over at --timeout), 2 when it could
 *   not be tried (bad flags, the server unreachable, its credentials, no account on it), 3
 *   when it may or may not have been placed (the service's answer was lost or late): a
 *   script must not dial again on 3 without checking.
 * - Without one: calls.realtime straight to the service with this command's account (--api,
 *   --account); the flow gets no vars (the service carries none); the call's id is printed.
 */
import {
  checkOutboundRequest,
  RING_TIMEOUT_S,
  type OutboundRequest,
  type OutboundVars,
} from '../service/outbound-request.js';
import { ServiceError } from '../service/errors.js';
import { duration } from './calls-format.js';
import { parseDuration } from './duration.js';
import {
  AdminRequestError,
  adminServer,
  followCall,
  placeCall,
  type FollowResult,
  type OutboundView,
} from './outbound.js';
import { openService, serviceFailure, type ServiceFlags } from './service-settings.js';
import { printable } from '../terminal/printable.js';

/** The exit code of a placement that may or may not have happened. */
export const EXIT_UNKNOWN = 3;
/** The server's codes of a placement whose outcome is unknown (src/http/outbound.ts). */
const UNKNOWN_CODES = new Set(['SERVICE_TIMEOUT', 'SERVICE_OUTCOME_UNKNOWN']);
const MAY_BE_PLACED = 'the call may or may not have been placed: check before dialling again (exit 3)';

export interface DialFlags extends ServiceFlags {
  app?: string;
  vars?: string[];
  cdrField?: string;
  cli?: string;
  server?: string;
  /** How long to follow the call (with a server). Default 120s. */
  timeout?: string;
  /** Time between two reads of the call. Default 1s. */
  poll?: string;
  json?: boolean;
}

type Io = { env?: NodeJS.ProcessEnv; cwd?: string; out?: NodeJS.WritableStream; err?: NodeJS.WritableStream };

/** `k=v` pairs as vars (strings: the flow makes them the type its vars: declare); a message when one is not. */
export function parseVars(pairs: readonly string[]): OutboundVars | string {
  const vars: OutboundVars = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) return `--vars takes name=value pairs, not "${p.slice(0, 60)}"`;
    const k = p.slice(0, eq);
    if (Object.prototype.hasOwnProperty.call(vars, k)) return `--vars: ${k} is given twice`;
    Object.defineProperty(vars, k, { value: p.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  return vars;
}

export async function dial(number: string, flags: DialFlags, io: Io = {}): Promise<number> {
  const env = io.env ?? process.env;
  const out = io.out ?? process.stdout;
  const err = io.err ?? process.stderr;
  // what the service or the server said is shown with its control characters escaped
  const fail = (msg: string, code: number) => (err.write(`callscript dial: ${printable(msg)}\n`), code);

  if (flags.app === undefined)
    return fail(
      '--app HASH is required: the REALTIME10 application whose URL the service calls (callscript apps list)',
      2,
    );
  const vars = parseVars(flags.vars ?? []);
  if (typeof vars === 'string') return fail(vars, 2);
  const req: OutboundRequest = {
    app: flags.app,
    number,
    ...(Object.keys(vars).length > 0 ? { vars } : {}),
    ...(flags.cdrField !== undefined ? { cdr_field: flags.cdrField } : {}),
    ...(flags.cli !== undefined ? { cli: flags.cli } : {}),
  };
  const checked = checkOutboundRequest(req);
  if (!checked.ok)
    return fail(
      checked.message
        .replace(/^vars/, '--vars')
        .replace(/^cdr_field/, '--cdr-field')
        .replace(/^cli/, '--cli')
        .replace(/^app/, '--app'),
      2,
    );

  const serverText = flags.server ?? (env.CALLSCRIPT_SERVER || undefined);
  if (serverText === undefined) return direct(checked.value, flags, { env, cwd: io.cwd ?? process.cwd(), out, err });

  // the server places the call with its own settings: these would do nothing
  const unused = (['api', 'account', 'config'] as const).filter((k) => flags[k] !== undefined);
  if (unused.length > 0)
    return fail(
      `${unused.map((k) => `--${k}`).join(', ')}: not used with --server (the server places the call with ` +
        `its own account and api:); give them without --server to call the service directly`,
      2,
    );
  const timeoutMs = parseDuration(flags.timeout ?? '120s', '--timeout', { minMs: 1000, maxMs: 24 * 3_600_000 });
  if (typeof timeoutMs === 'string') return fail(timeoutMs, 2);
  const pollMs = parseDuration(flags.poll ?? '1s', '--poll', { minMs: 100, maxMs: 60_000 });
  if (typeof pollMs === 'string') return fail(pollMs, 2);
  const server = adminServer(serverText, env);
  if (typeof server === 'string') return fail(server, 2);

  let result: FollowResult;
  let id: string | undefined;
  try {
    const placed = await placeCall(server, checked.value);
    id = placed.id;
    if (!flags.json)
      err.write(printable(`placed call ${id} to ${placed.number} (app ${placed.app}) through ${server.shown}`) + '\n');
    result = await followCall(server, id, {
      timeoutMs,
      pollMs,
      onUpdate: (v) => {
        if (!flags.json && v.status === 'live') err.write(printable(`call ${id}: live, callid ${v.callid}`) + '\n');
      },
    });
  } catch (e) {
    if (!(e instanceof AdminRequestError)) throw e;
    // the server placed it and may have had no answer, or its own answer did not come back in time
    if (id === undefined && (UNKNOWN_CODES.has(e.code) || e.code === 'TIMEOUT'))
      return fail(`${e.message}: ${MAY_BE_PLACED}`, EXIT_UNKNOWN);
    return fail(e.message, e.exit);
  }
  const { view, timedOut } = result;
  if (flags.json) out.write(`${JSON.stringify({ ...view, timedOut }, null, 2)}\n`);
  else out.write(`${outcomeText(view, timedOut, timeoutMs).split('\n').map(printable).join('\n')}\n`);
  // a transfer (the dialout answered, bridged) is a normal end too
  return !timedOut && (view.outcome === 'completed' || view.outcome === 'transferred') ? 0 : 1;
}

/** The outcome as printed: what happened, and the call's fields a line each. */
export function outcomeText(v: OutboundView, timedOut: boolean, timeoutMs: number): string {
  const head = timedOut
    ? `call ${v.id}: not over after ${duration(timeoutMs)} ` +
      (v.status === 'placed'
        ? '(still placed: the service has not connected it)'
        : `(live${v.step ? ` at ${v.step}` : ''})`)
    : `call ${v.id}: ${v.outcome ?? 'finished (no record of how: the call history is off or forgot it)'}` +
      (v.callStatus ? ` (${v.callStatus})` : '');
  const rows: [string, string][] = [
    ['number', v.number],
    ['callid', v.callid ?? '-'],
  ];
  if (!timedOut)
    rows.push(
      ['last step', v.lastStep ?? '-'],
      ['duration', v.durationMs === null || v.durationMs === undefined ? '-' : duration(v.durationMs)],
    );
  return [head, ...rows.map(([k, val]) => `  ${k.padEnd(10)}${val}`)].join('\n');
}

/** Without a server: calls.realtime with this command's account; the id printed. */
async function direct(req: OutboundRequest, flags: DialFlags, io: Required<Io>): Promise<number> {
  const { out, err } = io;
  if (req.vars)
    err.write(
      'callscript dial: warning: --vars are not sent without --server: the service carries no variables to ' +
        'the flow (give --server http://LOGIN:PASSWORD@host:port of your callscript server, or ' +
        'CALLSCRIPT_SERVER)\n',
    );
  // --timeout is how long to follow a call, which this mode does not: the API's own timeout stays
  const opened = await openService('dial', { ...flags, timeout: undefined }, io.env, io.cwd, err);
  if (typeof opened === 'number') return opened;
  const { client, settings } = opened;
  let id: string;
  try {
    id = await client.calls.realtime(
      req.app,
      { number: req.number, timeout: RING_TIMEOUT_S },
      {
        ...(req.cdr_field !== undefined ? { cdr_field: req.cdr_field } : {}),
        ...(req.cli !== undefined ? { cli: req.cli } : {}),
      },
    );
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    const f = serviceFailure(e, settings);
    // sent, and no usable answer (a timeout, a cut, an HTTP error, a reply that is no call id)
    if (!e.fromService && !e.unsent) {
      err.write(`callscript dial: ${printable(f.message)}: ${MAY_BE_PLACED}\n`);
      return EXIT_UNKNOWN;
    }
    err.write(`callscript dial: ${printable(f.message)}\n`);
    return f.exit;
  }
  if (flags.json) out.write(`${JSON.stringify({ id, app: req.app, number: req.number })}\n`);
  else
    out.write(
      `placed call ${id} to ${req.number} (app ${req.app}) through ${settings.url}: the service runs it on ` +
        `the application's URL (its requests carry request_hash ${id}); without --server it is not followed\n`,
    );
  return 0;
}
