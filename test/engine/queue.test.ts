/**
 * The queue step in the engine: its states (src/flow/machine-queue.ts) driven through advance with the store's
 * answers given by hand: the poll effect and its params, hold chunks looped, announcements every N seconds of
 * waiting (the first at once), the dialout to the agent claimed, NOANSWER back to waiting, timeout and empty
 * branches, the call ending while waiting (leave, then the hangup handler) and while bridged (done, then bridged).
 */
import { describe, expect, it } from 'vitest';
import { advance, type Outcome } from '../../src/engine/advance.js';
import type { CallState } from '../../src/engine/types.js';
import type { EffectResult } from '../../src/engine/outcome.js';
import { OPTS, reply, req, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const FLOW = `version: 2
name: line
start: wait_line
handlers:
  hangup: noted
steps:
  wait_line:
    queue:
      name: sales
      agents: ["+442079460001", "{{ vars.backup }}"]
      strategy: round_robin
      ring_time: 15
      wrap_up: 30
      max_wait: 600
      hold: ["Please hold.", { wait: 20 }]
      announce: { every: 60, say: "You are number {{ vars.place.position }} in line." }
      whisper: "A caller from sales."
    save: place
    on:
      bridged: survey
      timeout: { goto: sorry, say: "Nobody could take your call." }
      empty: closed
  sorry: { say: "Goodbye.", next: bye }
  closed: { say: "We are closed.", next: bye }
  bye: { hangup: {} }
  survey: { set: { outcome: served } }
  noted: { set: { outcome: left } }
vars: { backup: "+442079460002", outcome: "" }
`;

function effect(out: Outcome) {
  if (out.kind !== 'effect') throw new Error(`not an effect: ${JSON.stringify(out)}`);
  return out;
}
const stateOf = (o: Outcome) => (o as { state: CallState }).state;
const answer = (kind: string, extra: Record<string, unknown> = {}): EffectResult => ({
  ok: true,
  value: kind,
  data: { result: kind, position: 2, expected_wait: 360, waited: 0, agents: 2, free: 0, ...extra } as never,
});

describe('the queue step', () => {
  it('polls, announces at once, holds in turn, announces again after `every` s, and rings the agent', async () => {
    const f = await yamlFlow(FLOW);
    const poll = effect(advance(f, undefined, req(), OPTS));
    expect(poll.effect).toEqual({
      kind: 'queue',
      step: 'wait_line',
      callid: '1234567',
      op: 'poll',
      params: {
        queue: 'sales',
        op: 'poll',
        agents: ['+442079460001', '+442079460002'],
        strategy: 'round_robin',
        ring_time: 15,
        wrap_up: 30,
        max_wait: 600,
        handle_time: 180,
        max_talk: 7200,
      },
    });
    // the first wait: the announcement, with the answer saved in vars.place
    let out = poll.resume(answer('wait'));
    expect(out).toMatchObject({
      kind: 'reply',
      replyJson: reply('play', 1, { media_id: tts('You are number 2 in line.') }),
    });
    expect(stateOf(out).vars.place).toEqual({
      result: 'wait',
      position: 2,
      expected_wait: 360,
      waited: 0,
      agents: 2,
      free: 0,
    });
    // then hold chunks in turn, looped, until 60 s of waiting
    const chunks: string[] = [];
    let id = 1;
    let sent = 'play';
    for (const waited of [10, 30, 50]) {
      const p = effect(advance(f, stateOf(out), req({ command: sent, command_id: id, command_result: '0' }), OPTS));
      expect(p.effect.kind).toBe('queue');
      out = p.resume(answer('wait', { waited, position: 1 }));
      id++;
      sent = JSON.parse((out as { replyJson: string }).replyJson).command as string;
      chunks.push(sent);
      expect((out as { replyJson: string }).replyJson).toBe(
        chunks.length % 2 === 1
          ? reply('play', id, { media_id: tts('Please hold.') })
          : reply('wait', id, { wait: 20 }),
      );
    }
    expect(chunks).toEqual(['play', 'wait', 'play']);
    let p = effect(advance(f, stateOf(out), req({ command: sent, command_id: id, command_result: '0' }), OPTS));
    out = p.resume(answer('wait', { waited: 61, position: 1 }));
    id++;
    expect((out as { replyJson: string }).replyJson).toBe(
      reply('play', id, { media_id: tts('You are number 1 in line.') }),
    );
    // an agent is claimed: the dialout rings that one agent for ring_time, with the whisper
    p = effect(advance(f, stateOf(out), req({ command: 'play', command_id: id, command_result: '0' }), OPTS));
    out = p.resume(answer('ring', { agent: '+442079460002', waited: 70, position: 1, free: 1 }));
    id++;
    expect((out as { replyJson: string }).replyJson).toBe(
      reply('dialout', id, {
        targets: [{ number: '+442079460002', timeout: 15 }],
        whisper: tts('A caller from sales.'),
      }),
    );
    // NOANSWER: asked again (the store frees the agent)
    p = effect(advance(f, stateOf(out), req({ command: 'dialout', command_id: id, command_result: 'NOANSWER' }), OPTS));
    expect(p.effect).toMatchObject({ kind: 'queue', op: 'poll' });
    out = p.resume(answer('ring', { agent: '+442079460001', waited: 90 }));
    id++;
    expect(JSON.parse((out as { replyJson: string }).replyJson).params.targets).toEqual([
      { number: '+442079460001', timeout: 15 },
    ]);
    // bridged, then the call ends: done (wrap-up), then the bridged branch (logic only)
    const end = effect(
      advance(f, stateOf(out), req({ command: 'dialout', command_id: id, call_status: 'HANGUP' }), OPTS),
    );
    // waited: when the agent who answered was claimed (the wait histogram's `answered`)
    expect(end.effect).toMatchObject({
      kind: 'queue',
      op: 'done',
      params: { queue: 'sales', wrap_up: 30, agents: [], waited: 90 },
    });
    const fin = end.resume({ ok: true, value: 'done' });
    expect(fin).toMatchObject({ kind: 'reply', state: null });
    expect((fin as { summary: { vars: Record<string, unknown> } }).summary.vars.outcome).toBe('served');
  });

  it('leaves the line when the caller hangs up while waiting, then runs the hangup handler', async () => {
    const f = await yamlFlow(FLOW);
    const out = effect(advance(f, undefined, req(), OPTS)).resume(answer('wait'));
    const leave = effect(
      advance(f, stateOf(out), req({ command: 'play', command_id: 1, call_status: 'HANGUP' }), OPTS),
    );
    expect(leave.effect).toMatchObject({ kind: 'queue', op: 'leave', params: { queue: 'sales', waited: 0 } });
    const fin = leave.resume({ ok: true, value: 'left' });
    expect((fin as { summary: { vars: Record<string, unknown> } }).summary.vars.outcome).toBe('left');
  });

  it('takes timeout (with its say) and empty', async () => {
    const f = await yamlFlow(FLOW);
    let out = effect(advance(f, undefined, req(), OPTS)).resume(answer('timeout', { position: 0 }));
    expect((out as { replyJson: string }).replyJson).toBe(
      reply('play', 1, { media_id: tts('Nobody could take your call.') }),
    );
    out = effect(advance(f, undefined, req(), OPTS)).resume(answer('empty', { position: 0 }));
    expect((out as { replyJson: string }).replyJson).toBe(reply('play', 1, { media_id: tts('We are closed.') }));
  });

  it('a store that fails takes the error way (none here: the flow ends), logged', async () => {
    const f = await yamlFlow(FLOW);
    const out = effect(advance(f, undefined, req(), OPTS)).resume({ ok: false, error: 'UNAVAILABLE', message: 'down' });
    expect(out).toMatchObject({ kind: 'reply', reply: { command: 'hangup' } });
    expect((out as { log: { code?: string }[] }).log.map((l) => l.code)).toContain('EFFECT_FAILED');
  });
});

describe('the queue memo', () => {
  const AGAIN = FLOW.replace(
    'timeout: { goto: sorry, say: "Nobody could take your call." }',
    'timeout: { goto: wait_line, say: "Let us try again." }',
  ).replace('closed: { say: "We are closed.", next: bye }', 'closed: { say: "We are closed.", next: sorry }');

  it('is left behind with the step: a caller back in the line hears its place again at once', async () => {
    const f = await yamlFlow(AGAIN);
    let out = effect(advance(f, undefined, req(), OPTS)).resume(answer('wait'));
    expect((out as { replyJson: string }).replyJson).toBe(
      reply('play', 1, { media_id: tts('You are number 2 in line.') }),
    );
    expect(stateOf(out).q).toEqual({ t: 0, w: 0 });
    out = effect(advance(f, stateOf(out), req({ command: 'play', command_id: 1, command_result: '0' }), OPTS)).resume(
      answer('timeout', { position: 0, waited: 600 }),
    );
    expect((out as { replyJson: string }).replyJson).toBe(reply('play', 2, { media_id: tts('Let us try again.') }));
    expect(stateOf(out).q).toBeUndefined();
    out = effect(advance(f, stateOf(out), req({ command: 'play', command_id: 2, command_result: '0' }), OPTS)).resume(
      answer('wait', { position: 4 }),
    );
    expect((out as { replyJson: string }).replyJson).toBe(
      reply('play', 3, { media_id: tts('You are number 4 in line.') }),
    );
  });
});
