import { timingSafeEqual, createHash } from 'node:crypto';

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
