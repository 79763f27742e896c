/**
 * Sensitive values at rest (docs/security.md "Sensitive values"): with a key configured
 * (CALLSCRIPT_SENSITIVE_KEY), a call's stored state holds its sensitive variables, its last
 * result and the sensitive params of the reply it last sent as `***`, and their real values
 * in one AES-256-GCM sealed field `x`, bound to the callid (the GCM additional data): a
 * sealed field copied into another call does not open. A flow without sensitive values is
 * stored as before (nothing sealed, no cost).
 *
 * Key rotation: the first key seals, every key given opens (a sealed field names its key
 * by an 8-hex-digit id, the start of the key's SHA-256): deploy the new key first with the
 * old one as previous (CALLSCRIPT_SENSITIVE_KEY_PREVIOUS), and drop the old one once every
 * call sealed with it has ended (the call TTL).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Value } from '../flow/model.js';
import { MASK, Masker, maskVars, sensitiveValues, type Sensitivity } from './mask.js';
import type { CallState } from './types.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A 32-byte key from its text: 64 hex digits, or base64 (or base64url) of 32 bytes. */
export function parseKey(text: string): Buffer {
  if (typeof text !== 'string')
    throw new Error(
      'a sensitive-values key is a string: 32 random bytes, written as 64 hex digits or in base64 (e.g. ' +
        '`openssl rand -base64 32`)',
    );
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, 'hex')
    : Buffer.from(t, /[-_]/.test(t) ? 'base64url' : 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(t) && !/^[A-Za-z0-9+/_-]+={0,2}$/.test(t))) {
    throw new Error(
      'a sensitive-values key is 32 random bytes, written as 64 hex digits or in base64 (e.g. `openssl rand ' +
        '-base64 32`)',
    );
  }
  return key;
}

export class Sealer {
  private readonly keys: { id: string; key: Buffer }[];

  /** `keys[0]` seals; all of them open. */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('Sealer: no key');
    this.keys = keys.map((key) => ({ id: createHash('sha256').update(key).digest('hex').slice(0, 8), key }));
  }

  /**
   * From the environment: CALLSCRIPT_SENSITIVE_KEY, and CALLSCRIPT_SENSITIVE_KEY_PREVIOUS (comma-separated) for
   * rotation. Undefined when no key is set.
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): Sealer | undefined {
    const current = env.CALLSCRIPT_SENSITIVE_KEY?.trim();
    if (!current) return undefined;
    const previous = (env.CALLSCRIPT_SENSITIVE_KEY_PREVIOUS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const parse = (name: string, t: string) => {
      try {
        return parseKey(t);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
      }
    };
    return new Sealer([
      parse('CALLSCRIPT_SENSITIVE_KEY', current),
      ...previous.map((p) => parse('CALLSCRIPT_SENSITIVE_KEY_PREVIOUS', p)),
    ]);
  }

  /** The id of the sealing key (shown at startup, never the key). */
  get keyId(): string {
    return this.keys[0]!.id;
  }

  /** `<key id>.<base64url of iv, ciphertext, tag>`, bound to `aad`. */
  seal(plain: string, aad: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', key, iv);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([iv, c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
    return `${id}.${body.toString('base64url')}`;
  }

  /** The plain text, or undefined: an unknown key, a wrong `aad`, altered bytes. */
  open(sealed: string, aad: string): string | undefined {
    const dot = sealed.indexOf('.');
    const k = this.keys.find((x) => x.id === sealed.slice(0, dot));
    if (dot < 0 || !k) return undefined;
    const body = Buffer.from(sealed.slice(dot + 1), 'base64url');
    if (body.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const d = createDecipheriv('aes-256-gcm', k.key, body.subarray(0, IV_BYTES));
      d.setAAD(Buffer.from(aad, 'utf8'));
      d.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([d.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), d.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** What a sealed field holds: the sensitive vars and the last result. */
interface Sealed {
  v: Record<string, Value>;
  r?: string;
  /** The sensitive vars of the callers' frames (a call inside a module), by frame index. */
  f?: Record<number, Record<string, Value>>;
  /** The reply last sent, when its params hold a sensitive value (a conference's pin_code): sent again on a retry. */
  p?: string;
}

/** The stored reply ends with `"variables":` (./advance.ts replyHead): this completes it to parse it. */
const REPLY_END = 'null}';

/**
 * The stored reply with the sensitive values of its params MASK (a whole param equal to one, or one inside a longer
 * text); undefined when it holds none.
 */
function maskedReply(reply: string, m: Masker): string | undefined {
  if (reply === '' || m.empty) return undefined;
  let o: { params?: unknown };
  try {
    o = JSON.parse(reply + REPLY_END) as typeof o;
  } catch {
    const text = m.scrubText(reply);
    return text === reply ? undefined : text;
  }
  const params = m.scrubValue(o.params);
  if (params === o.params) return undefined;
  const text = JSON.stringify({ ...o, params });
  return text.slice(0, text.length - REPLY_END.length);
}

/**
 * The state as stored: sensitive vars and the last result `***`, their values sealed in `x`; the reply too when a
 * command sent one (a conference's pin_code, a dialout's number). The state itself when it holds nothing sensitive.
 */
export function sealState(state: CallState, s: Sensitivity, sealer: Sealer, callid: string): CallState {
  const inner: Sealed = { v: {} };
  let vars: Record<string, Value> | undefined;
  for (const name of s.names) {
    if (!Object.prototype.hasOwnProperty.call(state.vars, name)) continue;
    inner.v[name] = state.vars[name]!;
    (vars ??= { ...state.vars })[name] = MASK;
  }
  // a variable with sensitive fields: stored with them ***, sealed whole (opened, it is the variable as it was)
  const masked = maskVars(state.vars, s);
  for (const name of s.fields?.keys() ?? []) {
    if (masked[name] === state.vars[name]) continue;
    inner.v[name] = state.vars[name]!;
    (vars ??= { ...state.vars })[name] = masked[name] as Value;
  }
  // inside a module, the callers' vars wait in the frames: sealed the same way
  let frames: CallState['f'];
  state.f?.forEach((frame, i) => {
    const shown = s.fields ? maskVars(frame.v, s) : frame.v;
    for (const name of [...s.names, ...(s.fields?.keys() ?? [])]) {
      if (!Object.prototype.hasOwnProperty.call(frame.v, name)) continue;
      const stored = s.names.has(name) ? MASK : shown[name];
      if (stored === frame.v[name]) continue;
      ((inner.f ??= {})[i] ??= {})[name] = frame.v[name]!;
      frames ??= state.f!.map((x) => ({ ...x }));
      frames[i]!.v = { ...frames[i]!.v, [name]: stored as Value };
    }
  });
  const res = state.res !== undefined && state.res !== '';
  // the reply's params hold the values of sensitive vars (a result is only sensitive once saved into one)
  const values = new Set<string>();
  for (const v of [inner.v, ...Object.values(inner.f ?? {})]) sensitiveValues(v, s, values);
  const reply = maskedReply(state.reply, new Masker(values));
  if (!vars && !res && !frames && reply === undefined) return state;
  if (res) inner.r = state.res;
  if (reply !== undefined) inner.p = state.reply;
  const out: CallState = { ...state, vars: vars ?? state.vars, x: sealer.seal(JSON.stringify(inner), callid) };
  if (frames) out.f = frames;
  if (res) out.res = MASK;
  if (reply !== undefined) out.reply = reply;
  return out;
}

/**
 * The state with its sealed values back in place (`x` removed); `problem` when they cannot
 * be opened (no key, or not one of the keys given): the state then keeps `***` for them.
 */
export function openState(
  state: CallState,
  sealer: Sealer | undefined,
  callid: string,
): { state: CallState; problem?: string } {
  if (state.x === undefined) return { state };
  const { x, ...rest } = state;
  if (!sealer)
    return {
      state: rest,
      problem: 'its sensitive values are sealed and no key is configured (CALLSCRIPT_SENSITIVE_KEY)',
    };
  const text = sealer.open(x, callid);
  if (text === undefined)
    return {
      state: rest,
      problem:
        `its sensitive values do not open with the keys configured (sealed with ` +
        `key ${x.slice(0, x.indexOf('.'))}): was the key changed without keeping the old one in ` +
        `CALLSCRIPT_SENSITIVE_KEY_PREVIOUS?`,
    };
  const inner = JSON.parse(text) as Sealed;
  const out: CallState = { ...rest, vars: { ...rest.vars, ...inner.v } };
  if (inner.r !== undefined) out.res = inner.r;
  if (inner.p !== undefined) out.reply = inner.p;
  if (inner.f && rest.f)
    out.f = rest.f.map((frame, i) => (inner.f![i] ? { ...frame, v: { ...frame.v, ...inner.f![i] } } : frame));
  return { state: out };
}
