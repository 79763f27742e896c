/**
 * Request guards run in onRequest, before any body is read: bodies must be JSON, and the
 * admin API refuses requests a browser sends on behalf of another site. Together they keep
 * a web page from driving the API with a browser's stored credentials: a page can send a
 * form or `text/plain` body cross-site without asking, but not `application/json`.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { sendError } from './envelope.js';
import { hostIsAllowed } from './hosts.js';

/** `application/json`, with no charset or UTF-8 (JSON is UTF-8: RFC 8259). */
export function isJsonType(type: string): boolean {
  if (type === 'application/json' || type === 'application/json; charset=utf-8') return true;
  const [essence, ...params] = type.split(';');
  if (essence!.trim().toLowerCase() !== 'application/json') return false;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/**
 * onRequest of routes that take a body: one is sent with Content-Type application/json, or
 * there is none (and no Content-Type either). 415 UNSUPPORTED_MEDIA_TYPE otherwise.
 */
export function requireJsonBody(req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const type = req.headers['content-type'];
  if (type === undefined ? !hasBody(req) : isJsonType(type)) return done();
  sendError(
    reply,
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `send the body as JSON with Content-Type: application/json (got ${type === undefined ? 'none' : clip(type)})`,
  );
}

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * onRequest of the admin API: a browser request made for another site is refused (403
 * CROSS_ORIGIN): `Sec-Fetch-Site` other than same-origin or none (typed by the user), or an
 * `Origin` that is not the host (and port) the request was sent to, that host being one the
 * server answers to (src/http/hosts.ts: a DNS-rebinding page sends its own name as both).
 * Clients that are not browsers send neither header.
 */
export function sameOriginOnly(allowedHosts: readonly string[]): onRequestHookHandler {
  return (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      sendError(
        reply,
        403,
        'CROSS_ORIGIN',
        `the admin API refuses requests sent by a browser for another site (Sec-Fetch-Site: ${clip(site)})`,
      );
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !(hostIsAllowed(req.host, allowedHosts) && sameHost(origin, req.host))) {
      sendError(
        reply,
        403,
        'CROSS_ORIGIN',
        `the admin API refuses requests from another origin (Origin: ${clip(origin)})`,
      );
      return;
    }
    done();
  };
}

/** Whether an Origin header names the host (and port) a request was sent to. */
export function sameHost(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file), or not a URL
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const defaultPort = url.protocol === 'https:' ? ':443' : ':80';
  const h = host.toLowerCase();
  return url.host === (h.endsWith(defaultPort) ? h.slice(0, -defaultPort.length) : h);
}

function clip(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}…` : s;
}
