/** What the campaign makes of the server refusing a call (src/cli/campaign.ts placeError). */
import { describe, expect, it } from 'vitest';
import { placeError } from '../../src/cli/campaign.js';
import { AdminRequestError } from '../../src/cli/outbound.js';

const kind = (code: string, status: number, message = code, exit: 1 | 2 = 1, fields: Record<string, unknown> = {}) => placeError(new AdminRequestError(code, status, message, exit, fields)).kind;

describe('placeError', () => {
  it('the row at fault: failed, not tried again', () => {
    expect(kind('BAD_ADMIN_BODY', 400)).toBe('row');
    expect(kind('BAD_ADMIN_BODY', 0)).toBe('row'); // placeCall's own check, nothing sent
  });
  it('every row would fail: the campaign stops', () => {
    expect(kind('ADMIN_AUTH_REQUIRED', 401, 'refused', 2)).toBe('fatal');
    expect(kind('NOT_FOUND', 404, 'no admin API', 2)).toBe('fatal');
    expect(kind('SERVICE_UNCONFIGURED', 503, 'no account', 2)).toBe('fatal');
    expect(kind('SERVICE_ERROR', 502, 'the service refused the server\'s account', 1, { serviceCode: 22 })).toBe('fatal');
    expect(kind('NOT_CALLSCRIPT', 200, 'not JSON', 2)).toBe('fatal');
  });
  it('not placed, may work later: tried again after the delay', () => {
    expect(kind('UNREACHABLE', 0, 'cannot reach callscript at http://x (ECONNREFUSED): is callscript serve running there?', 2)).toBe('transient');
    expect(kind('SERVICE_ERROR', 502, 'the service refused the call: too many calls', 1, { serviceCode: 24 })).toBe('transient');
    expect(kind('SERVICE_UNREACHABLE', 502)).toBe('transient');
    expect(kind('RATE_LIMITED', 429, 'slow down', 2)).toBe('transient');
    expect(kind('STORE_UNAVAILABLE', 503, 'no call was placed')).toBe('transient');
  });
  it('perhaps placed: never tried again', () => {
    expect(kind('SERVICE_TIMEOUT', 504)).toBe('unknown');
    expect(kind('TIMEOUT', 0, 'cannot reach callscript at http://x (no answer within 20 s)', 2)).toBe('unknown');
    expect(kind('UNREACHABLE', 0, 'cannot reach callscript at http://x (ECONNRESET): …', 2)).toBe('unknown');
    expect(kind('STORE_UNAVAILABLE', 503, 'call X was placed, but the call store is unavailable', 1, { id: 'X' })).toBe('unknown');
  });
});
