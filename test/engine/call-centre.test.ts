/**
 * flows/call-centre.yaml through the engine, the queue's answers given by hand (its scenarios, on the tools' own
 * lines: flows/call-centre.test.yaml): the sales line's poll and announcements spoken with the say_* filters, hold
 * chunks, the ring with its whisper; support's literal list with a template, its cli, and the timeout's call-back
 * offer.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Effect, EffectResult } from '../../src/engine/outcome.js';
import { Call, OPTS, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const root = new URL('../..', import.meta.url).pathname;
const flow = () => yamlFlow(readFileSync(`${root}flows/call-centre.yaml`, 'utf8'), 'flows/call-centre.yaml');

type Answer = [kind: string, position: number, expectedWait: number, waited: number];

/** A call whose polls get `answers` in turn (the last one repeated); an agent is claimed on `ring`. */
function call(f: Awaited<ReturnType<typeof flow>>, answers: Answer[]): Call {
  const c = new Call(f, OPTS, { cli_number: '+447700900123' });
  let i = 0;
  c.effectResult = (e: Effect): EffectResult => {
    if (e.kind !== 'queue') return { ok: true, value: 'SMS00001' };
    if (e.op !== 'poll') return { ok: true, value: e.op === 'leave' ? 'left' : 'done' };
    const [kind, position, expected_wait, waited] = answers[Math.min(i++, answers.length - 1)]!;
    const agent = kind === 'ring' ? { agent: '+442079460302' } : {};
    const data = { result: kind, position, expected_wait, waited, agents: 3, free: 0, ...agent };
    return { ok: true, value: kind, data: data as never };
  };
  return c;
}

describe('flows/call-centre.yaml', () => {
  it('sales: announces place and expected wait at once, holds with music, announces again, rings', async () => {
    const c = call(await flow(), [
      ['wait', 3, 360, 0],
      ['wait', 2, 240, 30],
      ['wait', 2, 240, 65],
      ['ring', 1, 0, 70],
    ]);
    c.start();
    c.result('0');
    expect(c.result('1')).toBe(
      reply('play', 3, { media_id: tts('You are 3rd in line. Your expected wait is about 6 minutes.') }),
    );
    expect(c.effects[0]).toMatchObject({
      kind: 'queue',
      op: 'poll',
      params: {
        queue: 'sales',
        agents: ['+442079460201', '+442079460202', '+442079460203'],
        strategy: 'longest_idle',
        ring_time: 20,
        wrap_up: 30,
        max_wait: 600,
        handle_time: 240,
      },
    });
    expect(c.result('0')).toBe(reply('play', 4, { media_id: '3001' }));
    expect(c.result('0')).toBe(
      reply('play', 5, { media_id: tts('You are 2nd in line. Your expected wait is about 4 minutes.') }),
    );
    expect(c.result('0')).toBe(
      reply('dialout', 6, { targets: [{ number: '+442079460302', timeout: 20 }], whisper: tts('Sales call.') }),
    );
  });

  it('support: its list with the duty manager, the caller shown to the adviser, a call-back on timeout', async () => {
    const f = await flow();
    const rung = call(f, [['ring', 1, 0, 130]]);
    rung.start();
    rung.result('0');
    expect(rung.result('2')).toBe(
      reply('dialout', 3, {
        targets: [{ number: '+442079460302', timeout: 15 }],
        cli: '+447700900123',
        whisper: tts('Support call. The caller waited 2 minutes 10 seconds.'),
      }),
    );
    expect(rung.effects[0]).toMatchObject({
      params: {
        queue: 'support',
        agents: ['+442079460301', '+442079460302', '+442079460303', '+442079460299'],
        strategy: 'round_robin',
      },
    });
    const late = call(f, [['timeout', 0, 0, 901]]);
    late.start();
    late.result('0');
    expect(late.result('2')).toBe(reply('play', 3, { media_id: tts('Sorry, all our advisers are still busy.') }));
    expect(JSON.parse(late.result('0')).command).toBe('read');
  });
});
