/**
 * An outbound call as callscript's admin API takes it (POST /admin/calls, docs/admin.md
 * "Outbound calls"): `{app, number, vars?, cdr_field?, cli?}`, checked here, with the same
 * messages for the server (400 BAD_ADMIN_BODY) and the commands that send it (`dial`,
 * `campaign`), which check before sending.
 *
 * `vars` are the flow's variables at the call's start: a flat object of strings, numbers and
 * booleans, bounded (keys, their names, the size of each value and of the whole).
 */
import { checkE164, checkFormat } from '../protocol/formats.js';

export type OutboundVars = Record<string, string | number | boolean>;

export interface OutboundRequest {
  /** The REALTIME10 application whose URL the service calls (its hash). */
  app: string;
  /** The number called, E.164. */
  number: string;
  vars?: OutboundVars;
  /** calls.realtime's cdr_field: up to 32 letters and digits, back as the requests' cdr_field. */
  cdr_field?: string;
  /** The caller id shown: an E.164 number of the account, or BLOCKED. */
  cli?: string;
}

/** How long the service rings the number called (calls.realtime's target.timeout, seconds). */
export const RING_TIMEOUT_S = 30;

export const OUTBOUND_LIMITS = {
  /** Variables of one call, at most. */
  vars: 64,
  /** A variable's name: a letter or _, then letters, digits, _; at most this long. */
  nameChars: 64,
  /** A string value's characters, at most. */
  valueChars: 1024,
  /** The vars as JSON, at most this many bytes. */
  varsBytes: 8192,
} as const;

const KEYS = ['app', 'number', 'vars', 'cdr_field', 'cli'];
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names no variable may have: they mean something to JavaScript objects. */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** Checks a body (parsed JSON) as an outbound call; the message names the field at fault. */
export function checkOutboundRequest(body: unknown): Checked<OutboundRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return fail('the body must be a JSON object {app, number, vars?, cdr_field?, cli?}');
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).find((k) => !KEYS.includes(k));
  if (extra !== undefined)
    return fail(`unknown field "${clip(extra)}": an outbound call is {app, number, vars?, cdr_field?, cli?}`);
  if (typeof b.app !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(b.app))
    return fail(
      `app: the hash of a REALTIME10 application (letters and digits, e.g. A1B2C3D4) is required, got ${shown(b.app)}`,
    );
  if (typeof b.number !== 'string')
    return fail(`number: the number to call, E.164 (e.g. +33612345678), is required, got ${shown(b.number)}`);
  const bad = checkE164(b.number);
  if (bad) return fail(`number "${clip(b.number)}" is not E.164: ${bad}`);
  const out: OutboundRequest = { app: b.app, number: b.number };
  if (b.vars !== undefined && b.vars !== null) {
    const v = checkVars(b.vars);
    if (!v.ok) return v;
    out.vars = v.value;
  }
  for (const [k, format] of [
    ['cdr_field', 'cdr_customer_field'],
    ['cli', 'cli_phone_number'],
  ] as const) {
    const v = b[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return fail(`${k} must be a string, got ${shown(v)}`);
    const why = checkFormat(format, v);
    if (why) return fail(`${k} "${clip(v)}": ${why}`);
    out[k] = v;
  }
  return { ok: true, value: out };
}

/** The vars of an outbound call: a flat object of strings, numbers and booleans, bounded. */
export function checkVars(vars: unknown): Checked<OutboundVars> {
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars))
    return fail(
      `vars must be an object of names to strings, numbers or booleans, ` +
        `got ${Array.isArray(vars) ? 'a list' : shown(vars)}`,
    );
  const entries = Object.entries(vars as Record<string, unknown>);
  if (entries.length > OUTBOUND_LIMITS.vars)
    return fail(`vars: ${entries.length} variables, at most ${OUTBOUND_LIMITS.vars}`);
  const out: OutboundVars = {};
  for (const [k, v] of entries) {
    if (!NAME.test(k) || k.length > OUTBOUND_LIMITS.nameChars || RESERVED.has(k))
      return fail(
        `vars: "${clip(k)}" is not a variable name (a letter or _, then letters, digits and ` +
          `_, ${OUTBOUND_LIMITS.nameChars} at most)`,
      );
    if (typeof v === 'string') {
      if (v.length > OUTBOUND_LIMITS.valueChars)
        return fail(`vars.${k} is ${v.length} characters long, at most ${OUTBOUND_LIMITS.valueChars}`);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return fail(`vars.${k} is not a finite number`);
    } else if (typeof v !== 'boolean') {
      return fail(
        `vars.${k} is ` +
          (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : typeof v) +
          ': vars are flat, each a string, a number or a boolean',
      );
    }
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  const bytes = Buffer.byteLength(JSON.stringify(out));
  if (bytes > OUTBOUND_LIMITS.varsBytes)
    return fail(`vars are ${bytes} bytes as JSON, at most ${OUTBOUND_LIMITS.varsBytes}`);
  return { ok: true, value: out };
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

function shown(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return clip(s);
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
