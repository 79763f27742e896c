/**
 * A step whose media names a prompt (`{ prompt: name }`) whose entry holds a template is a
 * templated step: when the entry fails to render (a say_time of a text it cannot read), the
 * step takes its error way (none: the call ends), a branch's `say` is skipped, as for a template written in the step;
 * it was compiled as constant params and the request failed with an engine error.
 */
import { describe, expect, it } from 'vitest';
import { Call, reply, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';

const flow = (step: string) => `version: 2
start: a
languages:
  en-GB: { voice: TTS_EN-GB_SERENA }
language: { default: en-GB }
vars: { t: "quarter past" }
prompts:
  at: { en-GB: "At {{ vars.t | say_time }}." }
steps:
${step}
  sorry: { say: "Sorry.", next: bye }
  bye: { hangup: {} }
`;

describe('prompt table entries that fail to render', () => {
  it('a read takes its error way', async () => {
    const c = new Call(
      await yamlFlow(
        flow('  a:\n    read: { prompt: { prompt: at }, max_digits: 1 }\n' + '    on: { default: bye, error: sorry }'),
      ),
    );
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Sorry.') }));
  });

  it('a say step without an error way ends as the same template written in the step does', async () => {
    const named = new Call(await yamlFlow(flow('  a: { say: { prompt: at }, next: sorry }')));
    const inline = new Call(await yamlFlow(flow('  a: { say: "At {{ vars.t | say_time }}.", next: sorry }')));
    expect(named.start()).toBe(reply('hangup', 1));
    expect(inline.start()).toBe(reply('hangup', 1));
  });

  it("a branch's say is skipped", async () => {
    const c = new Call(
      await yamlFlow(
        flow(
          '  a:\n    read: { prompt: "Menu.", max_digits: 1 }\n' +
            '    on: { default: { say: { prompt: at }, goto: sorry } }',
        ),
      ),
    );
    expect(c.start()).toBe(reply('read', 1, { media_id: tts('Menu.'), max_digits: 1 }));
    expect(c.result('5')).toBe(reply('play', 2, { media_id: tts('Sorry.') }));
  });

  it('the same prompt renders when the value is a time', async () => {
    const c = new Call(
      await yamlFlow(flow('  a: { say: { prompt: at }, next: sorry }').replace('quarter past', '18:45')),
    );
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('At 18:45.') }));
  });
});
