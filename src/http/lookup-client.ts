/**
 * The outbound HTTP client of http steps, with the SSRF policy (`http:` in callscript.yaml):
 * - hosts: when `allow_hosts` is given, only those names (`api.example.com`, `*.example.com`);
 * - addresses: private, loopback, link-local, unique-local, CGNAT, multicast, reserved and
 *   IPv4-mapped/NAT64 forms of them are refused unless `allow_private`, checked on the
 *   address actually connected to (a custom DNS lookup: a name that resolves, or
 *   re-resolves, to 127.0.0.1 is refused too), and on IP literals before connecting;
 * - redirects are not followed (a 3xx is a status like any other);
 * - bounded: response headers (16 KiB), the body (streamed and cut off at the cap), its
 *   nesting (measured on the text before it is parsed: TOO_DEEP), the whole time (the
 *   deadline aborts a server that never answers or trickles its body).
 * Retries (network errors, timeouts, 5xx) back off 100 ms, 200 ms, 400 ms... within the deadline.
 * Never throws: every failure is an error kind.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { Value } from '../flow/model.js';
import { MAX_BODY_DEPTH, type HttpOutcome, type HttpRunner, type LookupError } from '../engine/http-wait.js';
import { codeDefault, codeNumberDefault } from '../config/code.js';
import { jsonTooDeep } from '../protocol/json-depth.js';

/** The config file's `http:` (defaults: the table of options, src/config/table-services.ts), and the header cap. */
export interface HttpPolicy {
  /**
   * Host names lookups may reach (exact, or `*.example.com` for its subdomains); absent or empty: any
   * (http.allow_hosts).
   */
  allowHosts?: string[];
  /** Private, loopback and link-local addresses allowed: a lab, the mock server (http.allow_private). */
  allowPrivate?: boolean;
  /** Response bodies over this many bytes fail with TOO_LARGE (http.max_body_bytes). */
  maxBodyBytes?: number;
  /** Response header bytes at most (default 16384). */
  maxHeaderBytes?: number;
}

/** The defaults of HttpPolicy: those of the table of options, and the header cap (not an option). */
export const DEFAULT_HTTP_POLICY = {
  allowPrivate: codeDefault('http.allowPrivate') as boolean,
  maxBodyBytes: codeNumberDefault('http.maxBodyBytes'),
  maxHeaderBytes: 16384,
} as const;

/** Lookups one call may start when the plugin is given no http.maxLookupsPerCall (http.max_lookups_per_call). */
export { DEFAULT_MAX_LOOKUPS_PER_CALL } from '../config/code.js';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/**
 * The IPv4 address an IPv6 address stands for (::ffff:a.b.c.d, ::ffff:7f00:1, 64:ff9b::/96 NAT64, ::a.b.c.d), if any.
 */
function embeddedV4(addr: string): string | undefined {
  const a = addr
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .split('%')[0]!;
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) return dotted[1];
  const groups = expand(a);
  if (!groups) return undefined;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  const compat = groups.slice(0, 6).every((g) => g === 0) && (groups[6]! !== 0 || groups[7]! > 1);
  if (!mapped && !nat64 && !compat) return undefined;
  return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
}

function expand(a: string): number[] | undefined {
  if (isIP(a) !== 6) return undefined;
  const [head, tail] = a.includes('::') ? a.split('::') : [a, undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').filter((x) => x !== '') : []);
  const h = parse(head);
  const t = parse(tail);
  if (t.some((x) => x.includes('.')) || h.some((x) => x.includes('.'))) return undefined;
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  const all = [...h, ...fill, ...t].map((x) => parseInt(x, 16));
  return all.length === 8 && all.every((n) => Number.isInteger(n)) ? all : undefined;
}

/** The address is one a lookup may not reach without allow_private. */
export function isPrivateAddress(addr: string): boolean {
  const plain = addr.replace(/^\[|\]$/g, '');
  const v4 = isIP(plain) === 4 ? plain : embeddedV4(plain);
  if (v4 !== undefined) return BLOCKED.check(v4, 'ipv4');
  if (isIP(plain) === 6) return BLOCKED.check(plain.split('%')[0]!, 'ipv6');
  return true; // not an address at all: refuse
}

/** The host is allowed by `allow_hosts` (exact names, `*.example.com` for subdomains). */
export function hostAllowed(host: string, allow: readonly string[] | undefined): boolean {
  if (!allow || allow.length === 0) return true;
  const h = host.toLowerCase().replace(/\.$/, '');
  return allow.some((p) => {
    const q = p.toLowerCase();
    return q.startsWith('*.') ? h.endsWith(q.slice(1)) && h.length > q.length - 1 : h === q;
  });
}

class Refused extends Error {}

/** An attempt's error: one of LOOKUP_ERRORS (every tool can answer with it), or a 5xx to retry. */
type Attempt =
  | { ok: true; status: number; body: Value }
  | { ok: false; error: LookupError | 'INVALID_PARAM' | `HTTP_${number}`; message: string; retry: boolean };

function attempt(p: Readonly<Record<string, unknown>>, timeoutMs: number, policy: HttpPolicy): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    // set once the request is made; `done` may run before that (a URL that does not parse)
    // eslint-disable-next-line prefer-const
    let timer: NodeJS.Timeout | undefined;
    const done = (a: Attempt) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      resolve(a);
    };
    let u: URL;
    try {
      u = new URL(String(p.url));
    } catch {
      return done({ ok: false, error: 'INVALID_PARAM', message: 'the URL does not parse', retry: false });
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!hostAllowed(host, policy.allowHosts))
      return done({
        ok: false,
        error: 'REFUSED',
        message: `the host ${host} is not in http.allow_hosts`,
        retry: false,
      });
    const allowPrivate = policy.allowPrivate ?? DEFAULT_HTTP_POLICY.allowPrivate;
    const maxBody = policy.maxBodyBytes ?? DEFAULT_HTTP_POLICY.maxBodyBytes;
    if (isIP(host) !== 0 && !allowPrivate && isPrivateAddress(host))
      return done({
        ok: false,
        error: 'REFUSED',
        message: `${host} is a private, loopback or link-local address (http.allow_private is false)`,
        retry: false,
      });
    const lookup = (
      hostname: string,
      opts: object,
      cb: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
    ) => {
      dnsLookup(hostname, { all: true }, (err, addrs) => {
        if (err) return cb(err, '', 0);
        const list = addrs as LookupAddress[];
        const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
        if (bad || list.length === 0)
          return cb(
            new Refused(
              `${hostname} resolves to ${bad?.address ?? 'nothing'}, a private, loopback or link-local ` +
                `address (http.allow_private is false)`,
            ),
            '',
            0,
          );
        if ((opts as { all?: boolean }).all) return cb(null, list);
        cb(null, list[0]!.address, list[0]!.family);
      });
    };
    const given = (p.headers ?? {}) as Record<string, string>;
    const has = (h: string) => Object.keys(given).some((k) => k.toLowerCase() === h);
    const headers: Record<string, string> = {
      ...(has('accept') ? {} : { accept: 'application/json' }),
      ...(has('user-agent') ? {} : { 'user-agent': 'callscript' }),
      ...given,
    };
    const body = typeof p.body === 'string' ? p.body : undefined;
    if (body !== undefined) {
      if (!has('content-type')) headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      {
        method: String(p.method ?? 'GET'),
        headers,
        lookup: lookup as never,
        maxHeaderSize: policy.maxHeaderBytes ?? DEFAULT_HTTP_POLICY.maxHeaderBytes,
        agent: false,
      },
      (res) => {
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBody) {
          res.destroy();
          req.destroy();
          return done({
            ok: false,
            error: 'TOO_LARGE',
            message: `the response declares ${declared} bytes, over http.max_body_bytes (${maxBody})`,
            retry: false,
          });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBody) {
            res.destroy();
            req.destroy();
            return done({
              ok: false,
              error: 'TOO_LARGE',
              message: `the response body is over http.max_body_bytes (${maxBody})`,
              retry: false,
            });
          }
          chunks.push(c);
        });
        res.on('error', () => done({ ok: false, error: 'NETWORK', message: 'the response was cut off', retry: true }));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Value = null;
          // deep text is slow to parse and overflows what walks it: refused before
          if (jsonTooDeep(text, MAX_BODY_DEPTH))
            return done({
              ok: false,
              error: 'TOO_DEEP',
              message: `the ${status} response's body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`,
              retry: false,
            });
          if (text.trim() !== '') {
            try {
              parsed = JSON.parse(text) as Value;
            } catch {
              if (status >= 200 && status < 300)
                return done({
                  ok: false,
                  error: 'BAD_BODY',
                  message: `the ${status} response is not JSON`,
                  retry: false,
                });
              parsed = null;
            }
          }
          if (status >= 500)
            return done({
              ok: false,
              error: `HTTP_${status}`,
              message: `status ${status}`,
              retry: true,
              ...{ status, body: parsed },
            } as Attempt);
          done({ ok: true, status, body: parsed });
        });
      },
    );
    req.on('error', (err) => {
      if (err instanceof Refused) return done({ ok: false, error: 'REFUSED', message: err.message, retry: false });
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'HPE_HEADER_OVERFLOW')
        return done({
          ok: false,
          error: 'TOO_LARGE',
          message: 'the response headers are over the limit',
          retry: false,
        });
      done({ ok: false, error: 'NETWORK', message: `${code ?? 'network error'}`, retry: true });
    });
    timer = setTimeout(
      () => {
        req.destroy();
        done({
          ok: false,
          error: 'TIMEOUT',
          message: `no complete answer within ${Math.round(timeoutMs)} ms`,
          retry: true,
        });
      },
      Math.max(1, timeoutMs),
    );
    req.end(body);
  });
}

/** The runner of http steps under `policy`: retries with backoff within the deadline. */
export function httpRunner(policy: HttpPolicy = {}, now: () => number = Date.now): HttpRunner {
  const run = runWith(policy, now);
  return (p, deadline) =>
    run(p, deadline).catch((err: unknown) => ({
      ok: false,
      error: 'FAILED',
      message: err instanceof Error ? err.message : String(err),
    }));
}

function runWith(policy: HttpPolicy, now: () => number): HttpRunner {
  return async (p, deadline) => {
    const retries = Math.max(0, Math.min(5, Number(p.retries) || 0));
    let last: Attempt | undefined;
    for (let i = 0; i <= retries; i++) {
      const left = deadline - now();
      if (left <= 0) break;
      // each try gets its share of what is left, the last one all of it
      last = await attempt(p, i === retries ? left : Math.max(left / (retries - i + 1), Math.min(left, 1000)), policy);
      if (last.ok || !last.retry) break;
      const backoff = 100 * 2 ** i * (0.5 + Math.random() / 2);
      if (i < retries && now() + backoff < deadline - 50) await new Promise((r) => setTimeout(r, backoff));
      else break;
    }
    if (!last) return { ok: false, error: 'TIMEOUT', message: 'no time left for the lookup' };
    if (last.ok) return last;
    const fiveXX = /^HTTP_(\d{3})$/.exec(last.error);
    if (fiveXX) {
      const l = last as unknown as { status: number; body: Value };
      return { ok: true, status: l.status, body: l.body };
    }
    return { ok: false, error: last.error, message: last.message } satisfies HttpOutcome;
  };
}
