/**
 * The sms step: checked like a command, run as an effect. The engine suspends with the
 * rendered message; the server performs it and resumes with the hash or an error kind.
 */
import { describe, expect, it } from 'vitest';
import { advance, type Outcome } from '../../src/engine/advance.js';
import type { CallState } from '../../src/engine/types.js';
import { checkFlow } from '../../src/flow/check.js';
import { OPTS, reply, req, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const FLOW = `version: 1
name: confirm
start: record_it
vars: { name: Ada }
handlers:
  hangup: missed
steps:
  record_it:
    record: { max_duration: 60, silence: 3 }
    save: message
    next: confirm
  confirm:
    sms:
      to: "{{ call.caller }}"
      from: Acme
      body: "Thanks {{ vars.name }}, we got your message. Reply STOP to %STOPNUM%."
      nature: ALERTING
    save: sms_hash
    on:
      error: { goto: bye, say: "We could not send the confirmation." }
    next: thanks
  thanks: { say: "A confirmation is on its way.", next: bye }
  bye: { hangup: {} }
  missed:
    sms: { to: "{{ call.caller }}", body: "Sorry we missed you." }
`;

function effect(out: Outcome) {
  expect(out.kind).toBe('effect');
  if (out.kind !== 'effect') throw new Error('not an effect');
  return out;
}

describe('the sms step', () => {
  it('suspends with the rendered message, then saves the hash and goes on', async () => {
    const f = await yamlFlow(FLOW);
    const first = advance(f, undefined, req(), OPTS);
    expect(first).toMatchObject({ kind: 'reply', replyJson: reply('record', 1, { max_duration: 60, silence: 3 }) });
    const state = (first as { state: CallState }).state;
    const out = effect(
      advance(f, state, req({ command: 'record', command_id: 1, command_result: 'rec-42.wav' }), OPTS),
    );
    expect(out.effect).toEqual({
      kind: 'sms',
      callid: '1234567', // the call it is sent for (the emulator ties the SMS to its transcript)
      step: 'confirm',
      params: {
        to: '+33612345678',
        body: 'Thanks Ada, we got your message. Reply STOP to %STOPNUM%.',
        from: 'Acme',
        nature: 'ALERTING',
      },
    });
    const done = out.resume({ ok: true, value: '8242D945' });
    expect(done).toMatchObject({
      kind: 'reply',
      replyJson: reply('play', 2, { media_id: tts('A confirmation is on its way.') }),
    });
    expect((done as { state: CallState }).state.vars).toEqual({
      name: 'Ada',
      message: 'rec-42.wav',
      sms_hash: '8242D945',
    });
    expect(() => out.resume({ ok: true, value: 'again' })).toThrow(/resumed twice/);
  });

  it('takes the error branch on failure, with the error kind in `error`, and logs EFFECT_FAILED', async () => {
    const f = await yamlFlow(FLOW);
    const state = (advance(f, undefined, req(), OPTS) as { state: CallState }).state;
    const out = effect(advance(f, state, req({ command: 'record', command_id: 1, command_result: 'rec.wav' }), OPTS));
    const done = out.resume({ ok: false, error: 'REJECTED', message: '400 invalid number' });
    expect(done).toMatchObject({
      kind: 'reply',
      replyJson: reply('play', 2, { media_id: tts('We could not send the confirmation.') }),
    });
    if (done.kind !== 'reply') return;
    expect(done.state?.vars.sms_hash).toBeUndefined();
    expect(done.log).toEqual([
      {
        level: 'warn',
        code: 'EFFECT_FAILED',
        msg: 'sms at confirm failed: REJECTED (400 invalid number)',
        step: 'confirm',
      },
    ]);
  });

  it('runs in the hangup handler: the call ends, the SMS still goes', async () => {
    const f = await yamlFlow(FLOW);
    const state = (advance(f, undefined, req(), OPTS) as { state: CallState }).state;
    const out = effect(advance(f, state, req({ command: 'record', command_id: 1, call_status: 'HANGUP' }), OPTS));
    expect(out.effect).toEqual({
      kind: 'sms',
      step: 'missed',
      callid: '1234567',
      params: { to: '+33612345678', body: 'Sorry we missed you.' },
    });
    expect(out.resume({ ok: true, value: 'ABCD1234' })).toMatchObject({
      kind: 'reply',
      replyJson: reply('hangup', 2),
      state: null,
      summary: { status: 'HANGUP' },
    });
  });

  it('an invalid rendered number never reaches the effect: the error branch with INVALID_PARAM', async () => {
    const f = await yamlFlow(FLOW);
    const state = (advance(f, undefined, req({ cli_number: '' }), OPTS) as { state: CallState }).state;
    const out = advance(
      f,
      state,
      req({ cli_number: '', command: 'record', command_id: 1, command_result: 'rec.wav' }),
      OPTS,
    );
    expect(out).toMatchObject({
      kind: 'reply',
      replyJson: reply('play', 2, { media_id: tts('We could not send the confirmation.') }),
    });
  });
});

describe('checking sms steps', () => {
  const diag = (steps: string) =>
    checkFlow(`version: 1\nstart: s\nsteps:\n  s:\n${steps}\n  end: { hangup: {} }\n`, 'f.yaml').diagnostics.map(
      (d) => `${d.line}:${d.column} ${d.code}`,
    );
  it('needs to and body, checks formats, bounds and unknown keys', () => {
    expect(diag('    sms: { body: "hi" }\n    next: end')).toEqual(['5:5 MISSING_KEY']);
    expect(diag('    sms: { to: "+33612345678" }\n    next: end')).toEqual(['5:5 MISSING_KEY']);
    expect(diag('    sms: { to: "0612345678", body: "hi" }\n    next: end')).toEqual(['5:16 BAD_FORMAT']);
    expect(diag('    sms: { to: "+33612345678", body: "hi", from: "12345" }\n    next: end')).toEqual([
      '5:50 BAD_FORMAT',
    ]);
    expect(diag('    sms: { to: "+33612345678", body: "hi", nature: URGENT }\n    next: end')).toEqual([
      '5:52 BAD_ENUM',
    ]);
    expect(diag('    sms: { to: "+33612345678", body: "hi", colour: red }\n    next: end')).toEqual([
      '5:44 UNKNOWN_KEY',
    ]);
    expect(diag('    sms: { to: "{{ call.caller }}", body: "hi {{ vars.x | nofilter }}" }\n    next: end')).toEqual([
      '5:59 BAD_TEMPLATE',
    ]); // at the filter's name
    expect(diag('    sms: { to: "+33612345678", body: "hi" }\n    on: { "0": end }\n    next: end')).toEqual([
      '6:11 IMPOSSIBLE_RESULT',
    ]);
    expect(diag('    sms: { to: "+33612345678", body: "hi", webhook: "ftp://x" }\n    next: end')).toEqual([
      '5:53 BAD_FORMAT',
    ]);
    expect(
      diag('    sms: { to: "+33612345678", body: "hi" }\n    save: hash\n    on: { error: end }\n    next: end'),
    ).toEqual([]);
  });
  it('is allowed in the hangup handler, unlike call commands', () => {
    const text =
      `version: 1\nstart: a\nhandlers: { hangup: h }\nsteps:\n  a: { hangup: {} }\n  h: { sms: { to: ` +
      `"+33612345678", body: "bye" } }\n`;
    expect(checkFlow(text, 'f.yaml').diagnostics).toEqual([]);
  });
});
