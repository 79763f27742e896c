/** The webhook signature check: the HMAC of the raw bytes, compared in constant time. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { constantTimeEqual, signatureMatches, webhookSignature } from '../../src/http/webhook-signature.js';
import { hmacSignature } from '../../src/emulator/webhooks/sender.js';

const SECRET = 'a-webhook-secret-of-32-characters';
const BODY = Buffer.from(
  '{"event_id":"e1","event_at":"2026-11-23T10:00:00.000Z","hook_hash":"","try":0,"type":"sms.mo","data":{"text":"é"}}',
);
const good = createHmac('sha256', SECRET).update(BODY).digest('base64');

describe('signatureMatches', () => {
  it('the comparison is crypto.timingSafeEqual, called on the two 32-byte digests', () => {
    expect(constantTimeEqual).toBe(timingSafeEqual);
    const equal = vi.fn(timingSafeEqual);
    expect(signatureMatches(BODY, good, SECRET, equal)).toBe(true);
    expect(equal).toHaveBeenCalledTimes(1);
    const [a, b] = equal.mock.calls[0]!;
    expect(a.byteLength).toBe(32);
    expect(b.byteLength).toBe(32);
    // a wrong signature of the right shape is compared the same way (and fails)
    const wrong = createHmac('sha256', 'another secret entirely').update(BODY).digest('base64');
    expect(signatureMatches(BODY, wrong, SECRET, equal)).toBe(false);
    expect(equal).toHaveBeenCalledTimes(2);
  });

  it('a header that is not the base64 of 32 bytes is refused without a comparison', () => {
    const equal = vi.fn(timingSafeEqual);
    for (const h of [
      undefined,
      '',
      'abc',
      good.slice(0, -2),
      `${good}AAAA`,
      good.replace(/[+/]/g, '-'),
      Buffer.from('x'.repeat(32)).toString('hex'),
      [good, good],
    ]) {
      expect(signatureMatches(BODY, h as string | string[] | undefined, SECRET, equal), String(h)).toBe(false);
    }
    expect(equal).not.toHaveBeenCalled();
  });

  it(
    'is the signature of the bytes as received: a body written again differently, or another body, does not ' + 'match',
    () => {
      expect(signatureMatches(BODY, good, SECRET)).toBe(true);
      expect(signatureMatches(BODY, ` ${good} `, SECRET)).toBe(true); // header whitespace
      expect(signatureMatches(BODY, good.replace(/=$/, ''), SECRET)).toBe(true); // padding left out
      const reformatted = Buffer.from(JSON.stringify(JSON.parse(BODY.toString()), null, 1));
      expect(signatureMatches(reformatted, good, SECRET)).toBe(false);
      expect(signatureMatches(Buffer.from(BODY.toString().replace('"try":0', '"try":1')), good, SECRET)).toBe(false);
      expect(signatureMatches(BODY, good, `${SECRET}x`)).toBe(false);
    },
  );

  it('agrees with the emulator: what it signs, the server accepts', () => {
    const text = BODY.toString('utf8');
    expect(webhookSignature(BODY, SECRET)).toBe(good);
    expect(hmacSignature(text, SECRET)).toBe(good);
    expect(signatureMatches(Buffer.from(text, 'utf8'), hmacSignature(text, SECRET), SECRET)).toBe(true);
  });
});
