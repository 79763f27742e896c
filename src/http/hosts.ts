/**
 * The Host a request names (docs/security.md, "Host names").
 *
 * DNS rebinding: a page of evil.example whose name the attacker then makes resolve to this
 * server's address reads, as its own origin, what the browser fetches from it; the only
 * trace on the server is the Host header, evil.example. So the routes a browser could read
 * something from (the admin API and its console, the metrics, /health) answer only the host
 * names allowed: localhost, any IP address (rebinding needs a name whose DNS the attacker
 * answers; an address names itself), the names of server.allowed_hosts (`serve` adds the
 * listen address when it is a name). The real-time route and the webhooks
 * answer any name: the service calls them by whatever public name they have.
 *
 * A request with more than one Host header is refused on every route (RFC 9112 3.2: 400): a
 * proxy may route by one and this server read the other.
 */
import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { codeOption } from '../config/code.js';
import { sendError } from './envelope.js';
import { hostAllowed } from './lookup-client.js';

/** A name of server.allowed_hosts: exact, or `*.` and a domain (its subdomains); the pattern is the table's. */
const ALLOWED = codeOption('allowedHosts');
const ALLOWED_HOST_RE = new RegExp(ALLOWED.type === 'list' ? ALLOWED.item.pattern! : '^$');

/** Why a list of allowed host names given by code cannot be used, or undefined. */
export function allowedHostsProblem(names: unknown): string | undefined {
  if (names === undefined) return undefined;
  if (!Array.isArray(names)) return `allowedHosts must be a list of host names, got ${String(names)}`;
  const bad = names.find((n) => typeof n !== 'string' || !ALLOWED_HOST_RE.test(n));
  return bad === undefined
    ? undefined
    : `allowedHosts: ${JSON.stringify(bad)} is not a host name (ivr.example.com) or *. and a domain`;
}

/** The host name of a Host header (no port, no brackets, lower case, no final dot); undefined when it is not one. */
export function hostName(host: string): string | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(host);
  if (!m) return undefined;
  if (m[1] !== undefined) return isIP(m[1]) === 6 ? m[1].toLowerCase() : undefined;
  return m[2]!.toLowerCase().replace(/\.$/, '');
}

/** Whether a request naming `host` (its Host, or X-Forwarded-Host from a trusted proxy) may be answered. */
export function hostIsAllowed(host: string, names: readonly string[]): boolean {
  if (host === '') return true; // HTTP/1.0 without Host: not a browser
  const name = hostName(host);
  if (name === undefined) return false;
  if (isIP(name) !== 0 || name === 'localhost') return true;
  return names.length > 0 && hostAllowed(name, names);
}

/** onRequest of the routes a browser page could read (admin, console, metrics, /health): 403 HOST_NOT_ALLOWED. */
export function allowedHostsOnly(names: readonly string[]): onRequestHookHandler {
  return (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (hostIsAllowed(req.host, names)) return done();
    const shown = req.host.length > 100 ? `${req.host.slice(0, 100)}…` : req.host;
    const path = req.url.split('?')[0]!.slice(0, 100);
    sendError(
      reply,
      403,
      'HOST_NOT_ALLOWED',
      `the host ${JSON.stringify(shown)} is not one this server answers to on ${path}: ` +
        'localhost, an IP address, or a name of server.allowed_hosts',
    );
  };
}

/** onRequest of every route: a request with more than one Host header is refused (400 BAD_HTTP_REQUEST). */
export function oneHostOnly(req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const raw = req.raw.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
  if (hosts <= 1) return done();
  sendError(reply, 400, 'BAD_HTTP_REQUEST', `the request has ${hosts} Host headers: send one`);
}
