/**
 * A media written as one `{{ }}` alone is a media computed at run time (issue 22 item 11): a media id or
 * TTS|voice|text goes out as rendered; text cannot, and the engine says so (RUNTIME_MEDIA, level error, with its
 * hint) before the step takes its error branch, or the flow ends, which its summary then says (error).
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/advance.js';
import { checkFlow } from '../../src/flow/check.js';
import { Call, reply } from './helpers.js';
import { yamlFlow } from './yaml.js';

const FLOW = (greeting: string, error = '') => `
version: 1
name: greeter
start: menu
vars: { greeting: ${JSON.stringify(greeting)} }
steps:
  menu:
    read: { prompt: "{{ vars.greeting }}", max_digits: 1 }
    on: { ${error} }
    next: bye
  sorry: { say: "Sorry, {{ error }}.", next: bye }
  bye: { hangup: {} }
`;
const log = (o: Outcome | undefined) => (o?.kind === 'reply' ? (o.log ?? []) : []);

describe('a media template', () => {
  it('renders a media id or TTS|voice|text: sent as rendered', async () => {
    for (const [g, media] of [
      ['1234', '1234'],
      ['TTS|TTS_FR-FR_AUDREY|Bonjour', 'TTS|TTS_FR-FR_AUDREY|Bonjour'],
    ]) {
      const c = new Call(await yamlFlow(FLOW(g!, 'error: sorry')));
      expect(c.start()).toBe(reply('read', 1, { media_id: media, max_digits: 1 }));
    }
  });

  it('renders text: RUNTIME_MEDIA (error, hint), the flow ends; the summary of the call says why', async () => {
    const c = new Call(await yamlFlow(FLOW('Welcome to Acme.', '"0": sorry')));
    expect(c.start()).toBe(reply('hangup', 1));
    expect(log(c.last).map((l) => [l.level, l.code])).toEqual([
      ['error', 'RUNTIME_MEDIA'],
      ['info', 'UNHANDLED_ERROR_AT_RUNTIME'],
    ]);
    expect(log(c.last)[0]).toMatchObject({
      step: 'menu',
      hint: expect.stringMatching(/^To speak the text, write \{ say: "\{\{ vars\.x \}\}" \}/),
    });
    expect(c.state).toMatchObject({ done: true, fail: 'RUNTIME_MEDIA' });
    c.result('', { call_status: 'HANGUP' });
    expect(c.last?.kind === 'reply' && c.last.summary).toMatchObject({ status: 'HANGUP', error: 'RUNTIME_MEDIA' });
  });

  it('renders text at a step with an error branch: logged, the branch taken (INVALID_PARAM), no end', async () => {
    const c = new Call(await yamlFlow(FLOW('Welcome to Acme.', 'error: sorry')));
    expect(c.start()).toBe(reply('play', 1, { media_id: 'TTS|TTS_EN-GB_SERENA|Sorry, INVALID_PARAM.' }));
    expect(log(c.last).map((l) => l.code)).toEqual(['RUNTIME_MEDIA']);
    expect(c.state?.fail).toBeUndefined();
  });

  it('validate warns where the variable is known text (vars:, a set literal), not otherwise', () => {
    const warned = (text: string) =>
      checkFlow(text, 'f.yaml')
        .diagnostics.filter((d) => d.code === 'MEDIA_TEMPLATE_TEXT')
        .map((d) => d.line);
    expect(warned(FLOW('Welcome to Acme.', 'error: sorry'))).toEqual([8]);
    for (const g of ['1234', 'TTS|TTS_FR-FR_AUDREY|Bonjour', '{{ call.caller }}'])
      expect(warned(FLOW(g, 'error: sorry')), g).toEqual([]);
    const set = `
version: 1
name: s
start: pick
vars: { hold: 3001 }
steps:
  pick:
    set: { hold: "Please hold." }
    next: wait_here
  wait_here:
    conference: { id: room, waiting: "{{ vars.hold }}", welcome: "{{ vars.hold }} Thanks." }
    next: bye
  ask:
    read: { prompt: "Code?" }
    save: code
    next: again
  again:
    read: { prompt: "{{ vars.code }}" }
    next: bye
  bye: { hangup: {} }
`;
    const diags = checkFlow(set, 'f.yaml').diagnostics.filter((d) => d.code === 'MEDIA_TEMPLATE_TEXT');
    expect(diags.map((d) => [d.line, d.message])).toEqual([
      [
        11,
        'step \'wait_here\': waiting is "{{ vars.hold }}" alone: a media computed at run time (a media id or ' +
          'TTS|voice|text), but vars.hold is text ("Please hold.", set at step \'pick\'): the command cannot be ' +
          'sent then (INVALID_PARAM), and without an error branch the call ends',
      ],
    ]);
  });
});
