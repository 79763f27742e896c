/**
 * Templates and conditions: the two places where flow text is evaluated. Both are
 * interpreted by well-kept packages (liquidjs for `{{ }}` templates, a CEL interpreter for
 * conditions and `expr:` values); nothing here uses eval or new Function.
 *
 * Parsed forms are cached per source string: flows are compiled once, so each template
 * and expression is parsed once per process.
 */
import { Liquid, filters, type FilterImplOptions, type Template } from 'liquidjs';
import { cachedDateFilter, DateNames, type DateFilter, type DateFilterThis } from './dates.js';
import { parse as parseCel } from '@marcbachmann/cel-js';
import type { Value } from './model.js';

/** What templates and expressions can see. */
export interface Scope {
  vars: Record<string, Value>;
  call: Record<string, Value>;
  /** The last command's result ("" if none). */
  result: string;
  /** The last command's error ("" if none). */
  error: string;
}

/**
 * The liquid engine templates render with. Its `date` filter reads dates as written (see
 * `wallClock`) and takes weekday and month names from cached formatters (src/flow/dates.ts):
 * the cache belongs to this engine, like its parsed templates.
 */
function createLiquid(): Liquid {
  const engine = new Liquid({
    strictFilters: true, // an unknown filter is an error at load time
    strictVariables: false, // an unset variable renders as "" (use `| default:`)
    ownPropertyOnly: true,
    cache: false,
    // A date with an offset ("...T10:30:00+02:00", "...Z") prints in its own zone.
    preserveTimezones: true,
  });
  const date = cachedDateFilter(new DateNames(), filters.date as DateFilter);
  engine.registerFilter('date', function (this: DateFilterThis, v: unknown, ...args: unknown[]) {
    return date.call(this, wallClock(v), ...args);
  } as FilterImplOptions);
  return engine;
}

/**
 * Dates print as written, whatever the server's time zone: a date or date-time without an
 * offset ("2025-07-01", "2025-06-12T10:30:00") is a wall-clock time, not an instant in the
 * server's zone (JavaScript would read the first as UTC and the second as local time).
 */
const ZONELESS = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/;
function wallClock(v: unknown): unknown {
  return typeof v === 'string' && ZONELESS.test(v.trim()) ? `${v.trim().replace(' ', 'T')}${v.includes(':') ? '' : 'T00:00:00'}Z` : v;
}

const liquid = createLiquid();

const templateCache = new Map<string, Template[]>();
type CelFn = ReturnType<typeof parseCel>;
const celCache = new Map<string, CelFn>();

export function isTemplate(s: string): boolean {
  return s.includes('{{') || s.includes('{%');
}

/** null when the template parses, else the parser's message. */
export function checkTemplate(source: string): string | null {
  try {
    parseTemplate(source);
    return null;
  } catch (err) {
    return firstLine(err);
  }
}

function parseTemplate(source: string): Template[] {
  let t = templateCache.get(source);
  if (!t) {
    t = liquid.parse(source);
    templateCache.set(source, t);
  }
  return t;
}

/** Renders a template; a string without `{{`/`{%` is returned as is. Throws on render errors. */
export function render(source: string, scope: Scope): string {
  if (!isTemplate(source)) return source;
  const fast = fastTemplate(source);
  if (fast) {
    const out = renderFast(fast, scope);
    if (out !== undefined) return out;
  }
  return String(liquid.renderSync(parseTemplate(source), scope as unknown as object));
}

/**
 * The common template, text with plain `{{ a.b.c }}` outputs (no filters, tags or
 * whitespace control), rendered without liquid's machinery: the parts are literal text
 * and property paths. Same output as liquid for scalars; anything else (an object, an
 * array, liquid's `size`/`first`/`last`) falls back to liquid. See test/flow/expr.test.ts.
 */
type FastPart = string | readonly string[];
const fastCache = new Map<string, readonly FastPart[] | null>();
const SIMPLE_OUTPUT = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}/g;
const LIQUID_SPECIAL = new Set(['size', 'first', 'last']);

function fastTemplate(source: string): readonly FastPart[] | null {
  const cached = fastCache.get(source);
  if (cached !== undefined) return cached;
  const parts: FastPart[] = [];
  let at = 0;
  for (const m of source.matchAll(SIMPLE_OUTPUT)) {
    if (m.index! > at) parts.push(source.slice(at, m.index));
    parts.push(m[1]!.split('.'));
    at = m.index! + m[0].length;
  }
  if (at < source.length) parts.push(source.slice(at));
  const literal = parts.filter((p): p is string => typeof p === 'string').join('');
  const paths = parts.filter((p): p is readonly string[] => typeof p !== 'string');
  const fast = literal.includes('{{') || literal.includes('{%') || literal.includes('}}') || paths.some((p) => p.some((seg) => LIQUID_SPECIAL.has(seg))) ? null : parts;
  fastCache.set(source, fast);
  return fast;
}

function renderFast(parts: readonly FastPart[], scope: Scope): string | undefined {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') {
      out += p;
      continue;
    }
    let v: unknown = scope;
    for (const seg of p) {
      v = v !== null && typeof v === 'object' && Object.prototype.hasOwnProperty.call(v, seg) ? (v as Record<string, unknown>)[seg] : undefined;
    }
    if (v === undefined || v === null) continue;
    if (typeof v === 'string') out += v;
    else if (typeof v === 'number' || typeof v === 'boolean') out += String(v);
    else return undefined;
  }
  return out;
}

/** null when the CEL expression parses, else the parser's message. */
export function checkExpression(source: string): string | null {
  try {
    compileExpression(source);
    return null;
  } catch (err) {
    return firstLine(err);
  }
}

function compileExpression(source: string): CelFn {
  let fn = celCache.get(source);
  if (!fn) {
    fn = parseCel(source);
    celCache.set(source, fn);
  }
  return fn;
}

/**
 * Evaluates a CEL expression. Whole numbers go in as CEL ints (so `vars.tries + 1`
 * works) and come out as JS numbers; a missing map key is an error in CEL: use
 * `has(vars.x)`. Throws with the interpreter's message on failure.
 */
export function evaluate(source: string, scope: Scope): Value {
  const out = compileExpression(source)(toCel(scope) as Record<string, unknown>);
  return fromCel(out);
}

/** Truthiness of a condition: only CEL `true` passes. */
export function test(source: string, scope: Scope): boolean {
  return evaluate(source, scope) === true;
}

function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = toCel(x);
    return o;
  }
  return v;
}

function fromCel(v: unknown): Value {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map) {
    const o: Record<string, Value> = {};
    for (const [k, x] of v) o[String(k)] = fromCel(x);
    return o;
  }
  if (v && typeof v === 'object') {
    if (typeof (v as { valueOf(): unknown }).valueOf === 'function' && !(Object.getPrototypeOf(v) === Object.prototype)) {
      const prim = (v as { valueOf(): unknown }).valueOf();
      if (prim !== v) return fromCel(prim);
    }
    const o: Record<string, Value> = {};
    for (const [k, x] of Object.entries(v)) o[k] = fromCel(x);
    return o;
  }
  return v as Value;
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0]!.trim();
}
