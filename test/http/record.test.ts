/**
 * `serve --record`: a call through fastify.inject is written as a scenario file when it
 * ends; the file replays green on the same flow version, and after an edit of the flow
 * (a prompt text, a branch target) the replay names the request where it diverges.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createServer } from '../../src/http/server.js';
import { Recorder } from '../../src/http/recorder.js';
import { replayRecording } from '../../src/testing/replay.js';
import { runCase } from '../../src/testing/runner.js';
import { parseScenario } from '../../src/testing/scenario.js';
import { yamlFlow } from '../engine/yaml.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import type { FastifyInstance } from 'fastify';

const FLOWS = new URL('../../flows', import.meta.url).pathname;
const FRONT_DESK = readFileSync(join(FLOWS, 'front-desk.yaml'), 'utf8');

let dir: string;
let app: FastifyInstance | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callscript-record-'));
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A call driven by hand: each request reports the last reply's command with a result. */
async function call(
  a: FastifyInstance,
  url: string,
  fields: Partial<RtFields>,
  results: (string | { error: string } | { status: string })[],
): Promise<{ command: string; params: unknown }[]> {
  const replies: { command: string; command_id: number; params: unknown }[] = [];
  const send = async (over: Partial<RtFields>) => {
    const res = await a.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: rtBody({ ...fields, ...over }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const r = JSON.parse(res.body) as { command: string; command_id: number; params: unknown };
    replies.push(r);
    return r;
  };
  let last = await send({});
  for (const x of results) {
    const over: Partial<RtFields> = { command: last.command, command_id: last.command_id };
    if (typeof x === 'string') over.command_result = x;
    else if ('error' in x) over.command_error = x.error;
    else over.call_status = x.status;
    last = await send(over);
  }
  return replies;
}

async function recordingServer(): Promise<Recorder> {
  const recorder = new Recorder(dir);
  const s = await createServer({ flowsDir: FLOWS, logLevel: false, recorder });
  app = s.app;
  return recorder;
}

describe('serve --record', () => {
  it('writes a finished call as a scenario file that replays green on the same version', async () => {
    const recorder = await recordingServer();
    const fields = { callid: '7001', cli_number: '+447700900123', variables: { crm: 'A-1' } };
    await call(app!, '/rt/front-desk', fields, ['0', '9', '0', '1', { status: 'HANGUP' }]);
    expect(recorder.open).toBe(0);
    await recorder.flush();
    expect(readdirSync(dir)).toEqual(['front-desk-7001.test.yaml']);
    const text = readFileSync(join(dir, 'front-desk-7001.test.yaml'), 'utf8');
    const version = (await yamlFlow(FRONT_DESK, 'flows/front-desk.yaml')).version;
    expect(text).toMatch(
      new RegExp(
        `^# Recorded by callscript serve --record: flow front-desk, version ${version}, \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
    const data = parse(text) as {
      flow: string;
      cases: { call: Record<string, unknown>; steps: Record<string, unknown>[]; mocks: { now: string } }[];
    };
    expect(data.flow).toBe('front-desk');
    expect(data.cases[0]!.call).toMatchObject({
      caller: '+447700900123',
      callid: '7001',
      variables: { crm: 'A-1' },
      request_hash: null,
    });
    // each step's now: is the clock of the request that reported it, when it moved on (ms apart here)
    const times = [data.cases[0]!.mocks.now, ...data.cases[0]!.steps.map((s) => s.now)].filter(
      (t): t is string => t !== undefined,
    );
    expect(times.every((t) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(t))).toBe(true);
    expect([...times].sort()).toEqual(times);
    expect(data.cases[0]!.steps.map(({ now: _now, ...s }) => s)).toEqual([
      {
        expect: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Thank you for calling Acme.' } },
        result: '0',
      },
      { expect: { command: 'read', params: expect.objectContaining({ max_digits: 1 }) }, result: '9' },
      {
        expect: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Sorry, 9 is not one of the choices.' } },
        result: '0',
      },
      { expect: { command: 'read', params: expect.objectContaining({ max_digits: 1 }) }, result: '1' },
      { expect: { command: 'dialout', params: expect.objectContaining({ cdr_field: 'sales' }) }, status: 'HANGUP' },
    ]);
    expect(text).toContain('# step welcome');
    const flow = await yamlFlow(FRONT_DESK, 'flows/front-desk.yaml');
    const report = replayRecording(flow, text);
    expect(report).toMatchObject({ ok: true, divergences: [], recordedVersion: version, version });
    // An ordinary scenario file: `callscript test` runs it.
    const scenario = parseScenario(text, 'front-desk-7001.test.yaml');
    expect(scenario.flow).toBe('front-desk');
    expect(scenario.cases.map((c) => runCase(flow, c).ok)).toEqual([true]);
  });

  it('after a prompt text edit, replay reports the request with expected vs actual', async () => {
    const recorder = await recordingServer();
    await call(app!, '/rt/front-desk', { callid: '7002', cli_number: '+447700900123' }, [
      '0',
      '1',
      { status: 'HANGUP' },
    ]);
    await recorder.flush();
    const text = readFileSync(join(dir, 'front-desk-7002.test.yaml'), 'utf8');
    const edited = await yamlFlow(
      FRONT_DESK.replace('"For sales, press 1. For accounts', '"For sales, press 1 now. For accounts'),
      'flows/front-desk.yaml',
    );
    const report = replayRecording(edited, text);
    expect(report.ok).toBe(false);
    const [d] = report.divergences;
    expect(d).toMatchObject({ request: 2, stepIndex: 1, flowStep: 'menu' });
    expect(JSON.stringify(d!.expected)).toContain('For sales, press 1. For accounts');
    expect(JSON.stringify(d!.actual)).toContain('For sales, press 1 now. For accounts');
    const lines = text.split('\n');
    expect(lines[d!.line! - 1]).toMatch(/^\s*- expect:/);
    expect(lines[d!.line!]).toMatch(/^\s*command: read$/);
    expect(lines[d!.line! - 2]).toMatch(/^\s*# step menu$/);
    expect(d!.message).toMatch(
      /^request 2 \(step 2 of the recording\): expected read .*the flow answered read .* at step "menu"$/,
    );
  });

  it('after a branch target edit, replay reports the request that took the branch', async () => {
    const recorder = await recordingServer();
    await call(app!, '/rt/front-desk', { callid: '7003', cli_number: '+447700900123' }, [
      '0',
      '1',
      'NOANSWER',
      '0',
      { status: 'HANGUP' },
    ]);
    await recorder.flush();
    const text = readFileSync(join(dir, 'front-desk-7003.test.yaml'), 'utf8');
    const before = 'NOANSWER: { say: "Our sales team is busy at the moment.", goto: operator }';
    expect(FRONT_DESK).toContain(before);
    const edited = await yamlFlow(
      FRONT_DESK.replace(before, before.replace('goto: operator', 'goto: goodbye')),
      'flows/front-desk.yaml',
    );
    const [d] = replayRecording(edited, text).divergences;
    expect(d).toMatchObject({
      request: 5,
      stepIndex: 4,
      flowStep: 'goodbye',
      expected: { command: 'dialout', params: { cdr_field: 'operator' } },
      actual: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Thank you for calling. Goodbye.' } },
    });
  });

  it('a call still running is not written; a failed write is reported, the replies are not affected', async () => {
    const recorder = await recordingServer();
    await call(app!, '/rt/front-desk', { callid: '7004', cli_number: '+447700900123' }, ['0']);
    await recorder.flush();
    expect(recorder.open).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
    await app!.close();

    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'a file, not a directory');
    const errors: string[] = [];
    const failing = new Recorder(blocked, { onError: (_e, callid) => errors.push(callid) });
    app = (await createServer({ flowsDir: FLOWS, logLevel: false, recorder: failing })).app;
    await call(app, '/rt/front-desk', { callid: '7005', cli_number: '+447700900123' }, ['0', { status: 'HANGUP' }]);
    await failing.flush();
    expect(errors).toEqual(['7005']);
  });

  it('a recording past its bytes (one call, or all the calls recorded) is dropped and reported', async () => {
    const errors: string[] = [];
    const recorder = new Recorder(dir, {
      maxCallBytes: 50_000,
      maxBytes: 80_000,
      onError: (e) => errors.push((e as Error).message),
    });
    app = (await createServer({ flowsDir: FLOWS, logLevel: false, recorder })).app;
    const who = { cli_number: '+447700900123' };
    const last: Record<string, { command: string; command_id: number }> = {};
    const run = async (id: string, results: string[]) => {
      const replies = await call(app!, '/rt/front-desk', { callid: id, ...who }, results);
      last[id] = replies.at(-1) as unknown as { command: string; command_id: number };
    };
    // one call: its second request of 30 KB takes it past 50 000 bytes
    await run('7010', ['0', '9'.repeat(30_000), '9'.repeat(30_000)]);
    expect(errors).toEqual(['the recording of call 7010 is dropped: its exchanges are over 50000 bytes']);
    // calls open, 35 KB each: the third goes past 80 000 bytes in all
    await run('7011', ['0', '9'.repeat(35_000)]);
    await run('7012', ['0', '9'.repeat(35_000)]);
    expect(errors).toHaveLength(1);
    await run('7013', ['0', '9'.repeat(35_000)]);
    expect(errors.slice(1)).toEqual([
      'the recording of call 7013 is dropped: the calls being recorded are over 80000 bytes',
    ]);
    // the dropped calls are not written when they end; the others are
    for (const id of ['7010', '7011', '7013']) {
      const r = await app!.inject({
        method: 'POST',
        url: '/rt/front-desk',
        headers: { 'content-type': 'application/json' },
        payload: rtBody({ callid: id, ...who, ...last[id], call_status: 'HANGUP' }),
      });
      expect(r.statusCode).toBe(200);
    }
    await recorder.flush();
    expect(readdirSync(dir)).toEqual(['front-desk-7011.test.yaml']);
    expect(recorder.open).toBe(1); // 7012, still running
  });
});
