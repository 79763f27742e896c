/** The step report (src/engine/report.ts): the observers' event by answer kind, and what recordings keep. */
import { describe, expect, it } from 'vitest';
import type { StepAnswer } from '../../../src/engine/answer.js';
import { recordable, StepReport, type StepOutcome } from '../../../src/engine/report.js';
import { menu, req } from '../helpers.js';

const f = menu();
const handling = { late: false, at: 1000, ms: 2 };

function outcome(answer: StepAnswer, extra: Partial<StepOutcome> = {}): StepOutcome {
  return { answer, req: req(), isNew: false, effects: [], transitions: [], now: 1000, ...extra };
}

describe('StepReport.event', () => {
  it('counts each kind of answer as the metrics name it', () => {
    const r = new StepReport({});
    const cases: [StepAnswer, string][] = [
      [{ kind: 'answered', body: '{}' }, 'ok'],
      [{ kind: 'not_found', code: 'NO_ROUTE', message: '' }, 'no_route'],
      [{ kind: 'not_found', code: 'UNKNOWN_FLOW', message: '' }, 'no_route'],
      [{ kind: 'not_found', code: 'UNKNOWN_CALL', message: '' }, 'rejected'],
      [{ kind: 'stale', code: 'STALE_REQUEST', message: '' }, 'stale'],
      [{ kind: 'unavailable', code: 'CALL_LIMIT', message: '' }, 'call_limit'],
      [{ kind: 'unavailable', code: 'STORE_UNAVAILABLE', message: '' }, 'store_unavailable'],
      [{ kind: 'failed', code: 'FLOW_VERSION_GONE', message: '' }, 'error'],
    ];
    for (const [answer, name] of cases) {
      const e = r.event(req(), outcome(answer, { flow: f }), handling);
      expect([e.outcome, e.answer, e.code]).toEqual([
        name,
        answer.kind,
        answer.kind === 'answered' ? undefined : answer.code,
      ]);
      expect([e.flow, e.version]).toEqual([f.name, f.version]);
    }
    // a step whose work threw: failed INTERNAL, nothing known of the call
    const e = r.event(req({ callid: '77' }), undefined, { ...handling, late: true });
    expect(e).toMatchObject({
      callid: '77',
      outcome: 'error',
      answer: 'failed',
      code: 'INTERNAL',
      late: true,
      isNew: false,
    });
    expect(e.flow).toBeUndefined();
    // a replay is answered too, counted apart
    const replay = r.event(
      req(),
      outcome({ kind: 'answered', body: '{}' }, { settled: { kind: 'replay', replyJson: '{}' } }),
      handling,
    );
    expect(replay.outcome).toBe('replay');
  });
});

describe('recordable', () => {
  it("keeps an http lookup's method, URL, headers and body, with the flow's secrets masked (also URL-encoded)", () => {
    const e = recordable(
      {
        kind: 'http',
        step: 'balance',
        callid: '1',
        filler: false,
        wait: false,
        params: {
          method: 'POST',
          url: 'https://bank.example/v1/balance?token=s%2Fcr%3Dt&account=12',
          headers: { authorization: 'Bearer s/cr=t', accept: 'application/json' },
          body: '{"key":"s/cr=t","account":"12"}',
          timeout_ms: 3000,
          retries: 1,
        },
      },
      ['TOKEN'],
      (n) => (n === 'TOKEN' ? 's/cr=t' : undefined),
    );
    expect(e.params).toEqual({
      method: 'POST',
      url: 'https://bank.example/v1/balance?token=***&account=12',
      headers: { authorization: 'Bearer ***', accept: 'application/json' },
      body: '{"key":"***","account":"12"}',
    });
  });

  it('keeps an SMS as it is', () => {
    const sms = { kind: 'sms' as const, step: 's', callid: '1', params: { to: '+33612345678', body: 'hi' } };
    expect(recordable(sms, ['TOKEN'], () => 'x')).toBe(sms);
  });
});
