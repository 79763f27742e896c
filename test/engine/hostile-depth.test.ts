/**
 * How deep a flow's values can get, and that every stage takes the deepest. The call state cap (32 KB) would hold
 * some 4,600 levels; without a bound, 4,175 overflowed the stack in the engine's JSON.stringify (ENGINE_INTERNAL, the
 * call hung up). What bounds them is elsewhere: a lookup's answer nests at most 64 levels (TOO_DEEP past that), saved
 * whole it is 65 (`{ status, body }`), and CEL makes no value deeper than 64, so a flow nesting a value one `set:` at a
 * time stops there (RUNTIME_EXPRESSION, the variable left as it was) and reads the deepest a variable may hold.
 *
 * The deepest call (test/fixtures/deep-values/deepest.yaml: both at once, the caller's PIN, sensitive, at the deepest
 * level of the answer) is served, stored, shown by the admin API live and finished (the history), logged and recorded,
 * and its recording replays: the exact values everywhere, the PIN masked where it is, however deep.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { Recorder } from '../../src/http/recorder.js';
import type { HttpRunner } from '../../src/engine/http-wait.js';
import type { Value } from '../../src/flow/model.js';
import { nestedDeeper } from '../../src/protocol/json-depth.js';
import { parseScenario, runCase } from '../../src/testing/index.js';
import { replayRecording } from '../../src/testing/replay.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { Call, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';
import { logLines, logText } from '../helpers/log-lines.js';
import { withoutNoise } from '../helpers/noise.js';

const HOSTILE = new URL('../fixtures/hostile/', import.meta.url).pathname;
const DEEP = new URL('../fixtures/deep-values/', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const PIN = '4821';
/** The PIN as a number of its own, not inside a longer one (an epoch ms, a duration). */
const PIN_ALONE = new RegExp(`(?<!\\d)${PIN}(?!\\d)`);

/** `inner` inside `levels` maps { a: ... }. */
const nest = (levels: number, inner: Value): Value => {
  let v = inner;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};
/** How many levels of arrays and objects `v` nests. */
const depthOf = (v: unknown): number => {
  let d = 0;
  while (nestedDeeper(v, d)) d++;
  return d;
};

describe('a value a flow nests one level per set', () => {
  it('stops at 64 levels: the 65th set fails (RUNTIME_EXPRESSION), handlers.error, the call goes on', async () => {
    const flow = await yamlFlow(readFileSync(join(HOSTILE, 'set-nesting.yaml'), 'utf8'), 'set-nesting.yaml');
    const call = new Call(flow);
    call.start();
    const logs: string[][] = [];
    for (let i = 0; i < 70; i++) {
      call.result('1');
      logs.push(call.last?.kind === 'reply' ? (call.last.log ?? []).map((l) => `${l.code}: ${l.msg}`) : []);
      expect(call.last?.kind === 'reply' && call.last.reply.command).toBe('read');
    }
    // the first request set 1 level, each result one more: 64 after the 63rd result, then refused every time
    expect(logs.slice(0, 63).flat()).toEqual([]);
    for (const l of logs.slice(63))
      expect(l).toEqual([
        'RUNTIME_EXPRESSION: set v = {"a": vars.v} at nest: the value is nested more than 64 levels deep; none ' +
          'of its assignments is kept: handlers.error (error RUNTIME_EXPRESSION)',
      ]);
    expect(depthOf(call.state!.vars.v)).toBe(64);
    expect(call.state!.vars.v).toEqual(nest(64, 0));
  });
});

describe('the deepest values a call can hold, through every stage', () => {
  let app: FastifyInstance | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('served, shown live and finished, logged, recorded and replayed, the sensitive value masked', async () => {
    const { logs, stream } = logLines();
    dir = mkdtempSync(join(tmpdir(), 'callscript-deep-'));
    const recorder = new Recorder(dir);
    // the deepest answer taken: 64 levels, the caller's PIN at the bottom (a sensitive value, masked wherever it is)
    const runner: HttpRunner = () => Promise.resolve({ ok: true, status: 200, body: nest(63, { x: PIN }) });
    app = Fastify({ logger: { level: 'debug', stream } });
    await app.register(callscript, {
      flowsDir: DEEP,
      admin: { login: 'boss', password: 's3cret' },
      recorder,
      http: { runner },
    });
    const a = app;
    const send = async (over: Partial<RtFields>) => {
      const res = await a.inject({
        method: 'POST',
        url: '/rt/deepest',
        headers: { 'content-type': 'application/json' },
        payload: rtBody({ callid: '909', ...over }),
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { command: string; command_id: number; params: Record<string, unknown> };
    };
    const prompt = (text: string) => ({ media_id: tts(text), max_digits: 1 });

    expect(await send({})).toMatchObject({ command: 'read', command_id: 1 });
    let r = await send({ command: 'read', command_id: 1, command_result: PIN });
    expect(r).toMatchObject({ command: 'read', command_id: 2, params: prompt('Level 0, status 200.') });
    // a condition reads the saved answer whole (65 levels); v, 64 levels, is not nested further: the set keeps
    // nothing (n neither) and takes handlers.error, the question again
    r = await send({ command: 'read', command_id: 2, command_result: '1' });
    expect(r).toMatchObject({ command: 'read', command_id: 3, params: prompt('Level 0, status 200.') });

    // the admin API shows them whole, live and finished (the history), the PIN masked at the deepest level
    const body = nest(63, { x: '***' });
    const vars = { pin: '***', v: body, n: 0, r: { status: 200, body } };
    expect([depthOf(vars.v), depthOf(vars.r)]).toEqual([64, 65]);
    const shown = async () => {
      const res = await a.inject({ method: 'GET', url: '/admin/calls/909', headers: { authorization: ADMIN } });
      expect(res.statusCode).toBe(200);
      return res.json() as { status: string; vars: Record<string, unknown> };
    };
    expect(await shown()).toMatchObject({ status: 'live', step: 'ask' });
    expect((await shown()).vars).toEqual(vars);

    r = await send({ command: 'read', command_id: 3, command_result: '9' });
    expect(r).toMatchObject({ command: 'hangup', command_id: 4 });
    await send({ command: 'hangup', command_id: 4, call_status: 'HANGUP' });
    await recorder.flush();

    expect(await shown()).toMatchObject({ status: 'finished' });
    expect((await shown()).vars).toEqual(vars);
    expect(withoutNoise(JSON.stringify(await shown()))).not.toMatch(PIN_ALONE);

    // the log lines without their timings and pid: numbers in which the PIN's digits may come up by chance
    const text = logText(logs);
    expect(withoutNoise(text)).not.toContain(PIN);
    const lines = logs.map((l) => JSON.parse(l) as { code?: string; msg: string; vars?: unknown });
    expect(lines.filter((l) => l.code).map((l) => `${l.code}: ${l.msg}`)).toEqual([
      'RUNTIME_EXPRESSION: set v = {"a": vars.v} at nest: the value is nested more than 64 levels deep; none of ' +
        'its assignments is kept: handlers.error (error RUNTIME_EXPRESSION)',
    ]);
    expect(lines.find((l) => l.msg === 'call ended')?.vars).toEqual(vars);

    // the recording holds the answer whole, the PIN masked, 64 levels deep inside the scenario's own; it replays
    const files = readdirSync(dir);
    expect(files).toEqual(['deepest-909.test.yaml']);
    const recording = readFileSync(join(dir, files[0]!), 'utf8');
    expect(withoutNoise(recording)).not.toMatch(PIN_ALONE);
    const c = parseScenario(recording, files[0]!).cases[0]!;
    expect(c.steps[1]).toMatchObject({ answer: { status: 200, body } });
    const flow = await yamlFlow(readFileSync(join(DEEP, 'deepest.yaml'), 'utf8'), 'deepest.yaml');
    expect(runCase(flow, c)).toMatchObject({ ok: true });
    expect(replayRecording(flow, recording)).toMatchObject({ ok: true });
  });
});
