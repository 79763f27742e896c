/** `callscript trace` shows the SMS a call sent and their delivery status (docs/webhooks.md): exact text. */
import { describe, expect, it } from 'vitest';
import { smsLines, traceText, type CallDetail } from '../../src/cli/calls-format.js';

const call: CallDetail = {
  callid: '4242',
  status: 'finished',
  flow: 'voicemail',
  version: '3f1a98db6b15',
  started: '2026-11-23T10:00:00.000Z',
  commands: 2,
  vars: {},
  path: [
    {
      at: Date.parse('2026-11-23T10:00:00.000Z'),
      ms: 3,
      from: null,
      command: '',
      result: '',
      error: '',
      step: 'goodbye',
      reply: { command: 'play', params: {} },
      transitions: [],
      effects: [{ kind: 'sms', step: 'send_confirmation', outcome: 'ok', value: '8242D945', ms: 12 }],
      late: false,
      outcome: 'ok',
    },
  ],
  ended: '2026-11-23T10:00:05.000Z',
  durationMs: 5000,
  outcome: 'completed',
  callStatus: 'HANGUP',
  lastStep: 'end',
};

describe('trace: sms', () => {
  it('each SMS: hash, step, status (with its error), when, the statuses it went through', () => {
    const sms = [
      {
        hash: '8242D945',
        step: 'send_confirmation',
        status: 'RECEIVED',
        updatedAt: '2026-11-23T10:00:03.000Z',
        history: [
          { status: 'CREATED', at: '2026-11-23T10:00:00.000Z' },
          { status: 'PENDING', at: '2026-11-23T10:00:00.000Z' },
          { status: 'SENT', at: '2026-11-23T10:00:01.000Z' },
          { status: 'RECEIVED', at: '2026-11-23T10:00:03.000Z' },
        ],
      },
      {
        hash: 'AB12CD34',
        step: 'text_owner',
        status: 'FAILED',
        error: 'UNKNOWN_SUBSCRIBER',
        updatedAt: '2026-11-23T10:00:02.000Z',
        history: [
          { status: 'CREATED', at: '2026-11-23T10:00:00.000Z' },
          { status: 'FAILED', at: '2026-11-23T10:00:02.000Z', error: 'UNKNOWN_SUBSCRIBER' },
        ],
      },
    ];
    expect(smsLines(sms)).toEqual([
      'sms sent (delivery status)',
      '  8242D945  at send_confirmation  RECEIVED  2026-11-23 10:00:03 UTC  CREATED → PENDING → SENT → RECEIVED',
      '  AB12CD34  at text_owner  FAILED (UNKNOWN_SUBSCRIBER)  2026-11-23 10:00:02 UTC  CREATED → FAILED',
    ]);
    expect(
      traceText({ ...call, sms })
        .split('\n')
        .slice(-4),
    ).toEqual(['', ...smsLines(sms)]);
  });

  it('no report yet: says where to look; no sms field (an older server) or none sent: no section', () => {
    const created = [
      {
        hash: '8242D945',
        step: 'send_confirmation',
        status: 'CREATED',
        updatedAt: '2026-11-23T10:00:00.000Z',
        history: [{ status: 'CREATED', at: '2026-11-23T10:00:00.000Z' }],
      },
    ];
    expect(smsLines(created)).toEqual([
      'sms sent (delivery status: no report received yet, see docs/webhooks.md)',
      '  8242D945  at send_confirmation  CREATED  2026-11-23 10:00:00 UTC',
    ]);
    expect(traceText(call)).not.toContain('sms sent');
    expect(traceText({ ...call, sms: [] })).not.toContain('sms sent');
  });
});
