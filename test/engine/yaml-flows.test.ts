/**
 * Calls through flows written in YAML, checked by src/flow/check.ts: the example flows
 * of flows/ and small flows written here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { advance } from '../../src/engine/advance.js';
import { Call, OPTS, reply, tts } from './helpers.js';
import { exampleFlows, yamlFlow } from './yaml.js';

const root = new URL('../..', import.meta.url).pathname;
const example = (name: string) => yamlFlow(readFileSync(`${root}flows/${name}.yaml`, 'utf8'), `flows/${name}.yaml`);

describe('the example flows', () => {
  it('front-desk: menu with retries, say, the flow-wide "0", the operator, the hangup handler', async () => {
    const f = await example('front-desk');
    const c = new Call(f, OPTS, { cli_number: '+447700900123' });
    const MENU = { attempts: 1, max_digits: 1, timeout_ms: 6000 }; // catalogue order
    const prompts = [
      'For sales, press 1. For accounts, press 2. To hear our address and opening hours, press 3. To speak ' +
        'to the operator, press 0 at any time.',
      'Sorry, I did not hear a choice. Press 1 for sales, 2 for accounts, 3 for our address and opening ' +
        'hours, or 0 for the operator.',
      'Please press 1, 2, 3, or 0 now.',
    ];
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Thank you for calling Acme.') }));
    expect(c.result('0')).toBe(reply('read', 2, { media_id: tts(prompts[0]!), ...MENU }));
    expect(c.result('TIMEOUT')).toBe(reply('read', 3, { media_id: tts(prompts[1]!), ...MENU }));
    expect(c.result('7')).toBe(reply('play', 4, { media_id: tts('Sorry, 7 is not one of the choices.') }));
    expect(c.result('0')).toBe(reply('read', 5, { media_id: tts(prompts[2]!), ...MENU }));
    expect(c.result('0')).toBe(
      reply('dialout', 6, {
        targets: [
          { number: '+442079460100', timeout: 20 },
          { number: '+442079460101', timeout: 20 },
        ],
        ringtone: 'RING',
        whisper: tts('Front desk call. The caller chose 0.'),
        cdr_field: 'operator',
      }),
    );
    expect(c.result('NOANSWER')).toMatch(
      /^\{"command":"play","command_id":7,"params":\{"media_id":"TTS\|TTS_EN-GB_SERENA\|Sorry, nobody is available/,
    );
    const out = advance(f, c.state, c.next({ call_status: 'HANGUP' }), OPTS);
    expect(out).toMatchObject({ kind: 'reply', replyJson: reply('hangup', 8), state: null });
    expect(out.kind === 'reply' && out.summary?.vars).toMatchObject({
      choice: '0',
      outcome: '0',
      summary: 'front-desk call 1234567 from +447700900123 ended (hangup) after choice 0',
    });
  });

  it('front-desk: a French caller gets the French welcome in another voice', async () => {
    const c = new Call(await example('front-desk'));
    expect(c.start()).toBe(
      reply('play', 1, {
        media_id: "TTS|TTS_FR-FR_AUDREY|Bonjour et merci d'appeler Acme. La suite de l'appel est en anglais.",
      }),
    );
  });

  it('every example flow keeps its state under 2 KB on random calls', async () => {
    const flows = await exampleFlows();
    expect(flows.length).toBeGreaterThanOrEqual(6);
    let seed = 1;
    for (const f of flows) {
      let max = 0;
      for (let call = 0; call < 100; call++) {
        const c = new Call(f, OPTS, {
          variablesRaw: '{"crm":"C-0042","lang":"en"}',
          cli_number: call % 2 ? '+33612345678' : '+447700900123',
        });
        c.start();
        for (let i = 0; i < 30 && c.state && !c.state.done; i++) {
          seed = (seed * 1103515245 + 12345) % 2 ** 31;
          const results = ['0', '1', '2', '3', '1234', 'TIMEOUT', 'NOANSWER', 'TALK', 'SILENCE', 'rec-1.wav', ''];
          c.result(results[seed % results.length]!);
          if (c.state) max = Math.max(max, Buffer.byteLength(JSON.stringify(c.state)));
        }
      }
      expect(max, f.name).toBeLessThan(2048);
    }
  });
});

describe('flows written in YAML', () => {
  it('escalating prompts and retries per key', async () => {
    const f = await yamlFlow(`
version: 1
name: retries
start: menu
steps:
  menu:
    read:
      prompt: ["First.", { say: "Second.", voice: TTS_EN-GB_DANIEL }, 1234]
      max_digits: 1
    on:
      "1": end
      TIMEOUT: { retry: 3, then: end }
      default: { retry: 1, say: "Wrong.", then: bye }
  bye: { say: "Bye.", next: end }
  end: { hangup: {} }
`);
    const c = new Call(f);
    expect(c.start()).toBe(reply('read', 1, { media_id: tts('First.'), max_digits: 1 }));
    expect(c.result('TIMEOUT')).toBe(reply('read', 2, { media_id: 'TTS|TTS_EN-GB_DANIEL|Second.', max_digits: 1 }));
    expect(c.result('TIMEOUT')).toBe(reply('read', 3, { media_id: '1234', max_digits: 1 }));
    expect(c.result('5')).toBe(reply('play', 4, { media_id: tts('Wrong.') }));
    expect(c.result('0')).toBe(reply('read', 5, { media_id: '1234', max_digits: 1 }));
    expect(c.result('6')).toBe(reply('play', 6, { media_id: tts('Wrong.') }));
    expect(c.result('0')).toBe(reply('play', 7, { media_id: tts('Bye.') }));
  });

  it('hangup_callid from a variable, digit for digit', async () => {
    const f = await yamlFlow(`
version: 1
name: kill
start: kill
steps:
  kill:
    hangup_callid: "{{ call.variables.other }}"
    next: end
  end: { hangup: {} }
`);
    const raw = '{"other":"18446744073709551615"}';
    const c = new Call(f, OPTS, { variablesRaw: raw, variables: { other: '18446744073709551615' } });
    expect(c.start()).toBe(
      `{"command":"hangup_callid","command_id":1,"params":{"callid":18446744073709551615},"variables":${raw}}`,
    );
  });
});

describe('flows written in YAML: handlers, errors, logic, patterns', () => {
  const text = `
version: 1
name: desk
start: route
vars: { tries: 0, pin: "1234" }
handlers:
  hangup: log_call
  error: sorry
  on:
    read:
      "0": operator
      "_9X": nines
steps:
  route:
    switch:
      - { when: 'vars.nope == 1', goto: operator }
      - { when: 'call.caller.startsWith("+33")', goto: fr }
    default: menu
  fr: { say: "Bonjour.", next: menu }
  menu:
    read: { prompt: "Menu.", max_digits: 4 }
    save: choice
    on:
      "1": pin
      "/^[2-4]$/": { say: "Range {{ result }}.", goto: count }
      "0": own_zero
      error: step_error
      default: menu_end
  own_zero: { say: "Own zero.", next: pin }
  pin:
    read: { prompt: "PIN?", max_digits: 4 }
    handlers: false
    next: check
  check:
    when: 'result == vars.pin'
    then: granted
    else: menu_end
  granted: { say: "Granted {{ vars.choice }}.", next: menu_end }
  count:
    set:
      tries: { expr: "vars.tries + 1" }
      label: "try {{ vars.tries }}"
    next: again
  again:
    when: "vars.tries < 2"
    then: menu
    else: menu_end
  operator: { say: "Operator.", next: menu_end }
  nines: { say: "Nines.", next: menu_end }
  step_error: { say: "Step error {{ error }}.", next: menu_end }
  sorry: { say: "Sorry.", next: menu_end }
  menu_end: { hangup: {} }
  log_call:
    set: { ended: "{{ call.status }}" }
`;
  const menuReply = (id: number) => reply('read', id, { media_id: tts('Menu.'), max_digits: 4 });

  it('switch by caller, step key over handler key, handlers: false, when', async () => {
    const f = await yamlFlow(text);
    const c = new Call(f);
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Bonjour.') }));
    expect(c.last!.kind === 'reply' && c.last!.log?.map((l) => l.code)).toEqual(['RUNTIME_CONDITION']);
    expect(c.result('0')).toBe(menuReply(2));
    expect(c.result('0')).toBe(reply('play', 3, { media_id: tts('Own zero.') })); // the step's "0"
    expect(c.result('0')).toBe(reply('read', 4, { media_id: tts('PIN?'), max_digits: 4 }));
    expect(c.result('0')).toBe(reply('hangup', 5)); // handlers: false: no operator; when: 0 != pin
    const d = new Call(f);
    d.start();
    d.result('0');
    d.result('1');
    expect(d.result('1234')).toBe(reply('play', 4, { media_id: tts('Granted 1.') }));
  });

  it('the handler pattern applies where the step has no such key; patterns and say with the result', async () => {
    const f = await yamlFlow(text);
    const c = new Call(f, OPTS, { cli_number: '+447700900123' });
    expect(c.start()).toBe(menuReply(1));
    expect(c.result('95')).toBe(reply('play', 2, { media_id: tts('Nines.') }));
    const d = new Call(f, OPTS, { cli_number: '+447700900123' });
    d.start();
    expect(d.result('3')).toBe(reply('play', 2, { media_id: tts('Range 3.') }));
    expect(d.result('0')).toBe(menuReply(3));
    expect(d.state!.vars).toMatchObject({ tries: 1, label: 'try 1' }); // assignments run in order;
    expect(d.result('2')).toBe(reply('play', 4, { media_id: tts('Range 2.') }));
    expect(d.result('0')).toBe(reply('hangup', 5));
    expect(d.state!.vars).toMatchObject({ tries: 2, label: 'try 2', choice: '2' });
  });

  it('command_error: the step error branch, else handlers.error', async () => {
    const f = await yamlFlow(text);
    const c = new Call(f, OPTS, { cli_number: '' });
    c.start();
    expect(c.error('BOOM')).toBe(reply('play', 2, { media_id: tts('Step error BOOM.') }));
    const d = new Call(f, OPTS, { cli_number: '' });
    d.start();
    d.result('1');
    expect(d.error('BOOM')).toBe(reply('play', 3, { media_id: tts('Sorry.') }));
  });

  it('terminal status runs handlers.hangup and drops the call', async () => {
    const f = await yamlFlow(text);
    const c = new Call(f, OPTS, { cli_number: '' });
    c.start();
    const out = advance(f, c.state, c.next({ call_status: 'BUSY' }), OPTS);
    expect(out).toMatchObject({
      kind: 'reply',
      replyJson: reply('hangup', 2),
      state: null,
      summary: { status: 'BUSY', vars: { ended: 'BUSY' } },
    });
  });
});
