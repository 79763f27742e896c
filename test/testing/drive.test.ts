/**
 * The tools' driver of the call step (src/testing/drive.ts) and their executors
 * (executors.ts, branch-executor.ts, sim-executor.ts): requests built as the service
 * builds them, a lookup running across requests through the call's EffectMemo as on a
 * server, one clock per call, the per-call lookup limit, the explorer's branches, and the
 * simulator's asking executor that runs a request again with the answer.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EffectMemo } from '../../src/engine/effects.js';
import type { HttpEffect } from '../../src/engine/outcome.js';
import { answerResult, BranchExecutor, httpBranches } from '../../src/testing/branch-executor.js';
import { CallDriver, requestFor, type Stepped } from '../../src/testing/drive.js';
import { MockExecutor, TOOL_BUDGET_MS } from '../../src/testing/executors.js';
import type { HttpMock } from '../../src/testing/http-mocks.js';
import { SimExecutor } from '../../src/testing/sim-executor.js';
import { parseClock } from '../../src/testing/clock.js';
import { req } from '../engine/helpers.js';
import { yamlFlow } from '../engine/yaml.js';

const LOOKUP = readFileSync('test/fixtures/http-lookups/lookup.yaml', 'utf8');
const API = 'https://bank.example';
const mock = (o: Partial<HttpMock>): HttpMock => ({ url: '', status: 200, body: null, headers: {}, delay_ms: 0, ...o });
const base = req({ variables: { api: API }, variablesRaw: JSON.stringify({ api: API }) });
const reply = (s: Stepped) => (s.outcome.kind === 'reply' ? s.outcome.reply : undefined);

describe('requests as the service builds them', () => {
  it('first request, a result, an error, a terminal status on the last command', () => {
    expect(requestFor(base, undefined, undefined, 'NOANSWER')).toMatchObject({
      command: '',
      command_id: 0,
      call_status: 'NOANSWER',
    });
    const last = { command: 'read', command_id: 3 };
    expect(requestFor(base, last, { result: '1' })).toMatchObject({
      command: 'read',
      command_id: 3,
      command_result: '1',
      command_error: '',
      call_status: 'UP',
    });
    expect(requestFor(base, last, { error: 'FAILED' })).toMatchObject({ command_result: '', command_error: 'FAILED' });
    expect(requestFor(base, last, { status: 'HANGUP' })).toMatchObject({ command_result: '', call_status: 'HANGUP' });
  });
});

describe('a lookup across requests (MockExecutor and the call memo)', () => {
  it('a delay past a request’s wait plays the filler; the next request takes the result; the memo', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const exec = new MockExecutor({ http: [mock({ url: `${API}/v1/*`, body: { amount: 7 }, delay_ms: 5000 })] });
    const d = new CallDriver(flow, exec, { base, now: Date.parse('2026-11-23T10:00:00Z') });
    const first = d.start() as Stepped;
    expect(first.effects.map((e) => e.result)).toEqual([{ pending: true }]);
    expect(reply(first)).toMatchObject({
      command: 'play',
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|One moment please.' },
    });
    // the call keeps the lookup's record, as a server keeps it with the call's state
    expect(d.memo).toEqual({
      hn: 1,
      lk: { id: 'lookup#1', step: 'lookup', started: first.now, until: first.now + 8000 + 1000 },
    });
    d.now += 4000;
    const second = d.report({ result: '0' }) as Stepped;
    expect(second.effects).toHaveLength(1);
    expect((second.effects[0]!.effect as HttpEffect).wait).toBe(true);
    expect(second.effects[0]!.result).toEqual({ ok: true, value: '200', data: { status: 200, body: { amount: 7 } } });
    expect(reply(second)).toMatchObject({ params: { media_id: 'TTS|TTS_EN-GB_SERENA|Your balance is 7.' } });
    expect(d.memo).toEqual({ hn: 1 });
    expect(second.now).toBe(first.now + 4000);
  });

  it('a wait with no lookup of that step running is a TIMEOUT, as on a server', () => {
    const exec = new MockExecutor();
    const memo: EffectMemo = { lk: { id: 'other#1', step: 'other', started: 0, until: 1 } };
    const e: HttpEffect = { kind: 'http', step: 'lookup', callid: '1', params: {}, filler: true, wait: true };
    expect(exec.perform(e, { memo, budgetMs: () => TOOL_BUDGET_MS, now: 0 })).toMatchObject({
      ok: false,
      error: 'TIMEOUT',
    });
  });

  it('a call starts 20 lookups at most (LIMIT), and an answer: waits out its fillers', () => {
    const exec = new MockExecutor({ http: [mock({ url: '*' })] });
    const e: HttpEffect = {
      kind: 'http',
      step: 's',
      callid: '1',
      params: { method: 'GET', url: 'https://x/' },
      filler: true,
      wait: false,
    };
    const memo: EffectMemo = { hn: 19 };
    const ctx = { memo, budgetMs: () => TOOL_BUDGET_MS, now: 0 };
    expect(exec.perform(e, ctx)).toMatchObject({ ok: true, value: '200' });
    expect(exec.perform(e, ctx)).toMatchObject({ ok: false, error: 'LIMIT' });
    const m2: EffectMemo = {};
    const c2 = { memo: m2, budgetMs: () => TOOL_BUDGET_MS, now: 0 };
    expect(exec.perform(e, c2, { status: 201, fillers: 2 })).toEqual({ pending: true });
    const wait = { ...e, wait: true };
    expect(exec.perform(wait, c2)).toEqual({ pending: true });
    expect(exec.perform(wait, c2)).toMatchObject({ ok: true, value: '201' });
    expect(m2).toEqual({ hn: 1 });
  });

  it('mock-http routes: a path route matches the path and query; no route answers 404 (not NETWORK)', () => {
    const routes = new MockExecutor({
      http: [mock({ url: '/v1/verify', status: 201 }), mock({ url: 'https://other.example/*', status: 202 })],
      match: 'routes',
    });
    const scenario = new MockExecutor({ http: [mock({ url: '/v1/verify', status: 201 })] });
    const at = (url: string): HttpEffect => ({
      kind: 'http',
      step: 's',
      callid: '1',
      params: { method: 'POST', url },
      filler: false,
      wait: false,
    });
    const ctx = () => ({ memo: {}, budgetMs: () => TOOL_BUDGET_MS, now: 0 });
    expect(routes.perform(at(`${API}/v1/verify`), ctx())).toMatchObject({ value: '201' });
    expect(routes.perform(at('https://other.example/a?b=1'), ctx())).toMatchObject({ value: '202' });
    expect(routes.perform(at(`${API}/v2/x`), ctx())).toMatchObject({ ok: true, value: '404' });
    expect(scenario.perform(at(`${API}/v1/verify`), ctx())).toMatchObject({ ok: false, error: 'NETWORK' });
  });
});

describe('the explorer’s branches', () => {
  it('one answer per way the step goes: ok first, then the statuses named, default, timeout, error', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    expect(httpBranches(flow, 'lookup')).toEqual([
      { status: 200 },
      { status: 404 },
      { status: 500 },
      { error: 'TIMEOUT' },
      { error: 'NETWORK' },
    ]);
    expect(answerResult({ status: 404 })).toEqual({ ok: true, value: '404', data: { status: 404, body: null } });
  });

  it('gives the k-th effect its chosen answer, and keeps a method and URL to one answer along a path', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const e: HttpEffect = {
      kind: 'http',
      step: 'lookup',
      callid: '1',
      params: { method: 'GET', url: `${API}/a` },
      filler: false,
      wait: false,
    };
    const ctx = { memo: {}, budgetMs: () => 0, now: 0 };
    const b = new BranchExecutor(flow, [1], new Map(), 0);
    expect(b.perform(e, ctx)).toMatchObject({ value: '404' });
    // the same lookup again in this path: the same answer, whatever the choice
    expect(b.perform(e, ctx)).toMatchObject({ value: '404' });
    expect(b.met.map((m) => m.options)).toEqual([5, 1]);
  });
});

describe('the simulator’s executor asks, and the request runs again with the answer', () => {
  it('effects before the one asked keep their answers; the memo is as it was after each', async () => {
    const flow = await yamlFlow(LOOKUP, 'lookup.yaml');
    const exec = new SimExecutor();
    const d = new CallDriver(flow, exec, { base, now: 0 });
    const asked = d.start();
    expect(asked).toMatchObject({ kind: 'asked', effects: [] });
    expect(d.requests).toBe(0);
    exec.give({ ok: true, value: '404', data: { status: 404, body: null } });
    const s = d.again() as Stepped;
    expect(s.kind).toBe('stepped');
    expect(reply(s)).toMatchObject({ params: { media_id: 'TTS|TTS_EN-GB_SERENA|Unknown account.' } });
    expect(exec.by(0)).toBe('asked');
    expect(d.memo).toEqual({ hn: 1 });
  });
});

describe('--now', () => {
  it('takes ISO 8601 with a zone, a date, epoch ms; refuses the rest, said plainly', () => {
    expect(parseClock('2026-11-23T10:00:00Z')).toBe(Date.UTC(2026, 10, 23, 10));
    expect(parseClock('2026-11-23T11:00:00+01:00')).toBe(Date.UTC(2026, 10, 23, 10));
    expect(parseClock('2026-11-23')).toBe(Date.UTC(2026, 10, 23));
    expect(parseClock('1795428000000')).toBe(1795428000000);
    for (const bad of ['2026-11-23T10:00:00', 'tomorrow', '2026-02-31', '2026-13-01', 'x'.repeat(10000), ''])
      expect(() => parseClock(bad, '--now')).toThrow(/^--now ".*" is not a time: write ISO 8601/);
    expect(() => parseClock('99999999999999999999')).toThrow(/is not a time/);
  });
});
