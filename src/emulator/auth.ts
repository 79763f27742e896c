import { createHash, timingSafeEqual } from 'node:crypto';
import type { Account } from './context.js';

/** Checks an `Authorization: Basic ...` header against the account, in constant time. */
export function basicAuthOk(header: string | undefined, account: Account): boolean {
  if (!header || !/^basic /i.test(header)) return false;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return false;
  const a = same(decoded.slice(0, i), account.login);
  const b = same(decoded.slice(i + 1), account.password);
  return a && b;
}

export function basicAuthHeader(login: string, password: string): string {
  return 'Basic ' + Buffer.from(`${login}:${password}`, 'utf8').toString('base64');
}

function same(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
