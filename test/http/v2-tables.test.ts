/**
 * Whole calls of a version 2 flow with calendars, prompt tables and languages, and
 * environments (test/fixtures/v2-tables/bank-hours.yaml): through `fastify.inject` with the
 * plugin (the server's clock, the environment selected as `serve --env` does), and through
 * its scenario files (the clock set per case and per step, the environment per file).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { callscript } from '../../src/http/plugin.js';
import { MemoryStore } from '../../src/store/memory.js';
import { startCall, tts } from '../helpers/call.js';
import { rtBody } from '../helpers/rt.js';
import { collectScenarioFiles, loadFlowDir, runScenarioFile } from '../../src/testing/index.js';

const DIR = new URL('../fixtures/v2-tables', import.meta.url).pathname;
const AUDREY = 'TTS_FR-FR_AUDREY';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(environment?: string): Promise<FastifyInstance> {
  app = Fastify({ logger: false });
  await app.register(callscript, { flowsDir: DIR, store: new MemoryStore(), ...(environment ? { environment } : {}) });
  await app.ready();
  return app;
}

describe('bank-hours over HTTP', () => {
  // the server's clock (Date.now), set: Monday 23 November 2026, 10:00 in London (open)
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-23T10:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a French caller hears French prompts in the French voice; a menu key switches to English mid-call', async () => {
    const a = await server('production');
    const call = startCall(a, '/rt/bank-hours', { callid: '7001', cli_number: '+33612345678' });
    await call.start();
    call.expect('play', { media_id: tts('Bienvenue chez Acme Banque.', AUDREY) });
    await call.answer('0');
    call.expect('read', { media_id: tts('Pour un conseiller tapez 1. For English press 3.', AUDREY), max_digits: 1 });
    await call.answer('3');
    call.expect('play', { media_id: tts('Welcome to Acme Bank.') });
    await call.answer('0');
    call.expect('read', { media_id: tts('For an advisor press 1. Pour le français, tapez 2.'), max_digits: 1 });
    await call.answer('1');
    call.expect('dialout', { targets: [{ number: '+442079460001' }], cli: '+442079460001' });
    await call.end('HANGUP');
  });

  it('on Christmas Day the calendar step says holiday; a UK caller hears English', async () => {
    vi.setSystemTime(new Date('2026-12-25T10:00:00Z'));
    const a = await server('staging');
    const call = startCall(a, '/rt/bank-hours', { callid: '7002', cli_number: '+447700900123' });
    await call.start();
    call.expect('play', { media_id: tts('Acme Staging is closed for the holidays (en-GB).') });
    await call.answer('0');
    call.expect('hangup', {});
  });

  it('the environment selected is the one the call uses, and part of the version', async () => {
    const prod = await server('production');
    const v1 = (await prod.inject({ method: 'GET', url: '/health' })).body;
    await prod.close();
    const staging = await server('staging');
    const v2 = (await staging.inject({ method: 'GET', url: '/health' })).body;
    const versionOf = (body: string) =>
      (JSON.parse(body) as { flows: { name: string; version: string }[] }).flows.find((f) => f.name === 'bank-hours')
        ?.version;
    expect(versionOf(v1)).toMatch(/^[0-9a-f]{12}$/);
    expect(versionOf(v2)).toMatch(/^[0-9a-f]{12}$/);
    expect(versionOf(v1)).not.toBe(versionOf(v2));
  });

  it('an environment the flow does not have: the flow is refused, the others served', async () => {
    const a = await server('qa');
    const res = await a.inject({
      method: 'POST',
      url: '/rt/bank-hours',
      headers: { 'content-type': 'application/json' },
      payload: rtBody({ callid: '7003' }),
    });
    expect(res.statusCode).toBe(404);
    const health = JSON.parse((await a.inject({ method: 'GET', url: '/health' })).body) as {
      flows: { name: string }[];
    };
    expect(health.flows.map((f) => f.name)).toEqual([]);
  });
});

describe('bank-hours scenario files', () => {
  it('every case passes (DST, holidays, exceptions, languages, the clock moving on, production numbers)', async () => {
    const flows = await loadFlowDir(DIR);
    expect(flows.problems).toEqual([]);
    const files = await collectScenarioFiles([DIR]);
    expect(files.map((f) => f.slice(DIR.length + 1))).toEqual([
      'bank-hours.production.test.yaml',
      'bank-hours.test.yaml',
    ]);
    for (const f of files) {
      const run = await runScenarioFile(f, flows);
      expect(run.errors).toEqual([]);
      expect(run.cases.filter((c) => !c.ok).map((c) => [c.name, c.failure])).toEqual([]);
    }
  });
});
