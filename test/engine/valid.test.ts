/**
 * `valid:` (version 2): a condition every input must meet, counting rejected inputs
 * towards the step's retries and escalating its prompts, without counters in the flow.
 */
import { describe, expect, it } from 'vitest';
import { advance } from '../../src/engine/advance.js';
import { checkFlow } from '../../src/flow/check.js';
import { Call, OPTS, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const PIN = `version: 2
start: ask
vars: { expected: "1234" }
handlers:
  on:
    read: { "0": operator }
steps:
  ask:
    read: { prompt: ["Enter your PIN.", "Enter your PIN again.", "Last try."], max_digits: 4 }
    save: pin
    valid:
      when: 'result == vars.expected'
      else: { retry: 2, say: "That PIN is not right.", then: locked }
    on:
      TIMEOUT: { retry: 1, then: locked }
      "*": start_over
    next: granted
  start_over: { say: "Again.", next: ask }
  granted: { say: "Welcome {{ vars.pin }}.", next: end }
  locked: { say: "Locked {{ vars.pin | default: 'none' }}.", next: end }
  operator: { say: "Operator.", next: end }
  end: { hangup: {} }
`;
const READ = { max_digits: 4 };

describe('valid: with else', () => {
  it('rejects wrong inputs with the else branch, escalating the prompt, and accepts the right one', async () => {
    const c = new Call(await yamlFlow(PIN));
    expect(c.start()).toBe(reply('read', 1, { media_id: tts('Enter your PIN.'), ...READ }));
    expect(c.result('1111')).toBe(reply('play', 2, { media_id: tts('That PIN is not right.') }));
    expect(c.result('0')).toBe(reply('read', 3, { media_id: tts('Enter your PIN again.'), ...READ }));
    expect(c.state!.vars.pin).toBeUndefined(); // a rejected input is not saved
    expect(c.result('2222')).toBe(reply('play', 4, { media_id: tts('That PIN is not right.') }));
    expect(c.result('0')).toBe(reply('read', 5, { media_id: tts('Last try.'), ...READ }));
    expect(c.result('1234')).toBe(reply('play', 6, { media_id: tts('Welcome 1234.') }));
    expect(c.state!.vars.pin).toBe('1234');
  });

  it('goes to then once the retries are used up, nothing saved', async () => {
    const c = new Call(await yamlFlow(PIN));
    c.start();
    for (const pin of ['1111', '2222']) {
      expect(c.result(pin)).toMatch(/That PIN is not right/);
      expect(c.result('0')).toMatch(/"command":"read"/);
    }
    expect(c.result('3333')).toBe(reply('play', 6, { media_id: tts('That PIN is not right.') }));
    expect(c.result('0')).toBe(reply('play', 7, { media_id: tts('Locked none.') }));
  });

  it('does not check the step exact keys, the flow-wide exact keys, nor a read TIMEOUT', async () => {
    const f = await yamlFlow(PIN);
    const a = new Call(f);
    a.start();
    expect(a.result('TIMEOUT')).toBe(reply('read', 2, { media_id: tts('Enter your PIN again.'), ...READ }));
    expect(a.result('*')).toBe(reply('play', 3, { media_id: tts('Again.') }));
    const b = new Call(f);
    b.start();
    expect(b.result('0')).toBe(reply('play', 2, { media_id: tts('Operator.') }));
  });

  it('counts rejected inputs apart from TIMEOUT (noinput and nomatch)', async () => {
    const c = new Call(await yamlFlow(PIN));
    c.start();
    expect(c.result('TIMEOUT')).toMatch(/Enter your PIN again/);
    expect(c.result('9999')).toMatch(/That PIN is not right/);
    expect(c.result('0')).toBe(reply('read', 4, { media_id: tts('Last try.'), ...READ }));
    // save: keeps a TIMEOUT, as in version 1
    expect(c.result('TIMEOUT')).toBe(reply('play', 5, { media_id: tts('Locked TIMEOUT.') }));
  });
});

describe('valid: without else', () => {
  const flow = `version: 2
start: ask
steps:
  ask:
    read: { prompt: ["Choose 1 to 3.", "Please choose 1, 2 or 3."], max_digits: 1 }
    save: choice
    valid: 'int(result) >= 1 && int(result) <= 3'
    on:
      "9": ask
      default: { retry: 1, say: "No such choice.", then: bye }
      TIMEOUT: bye
  bye: { say: "Bye {{ vars.choice | default: '-' }}.", next: end }
  end: { hangup: {} }
`;

  it('a rejected input takes the default branch and shares its retry counter', async () => {
    const c = new Call(await yamlFlow(flow));
    c.start();
    expect(c.result('7')).toBe(reply('play', 2, { media_id: tts('No such choice.') }));
    expect(c.result('0')).toBe(reply('read', 3, { media_id: tts('Please choose 1, 2 or 3.'), max_digits: 1 }));
    // the second rejection finds default's one retry used: then
    expect(c.result('8')).toBe(reply('play', 4, { media_id: tts('No such choice.') }));
    expect(c.result('0')).toBe(reply('play', 5, { media_id: tts('Bye -.') }));
  });

  it('an accepted input goes on through the keys and default as usual, saved', async () => {
    const c = new Call(await yamlFlow(flow));
    c.start();
    expect(c.result('2')).toBe(reply('play', 2, { media_id: tts('No such choice.') }));
    // "2" was valid, matched no key: default, and it was saved
    expect(c.state!.vars.choice).toBe('2');
  });

  it('a condition that fails to evaluate rejects the input (logged), and the call goes on', async () => {
    const c = new Call(await yamlFlow(flow));
    c.start();
    const out = advance(c.flow, c.state, c.next({ command: 'read', command_result: '*' }), OPTS);
    expect(out.kind === 'reply' && out.replyJson).toBe(reply('play', 2, { media_id: tts('No such choice.') }));
    expect(out.kind === 'reply' && out.log?.map((l) => l.code)).toContain('RUNTIME_CONDITION');
  });
});

describe('valid: hostile', () => {
  it('a condition that spends the request budget takes the error way, nothing saved', async () => {
    const flow = `version: 2
start: ask
steps:
  ask:
    read: { prompt: "PIN?", max_digits: 4 }
    save: pin
    valid: 'size([1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b,
      [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d,
      [1,2,3,4,5,6,7,8,9,10].map(e, result + result + result)))))) > 0'
    on: { error: failed }
    next: end
  failed: { say: "Sorry.", next: end }
  end: { hangup: {} }
`;
    const c = new Call(await yamlFlow(flow));
    c.start();
    const out = advance(c.flow, c.state, c.next({ command: 'read', command_result: '1234' }), OPTS);
    expect(out.kind === 'reply' && out.replyJson).toBe(reply('play', 2, { media_id: tts('Sorry.') }));
    expect(out.kind === 'reply' && out.log?.map((l) => l.code)).toContain('EVALUATION_LIMIT');
    expect(out.kind === 'reply' && out.state?.vars.pin).toBeUndefined();
  });
});

describe('valid: checked', () => {
  const diags = (text: string) => checkFlow(text, 't.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code}`);
  const head = 'version: 2\nstart: a\nsteps:\n';

  it('is clean as documented', () => {
    expect(diags(PIN)).toEqual([]);
  });

  it('needs version 2', () => {
    expect(diags(PIN.replace('version: 2', 'version: 1'))).toEqual(['11:5 NEEDS_VERSION_2']);
  });

  it('needs somewhere for a rejected input to go', () => {
    expect(
      diags(
        `${head}  a:\n    read: { prompt: "x" }\n    valid: 'result == "1"'\n    on: { "/^[0-9*]$/": b, ` +
          `TIMEOUT: b }\n  b: { hangup: {} }\n`,
      ),
    ).toEqual(['6:5 MISSING_KEY']);
  });

  it('refuses a bad condition, unknown keys, a missing when, a bad else, at their positions', () => {
    expect(
      diags(`${head}  a:\n    read: { prompt: "x" }\n    valid: 'result =='\n    next: b\n  b: { hangup: {} }\n`),
    ).toEqual(['6:12 BAD_EXPRESSION']);
    expect(
      diags(
        `${head}  a:\n    read: { prompt: "x" }\n    valid: { when: 'true', els: b }\n    next: b\n  b: { ` +
          `hangup: {} }\n`,
      ),
    ).toEqual(['6:28 UNKNOWN_KEY']);
    expect(
      diags(`${head}  a:\n    read: { prompt: "x" }\n    valid: { else: b }\n    next: b\n  b: { hangup: {} }\n`),
    ).toEqual(['6:12 MISSING_KEY']);
    expect(
      diags(
        `${head}  a:\n    read: { prompt: "x" }\n    valid: { when: 'true', else: { retry: 2 } }\n    next: ` +
          `b\n  b: { hangup: {} }\n`,
      ),
    ).toEqual(['6:34 MISSING_KEY']);
    expect(
      diags(
        `${head}  a:\n    read: { prompt: "x" }\n    valid: { when: 'true', else: nowhere }\n    next: b\n  ` +
          `b: { hangup: {} }\n`,
      ),
    ).toEqual(['6:34 UNKNOWN_STEP']);
  });

  it('goes only with commands that return something', () => {
    expect(
      diags(`${head}  a:\n    simple_conference: { id: r }\n    valid: 'true'\n    next: b\n  b: { hangup: {} }\n`),
    ).toEqual(['6:5 MISPLACED_KEY']);
    expect(diags(`${head}  a:\n    set: { x: 1 }\n    valid: 'true'\n    next: b\n  b: { hangup: {} }\n`)).toEqual([
      '6:5 MISPLACED_KEY',
    ]);
  });

  it('counts its else target as reached', () => {
    expect(
      diags(
        `${head}  a:\n    read: { prompt: "x" }\n    valid: { when: 'result == "1"', else: c }\n    next: ` +
          `b\n  b: { hangup: {} }\n  c: { hangup: {} }\n`,
      ),
    ).toEqual([]);
  });
});
