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

describe('subflow: handlers, version 1, a module entered from two call sites', () => {
  it("the module's handlers apply inside it only; the caller's outside it", () => {
    const mod =
      `version: 2\nname: ask\nmodule: { results: [done] }\nhandlers:\n  on:\n    read: { "0": help }\nstart: ` +
      `a\nsteps:\n  a:\n    read: { prompt: "Module?", max_digits: 1 }\n    next: b\n  help: { say: "Module ` +
      `help.", next: a }\n  b: { return: done }\n`;
    const caller =
      `version: 2\nname: caller\nhandlers:\n  on:\n    read: { "0": op }\nstart: m\nsteps:\n  m:\n    read: { ` +
      `prompt: "Caller?", max_digits: 1 }\n    next: s\n  s:\n    subflow: { flow: ask }\n    next: m\n  op: { ` +
      `say: "Operator.", next: z }\n  z: { hangup: {} }\n`;
    const { flows, diagnostics } = load({ 'ask.yaml': mod, 'caller.yaml': caller });
    expect(diagnostics).toEqual([]);
    const call = new Call(flows.get('caller')!);
    call.start();
    expect(call.result('5')).toBe(reply('read', 2, { media_id: tts('Module?'), max_digits: 1 }));
    expect(call.result('0')).toBe(reply('play', 3, { media_id: tts('Module help.') }));
    expect(call.result('0')).toBe(reply('read', 4, { media_id: tts('Module?'), max_digits: 1 }));
    expect(call.result('7')).toBe(reply('read', 5, { media_id: tts('Caller?'), max_digits: 1 }));
    expect(call.result('0')).toBe(reply('play', 6, { media_id: tts('Operator.') }));
  });

  it('a version 1 file: NEEDS_VERSION_2 once per construct', () => {
    const { diagnostics } = load({
      'v1.yaml':
        'version: 1\nmodule: { results: [done] }\nstart: v\nsteps:\n  v:\n    subflow: { flow: a }\n    ' +
        'next: w\n  w:\n    subflow: { flow: a }\n    next: z\n  z: { return: done }\n',
    });
    expect(
      diagnostics.filter((d) => d.code === 'NEEDS_VERSION_2').map((d) => `${d.line}:${d.column} ${d.message}`),
    ).toEqual([
      '2:1 module: is part of version 2 of the language; this file declares version: 1',
      '6:5 subflow is part of version 2 of the language; this file declares version: 1',
      '11:8 return is part of version 2 of the language; this file declares version: 1',
    ]);
  });

  it('one module entered from two call sites returns to the right one, each with its own saves', () => {
    const mod =
      `version: 2\nname: get\nmodule: { params: { what: required }, results: [ok], returns: [value] }\nstart: ` +
      `a\nsteps:\n  a:\n    read: { prompt: "Your {{ vars.what }}?", max_digits: 3 }\n    save: got\n    next: ` +
      `b\n  b: { return: { result: ok, values: { value: "{{ vars.got }}" } } }\n`;
    const caller =
      `version: 2\nname: form\nstart: one\nsteps:\n  one:\n    subflow: { flow: get, with: { what: age } }\n   ` +
      ` save: { age: value }\n    on: { ok: two }\n  two:\n    subflow: { flow: get, with: { what: floor } }\n ` +
      `   save: { floor: value }\n    on: { ok: done }\n  done: { say: "Age {{ vars.age }}, floor {{ ` +
      `vars.floor }}.", next: z }\n  z: { hangup: {} }\n`;
    const { flows, diagnostics } = load({ 'get.yaml': mod, 'form.yaml': caller });
    expect(diagnostics).toEqual([]);
    const f = flows.get('form')!;
    expect(Object.keys(f.config.states).filter((s) => s.startsWith('get:'))).toEqual(['get:a', 'get:b']);
    const call = new Call(f);
    expect(call.start()).toBe(reply('read', 1, { media_id: tts('Your age?'), max_digits: 3 }));
    expect(call.result('42')).toBe(reply('read', 2, { media_id: tts('Your floor?'), max_digits: 3 }));
    expect(call.state!.f).toEqual([{ s: 'two', v: { age: '42' } }]);
    expect(call.result('3')).toBe(reply('play', 3, { media_id: tts('Age 42, floor 3.') }));
  });
});

describe('subflow: the per-file graph checks', () => {
  it(
    'a loop through a subflow is no eventless loop (the module ' + 'reads); a hangup handler may not enter a module',
    () => {
      const mod =
        `version: 2\nname: get\nmodule: { results: [again, done] }\nstart: a\nsteps:\n  a:\n    read: { prompt: ` +
        `"1 again, 2 done", max_digits: 1 }\n    on: { "1": x, "2": y }\n    next: y\n  x: { return: again }\n  ` +
        `y: { return: done }\n`;
      const caller =
        `version: 2\nname: loop\nhandlers: { hangup: h }\nstart: s\nsteps:\n  s:\n    subflow: { flow: get }\n   ` +
        ` on: { again: s, done: z }\n  z: { hangup: {} }\n  h:\n    subflow: { flow: get }\n    next: z\n`;
      const { flows, diagnostics } = load({ 'get.yaml': mod, 'loop.yaml': caller });
      expect(diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`)).toEqual([
        'loop.yaml:3:21 HANDLER_COMMAND',
      ]);
      const ok = load({
        'get.yaml': mod,
        'loop.yaml': caller.replace('handlers: { hangup: h }\n', '').replace(/ {2}h:\n.*\n.*\n$/, ''),
      });
      expect(ok.diagnostics).toEqual([]);
      const call = new Call(ok.flows.get('loop')!);
      call.start();
      expect(call.result('1')).toBe(reply('read', 2, { media_id: tts('1 again, 2 done'), max_digits: 1 }));
      expect(call.result('2')).toBe(reply('hangup', 3));
      expect(flows.size).toBe(0);
    },
  );
});
