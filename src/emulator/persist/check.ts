/** Shapes of what --data reads back: the snapshot (data file) and each journal record. */
import { DATA_VERSION, type Op } from '../store.js';

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A reason when `v` is not an emulator data file's content. */
export function checkData(v: unknown): string | null {
  if (!isObject(v)) return 'not a JSON object';
  if (v.version !== DATA_VERSION)
    return `unknown data version ${JSON.stringify(v.version)} (this emulator writes version ${DATA_VERSION})`;
  if (v.generation !== undefined && !(Number.isSafeInteger(v.generation) && (v.generation as number) >= 0))
    return 'field generation must be a whole number';
  if (typeof v.ids !== 'string') return 'field ids must be a string';
  for (const k of ['apps', 'sms', 'calls']) if (!Array.isArray(v[k])) return `field ${k} must be an array`;
  for (const k of ['dids', 'callers']) if (!isObject(v[k])) return `field ${k} must be an object`;
  if (v.hooks !== undefined && !Array.isArray(v.hooks)) return 'field hooks must be an array';
  return null;
}

/** The journal header's generation, or a reason. */
export function checkHeader(v: unknown): { ok: true; generation: number } | { ok: false; reason: string } {
  if (!isObject(v) || v.journal !== 1 || !Number.isSafeInteger(v.generation) || (v.generation as number) < 0) {
    return { ok: false, reason: 'the first record is not a journal header {"journal":1,"generation":N}' };
  }
  return { ok: true, generation: v.generation as number };
}

const KEY: Record<string, string> = { app: 'hash', sms: 'hash', call: 'id' };

/** A journal record: the change and the id generator's state after it, or a reason. */
export function checkRecord(v: unknown): { ok: true; op: Op; ids: string } | { ok: false; reason: string } {
  if (!isObject(v) || typeof v.ids !== 'string' || typeof v.op !== 'string')
    return { ok: false, reason: 'a record is {"ids", "op", ...}' };
  const key = KEY[v.op];
  if (key !== undefined) {
    if (!isObject(v.v) || typeof v.v[key] !== 'string')
      return { ok: false, reason: `a ${v.op} record's v is an object with a string ${key}` };
  } else if (v.op === 'did' || v.op === 'caller' || v.op === 'hook') {
    if (typeof v.k !== 'string') return { ok: false, reason: `a ${v.op} record has a string k` };
    const okValue =
      v.v === null ||
      (v.op === 'did'
        ? typeof v.v === 'string'
        : v.op === 'hook'
          ? isObject(v.v) && v.v.hash === v.k && typeof v.v.endpoint === 'string'
          : isObject(v.v) && typeof v.v.text === 'string' && typeof v.v.file === 'string');
    if (!okValue)
      return {
        ok: false,
        reason:
          `a ${v.op} record's v is ` +
          (v.op === 'did' ? 'an app hash' : v.op === 'hook' ? 'a subscription {hash, endpoint, ...}' : '{text, file}') +
          ' or null',
      };
  } else if (v.op !== 'reset') {
    return { ok: false, reason: `unknown change ${JSON.stringify(v.op).slice(0, 40)}` };
  }
  const { ids, ...op } = v;
  return { ok: true, op: op as unknown as Op, ids: ids as string };
}
