/**
 * Templates and conditions: the two places where flow text is evaluated. Both are
 * interpreted by well-kept packages (liquidjs for `{{ }}` templates, a CEL interpreter for
 * conditions and `expr:` values); nothing here uses eval or new Function.
 *
 * Flows are untrusted: templates get no file system (no include, render or layout tag,
 * and a file system that refuses every read), and every evaluation spends the request's
 * budget (budget.ts, cel.ts) so that no template or expression can run for long.
 *
 * Parsed forms are cached per source string: flows are compiled once, so each template
 * and expression is parsed once per process.
 */
import { Liquid, filters, type FilterImplOptions, type FS, type Template } from 'liquidjs';
import { cachedDateFilter, DateNames, type DateFilter, type DateFilterThis } from './dates.js';
import { Cel, neededVars, type CelExpression } from './cel.js';
import { DEFAULT_EVAL_LIMITS, EvalBudget } from './budget.js';
import { linearError } from './pattern.js';
import { chargeRendering, NODE_COST, type MemoryMeter } from './liquid-charge.js';
import { BoundedCache } from './bounded-cache.js';
import { registerSpokenFilters, spokenLocale } from './spoken-filters.js';
import type { Value } from './model.js';
import type { CalendarState } from './calendar.js';
import { MAX_BODY_DEPTH } from '../protocol/json-depth.js';

/** What templates and expressions can see. */
export interface Scope {
  vars: Record<string, Value>;
  call: Record<string, Value>;
  /** The last command's result ("" if none). */
  result: string;
  /** The last command's error ("" if none). */
  error: string;
  /** The request's evaluation budget; absent: each evaluation gets a fresh default one. */
  budget?: EvalBudget;
  /** The selected environment's values (`env.*`, version 2). */
  env?: Record<string, string>;
  /** The flow's secrets (`secrets.*`): in an http step's request only (version 2). */
  secrets?: Record<string, string>;
  /** open() and holiday() of conditions: the state of a calendar at the request's time (version 2). */
  calendar?: (name: string) => CalendarState;
}

/** Tags that read files: refused by the checker (FORBIDDEN_TAG) and removed from the engine. */
export const FILE_TAGS = ['include', 'render', 'layout'] as const;

/**
 * Filters that run a Liquid expression per item (where_exp on a list of 20,000 with
 * `contains` inside ran 60 s): one filter call, so no node charge nor time check can stop
 * it. Removed from the engine; the checker says so (BAD_TEMPLATE).
 */
export const EXPRESSION_FILTERS = [
  'where_exp',
  'reject_exp',
  'group_by_exp',
  'find_exp',
  'find_index_exp',
  'has_exp',
] as const;

/** The longest template liquidjs parses (its parseLimit), in characters. */
export const MAX_TEMPLATE_LENGTH = 64 * 1024;

/** A file system that has no files: whatever a template names, nothing is read. */
const NO_FILES: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (f: string) => {
    throw new Error(`templates cannot read files (${f})`);
  },
  readFileSync: (f: string) => {
    throw new Error(`templates cannot read files (${f})`);
  },
  resolve: (_root: string, file: string) => file,
  contains: async () => false,
  containsSync: () => false,
  sep: '/',
};

/**
 * The liquid engine templates render with. Its `date` filter reads dates as written (see
 * `wallClock`) and takes weekday and month names, in the call's language, from cached
 * formatters (src/flow/dates.ts): the cache belongs to this engine, like its parsed templates.
 * The spoken formats (say_number, say_date...: src/flow/spoken-filters.ts) too.
 */
function createLiquid(): Liquid {
  const engine = new Liquid({
    strictFilters: true, // an unknown filter is an error at load time
    strictVariables: false, // an unset variable renders as "" (use `| default:`)
    ownPropertyOnly: true,
    cache: false,
    // A date with an offset ("...T10:30:00+02:00", "...Z") prints in its own zone.
    preserveTimezones: true,
    fs: NO_FILES,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    parseLimit: MAX_TEMPLATE_LENGTH,
  });
  for (const tag of FILE_TAGS) delete engine.tags[tag];
  for (const f of EXPRESSION_FILTERS) delete engine.filters[f];
  chargeRendering(engine, () => rendering.meter);
  const date = cachedDateFilter(new DateNames(), filters.date as DateFilter, spokenLocale);
  engine.registerFilter('date', function (this: DateFilterThis, v: unknown, ...args: unknown[]) {
    return date.call(this, wallClock(v), ...args);
  } as FilterImplOptions);
  registerSpokenFilters(engine);
  return engine;
}

/**
 * Dates print as written, whatever the server's time zone: a date or date-time without an
 * offset ("2025-07-01", "2025-06-12T10:30:00") is a wall-clock time, not an instant in the
 * server's zone (JavaScript would read the first as UTC and the second as local time).
 */
const ZONELESS = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/;
function wallClock(v: unknown): unknown {
  return typeof v === 'string' && ZONELESS.test(v.trim())
    ? `${v.trim().replace(' ', 'T')}${v.includes(':') ? '' : 'T00:00:00'}Z`
    : v;
}

/** The meter of the render running now (renders are synchronous): the request's budget. */
const rendering: { meter: MemoryMeter | undefined } = { meter: undefined };
const liquid = createLiquid();
const cel = new Cel();
// The first `date` filter of a process sets up its formatters (Intl data): about 30 ms, more
// on a loaded machine, enough to take the first call's template past its time budget
// (limits.template_ms, 50 ms). Paid here, once, when the language loads, not by a call.
// The first number formatter costs about 25 ms more: the spoken formats' are made here too.
liquid.parseAndRenderSync(
  '{{ "2026-01-01T10:30:00" | date: "%A %a %-d %d %B %b %-I %I:%M %p %H %m %Y %y %Z %z" }}' +
    '{{ 1 | say_number }}{{ 3 | say_ordinal }}{{ 1 | say_money: "EUR" }}{{ 3900 | say_duration }}' +
    '{{ "2026-01-01T10:30:00" | say_date }}{{ "10:30" | say_time }}',
  {},
);

/** Parse caches, bounded by the characters of their sources (bounded-cache.ts): reloads bring new texts for ever. */
const CACHE_CHARS = 8 * 1024 * 1024;
const templateCache = new BoundedCache<Template[] | Error>(CACHE_CHARS);
const celCache = new BoundedCache<CelExpression>(CACHE_CHARS / 4);
const LIQUID_LIMIT = /(memory alloc|template render) limit exceeded/;

export function isTemplate(s: string): boolean {
  return s.includes('{{') || s.includes('{%');
}

/** The names of the filters templates may use (for did-you-mean hints). */
export function filterNames(): string[] {
  return Object.keys(liquid.filters);
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

/**
 * A template's parsed form, or the error it does not parse with (kept too: a flow can render a broken template in a
 * loop).
 */
function parseTemplate(source: string): Template[] {
  let t = templateCache.get(source);
  if (!t) {
    try {
      t = liquid.parse(source);
    } catch (err) {
      t = err instanceof Error ? err : new Error(String(err));
    }
    templateCache.set(source, t);
  }
  if (t instanceof Error) throw t;
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
  const budget = scope.budget ?? new EvalBudget();
  // Time: the wall clock, cheap to read, counts until the templates have spent half their
  // time; from there the process's CPU time counts (a render waiting for a core on a loaded
  // machine is not charged for the wait: a wall-clock budget failed calls at random there).
  // Reading the CPU time costs a system call (~1.7 µs): requests far within the budget never do.
  if (budget.spent !== undefined || overTime(budget, 0))
    throw budget.exhaust(budget.spent ?? 'the template budget is spent');
  const parsed = parseTemplate(source);
  const started = performance.now();
  let ticks = 0;
  const outer = rendering.meter;
  rendering.meter = {
    use(n: number) {
      if (n > 0 && (budget.templateMemoryLeft -= n) < 0) throw new Error('memory alloc limit exceeded');
      if ((++ticks & 255) === 0 && overTime(budget, performance.now() - started))
        throw new Error('template render limit exceeded');
    },
    check() {},
  };
  try {
    const data: Record<string, unknown> = {
      vars: scope.vars,
      call: scope.call,
      result: scope.result,
      error: scope.error,
    };
    if (scope.env) data.env = scope.env;
    // an http step's request: its templates read the secrets through filters too, not only as {{ secrets.X }}
    if (scope.secrets) data.secrets = scope.secrets;
    return String(liquid.renderSync(parsed, data, { renderLimit: Math.max(budget.templateMsLeft, 1) * 4 }));
  } catch (err) {
    const m = err instanceof Error ? LIQUID_LIMIT.exec(err.message) : null;
    if (!m) throw err;
    throw budget.exhaust(
      m[1] === 'memory alloc'
        ? `the templates of this request went over their memory budget ` +
            `of ${budget.limits.templateMemory.toLocaleString('en-US')} units (limits.template_memory)`
        : `the templates of this request went over their ${budget.limits.templateMs} ms (limits.template_ms)`,
    );
  } finally {
    rendering.meter = outer;
    budget.templateMsLeft -= performance.now() - started;
  }
}

/**
 * Whether the request's templates are over their time, `wall` ms into a render. Until they
 * have spent half of it by the wall clock, the wall clock decides; there the CPU time is
 * marked, and from then on what they spent is that half plus the CPU time since the mark,
 * the wall count set back to it whenever it says over.
 */
function overTime(budget: EvalBudget, wall: number): boolean {
  const limit = budget.limits.templateMs;
  if (budget.cpuMark === undefined) {
    const spent = limit - budget.templateMsLeft + wall;
    if (spent < limit / 2) return false;
    budget.cpuMark = cpuMs();
    budget.templateMsLeft = limit / 2 + wall;
  }
  if (wall < budget.templateMsLeft) return false;
  const cpu = limit / 2 + (cpuMs() - budget.cpuMark);
  if (cpu >= limit) return true;
  budget.templateMsLeft = limit - cpu + wall;
  return false;
}

/** The process's CPU time (user + system), in milliseconds. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * The common template, text with plain `{{ a.b.c }}` outputs, each with filters among `default: 'text'`, `downcase`,
 * `upcase` and `capitalize` (no other filters, tags or whitespace control), rendered without liquid's machinery: the
 * parts are literal text and property paths with their filters, compiled once per source. Same output as liquid for
 * scalars, and the same charge to the request's template memory (limits.template_memory: NODE_COST per node, what
 * is written out, what the case filters read), so a template of many lookups of a long value is bounded as liquid
 * bounds it; anything else (an object, an array, liquid's `size`/`first`/`last`, a source past liquid's parseLimit,
 * a render the budget cannot pay for) falls back to liquid, which renders or refuses it. See test/flow/expr.test.ts.
 */
type FastFilter = { dflt: string } | 'downcase' | 'upcase' | 'capitalize';
interface FastPath {
  path: readonly string[];
  filters: readonly FastFilter[];
}
type FastPart = string | FastPath;
const fastCache = new BoundedCache<readonly FastPart[] | null>(CACHE_CHARS);
const FAST_FILTER = String.raw`\|\s*(?:default\s*:\s*(?:'[^'"\\{}]*'|"[^'"\\{}]*")|downcase|upcase|capitalize)\s*`;
const SIMPLE_OUTPUT = new RegExp(
  String.raw`\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*((?:${FAST_FILTER})*)\}\}`,
  'g',
);
const ONE_FILTER = /\|\s*(?:default\s*:\s*(?:'([^'"\\{}]*)'|"([^'"\\{}]*)")|(downcase|upcase|capitalize))/g;
const LIQUID_SPECIAL = new Set(['size', 'first', 'last']);

function fastFilters(text: string): FastFilter[] {
  const out: FastFilter[] = [];
  for (const f of text.matchAll(ONE_FILTER)) out.push(f[3] ? (f[3] as FastFilter) : { dflt: f[1] ?? f[2] ?? '' });
  return out;
}

function fastTemplate(source: string): readonly FastPart[] | null {
  const cached = fastCache.get(source);
  if (cached !== undefined) return cached;
  // liquid refuses a longer template (parse length limit exceeded): so does the fast path, by leaving it to liquid
  if (source.length > MAX_TEMPLATE_LENGTH) return null;
  const parts: FastPart[] = [];
  let at = 0;
  for (const m of source.matchAll(SIMPLE_OUTPUT)) {
    if (m.index! > at) parts.push(source.slice(at, m.index));
    parts.push({ path: m[1]!.split('.'), filters: fastFilters(m[2]!) });
    at = m.index! + m[0].length;
  }
  if (at < source.length) parts.push(source.slice(at));
  const literal = parts.filter((p): p is string => typeof p === 'string').join('');
  const paths = parts.filter((p): p is FastPath => typeof p !== 'string');
  const fast =
    literal.includes('{{') ||
    literal.includes('{%') ||
    literal.includes('}}') ||
    paths.some((p) => p.path.some((seg) => LIQUID_SPECIAL.has(seg)))
      ? null
      : parts;
  fastCache.set(source, fast);
  return fast;
}

/** A scalar through one of the fast filters, as liquid's would give it (see fastTemplate). */
function fastFilter(v: unknown, f: FastFilter): unknown {
  if (typeof f === 'object')
    // liquid's default: an empty string, false, nil or nothing gives the default
    return v === undefined || v === null || v === false || v === '' ? f.dflt : v;
  const str = v === undefined || v === null ? '' : String(v);
  if (f === 'downcase') return str.toLowerCase();
  if (f === 'upcase') return str.toUpperCase();
  return str.charAt(0).toUpperCase() + str.slice(1).toLowerCase();
}

/**
 * Renders a fast template; undefined when liquid must (a value that is not a scalar, or more than the budget's template
 * memory left: liquid then refuses it as it would have). Charges the budget what liquid would have.
 */
function renderFast(parts: readonly FastPart[], scope: Scope): string | undefined {
  const budget = scope.budget;
  const left = budget ? budget.templateMemoryLeft : DEFAULT_EVAL_LIMITS.templateMemory;
  let charge = NODE_COST * Math.max(1, parts.length);
  let out = '';
  for (const p of parts) {
    if (charge + out.length > left) return undefined;
    if (typeof p === 'string') {
      out += p;
      continue;
    }
    let v: unknown = scope;
    for (const seg of p.path) {
      v =
        v !== null && typeof v === 'object' && Object.prototype.hasOwnProperty.call(v, seg)
          ? (v as Record<string, unknown>)[seg]
          : undefined;
    }
    for (const f of p.filters) {
      if (v !== null && typeof v === 'object') return undefined;
      // liquid's case filters charge the length of the text they read
      if (typeof f !== 'object') charge += v === undefined || v === null ? 0 : String(v).length;
      v = fastFilter(v, f);
    }
    if (v === undefined || v === null) continue;
    if (typeof v === 'string') out += v;
    else if (typeof v === 'number' || typeof v === 'boolean') out += String(v);
    else return undefined;
  }
  charge += out.length;
  if (charge > left) return undefined;
  if (budget) budget.templateMemoryLeft -= charge;
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

/** The string literals an expression gives to matches() as patterns ([] when it does not parse). */
export function expressionPatterns(source: string): string[] {
  try {
    return compileExpression(source).patterns;
  } catch {
    return [];
  }
}

/**
 * null when every literal pattern given to matches() in the expression runs on the linear-time engine, else why not.
 */
export function expressionPatternError(source: string): string | null {
  let e: CelExpression;
  try {
    e = compileExpression(source);
  } catch {
    return null; // a syntax error: checkExpression reports it
  }
  for (const p of e.patterns) {
    const err = linearError(p);
    if (err) return `the pattern ${JSON.stringify(p)} given to matches() is refused: ${err}`;
  }
  return null;
}

/** The vars an expression needs set (see neededVars in cel.ts); [] when it does not parse. */
export function expressionNeeds(source: string): string[] {
  try {
    return neededVars(compileExpression(source));
  } catch {
    return [];
  }
}

function compileExpression(source: string): CelExpression {
  let e = celCache.get(source);
  if (!e) {
    e = cel.parse(source);
    celCache.set(source, e);
  }
  return e;
}

/**
 * Evaluates a CEL expression. Whole numbers go in as CEL ints (so `vars.tries + 1`
 * works) and come out as JS numbers; a missing map key is an error in CEL: use
 * `has(vars.x)`. Throws with the interpreter's message on failure, EvaluationLimit when
 * the request's budget is spent.
 */
export function evaluate(source: string, scope: Scope): Value {
  const e = compileExpression(source);
  const budget = scope.budget ?? new EvalBudget();
  const context: Record<string, unknown> = {
    vars: fieldsFor(scope.vars, e.reads.vars, budget),
    call: fieldsFor(scope.call, e.reads.call, budget),
    result: scope.result,
    error: scope.error,
  };
  if (scope.env) context.env = new Map(Object.entries(scope.env));
  if (scope.secrets) context.secrets = new Map(Object.entries(scope.secrets));
  return fromCel(cel.evaluate(e, context, budget, scope.calendar), 0);
}

/**
 * The fields of `vars` or `call` an expression reads, in CEL's types. Nested values are
 * converted once per request (the budget's memo): a condition does not copy or walk the
 * request's variables unless it reads them.
 */
function fieldsFor(from: Record<string, Value>, reads: Set<string> | 'all', budget: EvalBudget): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const names = reads === 'all' ? Object.keys(from) : reads;
  for (const k of names) if (Object.prototype.hasOwnProperty.call(from, k)) out.set(k, toCel(from[k], budget, 0));
  return out;
}

/** Truthiness of a condition: only CEL `true` passes. */
export function test(source: string, scope: Scope): boolean {
  return evaluate(source, scope) === true;
}

/**
 * The deepest value CEL makes (lists and maps; the outermost is level 1), as deep as a lookup's answer may be: a
 * deeper one is an error (a `set`'s `expr:`: RUNTIME_EXPRESSION, the variable left as it was), so a flow nesting a
 * value one `set` at a time stops there, whatever the state cap allows.
 */
export const MAX_VALUE_DEPTH = MAX_BODY_DEPTH;

/**
 * The deepest value CEL reads: any a variable may hold, a lookup's answer saved whole (`{ status, body }` around a body
 * of MAX_BODY_DEPTH). Deeper (a request's variables) is an error, not a stack overflow.
 */
export const MAX_READ_DEPTH = MAX_BODY_DEPTH + 1;

/**
 * Converts a value for CEL (once per request: the budget's memo), recording its deep size for the cost hook (cel.ts).
 */
function toCel(v: unknown, budget: EvalBudget, depth: number): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === null || typeof v !== 'object') return v;
  const done = budget.memo.get(v);
  if (done !== undefined) return done;
  if (depth >= MAX_READ_DEPTH) throw new Error(`a value read is nested more than ${MAX_READ_DEPTH} levels deep`);
  let out: unknown[] | Map<string, unknown>;
  let size = 0;
  const sized = (x: unknown): unknown => {
    const c = toCel(x, budget, depth + 1);
    size +=
      1 + (typeof c === 'string' ? c.length : typeof c === 'object' && c !== null ? (budget.sizes.get(c) ?? 0) : 0);
    return c;
  };
  if (Array.isArray(v)) out = v.map(sized);
  else {
    // a Map, not an object: any key is data (constructor, __proto__...), never a member of the object
    const m = new Map<string, unknown>();
    for (const [k, x] of Object.entries(v)) {
      m.set(k, sized(x));
      size += k.length;
    }
    out = m;
  }
  budget.memo.set(v, out);
  budget.sizes.set(out, size);
  return out;
}

function fromCel(v: unknown, depth: number): Value {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (v === null || typeof v !== 'object') return v as Value;
  if (depth >= MAX_VALUE_DEPTH) throw new Error(`the value is nested more than ${MAX_VALUE_DEPTH} levels deep`);
  if (Array.isArray(v)) return v.map((x) => fromCel(x, depth + 1));
  if (v instanceof Map) {
    const o: Record<string, Value> = {};
    for (const [k, x] of v) define(o, String(k), fromCel(x, depth + 1));
    return o;
  }
  if (typeof (v as { valueOf(): unknown }).valueOf === 'function' && !(Object.getPrototypeOf(v) === Object.prototype)) {
    const prim = (v as { valueOf(): unknown }).valueOf();
    if (prim !== v) return fromCel(prim, depth);
  }
  const o: Record<string, Value> = {};
  for (const [k, x] of Object.entries(v)) define(o, k, fromCel(x, depth + 1));
  return o;
}

/** An own property whatever the key (`__proto__` included): a value's keys are data. */
function define(o: Record<string, Value>, k: string, v: Value): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0]!.trim();
}
