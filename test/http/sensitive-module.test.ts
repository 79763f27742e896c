/**
 * Sensitive values passed to a module (`with:`) and back (`return` and `save:`): sensitivity follows the value, so the
 * PIN the caller holds is `***` in every place that shows or stores the call: the admin API (live, inside the module
 * and after the return; finished), the call history, the log lines (the call-ended line's vars, the others scrubbed),
 * the spans, `callscript trace`, the recording, the call store (sealed with a key: memory, and Redis when reachable).
 * Fixture: test/fixtures/sensitive-module (pin-main gives its PIN to the module pin-confirm as `code`, which returns
 * it as `echo`, saved by the caller as `confirmed`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { Recorder } from '../../src/http/recorder.js';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';
import type { CallStore } from '../../src/store/types.js';
import { traceText, type CallDetail } from '../../src/cli/calls-format.js';
import { loadFlowDir, runScenarioFile } from '../../src/testing/index.js';
import { parseRecording } from '../../src/testing/record.js';
import { replayRecording } from '../../src/testing/replay.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { dropPrefix, redisMissing, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { recordSpans } from '../helpers/spans.js';
import { logLines, logText } from '../helpers/log-lines.js';
import { withoutNoise } from '../helpers/noise.js';

const FLOWS = new URL('../fixtures/sensitive-module', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const KEY = randomBytes(32).toString('hex');
const PIN = '4821';

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

async function server(store: CallStore): Promise<{ app: FastifyInstance; logs: string[]; recorder: Recorder }> {
  const { logs, stream } = logLines();
  dir = mkdtempSync(join(tmpdir(), 'callscript-sensitive-module-'));
  const recorder = new Recorder(dir);
  app = Fastify({ logger: { level: 'debug', stream } });
  if (store instanceof RedisStore) {
    await store.ready();
    app.addHook('onClose', async () => store.close());
  }
  await app.register(callscript, {
    flowsDir: FLOWS,
    store,
    sensitiveKeys: [KEY],
    admin: { login: 'boss', password: 's3cret' },
    recorder,
  });
  return { app, logs, recorder };
}

type Reply = { command: string; command_id: number; params: Record<string, unknown> };

async function send(a: FastifyInstance, callid: string, over: Partial<RtFields>): Promise<Reply> {
  const res = await a.inject({
    method: 'POST',
    url: '/rt/pin-main',
    headers: { 'content-type': 'application/json' },
    payload: rtBody({ callid, ...over }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return JSON.parse(res.body) as Reply;
}

const next = (a: FastifyInstance, callid: string, r: Reply, result: string) =>
  send(a, callid, { command: r.command, command_id: r.command_id, command_result: result });

async function detail(a: FastifyInstance, callid: string): Promise<CallDetail & { vars: Record<string, unknown> }> {
  const r = await a.inject({ method: 'GET', url: `/admin/calls/${callid}`, headers: { authorization: ADMIN } });
  expect(r.statusCode, r.body).toBe(200);
  expect(withoutNoise(r.body)).not.toContain(PIN);
  return r.json();
}

/** The whole call, each surface checked on the way; `raw` reads what the store holds for the call. */
async function wholeCall(store: CallStore, raw: () => Promise<string>): Promise<void> {
  const { app: a, logs, recorder } = await server(store);
  let r = await send(a, '900', {});
  r = await next(a, '900', r, PIN);
  // inside the module: the conference gets the PIN it needs
  expect(r).toMatchObject({ command: 'conference', params: { id: 'room1', pin_code: PIN } });
  // the same request again (a retry): the stored reply, sealed, is sent again as it was
  expect(await send(a, '900', { command: 'read', command_id: 1, command_result: PIN })).toEqual(r);
  expect((await detail(a, '900')).vars).toEqual({ code: '***' });
  expect(withoutNoise(await raw())).not.toContain(PIN);
  r = await next(a, '900', r, 'LEFT_CONFERENCE');
  expect(r.params.media_id).toContain('Enter it again.');
  r = await next(a, '900', r, PIN); // typed again at a step whose save: is not sensitive
  // back in the caller, with the returned copy
  expect(r.params.media_id).toContain('Press 1 to end.');
  expect((await detail(a, '900')).vars).toEqual({ pin: '***', confirmed: '***' });
  expect(withoutNoise(await raw())).not.toContain(PIN);
  r = await next(a, '900', r, `${PIN}9`); // no branch: logged, and the call hangs up
  expect(r.command).toBe('hangup');
  await send(a, '900', { command: 'hangup', command_id: r.command_id, call_status: 'HANGUP' });
  await recorder.flush();

  // the log lines: the call-ended line's vars masked, the others scrubbed
  const lines = logs.map((l) => JSON.parse(l) as { msg: string; vars?: unknown; code?: string });
  expect(lines.find((l) => l.msg === 'call ended')?.vars).toEqual({ pin: '***', confirmed: '***' });
  expect(lines.find((l) => l.code === 'UNHANDLED_RESULT_AT_RUNTIME')?.msg).toBe(
    'result "***9" of read at menu has no branch: end of flow',
  );
  expect(withoutNoise(logText(logs))).not.toContain(PIN);

  // the call history (the admin API's finished call) and `callscript trace`
  const rec = await vi.waitFor(async () => {
    const d = await detail(a, '900');
    if (d.status !== 'finished') throw new Error('not finished yet');
    return d;
  });
  expect(rec.vars).toEqual({ pin: '***', confirmed: '***' });
  expect(rec.path.map((e) => [e.from, e.result, e.reply?.params.pin_code])).toEqual([
    [null, '', undefined],
    ['pin', '***', '***'],
    ['pin-confirm:room', 'LEFT_CONFERENCE', undefined],
    ['pin-confirm:again', '***', undefined],
    ['menu', '***9', undefined],
    ['menu', '', undefined],
  ]);
  expect(rec.path[1]?.replays).toBe(1); // the retry: counted in the entry of the request it repeats, not kept
  const text = traceText(rec);
  expect(text).toContain('vars {"pin":"***","confirmed":"***"}');
  expect(withoutNoise(text)).not.toContain(PIN);

  // the spans: the results as the history shows them
  expect(exporter.getFinishedSpans().map((s) => s.attributes['callscript.result'])).toEqual([
    '',
    '***',
    '***',
    'LEFT_CONFERENCE',
    '***',
    '***9',
    '',
  ]);

  // the recording: the PIN typed is *** (whatever the step), and the recording replays (a stand-in for each)
  const file = join(dir!, readdirSync(dir!)[0]!);
  const recording = readFileSync(file, 'utf8');
  expect(withoutNoise(recording)).not.toContain(PIN);
  expect(parseRecording(recording).cases[0]!.steps.map((st) => st.result)).toEqual([
    '***',
    'LEFT_CONFERENCE',
    '***',
    '***9',
    undefined,
  ]);
  const flows = await loadFlowDir(FLOWS);
  expect(replayRecording(flows.byName.get('pin-main')!, recording)).toMatchObject({ ok: true, divergences: [] });
  const run = await runScenarioFile(file, flows);
  expect(run.cases.map((c) => [c.ok, c.failure?.message])).toEqual([[true, undefined]]);
  expect(withoutNoise(await raw())).not.toContain(PIN);
}

describe('sensitive values through a module and back', () => {
  it('are *** in the admin API, history, logs, spans, trace and recording; sealed in the memory store', async () => {
    const store = new MemoryStore();
    await wholeCall(store, async () => JSON.stringify((await store.get('900')) ?? null));
  });

  it('never reach Redis in clear (a key is set)', async (t) => {
    const skip = await redisMissing();
    if (skip) return t.skip(skip);
    const prefix = testPrefix();
    const dump = async () => {
      const r = new Redis(REDIS_URL);
      try {
        const parts: string[] = [];
        for (const k of await r.keys(`${prefix}*`)) {
          const type = await r.type(k);
          if (type === 'string') parts.push((await r.get(k)) ?? '');
          else if (type === 'hash') parts.push(JSON.stringify(await r.hgetall(k)));
          else if (type === 'list') parts.push(JSON.stringify(await r.lrange(k, 0, -1)));
          else if (type === 'zset') parts.push(JSON.stringify(await r.zrange(k, 0, -1)));
          else if (type === 'set') parts.push(JSON.stringify(await r.smembers(k)));
        }
        return parts.join('\n');
      } finally {
        r.disconnect();
      }
    };
    try {
      await wholeCall(new RedisStore(REDIS_URL, { prefix }), dump);
    } finally {
      await dropPrefix(prefix);
    }
  });
});
