/**
 * Recordings of real calls of flows/bank-line.yaml replay green: the emulator calls a
 * callscript server (`serve --record`) whose http steps reach `callscript mock-http` (the
 * routes of flows/mocks/bank-api.yaml), all over real HTTP in this process. The recordings
 * hold what a replay needs (lookups with their answers and fillers, the environment, the
 * clock of each request, a call never answered) and nothing sensitive; `replayRecording`
 * and the scenario runner (`callscript test`) both pass them on the version recorded, and a
 * calendar decision replays the same because the recorded clock is the one read.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/http/server.js';
import { Recorder } from '../../src/http/recorder.js';
import { loadFlowDir } from '../../src/testing/index.js';
import { parseRoutes, startMockHttp, type MockServer } from '../../src/testing/mock-http.js';
import { parseRecording, type Recording } from '../../src/testing/record.js';
import { replayRecording } from '../../src/testing/replay.js';
import { runScenarioFile } from '../../src/testing/index.js';
import { startEmulator, type Running } from '../emulator/helpers.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const TOKEN = 'tok3n-not-in-recordings';

let emulator: Running;
let bank: MockServer;
let app: FastifyInstance;
let recorder: Recorder;
let base = '';
const dir = mkdtempSync(join(tmpdir(), 'callscript-bank-rec-'));
const flowsDir = join(dir, 'flows');
const recDir = join(dir, 'recordings');

beforeAll(async () => {
  // the bank's API: bank-api.yaml's routes, the balance slower than the server's 1 s deadline (the filler plays)
  const routesText = readFileSync(join(ROOT, 'flows/mocks/bank-api.yaml'), 'utf8').replace(
    'delay_ms: 4500',
    'delay_ms: 1200',
  );
  const { routes, problems } = parseRoutes(routesText, 'bank-api.yaml');
  expect(problems).toEqual([]);
  bank = await startMockHttp(routes, 0);
  // flows/bank-line.yaml and its module, their `local` environment pointed at this mock (port 4020 may be taken)
  cpSync(join(ROOT, 'flows/verify-customer.yaml'), join(flowsDir, 'verify-customer.yaml'));
  writeFileSync(
    join(flowsDir, 'bank-line.yaml'),
    readFileSync(join(ROOT, 'flows/bank-line.yaml'), 'utf8').replace('http://127.0.0.1:4020', bank.url),
  );
  mkdirSync(recDir, { recursive: true });
  recorder = new Recorder(recDir);
  app = (
    await createServer({
      flowsDir,
      logLevel: false,
      recorder,
      environment: 'local',
      deadlineMs: 1000,
      http: { allowPrivate: true, secret: (n) => (n === 'BANK_API_TOKEN' ? TOKEN : undefined) },
    })
  ).app;
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  emulator = await startEmulator();
}, 30000);

afterAll(async () => {
  await emulator?.close();
  await app?.close();
  await bank?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One call through the emulator, then the recording it made. */
async function recorded(caller: string, extra: Record<string, unknown> = {}): Promise<{ file: string; text: string }> {
  const before = new Set(readdirSync(recDir));
  const t = await emulator.call({ url: `${base}/rt/bank-line`, caller_text: caller, caller_file: 'c.yaml', ...extra });
  expect(t.status).toBe('ended');
  await recorder.flush();
  const made = readdirSync(recDir).filter((f) => !before.has(f));
  expect(made).toHaveLength(1);
  const file = join(recDir, made[0]!);
  return { file, text: readFileSync(file, 'utf8') };
}

async function bankLine() {
  const flows = await loadFlowDir(flowsDir, 'local');
  return { flows, flow: flows.byName.get('bank-line')! };
}

describe('a recorded bank-line call replays green', () => {
  it('the balance after a filler: lookups with their answers, masked; replay and callscript test pass', async () => {
    const { file, text } = await recorded(
      [
        'name: the balance',
        'call: { from: "+442071234567", date: "2026-11-23 10:00:00" }',
        'actions:',
        '  - read: 1',
        '  - read: 12345678',
        '  - read: 2468',
        '  - hangup: read',
      ].join('\n'),
    );
    const rec = parseRecording(text);
    expect(rec.environment).toBe('local');
    const steps = rec.cases[0]!.steps;
    const lookups = steps.filter((s) => 'http' in s.expect);
    expect(lookups.map((s) => s.expect)).toEqual([
      { http: { method: 'POST', url: `${bank.url}/v1/verify`, body: { account: '***', pin: '***' } } },
      { http: { method: 'GET', url: `${bank.url}/v1/accounts/***/balance` } },
    ]);
    expect(lookups[0]!.answer).toEqual({ status: 200, body: { name: 'Alice' } });
    // the balance came after one filler or more (1.2 s against a 1 s deadline)
    expect(lookups[1]!.answer).toMatchObject({ status: 200, body: { amount: 120.5 } });
    expect(lookups[1]!.answer!.fillers).toBeGreaterThanOrEqual(1);
    expect(text).toContain('Alice, your balance is 120.5 pounds.');
    // nothing sensitive: no account number, no PIN, no secret
    for (const secret of ['12345678', '2468', TOKEN]) expect(text).not.toContain(secret);
    // each request's clock, as the server read it
    expect(steps.filter((s) => s.now !== undefined).length).toBeGreaterThan(0);

    const { flows, flow } = await bankLine();
    expect(rec.version).toBe(flow.version);
    expect(replayRecording(flow, text)).toMatchObject({ ok: true, divergences: [] });
    const run = await runScenarioFile(file, flows);
    expect(run.errors).toEqual([]);
    expect(run.cases.map((c) => [c.name, c.ok, c.failure?.message])).toEqual([[rec.cases[0]!.name, true, undefined]]);

    // a bank that answers otherwise now: the replay stops at the lookup's answer
    const forged = structuredClone(rec) as Recording;
    forged.cases[0]!.steps.find((s) => 'http' in s.expect && s.answer?.status === 200 && !s.answer.fillers)!.answer = {
      status: 423,
    };
    const d = replayRecording(flow, forged).divergences[0]!;
    expect(d.message).toMatch(/For your security, telephone banking is locked/);
  });

  it('a calendar decision replays the same: the recorded clock is the one it reads', async () => {
    const { text } = await recorded(
      [
        'name: the advisors',
        'call: { from: "+442071234567", date: "2026-11-23 10:00:00" }',
        'actions:',
        '  - read: 2',
        '  - hangup: any',
      ].join('\n'),
    );
    const { flow } = await bankLine();
    expect(replayRecording(flow, text)).toMatchObject({ ok: true, divergences: [] });
    const rec = parseRecording(text);
    const steps = rec.cases[0]!.steps;
    // what the calendar said when the call was made, from the command after the menu
    const after = steps[2]!.expect as { command: string; params: { media_id?: string } };
    const said =
      after.command === 'dialout' ? 'open' : /bank holiday/.test(after.params.media_id ?? '') ? 'holiday' : 'closed';
    // the same call at another time of the advisors' week
    const at = { open: '2026-11-23T10:00:00Z', closed: '2026-11-22T03:00:00Z', holiday: '2026-12-25T10:00:00Z' };
    for (const [decision, time] of Object.entries(at)) {
      const moved = structuredClone(rec) as Recording;
      moved.cases[0]!.steps[1]!.now = time; // the request that carries the menu's "2"
      expect(replayRecording(flow, moved).ok, `${decision} at ${time}, recorded ${said}`).toBe(decision === said);
    }
  });

  it('an outbound call never answered: its status, no steps; the runner passes it', async () => {
    const { file, text } = await recorded('name: nobody\ncall: { answer: NOANSWER }\n', { outbound: '+447700900999' });
    const rec = parseRecording(text);
    expect(rec.cases[0]!.call).toMatchObject({ status: 'NOANSWER' });
    expect(rec.cases[0]!.call.request_hash).toEqual(expect.any(String));
    expect(rec.cases[0]!.steps).toEqual([]);
    const { flows, flow } = await bankLine();
    expect(replayRecording(flow, text).ok).toBe(true);
    const run = await runScenarioFile(file, flows);
    expect(run.errors).toEqual([]);
    expect(run.cases.map((c) => c.ok)).toEqual([true]);
  });
});
