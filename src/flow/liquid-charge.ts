/**
 * Templates that pay for what they render. liquidjs charges its memory limit for what it
 * allocates (a range `(1..20000000)` is refused at once; joins, appends...) but not for
 * rendering: two nested `for` over a variable of 16,000 items would run 256 million times,
 * stopped only by the time limit, which depends on the machine's load. Here every list of
 * template nodes the renderer goes through (a template, a loop body at each iteration, an
 * `if` branch...) is charged NODE_COST per node, at least one node, to the render's memory
 * limit first: the nodes a template renders count against the same deterministic budget as
 * what it allocates (limits.template_memory); the time limit stays a backstop.
 */
import { toValue, type Context, type Emitter, type FilterImplOptions, type Liquid, type Template } from 'liquidjs';

/**
 * What rendering a node costs, in memory-limit units (characters allocated): an output
 * node takes about 1.6 µs, where a filter handles a character in a few nanoseconds, so the
 * default budget of 50,000 units is about 6,000 nodes: 10 to 30 ms at most.
 */
export const NODE_COST = 8;

/** What liquidjs charges its memory units to (its Limiter's shape). */
export interface MemoryMeter {
  use(count: number): void;
  check(count: number): void;
}

/**
 * Makes `engine`'s renderer charge each list of nodes it renders; with a meter from
 * `meter()` (the request's, see expr.ts), every charge of the render, liquidjs's own
 * included, goes to that meter instead of the render's own limit: one budget for all the
 * templates of a request.
 */
export function chargeRendering(engine: Liquid, meter: () => MemoryMeter | undefined): void {
  const r = engine.renderer;
  const render = r.renderTemplates.bind(r);
  r.renderTemplates = function* (templates: Template[], ctx: Context, emitter?: Emitter) {
    const m = meter();
    if (m && ctx.memoryLimit !== (m as unknown)) ctx.memoryLimit = m as Context['memoryLimit'];
    ctx.memoryLimit.use(NODE_COST * Math.max(1, templates.length));
    // what a template writes out (and what a capture keeps) is charged its length too
    return yield* render(templates, ctx, emitter ?? new ChargedEmitter(ctx));
  };
  chargeSorts(engine);
}

/**
 * liquidjs's own emitter, but each write charged its length to the render's memory: a
 * loop printing a 30 KB variable 5,000 times built 150 MB, and `capture` doubled a
 * string to 268 million characters, all uncharged.
 */
class ChargedEmitter implements Emitter {
  buffer = '';
  constructor(private readonly ctx: Context) {}
  write(html: unknown): void {
    const s = stringify(html);
    this.ctx.memoryLimit.use(s.length);
    this.buffer += s;
  }
}

/** liquidjs's stringify (not exported): what an output writes. */
function stringify(value: unknown): string {
  const v = toValue(value) as unknown;
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(stringify).join('');
  return String(v);
}

/**
 * sort and sort_natural compare items n log n times, and sort_natural lowercases both
 * strings each time: 4,096 strings of 12,000 characters took seconds, charged 4,096. They
 * are charged their comparisons times the items' average length first.
 */
function chargeSorts(engine: Liquid): void {
  for (const name of ['sort', 'sort_natural']) {
    const original = engine.filters[name] as FilterImplOptions & ((...a: unknown[]) => unknown);
    const handler =
      typeof original === 'function' ? original : (original as { handler: (...a: unknown[]) => unknown }).handler;
    engine.registerFilter(name, function (this: { context: Context }, list: unknown, ...args: unknown[]) {
      if (Array.isArray(list) && list.length > 1) {
        let chars = 0;
        for (const x of list) chars += typeof x === 'string' ? x.length : 1;
        const n = list.length;
        this.context.memoryLimit.use(Math.ceil(Math.log2(n)) * (n + chars));
      }
      return handler.call(this, list, ...args);
    } as FilterImplOptions);
  }
}
