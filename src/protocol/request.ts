/**
 * Parsing and validation of RT.Request bodies, without loss of precision.
 *
 * `callid` is a 64-bit unsigned integer sent as a JSON number (protocol-notes): values
 * above 2^53 would be rounded by JSON.parse. A body with no run of 16 or more digits has
 * no number JSON.parse can round, so it takes the fast path, and so does a body whose only
 * such run is the callid (its digits are read from the text); any other body is parsed by
 * lossless-json, which keeps every number's digits (callid and numbers in `variables`).
 *
 * This runs on every request: the text is scanned with indexOf and strided digit checks,
 * not character by character or with regular expressions that try every position
 * (bench/parse.ts measures it against JSON.parse alone).
 */
import { parse as parseLossless, stringify as stringifyLossless, isLosslessNumber, LosslessNumber } from 'lossless-json';
import { LIVE_STATUSES, TERMINAL_STATUSES, type CallStatus } from './commands.js';
import { UINT64_MAX } from './formats.js';
import type { RtRequest } from './rt.js';

export type ParseResult =
  | { ok: true; request: RtRequest }
  | { ok: false; code: 'BAD_JSON' | 'BAD_REQUEST'; message: string };

const STATUSES = new Set<string>([...LIVE_STATUSES, ...TERMINAL_STATUSES]);
const INTEGER = /^(0|[1-9][0-9]*)$/;

const STRING_FIELDS = [
  'app',
  'cli_name',
  'cli_number',
  'date_started',
  'number',
  'command',
  'command_result',
  'command_error',
  'call_status',
  'cdr_field',
] as const;

/** All 14 fields, in the reference's order, for messages. */
export const RT_REQUEST_FIELDS = [
  'app',
  'callid',
  'request_hash',
  'cli_name',
  'cli_number',
  'date_started',
  'number',
  'command',
  'command_id',
  'command_result',
  'command_error',
  'call_status',
  'cdr_field',
  'variables',
] as const;

export function parseRtRequest(body: string): ParseResult {
  // A big callid alone does not need the slow parser: its digits are read from the text.
  const run = digitRun(body, 0);
  const callidText = run < 0 ? undefined : soleBigCallid(body, run);
  const lossless = callidText === null;
  let data: unknown;
  try {
    data = lossless ? parseLossless(body) : JSON.parse(body);
  } catch (err) {
    return { ok: false, code: 'BAD_JSON', message: `the body is not valid JSON: ${(err as Error).message}` };
  }
  if (callidText && data && typeof data === 'object' && typeof (data as { callid?: unknown }).callid === 'number') {
    const o = data as { callid: unknown };
    // The only "callid" key of the text is the top-level one when the parsed value agrees.
    if (Number(callidText) === o.callid) o.callid = new LosslessNumber(callidText);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return bad('the body must be a JSON object (an RT.Request)');
  }
  const o = data as Record<string, unknown>;
  let missing: string[] | undefined;
  for (const f of RT_REQUEST_FIELDS) if (!(f in o)) (missing ??= []).push(f);
  if (missing) {
    return bad(`missing field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: an RT.Request has all 14 fields`);
  }
  for (const f of STRING_FIELDS) {
    if (typeof o[f] !== 'string') return bad(`field ${f} must be a string, got ${describe(o[f])}`);
  }
  if (o.request_hash !== null && typeof o.request_hash !== 'string') {
    return bad(`field request_hash must be a string or null, got ${describe(o.request_hash)}`);
  }
  // Integers as the service writes them: digits only (not 1e3, 1.0, -0).
  const raw = wantedMembers(body);
  const callid = integerDigits(o.callid);
  if (callid !== null && raw.callid !== undefined && !INTEGER.test(raw.callid)) return bad(`field callid must be an unsigned 64-bit integer written with digits only, got ${raw.callid.slice(0, 40)}`);
  if (integerDigits(o.command_id) !== null && raw.command_id !== undefined && !INTEGER.test(raw.command_id)) return bad(`field command_id must be a non-negative integer written with digits only, got ${raw.command_id.slice(0, 40)}`);
  const callidValue = callid === null ? null : BigInt(callid);
  if (callidValue === null || callidValue > UINT64_MAX) {
    return bad(`field callid must be an unsigned 64-bit integer, got ${describe(o.callid)}`);
  }
  const commandIdDigits = integerDigits(o.command_id);
  const commandId = commandIdDigits === null ? NaN : Number(commandIdDigits);
  if (!Number.isSafeInteger(commandId)) {
    return bad(`field command_id must be a non-negative integer, got ${describe(o.command_id)}`);
  }
  const vars = o.variables;
  if (vars === null || typeof vars !== 'object' || Array.isArray(vars)) {
    return bad(`field variables must be a JSON object ({} when empty), got ${describe(vars)}`);
  }
  const status = o.call_status as string;
  if (!STATUSES.has(status)) {
    return bad(`field call_status "${status}" is not one of ${[...STATUSES].join(', ')}`);
  }
  return {
    ok: true,
    request: {
      app: o.app as string,
      // The same digits as a string of its own: the ones read from the text are a slice of
      // the body, which would stay in memory as long as the call (store keys, live calls).
      callid: callidValue.toString(),
      request_hash: o.request_hash as string | null,
      cli_name: o.cli_name as string,
      cli_number: o.cli_number as string,
      date_started: o.date_started as string,
      number: o.number as string,
      command: o.command as string,
      command_id: commandId,
      command_result: o.command_result as string,
      command_error: o.command_error as string,
      call_status: status as CallStatus,
      cdr_field: o.cdr_field as string,
      variables: lossless ? (toPlain(vars) as Record<string, unknown>) : (vars as Record<string, unknown>),
      // echoed byte for byte; re-serialised only if the key was written with escapes
      variablesRaw: raw.variables ?? (lossless ? stringifyLossless(vars)! : JSON.stringify(vars)),
    },
  };
}

export function isTerminal(status: CallStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/** Index just past the JSON string starting at `i` (a quote): the next quote not escaped. */
function skipString(text: string, i: number): number {
  for (;;) {
    const q = text.indexOf('"', i + 1);
    if (q < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 92) backslashes++;
    if ((backslashes & 1) === 0) return q + 1;
    i = q;
  }
}

/** Index just past the JSON value starting at `i` (the text is known to be valid JSON). */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 34) return skipString(text, i);
  if (c !== 123 && c !== 91) {
    for (let d = text.charCodeAt(i); i < text.length && d !== 44 && d !== 125 && d !== 93 && !isSpace(d); d = text.charCodeAt(++i));
    return i;
  }
  let depth = 0;
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 34) {
      i = skipString(text, i);
      continue;
    }
    if (d === 123 || d === 91) depth++;
    else if (d === 125 || d === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return i;
}

/**
 * Walks the members of the top-level object of valid JSON `text`, calling `member` with the
 * key's raw text (between its quotes, escapes as written) and the value's bounds.
 */
function eachTopLevelMember(text: string, member: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void): void {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 123) return;
  i++;
  for (;;) {
    while (i < text.length && (isSpace(text.charCodeAt(i)) || text.charCodeAt(i) === 44)) i++;
    if (i >= text.length || text.charCodeAt(i) !== 34) return;
    const keyEnd = skipString(text, i);
    const keyStart = i + 1;
    i = keyEnd;
    while (i < text.length && (isSpace(text.charCodeAt(i)) || text.charCodeAt(i) === 58)) i++;
    const end = skipValue(text, i);
    member(keyStart, keyEnd - 1, i, end);
    i = end;
  }
}

/**
 * The exact text of a member of the top-level object of valid JSON `text` (the last one if
 * the key is repeated, as JSON.parse does), or undefined.
 */
export function rawTopLevelMember(text: string, key: string): string | undefined {
  return rawTopLevelMembers(text)[key];
}

/** The exact text of every member of the top-level object of valid JSON `text`, in one pass. */
export function rawTopLevelMembers(text: string): Record<string, string> {
  const found: Record<string, string> = {};
  eachTopLevelMember(text, (ks, ke, vs, ve) => {
    found[text.slice(ks, ke)] = text.slice(vs, ve);
  });
  return found;
}

/** The raw text of the three members whose text matters (the last of repeated keys), sliced only for them. */
function wantedMembers(text: string): { callid?: string; command_id?: string; variables?: string } {
  const found: { callid?: string; command_id?: string; variables?: string } = {};
  eachTopLevelMember(text, (ks, ke, vs, ve) => {
    const n = ke - ks;
    if (n === 6 && text.startsWith('callid', ks)) found.callid = text.slice(vs, ve);
    else if (n === 10 && text.startsWith('command_id', ks)) found.command_id = text.slice(vs, ve);
    else if (n === 9 && text.startsWith('variables', ks)) found.variables = text.slice(vs, ve);
  });
  return found;
}


const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * Where the first run of 16 or more digits at or after `from` starts, else -1: a number
 * JSON.parse may round. Such a run covers one of the positions from+15, from+31, ..., so
 * only those are looked at (a regular expression tries every position: ten times slower).
 */
function digitRun(text: string, from: number): number {
  for (let i = from + 15; i < text.length; i += 16) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let start = i;
    while (start > from && isDigit(text.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= 16) return start;
  }
  return -1;
}

/**
 * When the only run of 16+ digits in the body (the first starts at `run`) is the value of
 * the only "callid" key, its digits; null when the body needs the lossless parser (big
 * numbers elsewhere, or several "callid" keys).
 */
function soleBigCallid(body: string, run: number): string | null {
  // A literal here, not at module level: a /g regex carries lastIndex, state of its own.
  const CALLID_MEMBER = /"callid"\s*:\s*([0-9]+)(?=\s*[,}])/g;
  const m = CALLID_MEMBER.exec(body);
  if (!m || CALLID_MEMBER.exec(body)) return null;
  const end = m.index + m[0].length;
  if (run !== end - m[1]!.length || digitRun(body, end) >= 0) return null;
  return m[1]!;
}

function bad(message: string): ParseResult {
  return { ok: false, code: 'BAD_REQUEST', message };
}

/** The decimal digits of a non-negative JSON integer (plain or lossless), else null. */
function integerDigits(v: unknown): string | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? String(v) : null;
  if (isLosslessNumber(v)) {
    const s = v.value;
    return /^(0|[1-9][0-9]*)$/.test(s) ? s : null;
  }
  return null;
}

/**
 * lossless-json numbers to plain values for templates and conditions: a number that a JS
 * number holds exactly stays a number; any other (an integer above 2^53, a long decimal)
 * becomes its exact decimal text, so `{{ call.variables.other }}` renders every digit.
 */
function toPlain(v: unknown): unknown {
  if (isLosslessNumber(v)) {
    const n = Number(v.value);
    return String(n) === v.value ? n : v.value;
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = toPlain(x);
    return o;
  }
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (isLosslessNumber(v)) return v.value;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}
