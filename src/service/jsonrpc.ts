/**
 * A typed client of the service's JSON-RPC API: the CALLR API v1.1 (https://www.callr.com/docs/),
 * JSON-RPC 2.0 at https://api.callr.com/json-rpc/v1.1/ (protocol-notes.md "Outbound calls
 * and applications (JSON-RPC)"), on Node's global fetch. The emulator serves the same API at
 * http://127.0.0.1:4010/json-rpc/v1.1/.
 *
 * - POST, `Content-Type: application/json-rpc; charset=utf-8`, positional params, one call per
 *   request; HTTP Basic with the account's login and password.
 * - Never `Expect: 100-continue` (the service's front end rejects it): fetch sends none.
 * - One timeout per call (connect, headers and body), and a cap on the reply's size.
 * - Arguments are checked locally first (SERVICE_BAD_ARGS, nothing sent).
 * - Errors: ServiceError (./errors.ts): the JSON-RPC code when the service answered one (22:
 *   "authentication failed: check the account"), else a code of ours.
 */
import { checkE164, checkFormat } from '../protocol/formats.js';
import { checkListArgs, checkSendArgs, toSmsDatetime } from '../sms/validate.js';
import type { Sms, SmsOptions } from '../sms/types.js';
import { AUTH_FAILED, ServiceError, type ServiceTransportCode } from './errors.js';
import type { App, CallTarget, RealtimeAppParams, RealtimeCallOptions, SmsDirection } from './types.js';
import { describeCode, readCapped, systemCode } from './transport.js';

/** The service's JSON-RPC address (the CALLR API v1.1). */
export const DEFAULT_API_URL = 'https://api.callr.com/json-rpc/v1.1/';
/** Where the JSON-RPC API is under a base URL given without a path (the emulator's, `--api http://127.0.0.1:4010`). */
export const JSON_RPC_PATH = '/json-rpc/v1.1/';
export const DEFAULT_SERVICE_TIMEOUT_MS = 10_000;
/** A reply larger than this is refused (SERVICE_BAD_REPLY): no answer of the API comes near it. */
const MAX_REPLY_BYTES = 8 * 1024 * 1024;

export interface ServiceClientOptions {
  /** The JSON-RPC address; a base URL without a path gets JSON_RPC_PATH. Default DEFAULT_API_URL. */
  url?: string;
  login: string;
  password: string;
  /** Per call, from sending to the end of the reply body. Default 10 000. */
  timeoutMs?: number;
}

/**
 * The JSON-RPC address of a URL as users give it: a base URL without a path (the emulator's
 * `http://127.0.0.1:4010`) gets `/json-rpc/v1.1/`; one with a path is taken as it is.
 * A string: why it is not one.
 */
export function serviceUrl(raw: string): string | { problem: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return {
      problem:
        `"${clip(raw)}" is not a URL: give the service's JSON-RPC address, e.g. ${DEFAULT_API_URL} or ` +
        `http://127.0.0.1:4010 (the emulator)`,
    };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { problem: `"${clip(raw)}" is not an http:// or https:// URL` };
  if (u.username !== '' || u.password !== '')
    return {
      problem:
        'the API address holds credentials: give the account apart (--account LOGIN:PASSWORD, ' +
        'CALLSCRIPT_ACCOUNT or account: in callscript.yaml)',
    };
  if (u.search !== '' || u.hash !== '')
    return { problem: `"${clip(raw)}": the API address takes no query string or fragment` };
  if (u.pathname === '/' || u.pathname === '') u.pathname = JSON_RPC_PATH;
  return u.href;
}

export class ServiceClient {
  readonly url: string;
  readonly timeoutMs: number;
  readonly #authorization: string;
  #nextId = 1;

  constructor(opts: ServiceClientOptions) {
    const url = serviceUrl(opts.url ?? DEFAULT_API_URL);
    if (typeof url !== 'string') throw new TypeError(url.problem);
    this.url = url;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_SERVICE_TIMEOUT_MS;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0)
      throw new RangeError('timeoutMs must be a positive number');
    if (typeof opts.login !== 'string' || opts.login.includes(':'))
      throw new TypeError(
        'the account login must be a string without ":" (HTTP Basic joins login and password with it)',
      );
    // RFC 7617: user-id and password joined by ':', UTF-8, base64 (the password may hold ':').
    this.#authorization = 'Basic ' + Buffer.from(`${opts.login}:${opts.password}`, 'utf8').toString('base64');
  }

  readonly apps = {
    /**
     * apps.create: a REALTIME10 application that sends its calls' requests to `params.url` (with `login`/`password` as
     * HTTP Basic when given).
     */
    create: async (name: string, params: { url: string; login?: string; password?: string }): Promise<App> => {
      if (typeof name !== 'string' || name.trim() === '')
        throw badArgs('apps.create', 'name: a non-empty name is required');
      const p = appParams('apps.create', params);
      return expectApp('apps.create', await this.call('apps.create', ['REALTIME10', name, p]));
    },
    /** apps.update: a new name and params for an application (give them all: get the app first to change a part). */
    update: async (
      hash: string,
      name: string,
      params: { url: string; login?: string; password?: string },
    ): Promise<App> => {
      checkHash('apps.update', hash);
      if (typeof name !== 'string' || name.trim() === '')
        throw badArgs('apps.update', 'name: a non-empty name is required');
      const p = appParams('apps.update', params);
      return expectApp('apps.update', await this.call('apps.update', [hash, name, p]));
    },
    get: async (hash: string): Promise<App> => {
      checkHash('apps.get', hash);
      return expectApp('apps.get', await this.call('apps.get', [hash]));
    },
    /** apps.get_list [full]: every application of the account, with its params. */
    list: async (): Promise<App[]> => {
      const r = await this.call('apps.get_list', [true]);
      if (!Array.isArray(r)) throw badReply('apps.get_list', 'the result is not a list');
      return r.map((a) => expectApp('apps.get_list', a));
    },
  };

  readonly calls = {
    /**
     * calls.realtime: places an outbound call; the service then runs it against the
     * application's URL. Returns the call's id, its requests' `request_hash`.
     */
    realtime: async (app: string, target: CallTarget, options: RealtimeCallOptions = {}): Promise<string> => {
      checkHash('calls.realtime', app);
      const bad = checkE164(String(target?.number));
      if (typeof target?.number !== 'string' || bad)
        throw badArgs('calls.realtime', `number "${clip(String(target?.number))}": ${bad ?? 'a string is required'}`);
      const timeout = target.timeout;
      if (!Number.isInteger(timeout) || timeout < 5 || timeout > 300)
        throw badArgs('calls.realtime', `timeout: whole seconds from 5 to 300, got ${String(timeout)}`);
      const o: RealtimeCallOptions = {};
      if (options.cdr_field !== undefined) {
        const why = checkFormat('cdr_customer_field', options.cdr_field);
        if (why) throw badArgs('calls.realtime', `cdr_field "${clip(options.cdr_field)}": ${why}`);
        o.cdr_field = options.cdr_field;
      }
      if (options.cli !== undefined) {
        const why = checkFormat('cli_phone_number', options.cli);
        if (why) throw badArgs('calls.realtime', `cli "${clip(options.cli)}": ${why}`);
        o.cli = options.cli;
      }
      const r = await this.call('calls.realtime', [app, { number: target.number, timeout }, o]);
      // the id comes back as the call's request_hash: letters and digits, as the service gives them
      if (typeof r !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(r))
        throw badReply(
          'calls.realtime',
          `the result ${clip(JSON.stringify(r) ?? 'undefined')} is not a call id (1 to 64 letters and digits)`,
          JSON.stringify(r) ?? '',
        );
      return r;
    },
  };

  readonly sms = {
    /** sms.send [from, to, body, options]: the new SMS's hash. */
    send: async (from: string, to: string, body: string, options: SmsOptions | null = null): Promise<string> => {
      const p = checkSendArgs({ from, to, body, options });
      if (p) throw badArgs('sms.send', p.message);
      const r = await this.call('sms.send', [from, to, body, options]);
      if (typeof r !== 'string' || r === '') throw badReply('sms.send', 'the result is not an SMS hash');
      return r;
    },
    get: async (hash: string): Promise<Sms> => {
      if (typeof hash !== 'string' || hash === '') throw badArgs('sms.get', 'hash: an SMS hash is required');
      return expectSms('sms.get', await this.call('sms.get', [hash]));
    },
    /** sms.get_list [type, from, to]: the SMS of one direction between two UTC datetimes. */
    list: async (type: SmsDirection, from: string | Date, to: string | Date): Promise<Sms[]> => {
      const f = from instanceof Date ? toSmsDatetime(from) : from;
      const t = to instanceof Date ? toSmsDatetime(to) : to;
      const p = checkListArgs({ type, from: f, to: t });
      if (p) throw badArgs('sms.get_list', p.message);
      const r = await this.call('sms.get_list', [type, f, t]);
      if (!Array.isArray(r)) throw badReply('sms.get_list', 'the result is not a list');
      return r.map((s) => expectSms('sms.get_list', s));
    },
  };

  /** One JSON-RPC call: its result, or a ServiceError. */
  async call(method: string, params: unknown[]): Promise<unknown> {
    const id = this.#nextId++;
    const signal = AbortSignal.timeout(this.timeoutMs);
    let status: number;
    let text: string;
    try {
      // No Expect header is ever set: fetch (undici) only sends one when asked to.
      const res = await fetch(this.url, {
        method: 'POST',
        headers: {
          authorization: this.#authorization,
          'content-type': 'application/json-rpc; charset=utf-8',
          accept: 'application/json-rpc, application/json',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal,
        redirect: 'error',
      });
      status = res.status;
      text = await readCapped(res, method, MAX_REPLY_BYTES);
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      throw this.#transportError(method, err, signal);
    }
    return this.#unwrap(method, id, status, text);
  }

  #unwrap(method: string, id: number, status: number, text: string): unknown {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      if (status !== 200)
        throw new ServiceError(
          'SERVICE_HTTP',
          `${method}: ${this.url} answered HTTP ${status}${text.trim() ? `: ${clip(text.trim(), 200)}` : ''}`,
          method,
          { status, body: text.slice(0, 500) },
        );
      throw new ServiceError(
        'SERVICE_BAD_REPLY',
        `${method}: ${this.url} answered a body that is not JSON (is it the service's JSON-RPC address?)`,
        method,
        { status, body: text.slice(0, 500) },
      );
    }
    const m = (typeof msg === 'object' && msg !== null && !Array.isArray(msg) ? msg : {}) as Record<string, unknown>;
    const e = m.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (m.jsonrpc === '2.0' && e && typeof e === 'object' && typeof e.code === 'number') {
      const text = typeof e.message === 'string' ? e.message : 'no message';
      if (e.code === AUTH_FAILED)
        throw new ServiceError(
          AUTH_FAILED,
          `${method}: authentication failed: check the account (login and password) (code 22: ${text})`,
          method,
          { status, data: e.data },
        );
      throw new ServiceError(e.code, `${method}: ${text} (code ${e.code})`, method, { status, data: e.data });
    }
    if (status !== 200)
      throw new ServiceError(
        'SERVICE_HTTP',
        `${method}: ${this.url} answered HTTP ${status} without a JSON-RPC error`,
        method,
        { status, body: text.slice(0, 500) },
      );
    if (m.jsonrpc !== '2.0' || !('result' in m))
      throw badReply(method, 'the answer is not a JSON-RPC 2.0 response (no result, no error)', text);
    if (m.id !== id)
      throw badReply(method, `the answer's id ${JSON.stringify(m.id)} is not the request's (${id})`, text);
    return m.result;
  }

  #transportError(method: string, err: unknown, signal: AbortSignal): ServiceError {
    if (signal.aborted || (err instanceof Error && err.name === 'TimeoutError')) {
      return new ServiceError(
        'SERVICE_TIMEOUT',
        `${method}: no answer from ${this.url} within ${this.timeoutMs} ms`,
        method,
        { cause: err },
      );
    }
    const code = systemCode(err);
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    const detail = code ? `${describeCode(code)} (${code})` : cause instanceof Error ? cause.message : String(cause);
    return new ServiceError('SERVICE_UNREACHABLE', `${method}: cannot reach ${this.url}: ${detail}`, method, {
      cause: err,
      ...(code ? { system: code } : {}),
    });
  }
}

function appParams(method: string, params: { url: string; login?: string; password?: string }): RealtimeAppParams {
  if (!params || typeof params.url !== 'string' || !isHttpUrl(params.url))
    throw badArgs(
      method,
      `url: the http:// or https:// address of your real-time server is required, ` +
        `got ${JSON.stringify(params?.url ?? null)}`,
    );
  const login = params.login ?? '';
  const password = params.password ?? '';
  if (typeof login !== 'string' || typeof password !== 'string')
    throw badArgs(method, 'login and password are strings');
  if ((login === '') !== (password === ''))
    throw badArgs(
      method,
      'login and password go together: give both (the Basic credentials the service sends to the URL), or neither',
    );
  if (login.includes(':')) throw badArgs(method, 'login: no ":" in an HTTP Basic login');
  return { url: params.url, login, password, data_format: 'JSON' };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

function checkHash(method: string, hash: unknown): void {
  if (typeof hash !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(hash))
    throw badArgs(
      method,
      `app: an application hash (letters and digits, e.g. A1B2C3D4) is required, ` +
        `got ${JSON.stringify(typeof hash === 'string' ? clip(hash) : (hash ?? null))}`,
    );
}

function expectApp(method: string, v: unknown): App {
  const a = v as Partial<App> | null;
  if (typeof a !== 'object' || a === null || Array.isArray(a) || typeof a.hash !== 'string')
    throw badReply(method, 'not an application object (an object with a string hash)', JSON.stringify(v) ?? '');
  if (typeof a.p !== 'object' || a.p === null) (a as App).p = {};
  return a as App;
}

function expectSms(method: string, v: unknown): Sms {
  const s = v as Partial<Sms> | null;
  if (typeof s !== 'object' || s === null || Array.isArray(s) || typeof s.hash !== 'string')
    throw badReply(method, 'not an SMS object (an object with a string hash)', JSON.stringify(v) ?? '');
  return s as Sms;
}

function badArgs(method: string, message: string): ServiceError {
  return new ServiceError('SERVICE_BAD_ARGS', `${method}: ${message}`, method);
}

function badReply(method: string, message: string, body = ''): ServiceError {
  const code: ServiceTransportCode = 'SERVICE_BAD_REPLY';
  return new ServiceError(code, `${method}: ${message}`, method, { body: body.slice(0, 500) });
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
