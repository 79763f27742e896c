/** src/engine/mask.ts and mask-call.ts: what a sensitive value shows, and nothing done for flows without one. */
import { describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../../src/engine/http-wait.js';
import {
  MASK,
  MAX_MASK_DEPTH,
  Masker,
  maskVars,
  secretForms,
  secretValues,
  sensitiveValues,
  sensitivityOf,
} from '../../src/engine/mask.js';
import { maskStepRecord, requestMasker, resultIsSensitive } from '../../src/engine/mask-call.js';
import { type StepRecord } from '../../src/engine/report.js';
import type { CallState } from '../../src/engine/types.js';
import type { RtRequest } from '../../src/protocol/rt.js';

const on = { exact: {}, patterns: [] };
const steps = {
  pin: { kind: 'command', id: 'pin', save: 'pin', on, command: { name: 'read' } },
  text: { kind: 'command', id: 'text', save: 'code_hash', on, command: { name: 'sms' } },
  menu: { kind: 'command', id: 'menu', save: 'choice', on, command: { name: 'read' } },
} as never;

describe('mask', () => {
  it('no sensitive values: undefined, and every function gives back its input (no copy)', () => {
    expect(sensitivityOf({ steps })).toBeUndefined();
    expect(sensitivityOf({ sensitive: [], steps })).toBeUndefined();
    const vars = { a: 1 };
    expect(maskVars(vars, undefined)).toBe(vars);
    const m = new Masker([]);
    const v = { x: ['1234'] };
    expect(m.empty).toBe(true);
    expect(m.scrubValue(v)).toBe(v);
  });

  it('masks the keys present, and names the steps whose save is sensitive', () => {
    const s = sensitivityOf({ sensitive: ['pin', 'code_hash', 'never_set'], steps })!;
    expect([...s.steps]).toEqual(['pin', 'text']);
    const vars = { pin: '4821', choice: '1' };
    expect(maskVars(vars, s)).toEqual({ pin: MASK, choice: '1' });
    expect(vars.pin).toBe('4821'); // a copy
    expect([...sensitiveValues({ pin: { a: ['4821', 7] }, choice: 'x' }, s)]).toEqual(['4821', '7']);
  });

  it('scrubs whole values of any length, and values of 3 characters or more inside text; keys never', () => {
    const m = new Masker(['4821', '12', '4821999']);
    expect(m.scrubText('12')).toBe(MASK);
    expect(m.scrubText('call 12 of 4821999 and 4821')).toBe('call 12 of *** and ***');
    expect(m.scrubValue({ '4821': ['4821', 4821, 12, 'x'] })).toEqual({ '4821': [MASK, MASK, MASK, 'x'] });
  });

  it('the exchange as recorded: the sensitive result, the sms and its outcome, the reply params', () => {
    const s = sensitivityOf({ sensitive: ['pin', 'code_hash'], steps })!;
    const prior = { s: 'pin', step: 'pin', vars: {} } as unknown as CallState;
    const req = { callid: '1', command: 'read', command_result: '4821', command_error: '' } as RtRequest;
    expect(resultIsSensitive(s, prior)).toBe(true);
    expect(resultIsSensitive(s, { s: 'pin@say', step: 'pin' })).toBe(false);
    const m = requestMasker(s, req, prior, [{ pin: '4821' }]);
    const rec = {
      request: req,
      flow: { name: 'f', version: 'v' },
      now: 0,
      effects: [
        {
          effect: { kind: 'sms', step: 'text', callid: '1', params: { to: '+33612345678', body: 'PIN 4821' } },
          result: { ok: true, value: 'SMS42' },
        },
      ],
      reply: { command: 'play', command_id: 2, params: { media_id: 'TTS|X|You typed 4821' }, variablesRaw: '{}' },
      ended: false,
    } as StepRecord;
    const out = maskStepRecord(rec, s, prior, m);
    expect(out.request.command_result).toBe(MASK);
    expect(out.effects[0]).toEqual({
      effect: { kind: 'sms', step: 'text', callid: '1', params: { to: '+33612345678', body: 'PIN ***' } },
      result: { ok: true, value: MASK },
    });
    expect(out.reply.params).toEqual({ media_id: 'TTS|X|You typed ***' });
    expect(rec.request.command_result).toBe('4821'); // the engine's own record is untouched
  });

  it("a lookup's answer as deep as it may be is walked whole; anything deeper is masked whole", () => {
    /** `secret` at the bottom of `levels` arrays inside one another. */
    const nested = (levels: number, secret: string): unknown => {
      let v: unknown = [secret];
      for (let i = 1; i < levels; i++) v = [v];
      return v;
    };
    const deepest = (v: unknown): unknown => {
      while (Array.isArray(v)) v = v[0];
      return v;
    };
    const s = sensitivityOf({ sensitive: ['acct'], steps })!;
    const saved = { status: 200, body: nested(MAX_BODY_DEPTH, '99887766') };
    expect([...sensitiveValues({ acct: saved }, s)]).toEqual(['200', '99887766']);
    const m = new Masker(['99887766']);
    const result = m.scrubValue({ ok: true, value: '200', data: saved });
    expect(deepest(result.data.body)).toBe(MASK);
    // a value nested deeper than any answer (a flow's sets): masked whole past the walk, no stack overflow
    const built = m.scrubValue({ x: nested(10_000, 'harmless') }) as { x: unknown };
    let v: unknown = built.x;
    for (let i = 1; i < MAX_MASK_DEPTH; i++) v = (v as unknown[])[0];
    expect(v).toBe(MASK);
  });
});

describe('secrets', () => {
  it('each secret in the forms a URL gives it: as written, lower-cased (a host), percent-encoded, punycode', () => {
    expect(secretForms('Tk-Live/7F a')).toEqual([
      'Tk-Live/7F a',
      'tk-live/7f a',
      'Tk-Live%2F7F%20a',
      'tk-live%2f7f%20a',
      'Tk-Live%2F7F+a',
      'tk-live%2f7f+a',
      'Tk-Live/7F%20a',
      'tk-live/7f%20a',
    ]);
    expect(secretForms('café')).toContain('xn--caf-dma');
    const read = (n: string) => ({ A: 'Tk-Live-7F', B: '', C: MASK })[n];
    expect([...secretValues(['A', 'B', 'C', 'D'], read)]).toEqual(['Tk-Live-7F', 'tk-live-7f']);
    expect(new Masker(secretValues(['A'], read)).scrubText('the host tk-live-7f.api.example.net')).toBe(
      'the host ***.api.example.net',
    );
  });
});
