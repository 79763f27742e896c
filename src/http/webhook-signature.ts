/**
 * The signature of the service's webhooks: `X-CALLR-HmacSignature` is the base64 of the
 * HMAC-SHA256 of the raw request body, keyed with the secret given to webhooks.subscribe
 * (`hmac_secret`). It is checked on the bytes as received (never on JSON parsed and written
 * again), and compared in constant time: crypto.timingSafeEqual on two 32-byte buffers, so
 * the time taken says nothing of how much of a guess was right.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-callr-hmacsignature';
export const EVENT_ID_HEADER = 'x-callr-eventid';

/** The comparison used: Node's constant-time one (exported so that a test can see it is). */
export const constantTimeEqual: (a: Buffer, b: Buffer) => boolean = timingSafeEqual;

/** base64 of 32 bytes: 43 characters and one `=` (a few senders leave the padding out). */
const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=?$/;

/** The signature of `raw` with `secret`, as the header carries it. */
export function webhookSignature(raw: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(raw).digest('base64');
}

/**
 * Whether `header` is the signature of `raw` with `secret`. A header that is not the base64
 * of 32 bytes is refused before any comparison (its length is no secret); otherwise the
 * expected and given digests are compared with `equal` (constant time by default).
 */
export function signatureMatches(
  raw: Buffer,
  header: string | string[] | undefined,
  secret: string,
  equal: (a: Buffer, b: Buffer) => boolean = constantTimeEqual,
): boolean {
  if (typeof header !== 'string') return false;
  const given = header.trim();
  if (!BASE64_SHA256.test(given)) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  const got = Buffer.from(given, 'base64');
  if (got.length !== expected.length) return false;
  return equal(expected, got);
}
