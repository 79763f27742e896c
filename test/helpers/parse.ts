/**
 * Helpers of the request-parsing tests: RT.Request bodies as ordered members (raw key
 * text, raw value text) so that a test can escape a key, repeat or reorder members; a
 * store that counts its writes; a server on the probe flow (its state keeps what the
 * engine read of the request: test/fixtures/parse-flows/probe.yaml).
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { buildServer } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { RtOptions } from '../../src/http/options.js';
import { rtFields, type RtFields } from './rt.js';

export const PARSE_FLOWS = new URL('../fixtures/parse-flows', import.meta.url).pathname;

/** [raw key text (between the quotes), raw value text]. */
export type Member = [string, string];

/** The members of the request `rtFields(over)` describes, in the reference's order. */
export function members(over: Partial<RtFields> = {}): Member[] {
  const f = rtFields(over);
  return Object.entries(f).map(([k, v]): Member => {
    if (k === 'callid') return [k, String(v)];
    if (k === 'variables' && typeof v === 'string') return [k, v];
    return [k, JSON.stringify(v)];
  });
}

export function text(ms: Member[]): string {
  return '{' + ms.map(([k, v]) => `"${k}":${v}`).join(',') + '}';
}

/** The members with the one named `key` changed by `f` (its raw key and value). */
export function change(ms: Member[], key: string, f: (m: Member) => Member): Member[] {
  return ms.map((m) => (m[0] === key ? f(m) : m));
}

/** `s` with its character at `i` written as a \u escape. */
export function escapeAt(s: string, i = 0): string {
  return s.slice(0, i) + '\\u' + s.charCodeAt(i).toString(16).padStart(4, '0') + s.slice(i + 1);
}

/** A MemoryStore that counts the writes made to it: a refused request makes none. */
export class WatchedStore extends MemoryStore {
  writes = 0;

  override async set(callid: string, value: string, ttlMs: number): Promise<void> {
    this.writes++;
    return super.set(callid, value, ttlMs);
  }

  override async delete(callid: string): Promise<void> {
    this.writes++;
    return super.delete(callid);
  }
}

export async function probeServer(
  opts: Partial<RtOptions> & { admin?: { login: string; password: string } } = {},
): Promise<{ app: FastifyInstance; store: WatchedStore }> {
  const store = new WatchedStore();
  const app = await buildServer({ flowsDir: PARSE_FLOWS, logLevel: false, store, ...opts });
  return { app, store };
}

export function post(
  app: FastifyInstance,
  body: string | Buffer,
  headers: Record<string, string> = {},
  url = '/rt/probe',
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

/**
 * The `variables` of a reply read by another JSON reader (lossless-json): numbers a double
 * holds exactly as numbers, others as their text. What the engine got must read the same.
 */
export function readEcho(reply: string): unknown {
  const plain = (v: unknown): unknown => {
    if (isLosslessNumber(v)) return String(Number(v.value)) === v.value ? Number(v.value) : v.value;
    if (Array.isArray(v)) return v.map(plain);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
    return v;
  };
  return plain((parseLossless(reply) as { variables: unknown }).variables);
}
