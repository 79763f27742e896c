/**
 * Sensitive values (`sensitive: [names]`, docs/flow-language.md "Sensitive values"): the one
 * place that decides what a call shows of them. A sensitive variable keeps its key and shows
 * `***` wherever the call leaves the process or is printed (the call-ended summary and other
 * log lines, the admin API, recordings, the simulator's and the test runner's output); the
 * command that needs the value (a `dialout` to a number, an `sms` body, an http body) still
 * gets it. The result a sensitive `save:` came from is sensitive too.
 *
 * Every function here returns its input unchanged (same object, no copy) when the flow has
 * no sensitive values: flows without them pay nothing on the request path.
 *
 * Other constructs call these: a `Masker` made from the flow's sensitivity and the call's
 * values scrubs any text or JSON-like value (`scrubText`, `scrubValue`), so secrets (the http
 * step's `secrets.X`) and subflow frames' sensitive vars are masked by adding their values.
 */
import type { FlowModel, Value } from '../flow/model.js';
import { MAX_BODY_DEPTH } from './http-wait.js';

/** What a masked value shows. */
export const MASK = '***';

/**
 * How deep the walks below go: past the deepest a lookup's answer may be (MAX_BODY_DEPTH), inside its
 * `{ status, body }` in a variable, an effect's result or a log entry. An array or object deeper still (a value a
 * flow's `set`s nested) is masked whole where values are scrubbed: never shown for being too deep to walk.
 */
export const MAX_MASK_DEPTH = MAX_BODY_DEPTH + 16;

/**
 * Values shorter than this are masked where they are a whole string (a var, a result, a
 * param), not inside other text: a 1-digit value would otherwise mask every digit of a log line.
 */
export const MIN_SCRUB_LENGTH = 3;

/** A flow's sensitive names and the steps whose result is sensitive. */
export interface Sensitivity {
  /** The variables listed in `sensitive:`. */
  names: ReadonlySet<string>;
  /** Command (and sms) steps whose `save:` is sensitive: the result fed to them is sensitive. */
  steps: ReadonlySet<string>;
}

/** A flow's sensitivity, or undefined when it declares no sensitive variable (the common case). */
export function sensitivityOf(model: Pick<FlowModel, 'sensitive' | 'steps'>): Sensitivity | undefined {
  if (!model.sensitive || model.sensitive.length === 0) return undefined;
  const names = new Set(model.sensitive);
  const steps = new Set<string>();
  for (const [id, s] of Object.entries(model.steps))
    if (s.kind === 'command' && s.save !== undefined && names.has(s.save)) steps.add(id);
  return { names, steps };
}

/** `vars` with each sensitive variable present shown as MASK (the key kept: one sees it was set). */
export function maskVars<V extends Value | unknown>(
  vars: Record<string, V>,
  s: Sensitivity | undefined,
): Record<string, V | string> {
  if (!s) return vars;
  let out: Record<string, V | string> | undefined;
  for (const name of s.names) {
    if (!Object.prototype.hasOwnProperty.call(vars, name)) continue;
    out ??= { ...vars };
    out[name] = MASK;
  }
  return out ?? vars;
}

/** The text values to scrub: strings (and numbers) found in the sensitive vars, at any depth. */
export function sensitiveValues(
  vars: Record<string, unknown> | undefined,
  s: Sensitivity | undefined,
  into: Set<string> = new Set(),
): Set<string> {
  if (!s || !vars) return into;
  for (const name of s.names) if (Object.prototype.hasOwnProperty.call(vars, name)) collect(vars[name], into, 0);
  return into;
}

function collect(v: unknown, into: Set<string>, depth: number): void {
  if (depth > MAX_MASK_DEPTH) return;
  if (typeof v === 'string') {
    if (v !== '' && v !== MASK) into.add(v);
  } else if (typeof v === 'number' || typeof v === 'bigint') into.add(String(v));
  else if (Array.isArray(v)) for (const x of v) collect(x, into, depth + 1);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) collect(x, into, depth + 1);
}

/**
 * Replaces sensitive values in texts and JSON-like values: a string equal to one is MASK; a
 * value of MIN_SCRUB_LENGTH characters or more is also replaced inside longer strings
 * (longest first). Keys are never changed.
 */
export class Masker {
  private readonly exact: ReadonlySet<string>;
  private readonly inner: string[];

  constructor(values: Iterable<string>) {
    const all = new Set<string>();
    for (const v of values) if (v !== '' && v !== MASK) all.add(v);
    this.exact = all;
    this.inner = [...all].filter((v) => v.length >= MIN_SCRUB_LENGTH).sort((a, b) => b.length - a.length);
  }

  /** Nothing to mask. */
  get empty(): boolean {
    return this.exact.size === 0;
  }

  scrubText(text: string): string {
    if (this.exact.size === 0 || text === '') return text;
    if (this.exact.has(text)) return MASK;
    let out = text;
    for (const v of this.inner) if (out.includes(v)) out = out.split(v).join(MASK);
    return out;
  }

  /** A copy of `v` with every string scrubbed (the same object when nothing changed); past MAX_MASK_DEPTH: MASK. */
  scrubValue<T>(v: T, depth = 0): T {
    if (this.exact.size === 0) return v;
    if (typeof v === 'string') return this.scrubText(v) as T;
    if ((typeof v === 'number' || typeof v === 'bigint') && this.exact.has(String(v))) return MASK as T;
    if (depth >= MAX_MASK_DEPTH && v !== null && typeof v === 'object') return MASK as T;
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const y = this.scrubValue(x, depth + 1);
        if (y !== x) changed = true;
        return y;
      });
      return (changed ? out : v) as T;
    }
    if (v !== null && typeof v === 'object') {
      let out: Record<string, unknown> | undefined;
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const y = this.scrubValue(x, depth + 1);
        if (y !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = y;
      }
      return (out ?? v) as T;
    }
    return v;
  }
}

/** A log entry (or any flat record of fields) with its string fields scrubbed; `msg` included. */
export function scrubFields<T extends Record<string, unknown>>(entry: T, m: Masker): T {
  if (m.empty) return entry;
  return m.scrubValue(entry);
}
