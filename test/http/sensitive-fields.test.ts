/**
 * Sensitive fields (`sensitive: [patient.body.dob, patient.body.ids.national]`): a lookup's answer holds a date of
 * birth and a national number among other fields; a whole call through the plugin, then every place that shows or
 * stores the call is searched for those two values: the admin API (live and finished: the call history and
 * `callscript trace`), the log lines, the spans, the recording and the call store (sealed with a key). Each shows the
 * field `***`, its siblings as they are; the call itself still compares the year typed with the date.
 * Fixture: test/fixtures/sensitive-fields/patient.yaml.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { Recorder } from '../../src/http/recorder.js';
import { MemoryStore } from '../../src/store/memory.js';
import { traceText, type CallDetail } from '../../src/cli/calls-format.js';
import { parseRecording } from '../../src/testing/record.js';
import type { HttpRunner } from '../../src/engine/http-wait.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { recordSpans } from '../helpers/spans.js';
import { logLines } from '../helpers/log-lines.js';

const FLOWS = new URL('../fixtures/sensitive-fields', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const KEY = randomBytes(32).toString('hex');
const DOB = '1980-05-04';
const NATIONAL = '180057512345';
const BODY = { name: 'Ann', next: '2026-12-03', dob: DOB, ids: { national: NATIONAL, file: 'F-77' } };
const SHOWN = { status: 200, body: { ...BODY, dob: '***', ids: { national: '***', file: 'F-77' } } };

const exporter = recordSpans();

let app: FastifyInstance | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  exporter.reset();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const runner: HttpRunner = async () => ({ ok: true, status: 200, body: BODY });

async function server(store: MemoryStore): Promise<{ app: FastifyInstance; logs: string[]; recorder: Recorder }> {
  const { logs, stream } = logLines();
  dir = mkdtempSync(join(tmpdir(), 'callscript-sensitive-fields-'));
  const recorder = new Recorder(dir);
  app = Fastify({ logger: { level: 'debug', stream } });
  await app.register(callscript, {
    flowsDir: FLOWS,
    store,
    sensitiveKeys: [KEY],
    admin: { login: 'boss', password: 's3cret' },
    recorder,
    http: { runner, allowPrivate: true },
  });
  return { app, logs, recorder };
}

type Reply = { command: string; command_id: number; params: Record<string, unknown> };

async function send(a: FastifyInstance, over: Partial<RtFields>): Promise<Reply> {
  const res = await a.inject({
    method: 'POST',
    url: '/rt/patient',
    headers: { 'content-type': 'application/json' },
    payload: rtBody({ callid: '901', ...over }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return JSON.parse(res.body) as Reply;
}

async function detail(a: FastifyInstance): Promise<CallDetail & { vars: Record<string, unknown> }> {
  const r = await a.inject({ method: 'GET', url: '/admin/calls/901', headers: { authorization: ADMIN } });
  expect(r.statusCode, r.body).toBe(200);
  expect(r.body).not.toContain(DOB);
  expect(r.body).not.toContain(NATIONAL);
  return r.json();
}

const clear = (text: string) => {
  expect(text).not.toContain(DOB);
  expect(text).not.toContain(NATIONAL);
};

describe('sensitive fields of a lookup answer', () => {
  it('are *** in the admin API, history, trace, logs, spans, recording and store; the rest is shown', async () => {
    const store = new MemoryStore();
    const { app: a, logs, recorder } = await server(store);
    let r = await send(a, {});
    expect(r.params.media_id).toBe('TTS|TTS_EN-GB_SERENA|Hello Ann, your appointment is on 2026-12-03.');
    expect((await detail(a)).vars).toEqual({ patient: SHOWN });
    clear(JSON.stringify((await store.get('901')) ?? null));
    r = await send(a, { command: r.command, command_id: r.command_id, command_result: '0' });
    // the call reads the field: the year typed is compared with the date of birth
    r = await send(a, { command: r.command, command_id: r.command_id, command_result: '1980' });
    expect(r.params.media_id).toBe('TTS|TTS_EN-GB_SERENA|Thank you.');
    expect((await detail(a)).vars).toEqual({ patient: SHOWN, year: '1980' });
    r = await send(a, { command: r.command, command_id: r.command_id, command_result: '0' });
    expect(r.command).toBe('hangup');
    await send(a, { command: 'hangup', command_id: r.command_id, call_status: 'HANGUP' });
    await recorder.flush();

    const lines = logs.map((l) => JSON.parse(l) as { msg: string; vars?: unknown });
    expect(lines.find((l) => l.msg === 'call ended')?.vars).toEqual({ patient: SHOWN, year: '1980' });
    expect(logs.join('')).toContain('F-77');
    clear(logs.join(''));

    const rec = await vi.waitFor(async () => {
      const d = await detail(a);
      if (d.status !== 'finished') throw new Error('not finished yet');
      return d;
    });
    expect(rec.vars).toEqual({ patient: SHOWN, year: '1980' });
    clear(traceText(rec));
    clear(JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes)));

    const file = join(dir!, readdirSync(dir!)[0]!);
    const recording = readFileSync(file, 'utf8');
    clear(recording);
    expect(recording).toContain('F-77');
    clear(JSON.stringify((await store.get('901')) ?? null));
    // the recording keeps the answer with the fields *** (a replay answers that: a condition reading them differs)
    const answer = parseRecording(recording).cases[0]!.steps[0]!.answer;
    expect(answer).toMatchObject({ status: 200, body: SHOWN.body });
  });
});
