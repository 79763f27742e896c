/**
 * The CEL interpreter (@marcbachmann/cel-js, version pinned), bounded for untrusted flows:
 *
 * - parse limits: AST nodes, nesting depth, list and map literal sizes, call arguments;
 * - a cost budget per request (see budget.ts): every node the interpreter evaluates goes
 *   through its evaluator's `run(ast, ctx)`; this module's environment owns its evaluator,
 *   reaches it once through a registered function (handlers are called with the evaluator
 *   as `this`) and counts each `run` against the request's budget;
 * - `matches()` runs on the linear-time engine (pattern.ts): the interpreter's own uses
 *   JavaScript's backtracking RegExp (`"1111...x".matches("^(1+)+$")` took 14 s) and its
 *   overload cannot be replaced, so calls to `matches` are renamed, in the parsed tree
 *   before their first check, to this module's `re2_matches` with the same signature;
 * - values enter in CEL's types (whole numbers as ints), converted once per request and
 *   only for the `vars.*` and `call.*` fields the expression reads.
 *
 * The hook and the rename use the interpreter's documented AST (`parse(...).ast`: op,
 * args) and the `this` of function handlers; test/flow/cel.test.ts fails if either stops
 * working with a new version.
 */
import { Environment } from '@marcbachmann/cel-js';
import {
  compileCost,
  compileLinear,
  compileWeight,
  matchCost,
  MAX_FLOW_PATTERN_WEIGHT,
  type LinearRegex,
} from './pattern.js';
import { EvalBudget, EvaluationLimit } from './budget.js';

type CelFn = ReturnType<Environment['parse']>;
interface Node {
  op: string;
  args: unknown;
}
interface Evaluator {
  run(ast: Node & { evaluate(ev: Evaluator, ast: Node, ctx: unknown): unknown }, ctx: unknown): unknown;
}

/** Parse limits (the interpreter's own). */
export const CEL_LIMITS = {
  maxAstNodes: 2000,
  maxDepth: 64,
  maxListElements: 1000,
  maxMapEntries: 1000,
  maxCallArguments: 32,
} as const;

/** Which top-level fields of `vars` and `call` an expression reads ('all': it uses the whole map). */
export interface Reads {
  vars: Set<string> | 'all';
  call: Set<string> | 'all';
}

export interface CelExpression {
  fn: CelFn;
  reads: Reads;
  /** The string literals given to matches() as patterns (checked at load). */
  patterns: string[];
}

/** The interpreter with its limits, hook and pattern cache: one per expression module. */
export class Cel {
  private readonly env: Environment;
  private readonly ev: Evaluator;
  /** The budget of the evaluation running now (evaluation is synchronous). */
  private current: EvalBudget | undefined;
  /** The calendars of the evaluation running now (open(), holiday()). */
  private calendar: ((name: string) => string) | undefined;
  private readonly patterns = new Map<string, LinearRegex>();
  private patternWeight = 0;

  constructor() {
    this.env = new Environment({ unlistedVariablesAreDyn: true, limits: { ...CEL_LIMITS } });
    // a match costs its text's length times the pattern's size: charged before it runs
    const matches = (s: string, re: string): boolean => {
      const p = this.pattern(re);
      this.current?.spend(matchCost(p, s), `matches() on ${s.length.toLocaleString('en-US')} characters`);
      return p.test(s);
    };
    this.env.registerFunction('string.re2_matches(string): bool', matches);
    this.env.registerFunction('re2_matches(string, string): bool', matches);
    // duration() parses with a backtracking regex, cubic in the text (4,000 zeros: 21 s): calls are
    // renamed to this one, which lets only short texts through to it (a plain interpreter's)
    const plain = new Environment({ unlistedVariablesAreDyn: true });
    this.env.registerFunction('bounded_duration(string): google.protobuf.Duration', (text: string) => {
      if (text.length > MAX_DURATION_TEXT)
        throw new Error(
          `duration(): a duration is written in at most ${MAX_DURATION_TEXT} characters, got ${text.length}`,
        );
      return plain.evaluate('duration(t)', { t: text });
    });
    // open("office") and holiday("office"): a calendar's state at the request's time (version 2)
    const calendar = (name: string): string => {
      if (!this.calendar) throw new Error(`open()/holiday(): the flow has no calendars`);
      this.current?.spend(ZONED_COST, 'a calendar');
      return this.calendar(name);
    };
    this.env.registerFunction('open(string): bool', (name: string) => calendar(name) === 'open');
    this.env.registerFunction('holiday(string): bool', (name: string) => calendar(name) === 'holiday');
    let captured: Evaluator | undefined;
    this.env.registerFunction('callscript_evaluator(): bool', function (this: Evaluator) {
      // the evaluator calls its functions as its methods: this one is how we reach it
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      captured = this;
      return true;
    });
    this.env.evaluate('callscript_evaluator()');
    if (!captured || typeof captured.run !== 'function')
      throw new Error('the CEL interpreter has no evaluator to bound');
    this.ev = captured;
    // the budget of the evaluation in progress, read through this closure (the evaluator calls run as its method)
    const current = () => this.current;
    // Every node evaluated below the root goes through run: count it, and what it made.
    this.ev.run = function (ast, ctx) {
      const b = current();
      if (b && (b.celLeft -= nodeCost(ast)) < 0) throw b.exhaust(overBudget(b));
      const out = ast.evaluate(this, ast, ctx);
      if (b && !FREE.has(ast.op) && (b.celLeft -= sizeOf(out, b)) < 0) throw b.exhaust(overBudget(b));
      return out;
    };
  }

  /** Parses (throws on a syntax error or a parse limit), renames `matches`, and lists what it reads. */
  parse(source: string): CelExpression {
    const fn = this.env.parse(source);
    const found: Found = { reads: { vars: new Set(), call: new Set() }, patterns: [] };
    walk(fn.ast as unknown as Node, found);
    return { fn, reads: found.reads, patterns: found.patterns };
  }

  /** Evaluates under `budget` (a fresh default one when absent). Throws EvaluationLimit when it runs out. */
  evaluate(
    e: CelExpression,
    context: Record<string, unknown>,
    budget: EvalBudget | undefined,
    calendar?: (name: string) => string,
  ): unknown {
    const b = budget ?? new EvalBudget();
    if (b.celLeft < 0 || b.spent !== undefined) throw b.exhaust(b.spent ?? overBudget(b));
    const outer = this.current;
    const outerCalendar = this.calendar;
    this.current = b;
    this.calendar = calendar;
    try {
      const out = e.fn(context);
      if (b.spent !== undefined) throw new EvaluationLimit(b.spent);
      return out;
    } catch (err) {
      // An error the interpreter wrapped or absorbed (|| and && absorb errors) still ends the evaluation.
      if (b.spent !== undefined && !(err instanceof EvaluationLimit)) throw new EvaluationLimit(b.spent);
      throw err;
    } finally {
      this.current = outer;
      this.calendar = outerCalendar;
    }
  }

  /** A pattern given to matches(), compiled once (a bounded cache: patterns can come from variables). */
  private pattern(source: string): LinearRegex {
    let re = this.patterns.get(source);
    if (!re) {
      this.current?.spend(compileCost(source), 'compiling a pattern for matches()');
      re = compileLinear(source);
      // bounded by what the compiled patterns weigh (a Unicode class holds its ranges), not by their number
      const w = compileWeight(source);
      if (this.patternWeight + w > MAX_FLOW_PATTERN_WEIGHT) {
        this.patterns.clear();
        this.patternWeight = 0;
      }
      this.patterns.set(source, re);
      this.patternWeight += w;
    }
    return re;
  }
}

/**
 * Every node's value is charged its size (string characters, list and map items deep),
 * whether it is made or read: what an operation does with a value (==, in, size(),
 * contains) is at most linear in it, so reading a 30 KB string in a loop costs what
 * scanning it does. A comprehension's accumulator steps return the list being built (each
 * push is one node): they cost one unit, and the finished list is charged once.
 */
function overBudget(b: EvalBudget): string {
  return (
    `the expressions of this request went over their budget of ${b.limits.celUnits.toLocaleString('en-US')} ` +
    `cost units (limits.expression_cost)`
  );
}

const FREE: ReadonlySet<string> = new Set(['accuValue', 'accuPush', 'accuInc']);

/** The length of a text duration() may parse. */
const MAX_DURATION_TEXT = 64;

/**
 * Timestamp getters given a time zone (getHours("Europe/Paris")) build a date formatter
 * each time: about 50 µs, charged as such.
 */
const ZONED_GETTERS: ReadonlySet<string> = new Set([
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getFullYear',
  'getHours',
  'getMilliseconds',
  'getMinutes',
  'getMonth',
  'getSeconds',
]);
const ZONED_COST = 1000;

function nodeCost(ast: Node): number {
  if (ast.op === 'rcall') {
    const args = ast.args as [string, unknown, unknown[]];
    if (ZONED_GETTERS.has(args[0]) && args[2].length === 1) return 1 + ZONED_COST;
  }
  return 1;
}

function sizeOf(v: unknown, b: EvalBudget): number {
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (typeof v !== 'object' || v === null) return 0;
  let s = b.sizes.get(v);
  if (s !== undefined) return s;
  s = 0;
  // a list or map CEL made: its items are values already charged and sized
  const items = Array.isArray(v) ? v : v instanceof Map ? v.values() : [];
  for (const x of items)
    s += 1 + (typeof x === 'string' ? x.length : typeof x === 'object' && x !== null ? (b.sizes.get(x) ?? 1) : 0);
  b.sizes.set(v, s);
  return s;
}

interface Found {
  reads: Reads;
  patterns: string[];
}

/**
 * Renames matches() calls, records their literal patterns and the vars/call fields read; the tree is at most
 * CEL_LIMITS.maxDepth deep.
 */
function walk(x: unknown, found: Found): void {
  if (Array.isArray(x)) {
    for (const y of x) walk(y, found);
    return;
  }
  if (x === null || typeof x !== 'object') return;
  if (!isNode(x)) {
    for (const y of Object.values(x)) walk(y, found);
    return;
  }
  const args = x.args as unknown[];
  const reads = found.reads;
  if (x.op === 'call' && args[0] === 'duration') args[0] = 'bounded_duration';
  if ((x.op === 'rcall' || x.op === 'call') && args[0] === 'matches') {
    args[0] = 're2_matches';
    // rcall: [name, receiver, [pattern]]; call: [name, [text, pattern]]
    const pattern = x.op === 'rcall' ? (args[2] as unknown[])[0] : (args[1] as unknown[])[1];
    if (isNode(pattern) && pattern.op === 'value' && typeof pattern.args === 'string')
      found.patterns.push(pattern.args);
  }
  if (
    (x.op === '.' || x.op === '.?') &&
    isNode(args[0]) &&
    args[0].op === 'id' &&
    (args[0].args === 'vars' || args[0].args === 'call')
  ) {
    const set = reads[args[0].args];
    if (set !== 'all') set.add(String(args[1]));
    return;
  }
  if (x.op === 'id' && (x.args === 'vars' || x.args === 'call')) {
    reads[x.args] = 'all';
    return;
  }
  if (x.op === 'value') return;
  walk(x.args, found);
}

/**
 * The `vars` fields an expression needs set: read as `vars.x` (or deeper: `vars.x.y`, and `has(vars.x.y)`, which
 * fails when x is missing), unless the expression guards them somewhere with `has(vars.x)` or reads them optionally
 * (`vars.?x`). The tree is at most CEL_LIMITS.maxDepth deep.
 */
export function neededVars(e: CelExpression): string[] {
  const need = new Set<string>();
  const guarded = new Set<string>();
  const field = (x: unknown): string | undefined =>
    isNode(x) && (x.op === '.' || x.op === '.?') && isNode((x.args as unknown[])[0])
      ? ((x.args as unknown[])[0] as Node).op === 'id' && ((x.args as unknown[])[0] as Node).args === 'vars'
        ? String((x.args as unknown[])[1])
        : undefined
      : undefined;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) {
      for (const y of x) visit(y);
      return;
    }
    if (x === null || typeof x !== 'object') return;
    if (!isNode(x)) {
      for (const y of Object.values(x)) visit(y);
      return;
    }
    const args = x.args as unknown[];
    if (x.op === 'call' && args[0] === 'has') {
      const arg = (args[1] as unknown[] | undefined)?.[0];
      const name = field(arg);
      if (name !== undefined) guarded.add(name);
      else visit(arg);
      return;
    }
    const name = field(x);
    if (name !== undefined) {
      (x.op === '.?' ? guarded : need).add(name);
      return;
    }
    if (x.op === 'value') return;
    visit(x.args);
  };
  visit(e.fn.ast as unknown as Node);
  return [...need].filter((n) => !guarded.has(n));
}

function isNode(x: unknown): x is Node {
  return typeof x === 'object' && x !== null && typeof (x as Node).op === 'string' && 'args' in x;
}
