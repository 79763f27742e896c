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
import { domainToASCII } from 'node:url';
import type { Value } from '../flow/model.js';
import {
  resultVars,
  sensitiveFields,
  sensitiveNames,
  type FieldTree,
  type FlowSensitivityInput,
} from '../flow/sensitive-flow.js';
import { MAX_BODY_DEPTH } from './size.js';

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
  /**
   * Fields listed in `sensitive:` (`patient.body.dob`), by variable (not one of `names`): the tree of keys below it. A
   * list on the way applies the rest of the path to each of its items.
   */
  fields?: ReadonlyMap<string, FieldTree>;
}

/** The keys of `o` that `t` names, walking the smaller of the two. */
function* namedKeys(o: Record<string, unknown>, t: FieldTree): Generator<[string, FieldTree | null]> {
  const keys = Object.keys(o);
  if (keys.length < t.size) {
    for (const k of keys) if (t.has(k)) yield [k, t.get(k)!];
  } else for (const [k, sub] of t) if (Object.prototype.hasOwnProperty.call(o, k)) yield [k, sub];
}

/**
 * A flow's sensitivity, or undefined when it declares no sensitive variable (the common case): the names listed and
 * those that may receive their values (a module's param, a value a module returns, a `set:`:
 * src/flow/sensitive-flow.ts).
 */
export function sensitivityOf(model: FlowSensitivityInput): Sensitivity | undefined {
  if (!model.sensitive || model.sensitive.length === 0) return undefined;
  const names = sensitiveNames(model);
  const steps = new Set<string>();
  for (const [id, vars] of resultVars(model)) if (vars.some((v) => names.has(v))) steps.add(id);
  const fields = new Map<string, FieldTree>();
  // a variable masked whole needs no field of it masked
  for (const [name, tree] of sensitiveFields(model.sensitive)) if (!names.has(name)) fields.set(name, tree);
  return fields.size > 0 ? { names, steps, fields } : { names, steps };
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
  for (const [name, tree] of s.fields ?? []) {
    if (!Object.prototype.hasOwnProperty.call(vars, name)) continue;
    const v = maskFields(vars[name], tree, 0);
    if (v === vars[name]) continue;
    out ??= { ...vars };
    out[name] = v as V;
  }
  return out ?? vars;
}

/**
 * `v` with the fields of `tree` MASK: a copy along their paths only, `v` itself when it has none of them. A list on the
 * way applies the tree to each item; past MAX_MASK_DEPTH, a list or map is masked whole. Each node of `v` is visited
 * once at most, however many fields are listed.
 */
function maskFields(v: unknown, tree: FieldTree, depth: number): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (depth >= MAX_MASK_DEPTH) return MASK;
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const y = maskFields(x, tree, depth + 1);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : v;
  }
  const o = v as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const [k, sub] of namedKeys(o, tree)) {
    const y = sub === null ? MASK : maskFields(o[k], sub, depth + 1);
    if (y === o[k]) continue;
    copy ??= { ...o };
    Object.defineProperty(copy, k, { value: y, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? v;
}

/** The values of the fields of `tree` in `v`, into `into` (a list on the way: each of its items). */
function collectFields(v: unknown, tree: FieldTree, into: Set<string>, depth: number): void {
  if (v === null || typeof v !== 'object' || depth > MAX_MASK_DEPTH) return;
  if (Array.isArray(v)) {
    for (const x of v) collectFields(x, tree, into, depth + 1);
    return;
  }
  const o = v as Record<string, unknown>;
  for (const [k, sub] of namedKeys(o, tree))
    if (sub === null) collect(o[k], into, depth + 1);
    else collectFields(o[k], sub, into, depth + 1);
}

/**
 * A call's vars as shown (the admin API): sensitive ones MASK by name, and the call's sensitive values (its vars' and
 * its callers' frames', inside a module) scrubbed from the others.
 */
export function shownVars(state: CallVars, s: Sensitivity | undefined): Record<string, unknown> {
  if (!s) return state.vars;
  return new Masker(stateValues(state, s)).scrubValue(maskVars(state.vars, s));
}

/** What a call's state holds of variables: its own, and its callers' waiting in its frames (inside a module). */
export interface CallVars {
  vars: Record<string, unknown>;
  f?: readonly { v: Record<string, unknown> }[];
}

/** The sensitive values of a call's state (undefined: none): its vars' and its callers' frames'. */
export function stateValues(
  state: CallVars | undefined,
  s: Sensitivity | undefined,
  into: Set<string> = new Set(),
): Set<string> {
  if (!state) return into;
  sensitiveValues(state.vars, s, into);
  for (const f of state.f ?? []) sensitiveValues(f.v, s, into);
  return into;
}

/** The text values to scrub: strings (and numbers) found in the sensitive vars, at any depth. */
export function sensitiveValues(
  vars: Record<string, unknown> | undefined,
  s: Sensitivity | undefined,
  into: Set<string> = new Set(),
): Set<string> {
  if (!s || !vars) return into;
  for (const name of s.names) if (Object.prototype.hasOwnProperty.call(vars, name)) collect(vars[name], into, 0);
  for (const [name, tree] of s.fields ?? [])
    if (Object.prototype.hasOwnProperty.call(vars, name)) collectFields(vars[name], tree, into, 0);
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

/**
 * The forms a secret's value may take once rendered into a request and shown again: as it is, lower-cased (a URL's host
 * is), percent-encoded (a path segment, a query value, the host of an IDN as punycode). Each is masked as the value is.
 */
export function secretForms(value: string): string[] {
  const forms = new Set([value, value.toLowerCase()]);
  for (const f of [encodeURIComponent(value), new URLSearchParams([['', value]]).toString().slice(1), encodeURI(value)])
    forms.add(f).add(f.toLowerCase());
  // a host name of other scripts is sent as punycode (only a value that is a host name: it cuts at `/` and `?`)
  if (/[^\x00-\x7f]/.test(value) && !/[\s/?#%:@\\[\]]/.test(value)) {
    const ascii = domainToASCII(value);
    if (ascii !== '') forms.add(ascii);
  }
  return [...forms];
}

/** The values (in each of their forms) of the secrets `names`, as `read` gives them; empty ones are left out. */
export function secretValues(
  names: readonly string[] | undefined,
  read: ((name: string) => string | undefined) | undefined,
  into: Set<string> = new Set(),
): Set<string> {
  if (!names || !read) return into;
  for (const n of names) {
    const v = read(n);
    if (v !== undefined && v !== '' && v !== MASK) for (const f of secretForms(v)) into.add(f);
  }
  return into;
}

/** A log entry (or any flat record of fields) with its string fields scrubbed; `msg` included. */
export function scrubFields<T extends Record<string, unknown>>(entry: T, m: Masker): T {
  if (m.empty) return entry;
  return m.scrubValue(entry);
}
