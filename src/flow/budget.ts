/**
 * What one request may spend evaluating a flow's conditions, `expr:` values and templates.
 * A flow cannot loop (a request runs at most 100 logic steps), but one expression or
 * template can still do unbounded work: a Liquid `{% for i in (1..20000000) %}` ran for
 * 18 s; nested CEL `map()` built 10^7 strings in 2 s. Each request gets one budget, spent
 * by every evaluation it makes; once spent, every evaluation of that request fails with
 * EvaluationLimit and the engine takes the step's error way (EVALUATION_LIMIT).
 *
 * - CEL: cost units, counted by the interpreter hook in cel.ts: one per node evaluated,
 *   plus the size of what it produced (list and map entries, string characters / 32).
 *   Deterministic: the same flow and call spend the same units on any machine.
 * - Liquid: liquidjs's own DoS limits, per template: `memoryLimit` (objects and
 *   characters it creates: ranges, joins, appends...), and the milliseconds the request
 *   has left of `templateMs`: wall clock for the first half, CPU time after it
 *   (src/flow/expr.ts).
 */

export interface EvalLimits {
  /** CEL cost units per request. */
  celUnits: number;
  /** Milliseconds of template rendering per request. */
  templateMs: number;
  /** Memory units (liquidjs memoryLimit: allocations, plus nodes rendered) of one request's templates. */
  templateMemory: number;
}

export const DEFAULT_EVAL_LIMITS: Readonly<EvalLimits> = Object.freeze({
  celUnits: 100_000,
  templateMs: 50,
  templateMemory: 50_000,
});

/** The budget of a request's error way, once it went over its own: a quarter of `limits`. */
export function errorWayLimits(limits: Readonly<EvalLimits> = DEFAULT_EVAL_LIMITS): EvalLimits {
  return {
    celUnits: Math.ceil(limits.celUnits / 4),
    templateMs: limits.templateMs / 4,
    templateMemory: Math.ceil(limits.templateMemory / 4),
  };
}

/** Thrown by an evaluation once the request's budget is spent. */
export class EvaluationLimit extends Error {
  readonly code = 'EVALUATION_LIMIT';
}

/** One request's budget, and its memo of values converted for CEL. */
export class EvalBudget {
  celLeft: number;
  templateMsLeft: number;
  /** Memory units the request's templates may still use (all renders together). */
  templateMemoryLeft: number;
  /**
   * The process's CPU time (ms) when the request's templates had spent half their time by the wall clock: from there
   * CPU time counts (src/flow/expr.ts).
   */
  cpuMark: number | undefined;
  /** Why the budget ran out (set once). */
  spent: string | undefined;
  #memo: WeakMap<object, unknown> | undefined;
  #sizes: WeakMap<object, number> | undefined;

  /**
   * Values already converted for CEL, by identity (nested request and call values do not change within a request).
   * Made on first use: most requests convert nothing.
   */
  get memo(): WeakMap<object, unknown> {
    return (this.#memo ??= new WeakMap());
  }

  /** Deep sizes of lists and maps seen by CEL (items, string characters), computed once each; made on first use. */
  get sizes(): WeakMap<object, number> {
    return (this.#sizes ??= new WeakMap());
  }

  constructor(readonly limits: Readonly<EvalLimits> = DEFAULT_EVAL_LIMITS) {
    this.celLeft = limits.celUnits;
    this.templateMsLeft = limits.templateMs;
    this.templateMemoryLeft = limits.templateMemory;
  }

  /**
   * Spends `units` of the CEL budget on work done outside the interpreter's nodes (a
   * pattern match, a pattern compiled); throws EvaluationLimit when that goes past it,
   * before the work is done.
   */
  spend(units: number, what: string): void {
    this.celLeft -= units;
    if (this.celLeft < 0)
      throw this.exhaust(
        `${what} would go over the budget of ${this.limits.celUnits.toLocaleString('en-US')} cost units ` +
          `(limits.expression_cost)`,
      );
  }

  /** Marks the budget spent and returns the error to throw. */
  exhaust(why: string): EvaluationLimit {
    this.spent ??= why;
    this.celLeft = Math.min(this.celLeft, 0);
    this.templateMsLeft = Math.min(this.templateMsLeft, 0);
    this.templateMemoryLeft = Math.min(this.templateMemoryLeft, 0);
    return new EvaluationLimit(this.spent);
  }
}
