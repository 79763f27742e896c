/** `callscript call`: runs one call through a running emulator and prints its transcript. */
import { readFile } from 'node:fs/promises';
import { formatTranscript } from '../emulator/driver/format.js';
import type { Transcript } from '../emulator/driver/transcript.js';
import { DEFAULT_LOGIN, DEFAULT_PASSWORD, DEFAULT_PORT } from '../emulator/server.js';
import { printableLines } from '../terminal/printable.js';

export interface CallFlags {
  url?: string;
  app?: string;
  did?: string;
  outbound?: string;
  caller?: string;
  emulator?: string;
  login?: string;
  password?: string;
  auth?: string;
  json?: boolean;
  realtime?: boolean;
  replyTimeout?: string;
  full?: boolean;
}

/** Exit code: 0 a clean call, 1 protocol violations, 2 the call could not run. */
export async function call(
  flags: CallFlags,
  env: NodeJS.ProcessEnv = process.env,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const fail = (msg: string) => {
    // the emulator's words (a caller script's problems, one a line) with their control characters escaped
    err.write(`callscript call: ${printableLines(msg)}\n`);
    return 2;
  };
  const targets = [flags.url, flags.app, flags.did].filter((x) => x !== undefined);
  if (targets.length !== 1)
    return fail('give one of --url <real-time URL>, --app <app hash> or --did <number routed to an app>');
  const body: Record<string, unknown> = {};
  if (flags.url !== undefined) body.url = flags.url;
  if (flags.app !== undefined) body.app = flags.app;
  if (flags.did !== undefined) body.did = flags.did;
  if (flags.outbound !== undefined) body.outbound = flags.outbound;
  if (flags.realtime) body.realtime = true;
  if (flags.replyTimeout !== undefined) body.reply_timeout_ms = Number(flags.replyTimeout);
  const auth = flags.auth ?? (env.RT_LOGIN ? `${env.RT_LOGIN}:${env.RT_PASSWORD ?? ''}` : undefined);
  if (auth !== undefined && flags.url !== undefined) {
    const i = auth.indexOf(':');
    if (i < 0) return fail('--auth is login:password');
    body.auth = { login: auth.slice(0, i), password: auth.slice(i + 1) };
  }
  if (flags.caller !== undefined) {
    try {
      body.caller_text = await readFile(flags.caller, 'utf8');
    } catch (e) {
      return fail(`cannot read the caller script ${flags.caller}: ${(e as Error).message}`);
    }
    body.caller_file = flags.caller;
  }
  const base = (flags.emulator ?? env.EMULATOR_URL ?? `http://127.0.0.1:${DEFAULT_PORT}`).replace(/\/+$/, '');
  const login = flags.login ?? env.EMULATOR_LOGIN ?? DEFAULT_LOGIN;
  const password = flags.password ?? env.EMULATOR_PASSWORD ?? DEFAULT_PASSWORD;
  const authorization = 'Basic ' + Buffer.from(`${login}:${password}`).toString('base64');
  // The call runs in the emulator; poll its transcript (a real-time call can outlast an HTTP request).
  body.wait = false;
  const started = await request(base, '/emulator/calls', authorization, body);
  if (!started.ok) return fail(started.message);
  if (started.status !== 202) return fail(apiError(started.status, started.data));
  const id = (started.data as { id: string }).id;
  let data: unknown;
  for (;;) {
    const r = await request(base, `/emulator/calls/${id}`, authorization);
    if (!r.ok) return fail(r.message);
    if (r.status !== 200) return fail(apiError(r.status, r.data));
    if ((r.data as Transcript).status === 'ended') {
      data = r.data;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, flags.realtime ? 500 : 50));
  }
  const t = data as Transcript;
  if (flags.json) out.write(JSON.stringify(t, null, 2) + '\n');
  else out.write(formatTranscript(t, { full: flags.full ?? false }) + '\n');
  return t.violations.length > 0 ? 1 : 0;
}

type Answer = { ok: true; status: number; data: unknown } | { ok: false; message: string };

async function request(base: string, path: string, authorization: string, body?: unknown): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    const c = (e as { cause?: { code?: string; message?: string } }).cause;
    return {
      ok: false,
      message:
        `cannot reach the emulator at ${base} (${c?.code ?? c?.message ?? (e as Error).message}); start it ` +
        `with: callscript emulator`,
    };
  }
  const text = await res.text();
  try {
    return { ok: true, status: res.status, data: JSON.parse(text) };
  } catch {
    return {
      ok: false,
      message:
        `the emulator at ${base} answered HTTP ${res.status} with a body that is not ` + `JSON: ${text.slice(0, 200)}`,
    };
  }
}

function apiError(status: number, data: unknown): string {
  const e = (data as { error?: { code?: string; message?: string } } | null)?.error;
  return `${e?.code ?? `HTTP ${status}`}${e?.code === 'BAD_CALLER' ? '\n' : ': '}${e?.message ?? JSON.stringify(data)}`;
}
