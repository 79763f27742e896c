import { describe, expect, it } from 'vitest';
import { Call, reply, tts } from '../engine/helpers.js';
import { load, MAIN, PIN_CHECK } from './helpers.js';

describe('subflow: one call through a module', () => {
  const { flows, diagnostics } = load({ 'main.yaml': MAIN, 'pin-check.yaml': PIN_CHECK });

  it('links with no diagnostic', () => {
    expect(diagnostics).toEqual([]);
    expect([...flows.keys()]).toEqual(['main']);
  });

  it('enters the module with its params, returns a value into the caller', () => {
    const call = new Call(flows.get('main')!);
    expect(call.start()).toBe(reply('read', 1, { media_id: tts('Enter the PIN of account 12345678.'), max_digits: 4 }));
    expect(call.state!.s).toBe('pin-check:ask');
    expect(call.state!.vars).toEqual({ holder_name: 'Ann', tries: 3, account: '12345678' });
    expect(call.state!.f).toEqual([{ s: 'verify', v: { account: '12345678' } }]);
    expect(call.result('1234')).toBe(reply('play', 2, { media_id: tts('Hello Ann, account 12345678.') }));
    expect(call.state!.vars).toEqual({ account: '12345678', holder_name: 'Ann' });
    expect(call.state!.f).toBeUndefined();
  });

  it('a result without values: the retries, then locked', () => {
    const call = new Call(flows.get('main')!);
    call.start();
    call.result('1111');
    call.result('1111');
    expect(call.result('1111')).toBe(reply('hangup', 4));
    expect(call.state!.vars).toEqual({ account: '12345678' });
  });
});
