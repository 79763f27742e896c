/**
 * Recordings, pure: a call's exchanges (driven here with `advance`, as the call service
 * does) become a scenario file that the scenario runner passes and `replayRecording`
 * replays green; edits of the flow are reported at the request where they show.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { advance } from '../../src/engine/advance.js';
import type { EffectResult } from '../../src/engine/outcome.js';
import type { CallState } from '../../src/engine/types.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import type { RtRequest } from '../../src/protocol/rt.js';
import {
  buildRecording,
  parseRecording,
  recordingFileName,
  recordingYaml,
  type Exchange,
} from '../../src/testing/record.js';
import { replayRecording } from '../../src/testing/replay.js';
import { runCase } from '../../src/testing/runner.js';
import { parseScenario } from '../../src/testing/scenario.js';
import { yamlFlow } from '../engine/yaml.js';
import { req as request } from '../engine/helpers.js';

const CONFIRM = readFileSync(new URL('../fixtures/sms-flows/confirm.yaml', import.meta.url), 'utf8');
const FRONT_DESK = readFileSync(new URL('../../flows/front-desk.yaml', import.meta.url), 'utf8');
const NOW = Date.parse('2026-11-22T10:00:00Z');

type Reported = string | { error: string } | { status: string };

/** A call as the call service runs it, collecting its exchanges; the last reported is usually a status. */
function drive(
  flow: CompiledFlow,
  reported: Reported[],
  sms: EffectResult[] = [],
  fields: Partial<RtRequest> = {},
): Exchange[] {
  const base: RtRequest = request({
    app: 'APP00001',
    callid: '1234',
    cli_name: '',
    cli_number: '+447700900123',
    date_started: '2026-11-22 10:00:00',
    number: '+442079460000',
    ...fields,
  });
  const out: Exchange[] = [];
  let state: CallState | undefined;
  let req = base;
  let smsUsed = 0;
  for (let i = 0; ; i++) {
    let o = advance(flow, state, req, { now: NOW, unknownCall: 'restart' });
    const effects: Exchange['effects'] = [];
    while (o.kind === 'effect') {
      const result = sms[smsUsed++] ?? { ok: true, value: 'SMS00001' };
      effects.push({ effect: o.effect, result });
      o = o.resume(result);
    }
    if (o.kind !== 'reply') throw new Error(`unexpected ${o.kind}`);
    out.push({
      request: req,
      flow: { name: flow.name, version: flow.version },
      now: NOW,
      effects,
      reply: o.reply,
      ...(o.state ? { step: o.state.step } : {}),
      ended: !o.state,
    });
    if (!o.state) return out;
    state = o.state;
    const r = reported[i] ?? (o.reply.command === 'hangup' ? { status: 'HANGUP' } : undefined);
    if (r === undefined) throw new Error(`nothing reported for ${o.reply.command}`);
    req = { ...base, command: o.reply.command, command_id: o.reply.command_id };
    if (typeof r === 'string') req.command_result = r;
    else if ('error' in r) req.command_error = r.error;
    else req.call_status = r.status as RtRequest['call_status'];
  }
}

describe('recordings', () => {
  it('an sms call: effects as steps, their outcomes as mocks, full params; runner and replay pass', async () => {
    const flow = await yamlFlow(CONFIRM, 'confirm.yaml');
    const ex = drive(flow, ['0'], [{ ok: false, error: 'REJECTED', message: 'bad number' }]);
    const rec = buildRecording(ex, new Date('2026-11-22T11:00:00Z'));
    expect(rec.cases[0]!.mocks).toEqual({ sms: [{ error: 'REJECTED' }], now: '2026-11-22T10:00:00.000Z' });
    expect(rec.cases[0]!.steps).toEqual([
      {
        expect: { sms: { to: '+447700900123', from: 'Acme', body: 'Your ticket is confirmed.', nature: 'ALERTING' } },
        at: 'confirm',
      },
      {
        expect: { command: 'play', params: { media_id: expect.stringContaining('Not sent: REJECTED.') } },
        result: '0',
        at: 'failed',
      },
      { expect: { command: 'hangup', params: {} }, at: 'end' },
    ]);
    const text = recordingYaml(rec);
    expect(text.split('\n')[0]).toBe(
      `# Recorded by callscript serve --record: flow confirm, version ${flow.version}, 2026-11-22T11:00:00.000Z`,
    );
    expect(parseRecording(text)).toMatchObject({
      flow: 'confirm',
      version: flow.version,
      recorded: '2026-11-22T11:00:00.000Z',
    });
    expect(replayRecording(flow, text)).toMatchObject({ ok: true, divergences: [] });
    // An ordinary scenario file: the scenario runner passes it.
    const scenario = parseScenario(text, 'confirm-1234.test.yaml');
    expect(scenario.cases.map((c) => runCase(flow, c).ok)).toEqual([true]);

    // The SMS text changed: the replay stops at the sms step of the first request.
    const edited = await yamlFlow(
      CONFIRM.replace('Your ticket is confirmed.', 'Your ticket is booked.'),
      'confirm.yaml',
    );
    const [d] = replayRecording(edited, text).divergences;
    expect(d).toMatchObject({
      request: 1,
      stepIndex: 0,
      flowStep: 'confirm',
      expected: { sms: { body: 'Your ticket is confirmed.' } },
      actual: { sms: { body: 'Your ticket is booked.' } },
    });
  });

  it(
    'a param added by the new version is a divergence (params are compared in full), which the subset-matching ' +
      'runner lets pass',
    async () => {
      const flow = await yamlFlow(FRONT_DESK, 'flows/front-desk.yaml');
      const text = recordingYaml(buildRecording(drive(flow, ['0', '2', { status: 'HANGUP' }])));
      expect(replayRecording(flow, text).ok).toBe(true);
      const before = '      cdr_field: accounts\n';
      expect(FRONT_DESK).toContain(before);
      const edited = await yamlFlow(
        FRONT_DESK.replace(before, before + '      whisper: "Accounts call."\n'),
        'flows/front-desk.yaml',
      );
      const [d] = replayRecording(edited, text).divergences;
      expect(d).toMatchObject({
        request: 3,
        stepIndex: 2,
        flowStep: 'accounts',
        actual: { command: 'dialout', params: { whisper: 'TTS|TTS_EN-GB_SERENA|Accounts call.' } },
      });
      expect(d!.expected).not.toHaveProperty('params.whisper');
      expect(runCase(edited, parseScenario(text, 'r.test.yaml').cases[0]!).ok).toBe(true);
    },
  );

  it('the call ending earlier or later than recorded is reported', async () => {
    const flow = await yamlFlow(FRONT_DESK, 'flows/front-desk.yaml');
    const rec = buildRecording(drive(flow, ['0', '1', { status: 'HANGUP' }]));
    const cut = {
      ...rec,
      cases: [
        {
          ...rec.cases[0]!,
          steps: rec.cases[0]!.steps.slice(0, 1).map((s) => ({ ...s, status: 'HANGUP', result: undefined })),
        },
      ],
    };
    expect(replayRecording(flow, cut).ok).toBe(true);
    const hungUpEarly = await yamlFlow(
      FRONT_DESK.replace(
        '    say: "Thank you for calling {{ vars.company }}."\n    next: menu',
        '    say: "Thank you for calling {{ vars.company }}."\n    next: end',
      ),
      'flows/front-desk.yaml',
    );
    const [d] = replayRecording(hungUpEarly, rec).divergences;
    expect(d).toMatchObject({
      request: 2,
      stepIndex: 1,
      expected: { command: 'read' },
      actual: { command: 'hangup', params: {} },
      flowStep: 'end',
    });
  });

  it('file names: <flow>-<callid>.test.yaml', () => {
    expect(recordingFileName('front-desk', '12345678901234567890')).toBe('front-desk-12345678901234567890.test.yaml');
    expect(recordingFileName('a/b', '1')).toBe('a_b-1.test.yaml');
  });
});
