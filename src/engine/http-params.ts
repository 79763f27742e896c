/**
 * The request of an http step, rendered for one visit: method, url, headers, query and
 * JSON body with their templates filled (`secrets.X` readable here only), and checked
 * again once rendered (an http(s) URL, header values without line breaks, bounded sizes).
 * A failure is a ParamFailure (the step's error branch, INVALID_PARAM); its message never
 * holds a rendered value, which may hold a secret.
 */
import type { FillerEntry, HttpSpec, Value } from '../flow/model.js';
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
      const query = renderDeep('query', spec.query as Value, scope) as Record<string, string>;
      let qlen = 0;
      for (const [k, v] of Object.entries(query)) {
        qlen += k.length + String(v).length;
        u.searchParams.append(k, String(v));
      }
      if (qlen > HTTP_RENDERED_BOUNDS.queryChars)
        fail('query', `the rendered query is over ${HTTP_RENDERED_BOUNDS.queryChars} characters`);
      const headers: Record<string, string> = {};
      for (const [k, raw] of Object.entries(spec.headers)) {
        const v = String(renderDeep(`headers.${k}`, raw, scope));
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
        const body = JSON.stringify(renderDeep('body', spec.body, scope));
        if (Buffer.byteLength(body) > HTTP_RENDERED_BOUNDS.bodyBytes)
          fail('body', `the rendered body is over ${HTTP_RENDERED_BOUNDS.bodyBytes} bytes`);
        out.body = body;
      }
      return out as unknown as Params;
    },
  };
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
