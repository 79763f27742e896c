/**
 * `callscript mock-http`: a small HTTP server answering from the same entries as a
 * scenario's `mocks.http` (src/testing/http-mocks.ts), so that a flow's http steps can run
 * against it with the emulator instead of a real bank. A routes file:
 *
 *   routes:
 *     - { method: GET, url: "/v1/balance?account=12", status: 200, body: { amount: 42.5 } }
 *     - { url: "/v1/balance*", status: 404, body: { error: "no such account" } }
 *     - { url: "/slow", status: 200, delay_ms: 6000 }
 *     - { url: "/down", error: NETWORK }          # the connection is dropped; TIMEOUT: never answered
 *     - { url: "/deep", error: TOO_DEEP }         # a body the lookup client refuses (see failedBody)
 *     - url: "/v1/verify"                         # a route for one body, answers in turn
 *       match: { body: { account: "12" } }
 *       answers: [{ status: 503 }, { status: 200, body: { ok: true } }]
 *
 * A url starting with / is matched against the request's path and query, any other
 * against the full URL (http://host:port/path?query). No route: 404 { error }. Each request
 * served can be logged (`--log`): what the flow sent, and which route answered what.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadYaml } from '../flow/yaml.js';
import { answerOf, findRoute, parseHttpMocks, TOOL_FILE_DEPTH, type HttpMock } from './http-mocks.js';
import { closest } from '../flow/check-context.js';
import { codeNumber } from '../config/code.js';
import { MAX_BODY_DEPTH } from '../engine/http-wait.js';

export interface MockRoutes {
  routes: HttpMock[];
  problems: string[];
}

const ROUTES_FORMAT = 'routes: [ { method, url, status, body, headers, delay_ms, error } ]';

/**
 * A routes file: a map with `routes:`, a list of routes (`routes: []` is none: every request gets 404). An empty file
 * and `routes:` with no value are refused alike, as is any other key (with a did-you-mean).
 */
export function parseRoutes(text: string, file: string): MockRoutes {
  const problems: string[] = [];
  const { root, diagnostics } = loadYaml(text, file, undefined, TOOL_FILE_DEPTH);
  for (const d of diagnostics) if (d.severity === 'error') problems.push(`${file}:${d.line}:${d.column}: ${d.message}`);
  if (problems.length > 0) return { routes: [], problems };
  const at = (pos: { line: number; col: number }, msg: string) =>
    problems.push(`${file}:${pos.line}:${pos.col}: ${msg}`);
  const empty = (pos: { line: number; col: number }) =>
    at(pos, `no routes: a routes file lists its routes, ${ROUTES_FORMAT} (routes: [] for none)`);
  if (!root || (root.kind === 'scalar' && root.value === null)) {
    empty({ line: 1, col: 1 });
    return { routes: [], problems };
  }
  if (root.kind !== 'map') {
    at(root.pos, `a routes file is a map with ${ROUTES_FORMAT}`);
    return { routes: [], problems };
  }
  for (const e of root.entries) {
    if (e.key === 'routes') continue;
    const near = closest(e.key, ['routes']);
    at(
      e.keyNode.pos,
      `unknown key "${e.key}" in a routes file${near ? `: did you mean "${near}"?` : ''} (${ROUTES_FORMAT})`,
    );
  }
  const entry = root.entries.find((e) => e.key === 'routes');
  if (!entry) {
    if (problems.length === 0) at(root.pos, `a routes file is a map with ${ROUTES_FORMAT}`);
    return { routes: [], problems };
  }
  if (entry.value.kind === 'scalar' && entry.value.value === null) {
    empty(entry.keyNode.pos);
    return { routes: [], problems };
  }
  const out = parseHttpMocks(entry.value, (n, msg) => at(n.pos, msg), 'routes');
  return { routes: problems.length > 0 ? [] : out, problems };
}

/** The largest http.max_body_bytes a server may be given: a TOO_LARGE route answers a byte more. */
const LARGEST_BODY = codeNumber('http.maxBodyBytes').max ?? 1 << 20;

/**
 * What a route failing with `error` answers, for a server's lookup client to end with that error: BAD_BODY a 2xx
 * that is not JSON, TOO_LARGE a body over any http.max_body_bytes, TOO_DEEP one nested past MAX_BODY_DEPTH.
 * NETWORK and TIMEOUT are the connection's (dropped, never answered); REFUSED is the client's own policy, which no
 * answer makes: such a route answers its status and body.
 */
function failedBody(error: string | undefined): string | undefined {
  switch (error) {
    case 'BAD_BODY':
      return '<html>not json</html>';
    case 'TOO_LARGE':
      return ' '.repeat(LARGEST_BODY + 1);
    case 'TOO_DEEP':
      return '['.repeat(MAX_BODY_DEPTH + 1) + ']'.repeat(MAX_BODY_DEPTH + 1);
    default:
      return undefined;
  }
}

/** The longest request body the mock reads. */
const MAX_BODY = 1 << 20;

/** A request the mock served: what the flow sent, and what answered it. */
export interface SeenRequest {
  method: string;
  /** Its path and query. */
  url: string;
  /** Its headers (names lowercase), credentials masked (MASKED_HEADERS). */
  headers: Record<string, string>;
  body: string;
  /** The line of the route that answered (in the routes file), absent when none matched (404). */
  route?: number;
  /** Which of the route's answers (1-based) when it gives them in turn. */
  answer?: number;
  /** The status answered, or the error the route plays (NETWORK, TIMEOUT, ...). */
  outcome: number | string;
}

/** Headers whose values a log never shows (a flow's real credentials may be sent to the mock). */
const MASKED_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);

function loggedHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = MASKED_HEADERS.has(k) ? '***' : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export interface MockServer {
  url: string;
  /** Requests served, in order. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

export interface MockServerOptions {
  /** Called with each request served, once its route (or none) is known. */
  log?: (r: SeenRequest) => void;
}

export async function startMockHttp(
  routes: HttpMock[],
  port: number,
  host = '127.0.0.1',
  opts: MockServerOptions = {},
): Promise<MockServer> {
  const seen: MockServer['seen'] = [];
  /** The requests each route has answered (its `answers:` are given in turn). */
  const answered = new Map<HttpMock, number>();
  const served = (r: SeenRequest) => {
    seen.push(r);
    opts.log?.(r);
  };
  const server = http.createServer((req, res) => {
    let body = '';
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) return void req.destroy();
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      const method = req.method ?? 'GET';
      const full = `http://${req.headers.host ?? `${host}:${port}`}${path}`;
      const route = findRoute(routes, method, full, { body, headers: req.headers });
      const r: SeenRequest = { method, url: path, headers: loggedHeaders(req.headers), body, outcome: 404 };
      if (!route) {
        served(r);
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: `no route for ${req.method} ${path}` }));
      }
      const n = answered.get(route) ?? 0;
      answered.set(route, n + 1);
      const m = answerOf(route, n);
      if (route.line !== undefined) r.route = route.line;
      if (route.answers) r.answer = Math.min(n, route.answers.length - 1) + 1;
      r.outcome = m.error ?? m.status;
      served(r);
      const answer = () => {
        if (m.error === 'NETWORK') return req.socket.destroy();
        if (m.error === 'TIMEOUT') return; // never answered
        const failed = failedBody(m.error);
        const text = failed ?? (m.body === null || m.body === undefined ? '' : JSON.stringify(m.body));
        res.on('error', () => undefined); // a client that hangs up on a body too large
        res.writeHead(m.error === 'TOO_LARGE' ? 200 : m.status, {
          'content-type': 'application/json',
          ...m.headers,
          'content-length': String(Buffer.byteLength(text)),
        });
        res.end(text);
      };
      if (m.delay_ms > 0) setTimeout(answer, m.delay_ms);
      else answer();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${host}:${addr.port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
