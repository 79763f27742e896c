/**
 * `serve --record` with a queue step (issue 24): two calls through fastify.inject share the memory store's line, one
 * agent; the second waits (an announcement, a hold chunk) until the first's call ends, then is rung. Its recording
 * holds every queue operation as a step with the store's answer; it replays green (`replayRecording`, and
 * `callscript test`, which compares a recording's params in full), and after an edit of the queue (its ring time)
 * both name the operation that differs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../../src/http/server.js';
import { Recorder } from '../../src/http/recorder.js';
import { replayRecording } from '../../src/testing/replay.js';
import { runCase } from '../../src/testing/runner.js';
import { parseScenario } from '../../src/testing/scenario.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { compiled, LINE } from '../testing/queue-fixture.js';

const ONE = LINE.replace('agents: ["+442079460001", "+442079460002"]', 'agents: ["+442079460001"]');

let dir: string;
let flows: string;
let app: FastifyInstance | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callscript-record-queue-'));
  flows = mkdtempSync(join(tmpdir(), 'callscript-record-queue-flows-'));
  writeFileSync(join(flows, 'line.yaml'), ONE);
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  rmSync(dir, { recursive: true, force: true });
  rmSync(flows, { recursive: true, force: true });
});

type Reply = { command: string; command_id: number; params: Record<string, unknown> };

/** One call, request by request: `next` reports on its last reply. */
function caller(a: FastifyInstance, callid: string) {
  let last: Reply | undefined;
  const send = async (over: Partial<RtFields>) => {
    const res = await a.inject({
      method: 'POST',
      url: '/rt/line',
      headers: { 'content-type': 'application/json' },
      payload: rtBody({ callid, cli_number: '+447700900123', ...over }),
    });
    expect(res.statusCode, res.body).toBe(200);
    last = JSON.parse(res.body) as Reply;
    return last;
  };
  return {
    start: () => send({}),
    next: (x: string | { status: string }) =>
      send({
        command: last!.command,
        command_id: last!.command_id,
        ...(typeof x === 'string' ? { command_result: x } : { call_status: x.status }),
      }),
  };
}

describe('serve --record and a queue', () => {
  it('records each queue operation with its answer; the recording replays green, and names an edit', async () => {
    const recorder = new Recorder(dir);
    const s = await createServer({ flowsDir: flows, logLevel: false, recorder });
    app = s.app;
    const a = caller(app, '8001');
    const b = caller(app, '8002');
    await a.start();
    expect((await a.next('0')).command).toBe('dialout'); // a rings the one agent
    await b.start();
    expect((await b.next('0')).params).toEqual({ media_id: 'TTS|TTS_EN-GB_SERENA|You are number 1 in line.' });
    expect((await b.next('0')).params).toEqual({ media_id: 'TTS|TTS_EN-GB_SERENA|Please hold.' });
    await a.next({ status: 'HANGUP' }); // a's call is over: done, the agent is free (no wrap-up)
    expect((await b.next('0')).params).toMatchObject({ targets: [{ number: '+442079460001', timeout: 15 }] });
    await b.next({ status: 'HANGUP' });
    await recorder.flush();
    expect(readdirSync(dir).sort()).toEqual(['line-8001.test.yaml', 'line-8002.test.yaml']);
    const text = readFileSync(join(dir, 'line-8002.test.yaml'), 'utf8');
    const steps = (parse(text) as { cases: { steps: Record<string, unknown>[] }[] }).cases[0]!.steps;
    const poll = {
      op: 'poll',
      name: 'sales',
      agents: ['+442079460001'],
      strategy: 'in_order',
      ring_time: 15,
      wrap_up: 0,
      max_wait: 600,
      handle_time: 180,
      max_talk: 7200,
    };
    expect(steps.map(({ now: _n, ...x }) => x)).toEqual([
      { expect: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Welcome.' } }, result: '0' },
      {
        expect: { queue: poll },
        answer: { result: 'wait', position: 1, waited: 0, expected_wait: 180, agents: 1, free: 0 },
      },
      {
        expect: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|You are number 1 in line.' } },
        result: '0',
      },
      { expect: { queue: poll }, answer: expect.objectContaining({ result: 'wait', position: 1, agents: 1 }) },
      { expect: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Please hold.' } }, result: '0' },
      {
        expect: { queue: poll },
        answer: expect.objectContaining({ result: 'ring', agent: '+442079460001', position: 1, agents: 1 }),
      },
      {
        expect: { command: 'dialout', params: { targets: [{ number: '+442079460001', timeout: 15 }] } },
        status: 'HANGUP',
      },
    ]);
    expect(text).toContain('      # step wait_line\n      - expect:\n          queue:');
    // replayed as recorded: the store's answers, not a line of the replay's
    const flow = compiled(ONE, join(flows, 'line.yaml'));
    expect(replayRecording(flow, text)).toMatchObject({ ok: true, divergences: [] });
    const scenario = parseScenario(text, 'line-8002.test.yaml');
    expect(scenario.recorded).toBe(true);
    expect(runCase(flow, scenario.cases[0]!, { wholeParams: true }).failure).toBeUndefined();
    // an edit of the queue: the operation that differs, in both
    const edited = compiled(ONE.replace('ring_time: 15', 'ring_time: 20'), join(flows, 'line.yaml'));
    const report = replayRecording(edited, text);
    expect(report.ok).toBe(false);
    expect(report.divergences[0]).toMatchObject({ request: 2, stepIndex: 1, flowStep: 'wait_line' });
    expect(report.divergences[0]!.message).toMatch(
      /^request 2 \(step 2 of the recording\): expected queue \{"op":"poll",.*"ring_time":15,.*\}, the flow answered queue \{"op":"poll",.*"ring_time":20,.*\} at step "wait_line"$/,
    );
    expect(runCase(edited, scenario.cases[0]!, { wholeParams: true }).failure).toMatchObject({
      step: 1,
      message: 'queue: params differ (from flow step "wait_line")',
      diff: ['- params.ring_time: 15', '+ params.ring_time: 20'],
    });
  });
});
