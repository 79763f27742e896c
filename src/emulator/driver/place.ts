/**
 * Places a call: works out where it goes and what its requests carry, then runs it in
 * the background (runCall) and hands back its id and a promise of its transcript.
 *
 * - inbound to a URL: `app` is the script's call.app, no credentials unless given;
 * - inbound to an app (or to a DID routed to one): the app's url, its login/password as
 *   HTTP Basic, its hash as `app`;
 * - outbound (calls.realtime, or the control API): `number` is the number called,
 *   `request_hash` the call's id, cli_number the cli option ("" when BLOCKED or none);
 *   the caller script is the one registered for that number, else the default caller.
 */
import type { EmulatorContext } from '../context.js';
import type { AppRecord } from '../rpc/apps.js';
import { basicAuthHeader } from '../auth.js';
import { loadCallerScript } from '../caller/load.js';
import { defaultCaller, type CallerScript } from '../caller/types.js';
import { formatDatetime } from '../time.js';
import { runCall, type CallSpec } from './call.js';
import type { Transcript } from './transcript.js';

export type PlaceRequest =
  | {
      kind: 'inbound';
      url?: string;
      app?: AppRecord;
      auth?: { login: string; password: string };
      script?: CallerScript;
      /** The DID dialled, when the call was routed by it. */
      did?: string;
      realtime?: boolean;
      replyTimeoutMs?: number;
    }
  | {
      kind: 'outbound';
      url?: string;
      app?: AppRecord;
      auth?: { login: string; password: string };
      to: string;
      ringTimeoutS?: number;
      cdrField?: string;
      cli?: string;
      script?: CallerScript;
      realtime?: boolean;
      replyTimeoutMs?: number;
    };

export type Placed =
  { ok: true; id: string; callid: string; done: Promise<Transcript> } | { ok: false; busy?: true; message: string };

export function placeCall(ctx: EmulatorContext, req: PlaceRequest): Placed {
  const url = req.app?.p.url ?? req.url;
  if (!url) return { ok: false, message: 'a call needs a url or an app' };
  const max = ctx.calls.maxLiveCalls;
  if (ctx.background.size >= max)
    return {
      ok: false,
      busy: true,
      message:
        `${ctx.background.size} calls are running, the most this emulator runs at once ` +
        `(--max-live-calls ${max}): try again when some have ended`,
    };
  const script = req.script ?? (req.kind === 'outbound' ? registeredCaller(ctx, req.to) : defaultCaller());
  const auth = req.app
    ? req.app.p.login
      ? { login: req.app.p.login, password: req.app.p.password }
      : undefined
    : req.auth;
  const id = ctx.store.newHash();
  const callid = newCallid(ctx);
  const c = script.call;
  const outbound = req.kind === 'outbound';
  const spec: CallSpec = {
    id,
    direction: req.kind,
    url,
    app: req.app?.hash ?? c.app,
    requestHash: outbound ? id : null,
    callid,
    cliNumber: outbound ? (req.cli && req.cli !== 'BLOCKED' ? req.cli : '') : c.from,
    cliName: outbound ? '' : c.name,
    number: outbound ? req.to : (req.did ?? c.to),
    dateStarted: c.date ?? formatDatetime(ctx.clock.now()),
    cdrField: outbound ? (req.cdrField ?? c.cdr_field) : c.cdr_field,
    script,
    realtime: req.realtime ?? ctx.calls.realtime,
    replyTimeoutMs: req.replyTimeoutMs ?? ctx.calls.replyTimeoutMs,
    maxCommands: c.max_commands ?? ctx.calls.maxCommands,
  };
  if (outbound) spec.ringTimeoutS = req.ringTimeoutS ?? 30;
  if (auth) spec.authorization = basicAuthHeader(auth.login, auth.password);
  const done = runCall(ctx, spec);
  ctx.background.add(done);
  const forget = () => void ctx.background.delete(done);
  done.then(forget, (err: unknown) => {
    forget();
    ctx.log.error({ err, call: id }, 'emulated call failed');
  });
  return { ok: true, id, callid, done };
}

/** The script registered for a number (PUT /emulator/callers/<number>), else the default caller. */
export function registeredCaller(ctx: EmulatorContext, number: string): CallerScript {
  const reg = ctx.store.callers.get(number);
  if (!reg) return defaultCaller();
  const r = loadCallerScript(reg.text, reg.file);
  if (r.ok) return r.script;
  ctx.log.warn(
    { number, file: reg.file },
    'the caller script registered for this number no longer loads: default caller used',
  );
  return defaultCaller();
}

function newCallid(ctx: EmulatorContext): string {
  for (;;) {
    const c = ctx.store.ids.callid();
    if (ctx.live.has(c)) continue;
    let used = false;
    for (const t of ctx.store.calls.values()) if (t.callid === c) used = true;
    if (!used) return c;
  }
}
