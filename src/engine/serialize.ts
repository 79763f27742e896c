/**
 * RT.Response to JSON text, on the hot path. `variables` is the raw JSON text of the
 * request's variables, written verbatim (byte for byte); `bigint` params are written as
 * bare JSON integers, digit for digit (Node 20 has no JSON.rawJSON). `params` is always
 * an object, even when empty.
 */
import type { RtResponse, WireValue } from '../protocol/rt.js';

/**
 * A params object may carry its JSON text under this symbol (constant params, computed
 * once when the flow compiles): the serializer then writes it as is.
 */
export const PARAMS_JSON: unique symbol = Symbol('callscript.paramsJson');

/** Freezes a params object with its JSON text attached (for params reused on every call). */
export function frozenParams<T extends Record<string, WireValue>>(params: T): Readonly<T> {
  Object.defineProperty(params, PARAMS_JSON, { value: writeParams(params), enumerable: false });
  return Object.freeze(params);
}

export function serializeReply(r: RtResponse): string {
  const raw = r.variablesRaw === '' ? '{}' : r.variablesRaw;
  return (
    '{"command":"' +
    r.command + // command names are plain ASCII identifiers
    '","command_id":' +
    String(Math.trunc(r.command_id)) +
    ',"params":' +
    ((r.params as { [PARAMS_JSON]?: string })[PARAMS_JSON] ?? writeParams(r.params)) +
    ',"variables":' +
    raw +
    '}'
  );
}

/** JSON text of a params object (bigints as bare integers). */
export function writeParams(params: Record<string, WireValue>): string {
  return hasBigint(params) ? write(params) : JSON.stringify(params);
}

function hasBigint(v: WireValue): boolean {
  if (typeof v === 'bigint') return true;
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasBigint(v[i]!)) return true;
    return false;
  }
  for (const k in v) if (hasBigint(v[k]!)) return true;
  return false;
}

function write(v: WireValue): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    default:
      break;
  }
  if (v === null) return 'null';
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + write(v[i]!);
    return s + ']';
  }
  let s = '{';
  let first = true;
  for (const k in v) {
    const x = v[k];
    if (x === undefined) continue;
    s += (first ? '' : ',') + JSON.stringify(k) + ':' + write(x);
    first = false;
  }
  return s + '}';
}
