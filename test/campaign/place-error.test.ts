/**
 * What the campaign makes of the server refusing a call (src/cli/campaign.ts placeError): whose fault, counted or not.
 */
import { describe, expect, it } from 'vitest';
import { placeError } from '../../src/cli/campaign.js';
import { AdminRequestError } from '../../src/cli/outbound.js';

const kind = (
  code: string,
  status: number,
  message = code,
  exit: 1 | 2 = 1,
  fields: Record<string, unknown> = {},
  unsent = false,
) => placeError(new AdminRequestError(code, status, message, exit, fields), unsent).kind;
const REFUSED =
  'cannot reach callscript at http://127.0.0.1:3599 (ECONNREFUSED): is callscript serve running there? ' +
  '(--server, CALLSCRIPT_SERVER)';

describe('placeError', () => {
  it('the row at fault: failed, counted, not tried again', () => {
    expect(kind('BAD_ADMIN_BODY', 400)).toBe('row');
    expect(kind('BAD_ADMIN_BODY', 0)).toBe('row'); // placeCall's own check, nothing sent
    expect(kind('BODY_TOO_LARGE', 413)).toBe('row');
  });

  it('every row would fail: the campaign stops, nothing counted', () => {
    expect(kind('ADMIN_AUTH_REQUIRED', 401, 'refused', 2)).toBe('fatal');
    expect(kind('NOT_FOUND', 404, 'no admin API', 2)).toBe('fatal');
    expect(kind('SERVICE_UNCONFIGURED', 503, 'no account', 2)).toBe('fatal');
    expect(kind('SERVICE_ERROR', 502, "the service refused the server's account", 1, { serviceCode: 22 })).toBe(
      'fatal',
    );
    // the app: the same for every row
    expect(
      kind(
        'SERVICE_ERROR',
        502,
        'the service refused the call: calls.realtime: no application with hash ZZZZZZZZ (code 20)',
        1,
        { serviceCode: 20 },
      ),
    ).toBe('fatal');
    expect(kind('NOT_CALLSCRIPT', 200, 'not JSON', 2)).toBe('fatal');
    expect(kind('NOT_CALLSCRIPT', 404, 'not JSON', 2)).toBe('fatal');
  });

  it('the server not reached, the request never sent: stops, saying so', () => {
    const e = placeError(new AdminRequestError('UNREACHABLE', 0, REFUSED, 2));
    expect([e.kind, e.message]).toEqual(['fatal', `${REFUSED}; no call was placed`]);
    expect(kind('UNREACHABLE', 0, 'cannot reach callscript at http://x (UND_ERR_CONNECT_TIMEOUT): …', 2)).toBe('fatal');
    // seen not written (Sending): a timeout while connecting, a connection cut before the request left
    expect(kind('TIMEOUT', 0, 'cannot reach callscript at http://x (no answer within 20 s)', 2, {}, true)).toBe(
      'fatal',
    );
    expect(kind('UNREACHABLE', 0, 'cannot reach callscript at http://x (UND_ERR_SOCKET)', 2, {}, true)).toBe('fatal');
  });

  it("not placed for a passing reason, not the row's: tried again later, not counted", () => {
    expect(kind('SERVICE_ERROR', 502, 'the service refused the call: too many calls', 1, { serviceCode: 24 })).toBe(
      'transient',
    );
    expect(
      kind('SERVICE_UNREACHABLE', 502, 'calls.realtime: cannot reach http://svc: ECONNREFUSED: no call was placed'),
    ).toBe('transient');
    expect(kind('RATE_LIMITED', 429, 'slow down', 2)).toBe('transient');
    expect(kind('STORE_UNAVAILABLE', 503, 'no call was placed')).toBe('transient');
  });

  it('the service refused this call (perhaps the number): counted, tried again after the delay', () => {
    expect(kind('SERVICE_ERROR', 502, 'the service refused the call: invalid params', 1, { serviceCode: 11 })).toBe(
      'refused',
    );
    expect(kind('SERVICE_ERROR', 502, 'the service refused the call', 1, {})).toBe('refused');
  });

  it('perhaps placed: counted, never tried again', () => {
    expect(kind('SERVICE_TIMEOUT', 504)).toBe('unknown');
    // the server's code for a request the service may have acted on (connection cut after sending, HTTP 5xx, not
    // JSON-RPC, no usable id)
    const e = placeError(
      new AdminRequestError(
        'SERVICE_OUTCOME_UNKNOWN',
        502,
        'SERVICE_OUTCOME_UNKNOWN: calls.realtime: socket hang up (the service at http://svc): the call may ' +
          'or may not have been placed; it is not tried again',
        1,
      ),
    );
    expect([e.kind, e.message]).toEqual([
      'unknown',
      'SERVICE_OUTCOME_UNKNOWN: calls.realtime: socket hang up (the service at http://svc): the call may or ' +
        'may not have been placed; it is not tried again',
    ]);
    expect(kind('TIMEOUT', 0, 'cannot reach callscript at http://x (no answer within 20 s)', 2)).toBe('unknown');
    expect(kind('UNREACHABLE', 0, 'cannot reach callscript at http://x (ECONNRESET): …', 2)).toBe('unknown');
    expect(kind('STORE_UNAVAILABLE', 503, 'call X was placed, but the call store is unavailable', 1, { id: 'X' })).toBe(
      'unknown',
    );
    expect(kind('NOT_CALLSCRIPT', 201, 'answered POST /admin/calls without an id', 2)).toBe('unknown');
    expect(kind('NOT_CALLSCRIPT', 502, 'answered HTTP 502 with a body that is not JSON', 2)).toBe('unknown');
    expect(kind('INTERNAL', 500, 'INTERNAL: something broke')).toBe('unknown');
  });
});
