/** The delivery status of an SMS from its reports (src/engine/sms-delivery.ts): pure data. */
import { describe, expect, it } from 'vitest';
import { deliveryView, reportText, sentSms, type SmsReport } from '../../src/engine/sms-delivery.js';
import type { PathEntry } from '../../src/engine/history.js';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const r = (status: string, s: number, error = ''): string =>
  reportText({ status, error, at: T0 + s * 1000, event: `e-${status}-${s}` } satisfies SmsReport);
const sent = { hash: '8242D945', step: 'confirm', at: T0 };

describe('deliveryView', () => {
  it('CREATED until a report comes', () => {
    expect(deliveryView(sent, undefined)).toEqual({
      hash: '8242D945',
      step: 'confirm',
      status: 'CREATED',
      updatedAt: '2026-11-23T10:00:00.000Z',
      history: [{ status: 'CREATED', at: '2026-11-23T10:00:00.000Z' }],
    });
  });

  it('the latest report by its time wins, whatever the order they came in; ties follow the lifecycle', () => {
    const v = deliveryView(sent, { reports: [r('RECEIVED', 3), r('SENT', 1), r('PENDING', 0), r('REMOTE_QUEUED', 1)] });
    expect(v.history.map((h) => h.status)).toEqual(['CREATED', 'PENDING', 'SENT', 'REMOTE_QUEUED', 'RECEIVED']);
    expect(v).toMatchObject({ status: 'RECEIVED', updatedAt: '2026-11-23T10:00:03.000Z' });
    expect(v.error).toBeUndefined();
  });

  it('a failure carries its error; reports that are not ones are left out', () => {
    const v = deliveryView(sent, {
      sent: 'whatever',
      reports: [r('SENT', 1), r('FAILED', 2, 'UNKNOWN_SUBSCRIBER'), 'not json', '{"status":1}', '[]'],
    });
    expect(v).toMatchObject({ status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER', updatedAt: '2026-11-23T10:00:02.000Z' });
    expect(v.history).toEqual([
      { status: 'CREATED', at: '2026-11-23T10:00:00.000Z' },
      { status: 'SENT', at: '2026-11-23T10:00:01.000Z' },
      { status: 'FAILED', at: '2026-11-23T10:00:02.000Z', error: 'UNKNOWN_SUBSCRIBER' },
    ]);
  });
});

describe('sentSms', () => {
  it('the sms effects that succeeded with a hash, in path order; failures and masked hashes left out', () => {
    const entry = (at: number, effects: PathEntry['effects']) => ({ at, effects }) as PathEntry;
    expect(
      sentSms([
        entry(1, [{ kind: 'sms', step: 'a', outcome: 'ok', value: 'AAAA0001', ms: 1 }]),
        entry(2, [
          { kind: 'http', step: 'h', outcome: 'ok', value: '200', ms: 1 },
          { kind: 'sms', step: 'b', outcome: 'TIMEOUT', ms: 1 },
        ]),
        entry(3, [
          { kind: 'sms', step: 'secret', outcome: 'ok', value: '***', ms: 1 },
          { kind: 'sms', step: 'c', outcome: 'ok', value: 'CCCC0003', ms: 1 },
        ]),
      ]),
    ).toEqual([
      { hash: 'AAAA0001', step: 'a', at: 1 },
      { hash: 'CCCC0003', step: 'c', at: 3 },
    ]);
  });
});
