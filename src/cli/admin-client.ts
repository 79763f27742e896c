/**
 * A running server's admin API, as the commands reach it (`calls`, `trace`, `dial`,
 * `campaign`): --server http://LOGIN:PASSWORD@host:port, else CALLSCRIPT_SERVER, else
 * http://127.0.0.1:3000; credentials from the URL, else ADMIN_LOGIN and ADMIN_PASSWORD.
 * Answers are JSON; errors are the `{"error":{"code","message"}}` envelope, turned here into
 * one message each and an exit code (2: callscript could not be asked).
 */
export interface AdminServer {
  /** The base URL, credentials taken out, ending with "/". */
  base: URL;
  /** The base URL as shown in messages (no credentials). */
  shown: string;
  authorization?: string;
}

export const ADMIN_TIMEOUT_MS = 10_000;

/** The server's base URL (credentials taken out of it) and the admin's authorization, or why not. */
export function adminServer(server: string | undefined, env: NodeJS.ProcessEnv): AdminServer | string {
  const raw = server ?? (env.CALLSCRIPT_SERVER || undefined) ?? 'http://127.0.0.1:3000';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `--server (or CALLSCRIPT_SERVER) must be a URL such as http://LOGIN:PASSWORD@127.0.0.1:3000, not "${raw}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `--server must be an http:// or https:// URL, not "${url.protocol}//…"`;
  const login = url.username !== '' ? decodeURIComponent(url.username) : env.ADMIN_LOGIN;
  const password = url.password !== '' || url.username !== '' ? decodeURIComponent(url.password) : env.ADMIN_PASSWORD;
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const shown = url.href.replace(/\/$/, '');
  return {
    base: url,
    shown,
    ...(login ? { authorization: 'Basic ' + Buffer.from(`${login}:${password ?? ''}`).toString('base64') } : {}),
  };
}

/**
 * What an admin request failed with: the envelope's code (or ours: UNREACHABLE, TIMEOUT, NOT_CALLSCRIPT), the HTTP
 * status, a message.
 */
export class AdminRequestError extends Error {
  override readonly name = 'AdminRequestError';
  constructor(
    /**
     * The error code of the answer (SERVICE_ERROR, BAD_ADMIN_BODY, ...), or UNREACHABLE, TIMEOUT, NOT_CALLSCRIPT when
     * none came.
     */
    readonly code: string,
    /** The HTTP status; 0 when there was no answer. */
    readonly status: number,
    message: string,
    /**
     * The exit code a command gives for it: 2 when callscript could not be asked (down, credentials, no admin API),
     * else 1.
     */
    readonly exit: 1 | 2,
    /** The error object's other fields (serviceCode of SERVICE_ERROR). */
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** Worth trying again later: no answer, a timeout, 5xx (the service or the store unavailable), 429. */
  get transient(): boolean {
    return this.status === 0 || this.status >= 500 || this.status === 429;
  }
}

/** One admin request: the JSON answer of a 2xx, else an AdminRequestError. */
export async function adminRequest(
  a: AdminServer,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<unknown> {
  const timeoutMs = opts.timeoutMs ?? ADMIN_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  let res: Response;
  let text: string;
  try {
    res = await fetch(new URL(path, a.base), {
      method,
      headers: {
        ...(a.authorization ? { authorization: a.authorization } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal,
    });
    text = await res.text();
  } catch (e) {
    if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('aborted');
    const c = (e as { cause?: { code?: string; message?: string } }).cause;
    const timedOut = timeout.aborted || (e as Error).name === 'TimeoutError';
    const why = timedOut ? `no answer within ${timeoutMs / 1000} s` : (c?.code ?? c?.message ?? (e as Error).message);
    throw new AdminRequestError(
      timedOut ? 'TIMEOUT' : 'UNREACHABLE',
      0,
      `cannot reach callscript at ${a.shown} (${why}): is callscript serve running there? (--server, ` +
        `CALLSCRIPT_SERVER)`,
      2,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new AdminRequestError(
      'NOT_CALLSCRIPT',
      res.status,
      `${a.shown} answered HTTP ${res.status} with a body that is not JSON (is it callscript?): ${text.slice(0, 120)}`,
      2,
    );
  }
  if (res.status >= 200 && res.status < 300) return data;
  const e = (data as { error?: { code?: string; message?: string } & Record<string, unknown> } | null)?.error;
  const code = e?.code ?? `HTTP ${res.status}`;
  const what = `${code}: ${e?.message ?? text.slice(0, 200)}`;
  const { code: _c, message: _m, ...fields } = e ?? {};
  if (res.status === 401) {
    throw new AdminRequestError(
      code,
      401,
      `${a.authorization ? 'the admin credentials were refused' : 'no admin credentials given'} (${code}): ` +
        `give them in --server http://LOGIN:PASSWORD@host:port, or ADMIN_LOGIN and ADMIN_PASSWORD`,
      2,
    );
  }
  if (code === 'NOT_FOUND')
    throw new AdminRequestError(
      code,
      res.status,
      `${a.shown} has no admin API (${what}): it is on with admin: { login, password } in callscript.yaml, ` +
        `or ADMIN_LOGIN and ADMIN_PASSWORD where the server runs`,
      2,
    );
  const usage =
    res.status === 429 ||
    code === 'SERVICE_UNCONFIGURED' ||
    code === 'CROSS_ORIGIN' ||
    code === 'UNSUPPORTED_MEDIA_TYPE';
  throw new AdminRequestError(code, res.status, what, usage ? 2 : 1, fields);
}
