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
 *
 * A url starting with / is matched against the request's path and query, any other
 * against the full URL (http://host:port/path?query). No route: 404 { error }.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadYaml } from '../flow/yaml.js';
import { findRoute, parseHttpMocks, type HttpMock } from './http-mocks.js';

export interface MockRoutes {
  routes: HttpMock[];
  problems: string[];
}

export function parseRoutes(text: string, file: string): MockRoutes {
  const problems: string[] = [];
  const { root, diagnostics } = loadYaml(text, file);
  for (const d of diagnostics) if (d.severity === 'error') problems.push(`${file}:${d.line}:${d.column}: ${d.message}`);
  if (!root || problems.length > 0) return { routes: [], problems };
  const routes = root.kind === 'map' ? root.entries.find((e) => e.key === 'routes')?.value : undefined;
  if (!routes)
    return {
      routes: [],
      problems: [
        `${file}:1:1: a routes file is a map with routes: [ { method, url, status, body, headers, delay_ms, error } ]`,
      ],
    };
  const out = parseHttpMocks(
    routes,
    (at, msg) => problems.push(`${file}:${at.pos.line}:${at.pos.col}: ${msg}`),
    'routes',
  );
  return { routes: out, problems };
}

/** The longest request body the mock reads. */
const MAX_BODY = 1 << 20;

export interface MockServer {
  url: string;
  /** Requests served, in order (method, path and query, body). */
  seen: { method: string; url: string; body: string }[];
  close(): Promise<void>;
}

export async function startMockHttp(routes: HttpMock[], port: number, host = '127.0.0.1'): Promise<MockServer> {
  const seen: MockServer['seen'] = [];
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
      seen.push({ method: req.method ?? 'GET', url: path, body });
      const full = `http://${req.headers.host ?? `${host}:${port}`}${path}`;
      const m = findRoute(routes, req.method ?? 'GET', full);
      if (!m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: `no route for ${req.method} ${path}` }));
      }
      const answer = () => {
        if (m.error === 'NETWORK') return req.socket.destroy();
        if (m.error === 'TIMEOUT') return; // never answered
        res.writeHead(m.error === 'TOO_LARGE' ? 200 : m.status, { 'content-type': 'application/json', ...m.headers });
        if (m.error === 'BAD_BODY') return res.end('<html>not json</html>');
        res.end(m.body === null || m.body === undefined ? '' : JSON.stringify(m.body));
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
