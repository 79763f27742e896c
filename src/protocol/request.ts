/**
 * Parsing and validation of RT.Request bodies: one strict pass over the text
 * (json-reader.ts) decides everything the engine, the stored state and the reply see.
 *
 * - The body is one JSON object with all 14 fields, each at most once (keys compared
 *   after unescaping); other top-level keys are read (and checked) but ignored.
 * - `callid` is an unsigned 64-bit integer written with digits only, kept as its decimal
 *   digits (it may exceed 2^53: never through a JS number); `command_id` a non-negative
 *   integer within 2^53, digits only.
 * - `variables` is a JSON object. The engine gets it as data (numbers a JS number cannot
 *   hold exactly as their canonical text) and the reply echoes its canonical JSON text,
 *   written from that same data: keys sorted, no whitespace, strings and numbers in one
 *   spelling. However the service spells the same variables, the engine, the state and
 *   the reply are the same.
 * - Nesting deeper than `maxDepth` anywhere is BODY_TOO_DEEP; everything else refused is
 *   BAD_JSON (not JSON) or BAD_REQUEST (JSON, but not an RT.Request), with the field or
 *   the offset named.
 *
 * This runs on every request: the common body (ASCII strings without escapes, a few
 * integers, `variables` {}) is read with one charCodeAt loop and a slice per string
 * (bench/parse.ts measures it against JSON.parse alone).
 */
import { LIVE_STATUSES, TERMINAL_STATUSES, type CallStatus } from './commands.js';
import { UINT64_MAX } from './formats.js';
import { JsonFault, JsonReader } from './json-reader.js';
import type { RtRequest } from './rt.js';

export type ParseResult =
  { ok: true; request: RtRequest } | { ok: false; code: 'BAD_JSON' | 'BAD_REQUEST' | 'BODY_TOO_DEEP'; message: string };

export interface ParseOptions {
  /** The deepest nesting of objects and arrays allowed, the body's own object being 1. Default 32. */
  maxDepth?: number;
}

export const DEFAULT_BODY_DEPTH = 32;

const STATUSES = new Set<string>([...LIVE_STATUSES, ...TERMINAL_STATUSES]);
const INTEGER = /^(0|[1-9][0-9]*)$/;

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

const ALL_FIELDS = (1 << RT_REQUEST_FIELDS.length) - 1;
const CALLID = 1;
const COMMAND_ID = 8;
const VARIABLES = 13;

/** A field's index in RT_REQUEST_FIELDS, or -1. */
function fieldIndex(key: string): number {
  switch (key) {
    case 'app':
      return 0;
    case 'callid':
      return 1;
    case 'request_hash':
      return 2;
    case 'cli_name':
      return 3;
    case 'cli_number':
      return 4;
    case 'date_started':
      return 5;
    case 'number':
      return 6;
    case 'command':
      return 7;
    case 'command_id':
      return 8;
    case 'command_result':
      return 9;
    case 'command_error':
      return 10;
    case 'call_status':
      return 11;
    case 'cdr_field':
      return 12;
    case 'variables':
      return 13;
    default:
      return -1;
  }
}

/** A number written at the top level, kept as its text (the field checks need its spelling). */
class NumberText {
  constructor(readonly text: string) {}
}

export function parseRtRequest(body: string, opts: ParseOptions = {}): ParseResult {
  const r = new JsonReader(body, opts.maxDepth ?? DEFAULT_BODY_DEPTH);
  const values: unknown[] = new Array(RT_REQUEST_FIELDS.length);
  let variablesText = '';
  try {
    r.start();
    if (r.peek() !== 123) {
      r.value(0);
      r.end();
      return bad('the body must be a JSON object (an RT.Request)');
    }
    let seen = 0;
    let others: Set<string> | undefined;
    r.pos++;
    r.ws();
    if (r.peek() !== 125) {
      do {
        const at = r.pos;
        const key = r.key();
        r.expect(58, "':' after a key");
        const f = fieldIndex(key);
        if (f < 0) {
          if (others?.has(key)) r.duplicate(key, at);
          (others ??= new Set()).add(key);
          topValue(r);
          continue;
        }
        if (seen & (1 << f)) r.duplicate(key, at);
        seen |= 1 << f;
        values[f] = topValue(r);
        if (f === VARIABLES) variablesText = r.text;
      } while (r.next(125, "',' or '}'"));
    } else r.pos++;
    r.end();
    if (seen !== ALL_FIELDS) {
      const missing = RT_REQUEST_FIELDS.filter((_, i) => !(seen & (1 << i)));
      return bad(
        `missing field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: an RT.Request has all 14 fields`,
      );
    }
  } catch (err) {
    if (err instanceof JsonFault) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
  return checkFields(values, variablesText);
}

/** A top-level member's value: numbers keep their text; objects and arrays leave their canonical text in r.text. */
function topValue(r: JsonReader): unknown {
  const c = r.peek();
  if (c === 34) return r.string();
  if (c === 45 || (c >= 48 && c <= 57)) return new NumberText(r.number());
  return r.value(1);
}

function checkFields(v: unknown[], variablesText: string): ParseResult {
  for (let i = 0; i < RT_REQUEST_FIELDS.length; i++) {
    if (i === CALLID || i === COMMAND_ID || i === VARIABLES || i === 2) continue;
    if (typeof v[i] !== 'string') return bad(`field ${RT_REQUEST_FIELDS[i]} must be a string, got ${describe(v[i])}`);
  }
  const hash = v[2];
  if (hash !== null && typeof hash !== 'string')
    return bad(`field request_hash must be a string or null, got ${describe(hash)}`);
  const callid = integerText(v[CALLID], 'callid', 'an unsigned 64-bit integer');
  if (typeof callid !== 'string') return callid;
  const callidValue = BigInt(callid);
  if (callidValue > UINT64_MAX)
    return bad(`field callid must be an unsigned 64-bit integer, got number ${clip(callid)}`);
  const commandIdText = integerText(v[COMMAND_ID], 'command_id', 'a non-negative integer');
  if (typeof commandIdText !== 'string') return commandIdText;
  const commandId = Number(commandIdText);
  if (!Number.isSafeInteger(commandId))
    return bad(`field command_id must be a non-negative integer, got number ${clip(commandIdText)}`);
  const vars = v[VARIABLES];
  if (vars === null || typeof vars !== 'object' || Array.isArray(vars) || vars instanceof NumberText) {
    return bad(`field variables must be a JSON object ({} when empty), got ${describe(vars)}`);
  }
  const status = v[11] as string;
  if (!STATUSES.has(status))
    return bad(`field call_status "${clip(status)}" is not one of ${[...STATUSES].join(', ')}`);
  return {
    ok: true,
    request: {
      app: v[0] as string,
      // Digits of a string of its own: a slice of the body would keep the whole body in
      // memory as long as the call (store keys, live calls).
      callid: callidValue.toString(),
      request_hash: hash as string | null,
      cli_name: v[3] as string,
      cli_number: v[4] as string,
      date_started: v[5] as string,
      number: v[6] as string,
      command: v[7] as string,
      command_id: commandId,
      command_result: v[9] as string,
      command_error: v[10] as string,
      call_status: status as CallStatus,
      cdr_field: v[12] as string,
      variables: vars as Record<string, unknown>,
      variablesRaw: variablesText,
    },
  };
}

/**
 * The digits of an integer field written as the service writes them (digits only: not 1e3, 1.0, -0), else the fault.
 */
function integerText(v: unknown, field: string, what: string): string | ParseResult {
  if (!(v instanceof NumberText) || v.text.charCodeAt(0) === 45)
    return bad(`field ${field} must be ${what}, got ${describe(v)}`);
  if (!INTEGER.test(v.text)) return bad(`field ${field} must be ${what} written with digits only, got ${clip(v.text)}`);
  return v.text;
}

export function isTerminal(status: CallStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

function bad(message: string): ParseResult {
  return { ok: false, code: 'BAD_REQUEST', message };
}

function clip(s: string): string {
  return s.length > 40 ? s.slice(0, 40) + '…' : s;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof NumberText) return `number ${clip(v.text)}`;
  if (typeof v === 'string') return JSON.stringify(clip(v));
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}
