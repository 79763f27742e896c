/**
 * `callscript calls` and `callscript trace <callid>`: the admin API's calls (docs/admin.md
 * "Calls") from a running server, printed as a table and a timeline (./calls-format.ts).
 * The server: --server http://LOGIN:PASSWORD@host:port, else CALLSCRIPT_SERVER, else
 * http://127.0.0.1:3000; credentials from the URL, else ADMIN_LOGIN and ADMIN_PASSWORD.
 */
import { finishedTable, liveTable, traceText, type CallDetail, type FinishedRow, type LiveRow } from './calls-format.js';

export interface ServerFlags {
  server?: string;
  json?: boolean;
}

export interface CallsFlags extends ServerFlags {
  finished?: boolean;
  limit?: string;
}

/** Calls listed at most by one command (pages of 500 are fetched until then). */
const MAX_LIMIT = 10_000;
const PAGE = 500;
const TIMEOUT_MS = 10_000;

type Admin = { base: URL; shown: string; authorization?: string };
type Got = { ok: true; data: unknown } | { ok: false; exit: number; message: string };

/** Exit code: 0 listed, 2 could not (server down, credentials, bad flags). */
export async function calls(flags: CallsFlags, env: NodeJS.ProcessEnv = process.env, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const fail = (msg: string, code = 2) => (err.write(`callscript calls: ${msg}\n`), code);
  const limit = flags.limit === undefined ? 50 : /^[0-9]{1,5}$/.test(flags.limit) ? Number(flags.limit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) return fail(`--limit must be an integer from 1 to ${MAX_LIMIT}, not "${flags.limit}"`);
  const admin = adminOf(flags.server, env);
  if (typeof admin === 'string') return fail(admin);
  const status = flags.finished ? 'finished' : 'live';
  const rows: unknown[] = [];
  let cursor: string | null = null;
  do {
    const q: string = `admin/calls?status=${status}&limit=${Math.min(PAGE, limit - rows.length)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const r = await get(admin, q);
    if (!r.ok) return fail(r.message, r.exit);
    const page = r.data as { calls: unknown[]; next: string | null };
    rows.push(...page.calls);
    cursor = page.next;
  } while (cursor !== null && rows.length < limit);
  if (flags.json) out.write(`${JSON.stringify(rows, null, 2)}\n`);
  else {
    out.write(`${flags.finished ? finishedTable(rows as FinishedRow[]) : liveTable(rows as LiveRow[], Date.now())}\n`);
    if (cursor !== null) out.write(`(more ${status} calls: raise --limit)\n`);
  }
  return 0;
}

/** Exit code: 0 shown, 1 no such call, 2 could not (server down, credentials, a bad callid). */
export async function trace(callid: string, flags: ServerFlags, env: NodeJS.ProcessEnv = process.env, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const fail = (msg: string, code = 2) => (err.write(`callscript trace: ${msg}\n`), code);
  const admin = adminOf(flags.server, env);
  if (typeof admin === 'string') return fail(admin);
  const r = await get(admin, `admin/calls/${encodeURIComponent(callid)}`);
  if (!r.ok) return fail(r.message, r.exit);
  out.write(flags.json ? `${JSON.stringify(r.data, null, 2)}\n` : `${traceText(r.data as CallDetail)}\n`);
  return 0;
}

/** The server's base URL (credentials taken out of it) and the admin's authorization, or why not. */
function adminOf(server: string | undefined, env: NodeJS.ProcessEnv): Admin | string {
  const raw = server ?? (env.CALLSCRIPT_SERVER || undefined) ?? 'http://127.0.0.1:3000';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `--server (or CALLSCRIPT_SERVER) must be a URL such as http://LOGIN:PASSWORD@127.0.0.1:3000, not "${raw}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `--server must be an http:// or https:// URL, not "${url.protocol}//…"`;
  const login = url.username !== '' ? decodeURIComponent(url.username) : env.ADMIN_LOGIN;
  const password = url.password !== '' || url.username !== '' ? decodeURIComponent(url.password) : env.ADMIN_PASSWORD;
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const shown = url.href.replace(/\/$/, '');
  return { base: url, shown, ...(login ? { authorization: 'Basic ' + Buffer.from(`${login}:${password ?? ''}`).toString('base64') } : {}) };
}

async function get(a: Admin, path: string): Promise<Got> {
  let res: Response;
  try {
    res = await fetch(new URL(path, a.base), { headers: a.authorization ? { authorization: a.authorization } : {}, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    const c = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = (e as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (c?.code ?? c?.message ?? (e as Error).message);
    return { ok: false, exit: 2, message: `cannot reach callscript at ${a.shown} (${why}): is callscript serve running there? (--server, CALLSCRIPT_SERVER)` };
  }
  const text = await res.text();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, exit: 2, message: `${a.shown} answered HTTP ${res.status} with a body that is not JSON (is it callscript?): ${text.slice(0, 120)}` };
  }
  if (res.status === 200) return { ok: true, data };
  const e = (data as { error?: { code?: string; message?: string } } | null)?.error;
  const code = e?.code ?? `HTTP ${res.status}`;
  const what = `${code}: ${e?.message ?? text.slice(0, 200)}`;
  if (res.status === 401) {
    return { ok: false, exit: 2, message: `${a.authorization ? 'the admin credentials were refused' : 'no admin credentials given'} (${code}): give them in --server http://LOGIN:PASSWORD@host:port, or ADMIN_LOGIN and ADMIN_PASSWORD` };
  }
  if (code === 'NOT_FOUND') return { ok: false, exit: 2, message: `${a.shown} has no admin API (${what}): it is on with admin: { login, password } in callscript.yaml, or ADMIN_LOGIN and ADMIN_PASSWORD where the server runs` };
  if (code === 'CALL_NOT_FOUND') return { ok: false, exit: 1, message: what };
  return { ok: false, exit: 2, message: what };
}
