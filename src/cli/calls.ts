/**
 * `callscript calls` and `callscript trace <callid>`: the admin API's calls (docs/admin.md
 * "Calls") from a running server, printed as a table and a timeline (./calls-format.ts).
 * The server: --server http://LOGIN:PASSWORD@host:port, else CALLSCRIPT_SERVER, else
 * http://127.0.0.1:3000; credentials from the URL, else ADMIN_LOGIN and ADMIN_PASSWORD.
 */
import {
  finishedTable,
  liveTable,
  traceText,
  type CallDetail,
  type FinishedRow,
  type LiveRow,
} from './calls-format.js';
import { AdminRequestError, adminRequest, adminServer as adminOf, type AdminServer } from './admin-client.js';
import { printable } from '../terminal/printable.js';

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
/** Pages of one call's path read at most (256 KiB each: a path is 4 MiB at most, history.max_path_bytes). */
const MAX_PATH_PAGES = 64;
type Got = { ok: true; data: unknown } | { ok: false; exit: number; message: string };

/** Exit code: 0 listed, 2 could not (server down, credentials, bad flags). */
export async function calls(
  flags: CallsFlags,
  env: NodeJS.ProcessEnv = process.env,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  // the server's words (an error's message) are shown with their control characters escaped
  const fail = (msg: string, code = 2) => (err.write(`callscript calls: ${printable(msg)}\n`), code);
  const limit = flags.limit === undefined ? 50 : /^[0-9]{1,5}$/.test(flags.limit) ? Number(flags.limit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    return fail(`--limit must be an integer from 1 to ${MAX_LIMIT}, not "${flags.limit}"`);
  const admin = adminOf(flags.server, env);
  if (typeof admin === 'string') return fail(admin);
  const status = flags.finished ? 'finished' : 'live';
  const rows: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page0 = `admin/calls?status=${status}&limit=${Math.min(PAGE, limit - rows.length)}`;
    const q: string = cursor ? `${page0}&cursor=${encodeURIComponent(cursor)}` : page0;
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
export async function trace(
  callid: string,
  flags: ServerFlags,
  env: NodeJS.ProcessEnv = process.env,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const fail = (msg: string, code = 2) => (err.write(`callscript trace: ${printable(msg)}\n`), code);
  const admin = adminOf(flags.server, env);
  if (typeof admin === 'string') return fail(admin);
  const r = await get(admin, `admin/calls/${encodeURIComponent(callid)}`);
  if (!r.ok) return fail(r.message, r.exit);
  // a long path comes in pages: the detail has the first, `pathNext` the cursor of the next
  const c = r.data as CallDetail;
  for (let n = 0; c.pathNext && n < MAX_PATH_PAGES; n++) {
    const page = await get(admin, `admin/calls/${encodeURIComponent(callid)}/path?cursor=${c.pathNext}`);
    if (!page.ok) return fail(page.message, page.exit);
    const p = page.data as { path: CallDetail['path']; next: string | null };
    c.path.push(...p.path);
    c.pathNext = p.next;
  }
  out.write(flags.json ? `${JSON.stringify(c, null, 2)}\n` : `${traceText(c)}\n`);
  return 0;
}

/** A GET of the admin API: its data, or the message and exit code (1 only for CALL_NOT_FOUND). */
async function get(a: AdminServer, path: string): Promise<Got> {
  try {
    return { ok: true, data: await adminRequest(a, 'GET', path) };
  } catch (e) {
    if (!(e instanceof AdminRequestError)) throw e;
    return { ok: false, exit: e.code === 'CALL_NOT_FOUND' ? 1 : 2, message: e.message };
  }
}
