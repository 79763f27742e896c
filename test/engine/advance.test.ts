import { describe, expect, it } from 'vitest';
import { advance } from '../../src/engine/advance.js';
import type { CallState } from '../../src/engine/types.js';
import { Call, OPTS, cmd, flow, hangup, reply, req, say, set, sw, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const menuFlow = () =>
  flow({
    vars: { tries: 0 },
    handlers: { on: { read: { '0': 'operator' } } },
    steps: {
      welcome: say('Welcome to Acme.', 'menu'),
      menu: cmd(
        'read',
        {
          media_id: ['For sales press 1, for support press 2.', 'Please press 1 or 2.'],
          max_digits: 1,
          timeout_ms: 5000,
        },
        {
          save: 'choice',
          on: {
            '1': 'sales',
            '2': 'support',
            TIMEOUT: { retry: 2, then: 'goodbye' },
            default: { retry: 2, say: ['Sorry, that is not a choice.', 'Still not a choice.'], then: 'goodbye' },
          },
        },
      ),
      sales: say('Sales, you chose {{ vars.choice }}.', 'end'),
      support: say('Support.', 'end'),
      operator: cmd(
        'dialout',
        { targets: [{ number: '+33123456789', timeout: 30 }], ringtone: 'MUSIC' },
        { on: { NOANSWER: 'goodbye' } },
      ),
      goodbye: say('Goodbye.', 'end'),
      end: hangup(),
    },
  });

const READ = (prompt: string, id: number) =>
  reply('read', id, { media_id: tts(prompt), max_digits: 1, timeout_ms: 5000 });
const P1 = 'For sales press 1, for support press 2.';
const P2 = 'Please press 1 or 2.';

describe('advance: a call step by step', () => {
  it('answers the first request with the start step, command_id 1', () => {
    const c = new Call(menuFlow());
    expect(c.start()).toBe(
      '{"command":"play","command_id":1,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Welcome to Acme."},"variables":{}}',
    );
    expect(c.state).toMatchObject({
      v: 2,
      flow: 'test',
      s: 'welcome',
      step: 'welcome',
      commandId: 1,
      commands: 1,
      vars: { tries: 0 },
    });
    expect(c.state!.reply + '{}}').toBe(c.last!.kind === 'reply' ? c.last!.replyJson : '');
  });

  it('branches on digits, saves the result and renders it later', () => {
    const c = new Call(menuFlow());
    c.start();
    expect(c.result('0')).toBe(READ(P1, 2));
    expect(c.result('1')).toBe(reply('play', 3, { media_id: tts('Sales, you chose 1.') }));
    expect(c.state!.vars).toEqual({ tries: 0, choice: '1' });
    expect(c.result('0')).toBe(reply('hangup', 4));
    expect(c.state!.done).toBe(true);
  });

  it('retries TIMEOUT with escalating prompts (1st, 2nd, last again), then goes to `then`', () => {
    const c = new Call(menuFlow());
    c.start();
    expect(c.result('0')).toBe(READ(P1, 2));
    expect(c.result('TIMEOUT')).toBe(READ(P2, 3));
    expect(c.state!.c).toEqual({ n: 2, r: { TIMEOUT: 1 } });
    expect(c.result('TIMEOUT')).toBe(READ(P2, 4));
    expect(c.state!.c).toEqual({ n: 3, r: { TIMEOUT: 2 } });
    expect(c.result('TIMEOUT')).toBe(reply('play', 5, { media_id: tts('Goodbye.') }));
    expect(c.state!.c).toBeUndefined();
  });

  it('plays a default branch `say:` first, then retries; say escalates per key, counters per key', () => {
    const c = new Call(menuFlow());
    c.start();
    c.result('0');
    expect(c.result('TIMEOUT')).toBe(READ(P2, 3)); // visit 2
    expect(c.result('7')).toBe(reply('play', 4, { media_id: tts('Sorry, that is not a choice.') })); // 1st nomatch
    expect(c.state).toMatchObject({
      s: 'menu@say',
      step: 'menu',
      res: '7',
      c: { n: 3, r: { TIMEOUT: 1, default: 1 } },
    });
    expect(c.result('0')).toBe(READ(P2, 5)); // whatever the play returned: back to the menu, visit 3
    expect(c.result('8')).toBe(reply('play', 6, { media_id: tts('Still not a choice.') }));
    expect(c.result('1', { command_error: '' })).toBe(READ(P2, 7)); // visit 4: last prompt again
    // retries used up: say, then `then`
    expect(c.result('9')).toBe(reply('play', 8, { media_id: tts('Still not a choice.') }));
    expect(c.state).toMatchObject({ s: 'goodbye@say', res: '9', k: 3 });
    expect(c.state!.c).toBeUndefined();
    expect(c.result('0')).toBe(reply('play', 9, { media_id: tts('Goodbye.') }));
  });

  it('continues after a say play even when the play fails', () => {
    const c = new Call(menuFlow());
    c.start();
    c.result('0');
    c.result('5');
    expect(c.error('MEDIA_ERROR')).toBe(READ(P2, 4));
  });

  it('a re-entry with goto resets the counters', () => {
    const f = flow({
      steps: {
        ask: cmd(
          'read',
          { media_id: ['A', 'B'], max_digits: 1 },
          { on: { TIMEOUT: { retry: 3, then: 'end' }, '5': 'ask', default: 'end' } },
        ),
        end: hangup(),
      },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('read', 1, { media_id: tts('A'), max_digits: 1 }));
    expect(c.result('TIMEOUT')).toBe(reply('read', 2, { media_id: tts('B'), max_digits: 1 }));
    expect(c.result('5')).toBe(reply('read', 3, { media_id: tts('A'), max_digits: 1 }));
    expect(c.state!.c).toBeUndefined();
  });
});

describe('advance: flow-wide result handlers', () => {
  it('applies handlers.on.read "0" on every read', () => {
    const c = new Call(menuFlow());
    c.start();
    c.result('0'); // the play's result, not a read
    expect(c.result('0')).toBe(
      reply('dialout', 3, { targets: [{ number: '+33123456789', timeout: 30 }], ringtone: 'MUSIC' }),
    );
  });

  const handlerFlow = () =>
    flow({
      handlers: { on: { read: { '0': 'operator', '/^9+$/': 'nines' } } },
      steps: {
        a: cmd('read', { media_id: ['A'] }, { on: { '1': 'b', default: 'end' } }),
        b: cmd('read', { media_id: ['B'] }, { on: { '0': 'own', default: 'end' } }),
        c: cmd('read', { media_id: ['C'] }, { on: { default: 'end' }, handlers: false }),
        own: say('Own zero.', 'c'),
        operator: say('Operator.', 'end'),
        nines: say('Nines.', 'end'),
        end: hangup(),
      },
    });

  it('handler keys come before the step default; patterns too', () => {
    const c = new Call(handlerFlow());
    c.start();
    expect(c.result('0')).toBe(reply('play', 2, { media_id: tts('Operator.') }));
    const d = new Call(handlerFlow());
    d.start();
    expect(d.result('99')).toBe(reply('play', 2, { media_id: tts('Nines.') }));
  });

  it('a step key overrides the handler key', () => {
    const c = new Call(handlerFlow());
    c.start();
    expect(c.result('1')).toBe(reply('read', 2, { media_id: 'TTS|TTS_EN-GB_SERENA|B' }));
    expect(c.result('0')).toBe(reply('play', 3, { media_id: tts('Own zero.') }));
  });

  it('`handlers: false` opts out', () => {
    const c = new Call(handlerFlow());
    c.start();
    c.result('1');
    c.result('0');
    expect(c.result('0')).toBe(reply('read', 4, { media_id: tts('C') }));
    expect(c.result('0')).toBe(reply('hangup', 5)); // default, not the operator
  });
});

describe('advance: command errors', () => {
  const errFlow = (withStepError: boolean, withHandler: boolean) =>
    flow({
      handlers: withHandler ? { error: 'sorry' } : {},
      steps: {
        p: cmd(
          'play',
          { media_id: [1234] },
          { on: withStepError ? { error: 'failed', default: 'end' } : { default: 'end' }, save: 'r' },
        ),
        failed: say('Step error: {{ error }}.', 'end'),
        sorry: say('Handler error.', 'end'),
        end: hangup(),
      },
    });

  it('takes the step error branch (and does not save)', () => {
    const c = new Call(errFlow(true, true));
    expect(c.start()).toBe(reply('play', 1, { media_id: '1234' }));
    expect(c.error('NO_MEDIA')).toBe(reply('play', 2, { media_id: tts('Step error: NO_MEDIA.') }));
    expect(c.state!.vars).toEqual({});
  });

  it('else handlers.error', () => {
    const c = new Call(errFlow(false, true));
    c.start();
    expect(c.error('NO_MEDIA')).toBe(reply('play', 2, { media_id: tts('Handler error.') }));
  });

  it('else hangs up, logged', () => {
    const c = new Call(errFlow(false, false));
    c.start();
    expect(c.error('NO_MEDIA')).toBe(reply('hangup', 2));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['UNHANDLED_ERROR_AT_RUNTIME']);
  });

  it('a rendered param that fails its check takes the error branch as INVALID_PARAM', () => {
    const f = flow({
      vars: { target: 'not-a-number' },
      steps: {
        call: cmd(
          'dialout',
          { targets: [{ number: '{{ vars.target }}', timeout: 30 }] },
          { on: { error: 'failed', NOANSWER: 'end' } },
        ),
        failed: say('Failed: {{ error }}.', 'end'),
        end: hangup(),
      },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Failed: INVALID_PARAM.') }));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['RUNTIME_PARAM']);
  });

  it('a rendered value that passes goes out rendered', () => {
    const f = flow({
      vars: { target: '+33123456789' },
      steps: {
        call: cmd(
          'dialout',
          { targets: [{ number: '{{ vars.target }}', timeout: '{{ 10 | plus: 5 }}' }], cli: 'BLOCKED' },
          { on: { NOANSWER: 'end' } },
        ),
        end: hangup(),
      },
    });
    expect(new Call(f).start()).toBe(
      reply('dialout', 1, { targets: [{ number: '+33123456789', timeout: 15 }], cli: 'BLOCKED' }),
    );
  });

  it('an out-of-bounds rendered integer is refused', () => {
    const f = flow({
      vars: { n: 99 },
      steps: { r: cmd('read', { media_id: [0], max_digits: '{{ vars.n }}' }, { next: 'end' }), end: hangup() },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('hangup', 1));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual([
      'RUNTIME_PARAM',
      'UNHANDLED_ERROR_AT_RUNTIME',
    ]);
  });
});

describe('advance: logic steps', () => {
  it('set with literals, templates and CEL expressions', () => {
    const f = flow({
      vars: { tries: 2 },
      steps: {
        s: set(
          {
            tries: { expr: 'vars.tries + 1' },
            greeting: 'Hello {{ call.caller_name }}',
            flag: true,
            list: [1, '{{ call.called }}'],
          },
          'p',
        ),
        p: say('{{ vars.greeting }}, try {{ vars.tries }}.', 'end'),
        end: hangup(),
      },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Hello Alice, try 3.') }));
    expect(c.state!.vars).toEqual({ tries: 3, greeting: 'Hello Alice', flag: true, list: [1, '+33180000000'] });
  });

  it('switch takes the first case that holds, else default; a throwing condition is false and logged', () => {
    const f = (_caller: string) =>
      flow({
        vars: { vip: false },
        steps: {
          route: sw(
            [
              ['vars.missing == 1', 'a'],
              ['call.caller.startsWith("+33")', 'fr'],
              ['has(vars.vip) && vars.vip', 'a'],
            ],
            'en',
          ),
          fr: say('Bonjour.', 'end'),
          en: say('Hello.', 'end'),
          a: say('A.', 'end'),
          end: hangup(),
        },
      });
    const c = new Call(f('+33612345678'));
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Bonjour.') }));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['RUNTIME_CONDITION']);
    const d = new Call(f('+44'), OPTS, { cli_number: '+447700900123' });
    expect(d.start()).toBe(reply('play', 1, { media_id: tts('Hello.') }));
  });

  it('when (a switch with one case) sees the last result', () => {
    const f = flow({
      vars: { pin: '1234' },
      steps: {
        ask: cmd('read', { media_id: ['PIN?'], max_digits: 4 }, { next: 'check' }),
        check: sw([['result == vars.pin', 'ok']], 'ko'),
        ok: say('Granted.', 'end'),
        ko: say('Denied.', 'end'),
        end: hangup(),
      },
    });
    const c = new Call(f);
    c.start();
    expect(c.result('1234')).toBe(reply('play', 2, { media_id: tts('Granted.') }));
    const d = new Call(f);
    d.start();
    expect(d.result('4321')).toBe(reply('play', 2, { media_id: tts('Denied.') }));
  });

  it('a loop of logic steps stops at maxLogicSteps: ITERATION_LIMIT, hangup, no throw', () => {
    const f = flow({
      vars: { i: 0 },
      steps: {
        a: set({ i: { expr: 'vars.i + 1' } }, 'b'),
        b: sw([['vars.i >= 0', 'a']], 'end'),
        end: hangup(),
      },
    });
    const c = new Call(f, { ...OPTS, maxLogicSteps: 10 });
    expect(c.start()).toBe(reply('hangup', 1));
    expect(c.state!.vars.i).toBe(5);
    expect(c.state!.done).toBe(true);
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['ITERATION_LIMIT']);
    const d = new Call(f);
    d.start();
    expect(d.state!.vars.i).toBe(50);
  });

  it("a loop through a param that always fails its check stops too (the machine's budget guard), no throw", () => {
    // dialout's target renders to "nope" (not E.164) every time; its error branch goes back to it.
    const f = flow({
      steps: {
        d: cmd('dialout', { targets: [{ number: '{{ vars.nobody }}nope', timeout: 30 }] }, { on: { error: 'd' } }),
      },
    });
    const c = new Call(f, { ...OPTS, maxLogicSteps: 7 });
    expect(c.start()).toBe(reply('hangup', 1));
    const codes = (c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)) || [];
    expect(codes.filter((x) => x === 'RUNTIME_PARAM')).toHaveLength(7);
    expect(codes[codes.length - 1]).toBe('ITERATION_LIMIT');
  });

  it('a loop of failing says and params is bounded as well', () => {
    const f = flow({
      steps: {
        d: cmd(
          'dialout',
          { targets: [{ number: '{{ vars.x }}', timeout: 30 }] },
          { on: { error: { goto: 'd', say: '{{ vars.x | nosuchfilter }}' } } },
        ),
      },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('hangup', 1));
    const codes = (c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)) || [];
    expect(codes.length).toBeLessThanOrEqual(2 * 100 + 1);
    expect(codes[codes.length - 1]).toBe('ITERATION_LIMIT');
  });

  it('a loop of sms effects sends at most maxLogicSteps of them in one request', () => {
    const f = flow({
      steps: { s: cmd('sms' as never, { to: '+33612345678', body: 'spam' }, { on: { default: 's', error: 's' } }) },
    });
    const c = new Call(f, { ...OPTS, maxLogicSteps: 5 });
    expect(c.start()).toBe(reply('hangup', 1));
    expect(c.effects).toHaveLength(5);
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['ITERATION_LIMIT']);
  });

  it('a set with no next ends the flow; a failing expr keeps none of the step, no handlers.error: ends', () => {
    const f = flow({
      vars: { x: 1 },
      steps: { s: set({ y: 2, x: { expr: 'vars.nope + 1' }, z: 3 }, 'p'), p: say('P') },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('hangup', 1));
    expect(c.state!.vars).toEqual({ x: 1 });
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.msg)).toEqual([
      'set x = vars.nope + 1 at s: No such key: nope; none of its assignments is kept, and with no handlers.error ' +
        'the flow ends',
    ]);
  });

  it('a result with no branch and no default ends the flow (hangup)', () => {
    const f = flow({ steps: { r: cmd('read', { media_id: ['?'] }, { on: { '1': 'end' } }), end: hangup() } });
    const c = new Call(f);
    c.start();
    expect(c.result('2')).toBe(reply('hangup', 2));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['UNHANDLED_RESULT_AT_RUNTIME']);
  });

  it("logs a client's result or error with no branch cut to 256 B (a log line carries no request of 64 KiB)", () => {
    const f = flow({ steps: { r: cmd('read', { media_id: ['?'] }, { on: { '1': 'end' } }), end: hangup() } });
    const c = new Call(f);
    c.start();
    c.result('9'.repeat(5_000));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.msg)).toEqual([
      `result "${'9'.repeat(241)}…(5000 bytes)" of read at r has no branch: end of flow`,
    ]);
    const e = new Call(f);
    e.start();
    e.error('E'.repeat(5_000));
    expect(e.last!.kind === 'reply' && e.last!.log?.map((l) => l.msg)).toEqual([
      `read failed at r (${'E'.repeat(241)}…(5000 bytes)) and no error branch applies: hanging up`,
    ]);
  });
});

describe('advance: the end of a call', () => {
  const hangupFlow = () =>
    flow({
      vars: { n: 0 },
      handlers: { hangup: 'log_call' },
      steps: {
        p: say('Hello.', 'end'),
        end: hangup(),
        log_call: set({ ended: '{{ call.status | downcase }}', n: { expr: 'vars.n + 1' } }, 'route'),
        route: sw([['vars.n > 0', 'bad']], 'bad'),
        bad: say('never played', 'end'),
      },
    });

  for (const status of ['HANGUP', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'] as const) {
    it(`${status}: runs the hangup handler's logic steps, answers hangup, drops the state`, () => {
      const c = new Call(hangupFlow());
      c.start();
      const before = c.state!;
      const out = advance(c.flow, before, c.next({ call_status: status }), { ...OPTS, now: OPTS.now + 5000 });
      expect(out.kind).toBe('reply');
      if (out.kind !== 'reply') return;
      expect(out.replyJson).toBe(reply('hangup', 2));
      expect(out.state).toBeNull();
      expect(out.summary).toEqual({
        callid: '1234567',
        flow: 'test',
        version: c.flow.version,
        status,
        commands: 1,
        durationMs: 4000,
        lastStep: 'p',
        vars: { n: 1, ended: status.toLowerCase() },
      });
      expect(out.log?.map((l) => l.code)).toEqual(['HANDLER_COMMAND']);
      expect(before.vars).toEqual({ n: 0 }); // the prior state is never mutated
    });
  }

  it('a terminal request with no state at all is answered hangup, nothing run', () => {
    const out = advance(hangupFlow(), undefined, req({ call_status: 'HANGUP', command: 'play', command_id: 4 }), OPTS);
    expect(out).toEqual({
      kind: 'reply',
      reply: { command: 'hangup', command_id: 5, params: {}, variablesRaw: '{}' },
      replyJson: reply('hangup', 5),
      state: null,
    });
  });

  for (const status of ['NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'] as const)
    it(`a call never answered (first request ${status}): the handler runs from the vars it was placed with`, () => {
      const f = hangupFlow();
      const first = req({ call_status: status, request_hash: 'REQ00001' });
      const out = advance(f, undefined, first, { ...OPTS, vars: { n: 4, who: 'Ms Jones' } });
      expect(out).toEqual({
        kind: 'reply',
        reply: { command: 'hangup', command_id: 1, params: {}, variablesRaw: '{}' },
        replyJson: reply('hangup', 1),
        state: null,
        summary: {
          callid: '1234567',
          flow: 'test',
          version: f.version,
          status,
          commands: 0,
          durationMs: 0,
          lastStep: '',
          vars: { n: 5, who: 'Ms Jones', ended: status.toLowerCase() },
        },
        log: [expect.objectContaining({ code: 'HANDLER_COMMAND', step: 'bad' })],
      });
    });

  it('a call never answered runs no flow step but the handler; with no handler, it still has its summary', async () => {
    const f = await yamlFlow(`
version: 1
name: t
start: begin
vars: { who: nobody }
handlers: { hangup: text }
steps:
  begin:
    set: { started: true }
    next: p
  p: { say: "Hello.", next: end }
  end: { hangup: {} }
  text:
    sms: { to: "+33612345678", body: "Not reached: {{ vars.who }}" }
    next: done
  done:
    set: { texted: true }
`);
    const c = new Call(f, { ...OPTS, vars: { who: 'Ms Jones' } });
    c.start({ call_status: 'BUSY' });
    expect(c.effects.map((e) => e.params)).toEqual([{ to: '+33612345678', body: 'Not reached: Ms Jones' }]);
    expect(c.last?.kind === 'reply' && c.last.summary?.vars).toEqual({ who: 'Ms Jones', texted: true });
    const plain = flow({ vars: { who: 'nobody' }, steps: { p: say('Hello.', 'end'), end: hangup() } });
    const out = advance(plain, undefined, req({ call_status: 'NOANSWER' }), OPTS);
    expect(out.kind === 'reply' && out.summary).toMatchObject({
      status: 'NOANSWER',
      lastStep: '',
      vars: { who: 'nobody' },
    });
  });

  it('after the flow answered hangup, the service closes with HANGUP: handler runs, state dropped', () => {
    const c = new Call(hangupFlow());
    c.start();
    c.result('0');
    expect(c.state!.done).toBe(true);
    expect(c.result('', { call_status: 'HANGUP' })).toBe(reply('hangup', 3));
    expect(c.state).toBeUndefined();
  });

  it('a live result after our hangup is answered hangup again', () => {
    const c = new Call(hangupFlow());
    c.start();
    c.result('0');
    expect(c.result('')).toBe(reply('hangup', 3));
    expect(c.state).toMatchObject({ done: true, commandId: 3 });
  });
});

describe('advance: retries, stale requests, unknown calls', () => {
  it('a retried request gets the same bytes and changes nothing', () => {
    const c = new Call(menuFlow(), OPTS, { variablesRaw: '{"a": 1,  "b":[1,2]}', variables: { a: 1, b: [1, 2] } });
    const first = c.start();
    const second = c.result('0');
    const state = c.state!;
    const snapshot = JSON.stringify(state);
    const again = advance(
      c.flow,
      state,
      req({ command: 'play', command_id: 1, command_result: '0', variablesRaw: '{"a": 1,  "b":[1,2]}' }),
      OPTS,
    );
    expect(again).toEqual({ kind: 'replay', replyJson: second });
    expect(JSON.stringify(state)).toBe(snapshot);
    expect(first).not.toBe(second);
    // A retry of the very first request too.
    const d = new Call(menuFlow());
    const r1 = d.start();
    expect(advance(d.flow, d.state, req(), OPTS)).toEqual({ kind: 'replay', replyJson: r1 });
  });

  it('an older request is stale', () => {
    const c = new Call(menuFlow());
    c.start();
    c.result('0');
    c.result('TIMEOUT');
    expect(c.state!.commandId).toBe(3);
    const out = advance(c.flow, c.state, req({ command: 'play', command_id: 1, command_result: '0' }), OPTS);
    expect(out).toEqual({ kind: 'stale', latest: 3, message: expect.stringContaining('command_id 1') });
    expect(advance(c.flow, c.state, req({ command: 'read', command_id: 7 }), OPTS).kind).toBe('stale');
    expect(advance(c.flow, c.state, req(), OPTS).kind).toBe('stale');
  });

  it('unknown call, policy restart: starts the flow numbering from command_id + 1, logged', () => {
    const out = advance(menuFlow(), undefined, req({ command: 'read', command_id: 41, command_result: '1' }), {
      ...OPTS,
      unknownCall: 'restart',
    });
    expect(out.kind).toBe('reply');
    if (out.kind !== 'reply') return;
    expect(out.replyJson).toBe(reply('play', 42, { media_id: tts('Welcome to Acme.') }));
    expect(out.state).toMatchObject({ commandId: 42, step: 'welcome', commands: 1 });
    expect(out.log).toEqual([expect.objectContaining({ level: 'warn', code: 'UNKNOWN_CALL' })]);
  });

  it('unknown call, policy hangup: hangup and drop', () => {
    const out = advance(menuFlow(), undefined, req({ command: 'read', command_id: 41 }), {
      ...OPTS,
      unknownCall: 'hangup',
    });
    expect(out).toMatchObject({
      kind: 'reply',
      replyJson: reply('hangup', 42),
      state: null,
      log: [{ code: 'UNKNOWN_CALL' }],
    });
  });

  it('unknown call, policy reject: rejected UNKNOWN_CALL', () => {
    const out = advance(menuFlow(), undefined, req({ command: 'read', command_id: 41 }), {
      ...OPTS,
      unknownCall: 'reject',
    });
    expect(out).toEqual({ kind: 'rejected', code: 'UNKNOWN_CALL', message: expect.stringContaining('1234567') });
  });

  it('a state from another flow version is rejected (FLOW_VERSION_MISMATCH)', () => {
    const c = new Call(menuFlow());
    c.start();
    const other: CallState = { ...c.state!, version: '000000000000' };
    expect(advance(c.flow, other, c.next({ command_result: '0' }), OPTS)).toMatchObject({
      kind: 'rejected',
      code: 'FLOW_VERSION_MISMATCH',
    });
  });
});

describe('advance: wire values', () => {
  const killFlow = () =>
    flow({
      steps: {
        kill: cmd('hangup_callid', { callid: '{{ call.variables.other }}' }, { next: 'static' }),
        static: cmd('hangup_callid', { callid: '18446744073709551615' }, { next: 'end' }),
        end: hangup(),
      },
    });

  for (const big of ['18446744073709551615', '9007199254740993']) {
    it(`hangup_callid ${big} goes out as a JSON integer, digit for digit`, () => {
      const raw = `{"other":"${big}"}`;
      const c = new Call(killFlow(), OPTS, { callid: big, variablesRaw: raw, variables: { other: big } });
      expect(c.start()).toBe(
        `{"command":"hangup_callid","command_id":1,"params":{"callid":${big}},"variables":${raw}}`,
      );
      expect(c.result('')).toBe(
        `{"command":"hangup_callid","command_id":2,"params":{"callid":18446744073709551615},"variables":${raw}}`,
      );
    });
  }

  it('a callid template rendering to a bad value takes the error branch', () => {
    const c = new Call(killFlow(), OPTS, {
      variablesRaw: '{"other":"18446744073709551616"}',
      variables: { other: '18446744073709551616' },
    });
    expect(c.start()).toBe(reply('hangup', 1, {}, '{"other":"18446744073709551616"}'));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual([
      'RUNTIME_PARAM',
      'UNHANDLED_ERROR_AT_RUNTIME',
    ]);
  });

  it('echoes the variables byte for byte, big numbers and spacing included', () => {
    const raw = '{ "big": 123456789012345678901234567890, "f": 1.50, "s": "é\\u00e9", "n": {"x": [ ] } }';
    const c = new Call(menuFlow(), OPTS, {
      variablesRaw: raw,
      variables: { big: 1.2345678901234568e29, f: 1.5, s: 'éé', n: { x: [] } },
    });
    expect(c.start()).toBe(
      `{"command":"play","command_id":1,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Welcome to ` +
        `Acme."},"variables":${raw}}`,
    );
    expect(c.result('0', { variablesRaw: '{"k":9007199254740993}' })).toBe(
      READ(P1, 2).replace('"variables":{}', '"variables":{"k":9007199254740993}'),
    );
  });

  it('media: library ids as strings, 0 for none, raw templates rendered, other voices', () => {
    const f = flow({
      vars: { m: '4321', t: 'TTS|TTS_FR-FR_AUDREY|Salut' },
      steps: {
        a: cmd('start_call_recording', { announce: [0], feeds: 'both', transcription: true }, { next: 'b' }),
        b: cmd('play', { media_id: ['{{ vars.m }}'] }, { next: 'c' }),
        c: cmd(
          'play_talk_detect',
          { media_id: [{ kind: 'tts', voice: 'TTS_EN-GB_DANIEL', text: 'Hi {{ call.caller_name }}' }], min_ms: 500 },
          { next: 'd' },
        ),
        d: cmd('read', { media_id: ['{{ vars.t }}'], attempts: 2 }, { next: 'end' }),
        end: hangup(),
      },
    });
    const c = new Call(f);
    expect(c.start()).toBe(reply('start_call_recording', 1, { announce: '0', feeds: 'both', transcription: true }));
    expect(c.result('REC1')).toBe(reply('play', 2, { media_id: '4321' }));
    expect(c.result('0')).toBe(
      reply('play_talk_detect', 3, { media_id: 'TTS|TTS_EN-GB_DANIEL|Hi Alice', min_ms: 500 }),
    );
    expect(c.result('TALK')).toBe(reply('read', 4, { media_id: 'TTS|TTS_FR-FR_AUDREY|Salut', attempts: 2 }));
  });

  it('params are written in catalogue order and only when the flow gives them', () => {
    const f = flow({
      steps: { r: cmd('read', { timeout_ms: 3000, media_id: ['Hi'], max_digits: 4 }, { next: 'end' }), end: hangup() },
    });
    expect(new Call(f).start()).toBe(
      '{"command":"read","command_id":1,' +
        '"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Hi","max_digits":4,"timeout_ms":3000},"variables":{}}',
    );
  });

  it('patterns: regex and Asterisk-style, in order, after exact keys', () => {
    const f = flow({
      steps: {
        r: cmd(
          'read',
          { media_id: ['?'], max_digits: 4 },
          { on: { '1000': 'exact', '/^1[0-9]{3}$/': 'regex', _1XXX: 'asterisk', _2XXX: 'asterisk', default: 'end' } },
        ),
        exact: say('exact', 'end'),
        regex: say('regex', 'end'),
        asterisk: say('asterisk', 'end'),
        end: hangup(),
      },
    });
    const run = (r: string) => {
      const c = new Call(f);
      c.start();
      return c.result(r);
    };
    expect(run('1000')).toBe(reply('play', 2, { media_id: tts('exact') }));
    expect(run('1001')).toBe(reply('play', 2, { media_id: tts('regex') }));
    expect(run('2001')).toBe(reply('play', 2, { media_id: tts('asterisk') }));
    expect(run('3001')).toBe(reply('hangup', 2));
  });

  it('keeps the state small: under 2 KB on a whole call', () => {
    const c = new Call(menuFlow(), OPTS, { variablesRaw: '{"crm_id":"A-1234","lang":"en"}' });
    const sizes: number[] = [];
    for (const step of [
      () => c.start(),
      () => c.result('0'),
      () => c.result('TIMEOUT'),
      () => c.result('5'),
      () => c.result('0'),
      () => c.result('2'),
    ]) {
      step();
      sizes.push(Buffer.byteLength(JSON.stringify(c.state)));
    }
    expect(Math.max(...sizes)).toBeLessThan(2048);
    expect(Math.max(...sizes)).toBeLessThan(600);
  });

  it('version is the first 12 hex digits of the source sha256', () => {
    expect(menuFlow().version).toMatch(/^[0-9a-f]{12}$/);
  });
});
