/**
 * A typed client for the SMS REST API v1.1 (telephony-api.md 4.1, protocol-notes.md
 * "SMS REST (v1.1)"), on Node's global fetch. HTTP Basic auth; never sends
 * `Expect: 100-continue`; one timeout per request (connect, headers and body); arguments
 * checked locally first (src/sms/validate.ts). Errors: see src/sms/errors.ts.
 */
import {
  SmsApiError,
  SmsError,
  SmsNetworkError,
  SmsProtocolError,
  SmsTimeoutError,
  SmsValidationError,
} from './errors.js';
import { describeCode, systemCode } from './net-errors.js';
import type { Sms, SmsListArgs, SmsOptions, SmsSendArgs } from './types.js';
import { checkListArgs, checkSendArgs, toSmsDatetime, type SmsArgProblem } from './validate.js';

/** The emulator's SMS REST address. */
export const DEFAULT_SMS_BASE_URL = 'http://127.0.0.1:4010/rest/v1.1';
export const DEFAULT_SMS_TIMEOUT_MS = 10_000;

export interface SmsClientOptions {
  /** REST address of version 1.1, without a trailing slash (one is tolerated). */
  baseUrl?: string;
  login: string;
  password: string;
  /** Per request, from sending to the end of the reply body. Default 10 000. */
  timeoutMs?: number;
  /** Sent with every request (e.g. CALLID_HEADER); authorization, accept and content-type are the client's own. */
  headers?: Record<string, string>;
}

/**
 * The call an SMS is sent for, as callscript's sms steps tell it: the service ignores the
 * header; the emulator shows the SMS in that call's transcript.
 */
export const CALLID_HEADER = 'x-callscript-callid';

type Query = Array<[string, string]>;

export class SmsClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly #authorization: string;
  readonly #headers: Record<string, string>;

  constructor(opts: SmsClientOptions) {
    this.#headers = { ...(opts.headers ?? {}) };
    this.baseUrl = (opts.baseUrl ?? DEFAULT_SMS_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_SMS_TIMEOUT_MS;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0)
      throw new RangeError('timeoutMs must be a positive number');
    // RFC 7617: user-id and password joined by ':', UTF-8, base64.
    this.#authorization = 'Basic ' + Buffer.from(`${opts.login}:${opts.password}`, 'utf8').toString('base64');
  }

  /** POST /sms: send an SMS; returns its hash. */
  async send(args: SmsSendArgs): Promise<string> {
    const { from, to, body } = args;
    const options = args.options ?? null;
    throwIf(checkSendArgs({ from, to, body, options }));
    const data = await this.#request('POST', '/sms', [], { from, to, body, options });
    return expectHash(data);
  }

  /** GET /sms/send: the same, every argument in the query string, options as options.<key>=<value>. */
  async sendViaQuery(args: SmsSendArgs): Promise<string> {
    const { from, to, body } = args;
    const options = args.options ?? null;
    throwIf(checkSendArgs({ from, to, body, options }));
    const query: Query = [['from', from], ['to', to], ['body', body], ...optionsQuery(options)];
    const data = await this.#request('GET', '/sms/send', query);
    return expectHash(data);
  }

  /** GET /sms/<hash>: one SMS. */
  async get(hash: string): Promise<Sms> {
    if (typeof hash !== 'string' || hash === '') throwIf({ param: 'hash', message: 'hash: an SMS hash is required' });
    const data = await this.#request('GET', `/sms/${encodeURIComponent(hash)}`, []);
    return expectSms(data, 'GET /sms/<hash>');
  }

  /** GET /sms: the SMS of one direction (IN or OUT) between two UTC datetimes. */
  async list(args: SmsListArgs): Promise<Sms[]> {
    const type = args.type;
    const from = datetimeArg(args.from);
    const to = datetimeArg(args.to);
    throwIf(checkListArgs({ type, from, to }));
    const data = await this.#request('GET', '/sms', [
      ['type', type],
      ['from', from],
      ['to', to],
    ]);
    if (!Array.isArray(data)) throw protocolError('GET /sms: data is not an array', 200, data);
    return data.map((item) => expectSms(item, 'GET /sms'));
  }

  async #request(method: 'GET' | 'POST', path: string, query: Query, json?: unknown): Promise<unknown> {
    const qs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    const url = this.baseUrl + path + (qs ? `?${qs}` : '');
    const what = `${method} ${this.baseUrl}${path}`;
    const headers: Record<string, string> = {
      ...this.#headers,
      authorization: this.#authorization,
      accept: 'application/json',
    };
    if (json !== undefined) headers['content-type'] = 'application/json';
    const signal = AbortSignal.timeout(this.timeoutMs);

    let status: number;
    let text: string;
    try {
      // No Expect header is ever set: fetch (undici) only sends one when asked to.
      const res = await fetch(url, {
        method,
        headers,
        signal,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      throw this.#transportError(what, err, signal);
    }
    return unwrap(what, status, text);
  }

  #transportError(what: string, err: unknown, signal: AbortSignal): SmsError {
    if (signal.aborted || (err instanceof Error && err.name === 'TimeoutError')) {
      return new SmsTimeoutError(`${what}: no complete reply within ${this.timeoutMs} ms`, this.timeoutMs);
    }
    const code = systemCode(err);
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    const detail = code ? `${describeCode(code)} (${code})` : cause instanceof Error ? cause.message : String(cause);
    return new SmsNetworkError(`${what}: ${detail}`, code, { cause: err });
  }
}

/** The envelope: 2xx {"status":"success","data":...} -> data; {"status":"error",...} -> SmsApiError. */
function unwrap(what: string, status: number, text: string): unknown {
  let env: unknown;
  try {
    env = JSON.parse(text);
  } catch {
    throw new SmsProtocolError(`${what}: HTTP ${status} with a body that is not JSON`, status, text.slice(0, 500));
  }
  if (typeof env === 'object' && env !== null && !Array.isArray(env)) {
    const e = env as { status?: unknown; data?: unknown };
    if (e.status === 'error' && typeof e.data === 'object' && e.data !== null) {
      const { code, message } = e.data as { code?: unknown; message?: unknown };
      if (typeof code === 'number' && Number.isInteger(code) && typeof message === 'string' && status >= 400) {
        throw new SmsApiError(status, code, message);
      }
    }
    if (e.status === 'success' && 'data' in e && status >= 200 && status < 300) return e.data;
  }
  throw new SmsProtocolError(
    `${what}: HTTP ${status} with a body that is not the API envelope`,
    status,
    text.slice(0, 500),
  );
}

function throwIf(p: SmsArgProblem | null): void {
  if (p) throw new SmsValidationError(p.param, p.message);
}

function protocolError(message: string, status: number, data: unknown): SmsProtocolError {
  return new SmsProtocolError(message, status, (JSON.stringify(data) ?? String(data)).slice(0, 500));
}

function expectHash(data: unknown): string {
  if (typeof data !== 'string' || data === '')
    throw protocolError('send: data is not an SMS hash (a non-empty string)', 200, data);
  return data;
}

function expectSms(data: unknown, what: string): Sms {
  const d = data as Partial<Sms> | null;
  if (typeof d !== 'object' || d === null || Array.isArray(d) || typeof d.hash !== 'string') {
    throw protocolError(`${what}: not an SMS object (an object with a string hash)`, 200, data);
  }
  return d as Sms;
}

/** options.<key>=<value>; the webhook object as options.webhook.endpoint; booleans as true/false. */
export function optionsQuery(options: SmsOptions | null): Query {
  const out: Query = [];
  if (!options) return out;
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    if (key === 'webhook') out.push(['options.webhook.endpoint', String((value as { endpoint: string }).endpoint)]);
    else out.push([`options.${key}`, String(value)]);
  }
  return out;
}

function datetimeArg(v: string | Date): string {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'Invalid Date' : toSmsDatetime(v);
  return v;
}
