/**
 * A media template that renders text (issue 22 item 11), in the tools: a scenario's failure and the simulator say
 * why the flow ended (RUNTIME_MEDIA), as the server's log does.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCase } from '../../src/testing/runner.js';
import { parseScenario } from '../../src/testing/scenario.js';
import { SimSession } from '../../src/testing/simulate.js';
import { yamlFlow } from '../engine/yaml.js';

const greeter = () => yamlFlow(readFileSync('test/fixtures/runtime-media/greeter.yaml', 'utf8'), 'greeter.yaml');
const WHY =
  'read at menu: media_id is {{ vars.greeting }} alone, a media computed at run time (a media id or ' +
  'TTS|voice|text), and it rendered text, "Welcome to Acme. Press 1."; taking the error branch (INVALID_PARAM)';

describe('RUNTIME_MEDIA in the tools', () => {
  it('callscript test: the failure says the flow ended on RUNTIME_MEDIA, and why', async () => {
    const s = parseScenario('flow: greeter\ncases:\n  - name: c\n    steps:\n      - expect: read\n', 'g.test.yaml');
    expect(runCase(await greeter(), s.cases[0]!).failure?.message).toBe(
      `expected read, got hangup (from flow step "menu"); the flow ended on RUNTIME_MEDIA: ${WHY}`,
    );
  });

  it('simulate: the note names the code, says why, and how to fix it', async () => {
    const s = new SimSession(await greeter());
    const ev = s.start();
    expect(ev).toContainEqual({
      kind: 'note',
      text: expect.stringMatching(/^error RUNTIME_MEDIA: read at menu: .*\(To speak the text, write \{ say:/),
    });
    expect(ev.find((e) => e.kind === 'note')).toMatchObject({ text: expect.stringContaining(WHY) });
  });
});
