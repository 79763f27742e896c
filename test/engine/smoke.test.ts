import { describe, expect, it } from 'vitest';
import { Call, cmd, flow, hangup, reply, say, tts } from './helpers.js';

describe('smoke', () => {
  it('runs', () => {
    const f = flow({
      steps: {
        welcome: say('Welcome.', 'menu'),
        menu: cmd('read', { media_id: ['Press 1.', 'Please press 1.'], max_digits: 1 }, { on: { '1': 'bye', TIMEOUT: { retry: 2, then: 'bye' }, default: { retry: 2, say: 'Sorry.', then: 'bye' } } }),
        bye: say('Bye.', 'end'),
        end: hangup(),
      },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Welcome.') }));
    expect(c.result('0')).toBe(reply('read', 2, { media_id: tts('Press 1.'), max_digits: 1 }));
    expect(c.result('TIMEOUT')).toBe(reply('read', 3, { media_id: tts('Please press 1.'), max_digits: 1 }));
    expect(c.result('5')).toBe(reply('play', 4, { media_id: tts('Sorry.') }));
    expect(c.result('0')).toBe(reply('read', 5, { media_id: tts('Please press 1.'), max_digits: 1 }));
    expect(c.result('1')).toBe(reply('play', 6, { media_id: tts('Bye.') }));
    expect(c.result('0')).toBe(reply('hangup', 7));
    console.log(c.state, JSON.stringify(c.state).length);
  });
});
