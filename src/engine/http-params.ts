/**
 * The request of an http step, rendered for one visit: method, url, headers, query and
 * JSON body with their templates filled (`secrets.X` readable here only), and checked
 * again once rendered (an http(s) URL, header values without line breaks, bounded sizes).
 * A failure is a ParamFailure (the step's error branch, INVALID_PARAM); its message never
 * holds a rendered value, which may hold a secret.
 */
import type { ExprValue, FillerEntry, HttpSpec, HttpText, Value } from '../flow/model.js';
import { evaluate } from '../flow/expr.js';
import { EvaluationLimit } from '../flow/budget.js';
import { nestedDeeper } from '../protocol/json-depth.js';
import { jsonSize, MAX_BODY_DEPTH } from './size.js';
import {
  playBuilder,
  ParamFailure,
  renderDeep,
  type CommandBuilder,
  type GetScope,
  type Params,
  type PromptTable,
} from './params.js';
import type { ActionName } from '../flow/actions.js';

/** Bounds on the rendered request (what a flow's templates may make of it). */
export const HTTP_RENDERED_BOUNDS = {
  urlChars: 8192,
  headerValueChars: 8192,
  bodyBytes: 65536,
  queryChars: 8192,
} as const;

/** The rendered request, as the effect carries it (never stored, never logged whole). */
export interface HttpRequestSpec {
  method: HttpSpec['method'];
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeout_ms: number;
  retries: number;
}

const fail = (param: string, reason: string): never => {
  throw new ParamFailure(param, reason, 'RUNTIME_PARAM');
};

export function httpBuilder(spec: HttpSpec): CommandBuilder {
  return {
    constant: false,
    build(scope: GetScope): Params {
      const url = String(renderDeep('url', spec.url, scope));
      if (url.length > HTTP_RENDERED_BOUNDS.urlChars)
        fail('url', `the rendered URL is ${url.length} characters, over ${HTTP_RENDERED_BOUNDS.urlChars}`);
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return fail('url', 'the rendered value is not a URL');
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:')
        fail('url', `the rendered URL's scheme is ${u.protocol.slice(0, 16)}, not http: or https:`);
      if (u.username !== '' || u.password !== '') fail('url', 'the rendered URL holds credentials');
      let qlen = 0;
      for (const [k, raw] of Object.entries(spec.query)) {
        const v = typeof raw === 'string' ? renderDeep(`query.${k}`, raw, scope) : valueOf(`query.${k}`, raw, scope);
        // a list gives the key once per item (?id=1&id=2)
        for (const x of Array.isArray(v) ? v : [v]) {
          const text = textOf(`query.${k}`, x);
          qlen += k.length + text.length;
          if (qlen > HTTP_RENDERED_BOUNDS.queryChars) break;
          u.searchParams.append(k, text);
        }
      }
      if (qlen > HTTP_RENDERED_BOUNDS.queryChars)
        fail('query', `the rendered query is over ${HTTP_RENDERED_BOUNDS.queryChars} characters`);
      const headers: Record<string, string> = {};
      for (const [k, raw] of Object.entries(spec.headers)) {
        const v =
          typeof raw === 'string'
            ? String(renderDeep(`headers.${k}`, raw, scope))
            : textOf(`headers.${k}`, valueOf(`headers.${k}`, raw, scope));
        if (/[\r\n\0]/.test(v)) fail(`headers.${k}`, 'the rendered value holds a line break or NUL');
        if (v.length > HTTP_RENDERED_BOUNDS.headerValueChars)
          fail(`headers.${k}`, `the rendered value is over ${HTTP_RENDERED_BOUNDS.headerValueChars} characters`);
        headers[k] = v;
      }
      const out: Record<string, unknown> = {
        method: spec.method,
        url: u.toString(),
        headers,
        timeout_ms: spec.timeout_ms,
        retries: spec.retries,
      };
      if (spec.body !== undefined) {
        const value = bodyOf(spec.body, scope);
        // weighed before it is written out: an expression may give a value far larger than a body may be
        if (jsonSize(value, HTTP_RENDERED_BOUNDS.bodyBytes) > HTTP_RENDERED_BOUNDS.bodyBytes)
          fail('body', `the rendered body is over ${HTTP_RENDERED_BOUNDS.bodyBytes} bytes`);
        if (nestedDeeper(value, MAX_BODY_DEPTH))
          fail('body', `the rendered body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`);
        const body = JSON.stringify(value);
        if (Buffer.byteLength(body) > HTTP_RENDERED_BOUNDS.bodyBytes)
          fail('body', `the rendered body is over ${HTTP_RENDERED_BOUNDS.bodyBytes} bytes`);
        out.body = body;
      }
      return out as unknown as Params;
    },
  };
}

/** A body rendered: its templates filled, its expressions' values taken typed. */
function bodyOf(v: ExprValue, scope: GetScope): Value {
  switch (v.kind) {
    case 'literal':
      return renderDeep('body', v.value, scope);
    case 'expr':
      return valueOf('body', v, scope);
    case 'list':
      return v.items.map((x) => bodyOf(x, scope));
    case 'map': {
      const o: Record<string, Value> = {};
      for (const [k, x] of v.entries) o[k] = bodyOf(x, scope);
      return o;
    }
  }
}

/**
 * The value of `{ expr }`; a failure is the step's error way (RUNTIME_EXPRESSION), as a template's is, with the
 * interpreter's message (which names no value); a spent budget is the request's EVALUATION_LIMIT.
 */
function valueOf(param: string, v: Exclude<HttpText, string>, scope: GetScope): Value {
  try {
    return evaluate(v.expr, scope());
  } catch (err) {
    if (err instanceof EvaluationLimit) throw err;
    throw new ParamFailure(
      param,
      err instanceof Error ? err.message.split('\n')[0]! : String(err),
      'RUNTIME_EXPRESSION',
    );
  }
}

/** A header's or a query's text: a string as it is, a number or a boolean written as in JSON; nothing else. */
function textOf(param: string, v: Value): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return fail(param, `the value is ${v === null ? 'null' : Array.isArray(v) ? 'a list' : 'a map'}, not a text`);
}

/** The filler of visit n: a play of its media, or the wait command. */
export function fillerBuilder(
  entries: FillerEntry[],
  prompts?: PromptTable,
): (scope: GetScope, n: number) => { command: ActionName; params: Params } {
  const parts = entries.map((e): { wait: Params } | { play: CommandBuilder } =>
    e.kind === 'wait' ? { wait: Object.freeze({ wait: e.wait }) as Params } : { play: playBuilder([e.media], prompts) },
  );
  return (scope, n) => {
    const p = parts[Math.min(Math.max(n, 1), parts.length) - 1]!;
    return 'play' in p ? { command: 'play', params: p.play.build(scope, 1) } : { command: 'wait', params: p.wait };
  };
}

/** The secrets an http step's templates see: the flow's declared names, read when the step runs. */
export function secretsOf(
  names: readonly string[],
): (get: ((name: string) => string | undefined) | undefined) => Record<string, string> {
  return (get) => {
    const o: Record<string, string> = {};
    for (const n of names) o[n] = get?.(n) ?? '';
    return o;
  };
}
