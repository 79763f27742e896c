/**
 * Sensitive values in the tools' output: the simulator (its events, `v`, its notes) and a
 * replay's divergence never show them; a recording replays with its masked results.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { render, SimSession } from '../../src/testing/simulate.js';
import { replayRecording } from '../../src/testing/replay.js';
import { formatCase, loadFlowDir, parseScenario, runCase } from '../../src/testing/index.js';
import { withoutNoise } from '../helpers/noise.js';

const FLOW = 'test/fixtures/sensitive/pin-line.yaml';
const PIN = '4821';
const CARD = '7395';

async function pinLine(text?: string) {
  const t = text ?? (await readFile(FLOW, 'utf8'));
  const { model } = checkFlow(t, FLOW);
  return compileFlow(model!, t);
}

describe('the simulator', () => {
  it('shows sensitive vars as *** in its events, v and its end, and scrubs its notes', async () => {
    const s = new SimSession(await pinLine());
    const shown: string[] = [];
    const keep = (evs: ReturnType<SimSession['start']>) => shown.push(...evs.map((e) => render(e)));
    keep(s.start());
    keep(s.answer({ kind: 'result', result: '314159' }));
    keep(s.answer({ kind: 'result', result: PIN }));
    expect(s.vars).toEqual({ account: '314159', pin: '***' });
    keep(s.answer({ kind: 'result', result: CARD })); // no branch: a note of the engine's log line
    const text = shown.join('');
    expect(text).toContain('UNHANDLED_RESULT_AT_RUNTIME');
    expect(text).toContain('pin="***"');
    expect(withoutNoise(text)).not.toContain(PIN);
    expect(text).not.toContain(CARD);
  });
});

describe('replay', () => {
  it("a divergence never shows the flow's sensitive values", async () => {
    // the flow (wrongly) speaks the PIN: the replay of a recording made before shows *** for it
    const base = await readFile(FLOW, 'utf8');
    const flow = await pinLine(
      base.replace('granted: { say: "Welcome back."', 'granted: { say: "Welcome back, {{ vars.pin }}."'),
    );
    const recording = `flow: pin-line
cases:
  - name: recorded
    call: {}
    steps:
      - expect:
          { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter your account number.", max_digits: 6 } }
        result: "314159"
      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter your PIN.", max_digits: 4 } }
        result: "${PIN}"
      - expect:
          command: read
          params: { media_id: "TTS|TTS_EN-GB_SERENA|Enter the last four digits of your card.", max_digits: 4 }
        result: "1111"
      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Welcome back." } }
`;
    const r = replayRecording(flow, recording);
    const d = r.divergences[0]!;
    expect(d.message).toContain('Welcome back, ***.');
    expect(withoutNoise(JSON.stringify(d.actual))).not.toContain(PIN);
  });
});

describe('a sensitive value given to a module and returned (test/fixtures/sensitive-module)', () => {
  const DIR = 'test/fixtures/sensitive-module';

  it('the simulator shows the module param and the saved copy as ***', async () => {
    const flow = (await loadFlowDir(DIR)).byName.get('pin-main')!;
    const s = new SimSession(flow);
    const shown: string[] = [];
    const keep = (evs: ReturnType<SimSession['start']>) => shown.push(...evs.map((e) => render(e)));
    keep(s.start());
    keep(s.answer({ kind: 'result', result: PIN }));
    expect(s.vars).toEqual({ code: '***' });
    keep(s.answer({ kind: 'result', result: 'LEFT_CONFERENCE' }));
    keep(s.answer({ kind: 'result', result: PIN }));
    expect(s.vars).toEqual({ pin: '***', confirmed: '***' });
    const text = shown.join('');
    expect(text).toContain('code="***"');
    expect(text).toContain('confirmed="***"');
    expect(withoutNoise(text)).not.toContain(PIN);
  });

  it("callscript test shows the saved copy's actual value as *** in a failure", async () => {
    const flows = await loadFlowDir(DIR);
    const scenario = [
      'flow: pin-main',
      'cases:',
      '  - name: wrong copy',
      '    steps:',
      '      - expect: read',
      `        result: "${PIN}"`,
      '      - expect: conference',
      '        result: LEFT_CONFERENCE',
      '      - expect: read',
      `        result: "${PIN}"`,
      '      - expect: { command: read, vars: { confirmed: "0000" } }',
    ].join('\n');
    const c = parseScenario(scenario, 't.test.yaml').cases[0]!;
    const out = formatCase('t.test.yaml', runCase(flows.byName.get('pin-main')!, c));
    expect(out).toEqual([
      '✗ t.test.yaml › wrong copy',
      '    t.test.yaml:11: step 4: vars.confirmed differs (at flow step "menu")',
      '      - vars.confirmed: "0000"',
      '      + vars.confirmed: *** (sensitive: not shown)',
    ]);
  });
});
