import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from '@fastify/rate-limit';
import { sendError } from './envelope.js';

/**
 * Checks an `Authorization: Basic ...` header against the expected credentials, in
 * constant time (both sides hashed to equal lengths first).
 */
export function basicAuthOk(header: string | undefined, login: string, password: string): boolean {
  if (!header || !/^basic /i.test(header)) return false;
  let decoded: string;
  try {
    decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  } catch {
    return false;
  }
  const i = decoded.indexOf(':');
  if (i < 0) return false;
  const okLogin = same(decoded.slice(0, i), login);
  const okPassword = same(decoded.slice(i + 1), password);
  return okLogin && okPassword;
}

function same(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** The limiter functions of @fastify/rate-limit (`app.createRateLimit(...)`). */
export type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

/** Failed authentications counted per address; with `successes`, the addresses that authenticated lately. */
export interface AuthLimits {
  failures: Limiter;
  successes: Limiter;
}

export interface Realm {
  credentials: { login: string; password: string };
  /** The code of a 401: AUTH_REQUIRED or ADMIN_AUTH_REQUIRED. */
  code: string;
  message: string;
  /** The realm of the WWW-Authenticate challenge. */
  name: string;
  /** What is protected, for the log lines: "/rt", "the admin API". */
  what: string;
}

const PEEK = { increment: false };
type Status = Awaited<ReturnType<Limiter>>;
const exceeded = (s: Status) => !s.isAllowed && s.isExceeded;
/** Counted at least once in the current window. */
const counted = (s: Status) => !s.isAllowed && s.remaining < s.max;

/**
 * The counters of one realm (each call makes new ones, in the store of the @fastify/rate-limit
 * registration on `app`): failures allowed per address and window, and the addresses that
 * authenticated within the window.
 */
export function authLimits(app: FastifyInstance, maxFailures: number, windowMs: number): AuthLimits {
  return {
    failures: app.createRateLimit({ max: maxFailures, timeWindow: windowMs }),
    successes: app.createRateLimit({ max: 1, timeWindow: windowMs }),
  };
}

/**
 * onRequest: HTTP Basic credentials, checked before the body is read. A failure is logged
 * (at most `max` lines per address and window, and one when the address is refused) and,
 * with `limits`, counted per address: past the limit the address gets 429
 * AUTH_RATE_LIMITED until its window ends, whatever credentials it sends (so that guessing
 * cannot go on behind the 429s). Only failures count (wrong credentials: a request with no
 * Authorization header, such as a browser's first visit, is challenged and not counted); and an address that
 * authenticated
 * within the window (the telephony service, which sends many requests from few addresses)
 * keeps being served when its credentials are right.
 */
export function authGuard(realm: Realm, limits: AuthLimits | undefined) {
  const { login, password } = realm.credentials;
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const ok = basicAuthOk(req.headers.authorization, login, password);
    if (!limits) return ok ? undefined : challenge(req, reply, realm);
    if (ok) {
      const seen = await limits.successes(req, PEEK);
      if (counted(seen)) return;
      const failures = await limits.failures(req, PEEK);
      if (exceeded(failures)) return tooMany(reply, failures);
      await limits.successes(req);
      return;
    }
    const before = await limits.failures(req, PEEK);
    if (exceeded(before)) return tooMany(reply, before);
    // no credentials at all: a browser's first visit, answered with the challenge; no guess was made
    if (req.headers.authorization === undefined) return challenge(req, reply, realm, false);
    const after = await limits.failures(req);
    if (exceeded(after)) {
      req.log.warn(
        { code: 'AUTH_RATE_LIMITED', ip: req.ip, key: after.key, route: req.routeOptions.url },
        `failed authentications on ${realm.what}: this address is refused ` +
          `for ${after.isAllowed ? 0 : after.ttlInSeconds} s`,
      );
      return tooMany(reply, after);
    }
    return challenge(req, reply, realm);
  };
}

/** Answers 401 with the realm's challenge; logs a failure (warn), or a request that sent no credentials (debug). */
function challenge(req: FastifyRequest, reply: FastifyReply, realm: Realm, failed = true): FastifyReply {
  if (failed)
    req.log.warn(
      { code: realm.code, ip: req.ip, route: req.routeOptions.url },
      `failed authentication on ${realm.what}`,
    );
  else
    req.log.debug(
      { code: realm.code, ip: req.ip, route: req.routeOptions.url },
      `no credentials sent to ${realm.what}: challenged`,
    );
  return sendError(
    reply.header('www-authenticate', `Basic realm="${realm.name}", charset="UTF-8"`),
    401,
    realm.code,
    realm.message,
  );
}

function tooMany(reply: FastifyReply, s: Status): FastifyReply {
  const after = s.isAllowed ? 1 : Math.max(1, s.ttlInSeconds);
  return sendError(
    reply.header('retry-after', String(after)),
    429,
    'AUTH_RATE_LIMITED',
    `too many failed authentications from this address: retry in ${after} s`,
  );
}
