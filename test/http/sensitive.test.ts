/**
 * Sensitive values (`sensitive: [pin, card]`) never leave the process in clear: a whole call
 * through the Fastify plugin, then the log lines (debug level: every line the server writes),
 * the admin API's view of the live call and the recording of the call are searched for the
 * values typed: none of them may hold one; each shows `***` with the key kept.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { Recorder } from '../../src/http/recorder.js';
import { parseScenario } from '../../src/testing/scenario.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { logLines, logText } from '../helpers/log-lines.js';
import { withoutNoise } from '../helpers/noise.js';

const FIXTURES = new URL('../fixtures/sensitive', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
/** What the caller types: an account (not sensitive), the PIN, then the card digits (no branch: logged). */
const ACCOUNT = '314159';
const PIN = '4821';
const CARD = '7395';

let app: FastifyInstance | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function server(): Promise<{ app: FastifyInstance; logs: string[]; recorder: Recorder }> {
  const { logs, stream } = logLines();
  dir = mkdtempSync(join(tmpdir(), 'callscript-sensitive-'));
  const recorder = new Recorder(dir);
  app = Fastify({ logger: { level: 'debug', stream } });
  await app.register(callscript, { flowsDir: FIXTURES, admin: { login: 'boss', password: 's3cret' }, recorder });
  return { app, logs, recorder };
}

async function send(
  a: FastifyInstance,
  over: Partial<RtFields>,
): Promise<{ command: string; command_id: number; params: Record<string, unknown> }> {
  const res = await a.inject({
    method: 'POST',
    url: '/rt/pin-line',
    headers: { 'content-type': 'application/json' },
    payload: rtBody({ callid: '777', ...over }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return JSON.parse(res.body);
}

describe('sensitive values', () => {
  it('are masked in the log lines, the call summary, the admin API and the recording', async () => {
    const { app: a, logs, recorder } = await server();
    let r = await send(a, {});
    for (const typed of [ACCOUNT, PIN])
      r = await send(a, { command: r.command, command_id: r.command_id, command_result: typed });
    expect(r.params.media_id).toContain('last four digits');

    // the admin API, while the call is live: the key is there, the value masked
    const live = await a.inject({ method: 'GET', url: '/admin/calls/777', headers: { authorization: ADMIN } });
    expect(live.statusCode).toBe(200);
    expect(live.json().vars).toEqual({ account: ACCOUNT, pin: '***' });
    expect(withoutNoise(live.body)).not.toContain(PIN);

    // the card digits have no branch: the engine logs the result and hangs up
    r = await send(a, { command: r.command, command_id: r.command_id, command_result: CARD });
    expect(r.command).toBe('hangup');
    await send(a, { command: 'hangup', command_id: r.command_id, call_status: 'HANGUP' });
    await recorder.flush();

    const text = logText(logs);
    const summary = logs
      .map((l) => JSON.parse(l) as { msg: string; vars?: unknown })
      .find((l) => l.msg === 'call ended');
    expect(summary?.vars).toEqual({ account: ACCOUNT, pin: '***', card: '***' });
    expect(text).toContain('UNHANDLED_RESULT_AT_RUNTIME');
    expect(text).toContain(ACCOUNT); // not sensitive: shown
    expect(withoutNoise(text)).not.toContain(PIN);
    expect(text).not.toContain(CARD);

    const files = readdirSync(dir!);
    expect(files).toEqual(['pin-line-777.test.yaml']);
    const recording = readFileSync(join(dir!, files[0]!), 'utf8');
    expect(withoutNoise(recording)).not.toContain(PIN);
    expect(recording).not.toContain(CARD);
    const steps = parseScenario(recording, 'r.test.yaml').cases[0]!.steps;
    expect(steps.map((s) => s.result)).toEqual([ACCOUNT, '***', '***', undefined]);
  });
});
