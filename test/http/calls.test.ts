/**
 * The call history and the admin API's calls (docs/admin.md "Calls"), through the plugin
 * with the memory store: the path of a whole call (steps, commands sent, results,
 * transitions), live and finished listings with their cursors, sensitive values masked,
 * `keep` and the TTL, the path capped at max_path, a flood of calls, ending a live call
 * (DELETE), and hostile inputs (callids, limits, cursors).
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { createServer } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import { BadCursor } from '../../src/store/types.js';
import type { CallscriptPluginOptions } from '../../src/http/options.js';
import { flowVersion } from '../../src/engine/compile.js';
import { readFileSync } from 'node:fs';
import { hooked } from '../helpers/store.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { withoutNoise } from '../helpers/noise.js';

const FLOWS = new URL('../fixtures/history', import.meta.url).pathname;
const DESK = flowVersion(readFileSync(`${FLOWS}/desk.yaml`, 'utf8'));
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The plugin in a Fastify app whose log lines are kept. */
async function server(
  opts: Partial<CallscriptPluginOptions> = {},
): Promise<{ app: FastifyInstance; logs: Record<string, unknown>[]; store: MemoryStore }> {
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const store = (opts.store as MemoryStore | undefined) ?? new MemoryStore();
  app = Fastify({ logger: { level: 'info', stream } });
  await app.register(callscript, { flowsDir: FLOWS, admin: { login: 'boss', password: 's3cret' }, ...opts, store });
  return { app, logs, store };
}

type Reply = { command: string; command_id: number; params: Record<string, unknown> };
const rt = (a: FastifyInstance, flow: string, over: Partial<RtFields>) =>
  a.inject({
    method: 'POST',
    url: `/rt/${flow}`,
    headers: { 'content-type': 'application/json' },
    payload: rtBody(over),
  });
async function send(a: FastifyInstance, flow: string, over: Partial<RtFields>): Promise<Reply> {
  const r = await rt(a, flow, over);
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as Reply;
}
const admin = (a: FastifyInstance, url: string, method: 'GET' | 'DELETE' = 'GET') =>
  a.inject({ method, url, headers: { authorization: ADMIN } });
const json = async (a: FastifyInstance, url: string) => {
  const r = await admin(a, url);
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

/** desk: menu (read) → 1 → sales (dialout) → NOANSWER → bye (play) → end (hangup) → HANGUP. */
async function deskCall(a: FastifyInstance, callid: string, end = true): Promise<void> {
  await send(a, 'desk', { callid });
  await send(a, 'desk', { callid, command: 'read', command_id: 1, command_result: '1' });
  await send(a, 'desk', { callid, command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
  if (!end) return;
  await send(a, 'desk', { callid, command: 'play', command_id: 3, command_result: '' });
  await send(a, 'desk', { callid, command: 'hangup', command_id: 4, call_status: 'HANGUP' });
}

/** The record of a finished call, once written (the history writes in the background). */
async function finished(a: FastifyInstance, callid: string) {
  return vi.waitFor(async () => {
    const r = await admin(a, `/admin/calls/${callid}`);
    const body = r.json();
    if (body.status !== 'finished') throw new Error(`call ${callid} not finished yet`);
    return body;
  });
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** A path entry without its times. */
const untimed = (e: Record<string, unknown>) => {
  const { at, ms, ...rest } = e;
  expect(typeof at).toBe('number');
  expect(typeof ms).toBe('number');
  return rest;
};

const DESK_PATH = [
  {
    from: null,
    command: '',
    result: '',
    error: '',
    step: 'menu',
    reply: { command: 'read', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.', max_digits: 1 } },
    transitions: [],
    effects: [],
    late: false,
    outcome: 'ok',
  },
  {
    from: 'menu',
    command: 'read',
    result: '1',
    error: '',
    step: 'sales',
    reply: { command: 'dialout', params: { targets: [{ number: '+33123456789', timeout: 30 }] } },
    transitions: ['menu:1'],
    effects: [],
    late: false,
    outcome: 'ok',
  },
  {
    from: 'sales',
    command: 'dialout',
    result: 'NOANSWER',
    error: '',
    step: 'bye',
    reply: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Goodbye.' } },
    transitions: ['sales:NOANSWER'],
    effects: [],
    late: false,
    outcome: 'ok',
  },
  {
    from: 'bye',
    command: 'play',
    result: '',
    error: '',
    step: 'end',
    reply: { command: 'hangup', params: {} },
    transitions: ['bye:default'],
    effects: [],
    late: false,
    outcome: 'ok',
  },
  {
    from: 'end',
    command: 'hangup',
    result: '',
    error: '',
    step: 'end',
    reply: { command: 'hangup', params: {} },
    transitions: [],
    effects: [],
    late: false,
    outcome: 'ok',
  },
];

describe('call history', () => {
  it('keeps the path of a whole call: steps, results, commands sent, transitions; live, then finished', async () => {
    const { app: a } = await server();
    await deskCall(a, '4242', false);
    // live: today's fields, status live, the path so far
    const live = await vi.waitFor(async () => {
      const body = (await admin(a, '/admin/calls/4242')).json();
      if (body.path.length < 3) throw new Error('path not written yet');
      return body;
    });
    expect(Object.keys(live)).toEqual([
      'callid',
      'status',
      'flow',
      'version',
      'step',
      'vars',
      'commandId',
      'commands',
      'started',
      'lastSeen',
      'dropped',
      'path',
      'pathNext',
      'sms',
    ]);
    expect(live).toMatchObject({
      callid: '4242',
      status: 'live',
      flow: 'desk',
      version: DESK,
      step: 'bye',
      vars: {},
      commandId: 3,
      commands: 3,
    });
    expect(live.started).toMatch(ISO);
    expect(live.path.map(untimed)).toEqual(DESK_PATH.slice(0, 3));
    expect(live).toMatchObject({ dropped: 0, pathNext: null });
    // a retried request is counted in the path too, in the entry it retried
    await send(a, 'desk', { callid: '4242', command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
    await send(a, 'desk', { callid: '4242', command: 'play', command_id: 3, command_result: '' });
    await send(a, 'desk', { callid: '4242', command: 'hangup', command_id: 4, call_status: 'HANGUP' });

    const rec = await finished(a, '4242');
    expect(Object.keys(rec)).toEqual([
      'callid',
      'flow',
      'version',
      'started',
      'ended',
      'durationMs',
      'outcome',
      'status',
      'lastStep',
      'commands',
      'vars',
      'dropped',
      'callStatus',
      'path',
      'pathNext',
      'sms',
    ]);
    expect(rec).toMatchObject({
      callid: '4242',
      flow: 'desk',
      version: DESK,
      outcome: 'completed',
      status: 'finished',
      callStatus: 'HANGUP',
      lastStep: 'end',
      commands: 4,
      vars: {},
    });
    expect(Date.parse(rec.ended) - Date.parse(rec.started)).toBe(rec.durationMs);
    expect(rec).toMatchObject({ dropped: 0, pathNext: null });
    // the retried request is counted in the entry it retried (not an entry of its own)
    expect(rec.path.map(untimed)).toEqual([
      ...DESK_PATH.slice(0, 2),
      { ...DESK_PATH[2], replays: 1, refused: 0 },
      ...DESK_PATH.slice(3),
    ]);
    const ats = rec.path.map((e: { at: number }) => e.at);
    expect([...ats].sort((x, y) => x - y)).toEqual(ats);

    // listed as finished (rows), no longer live (its tombstone is not a live call)
    const list = await json(a, '/admin/calls?status=finished');
    expect(list).toEqual({
      calls: [
        {
          callid: '4242',
          flow: 'desk',
          version: DESK,
          started: rec.started,
          ended: rec.ended,
          durationMs: rec.durationMs,
          outcome: 'completed',
          status: 'HANGUP',
          lastStep: 'end',
        },
      ],
      next: null,
    });
    expect(await json(a, '/admin/calls')).toEqual({ calls: [], next: null });
  });

  it('lists live calls, paged with an opaque cursor; finished ones newest first', async () => {
    const { app: a } = await server();
    for (const id of ['1', '2', '3', '4', '5']) await send(a, 'desk', { callid: id });
    await send(a, 'desk', { callid: '2', command: 'read', command_id: 1, command_result: '1' });
    const rows: Record<string, unknown>[] = [];
    let url = '/admin/calls?status=live&limit=2';
    let pages = 0;
    for (;;) {
      const page = await json(a, url);
      expect(page.calls.length).toBeLessThanOrEqual(2);
      rows.push(...page.calls);
      pages++;
      if (page.next === null) break;
      expect(page.next).toMatch(/^[A-Za-z0-9_-]+$/);
      url = `/admin/calls?limit=2&cursor=${page.next}`;
    }
    expect(pages).toBe(3);
    expect(rows.map((r) => r.callid)).toEqual(['1', '2', '3', '4', '5']);
    for (const r of rows) {
      expect(Object.keys(r)).toEqual(['callid', 'flow', 'version', 'step', 'started', 'lastSeen', 'commands']);
      expect(r).toMatchObject({
        flow: 'desk',
        version: DESK,
        step: r.callid === '2' ? 'sales' : 'menu',
        commands: r.callid === '2' ? 2 : 1,
      });
      expect(r.started).toMatch(ISO);
      expect(r.lastSeen).toMatch(ISO);
    }
    // finished, newest first, two per page
    for (const id of ['1', '3', '5'])
      await send(a, 'desk', { callid: id, command: 'read', command_id: 1, call_status: 'HANGUP' });
    await finished(a, '5');
    const p1 = await json(a, '/admin/calls?status=finished&limit=2');
    expect(p1.calls.map((r: { callid: string; outcome: string }) => [r.callid, r.outcome])).toEqual([
      ['5', 'abandoned'],
      ['3', 'abandoned'],
    ]);
    const p2 = await json(a, `/admin/calls?status=finished&limit=2&cursor=${p1.next}`);
    expect(p2).toMatchObject({ calls: [{ callid: '1' }], next: null });
    expect((await json(a, '/admin/calls')).calls.map((r: { callid: string }) => r.callid)).toEqual(['2', '4']);
  });

  it('masks sensitive values in the path and the record (a flow with sensitive:)', async () => {
    const { app: a, store } = await server();
    const ACCOUNT = '314159';
    const PIN = '4821';
    const CARD = '7395';
    let r = await send(a, 'pin-line', { callid: '777' });
    for (const typed of [ACCOUNT, PIN, CARD])
      r = await send(a, 'pin-line', {
        callid: '777',
        command: r.command,
        command_id: r.command_id,
        command_result: typed,
      });
    expect(r.command).toBe('hangup');
    await send(a, 'pin-line', { callid: '777', command: 'hangup', command_id: r.command_id, call_status: 'HANGUP' });
    const rec = await finished(a, '777');
    expect(rec.vars).toEqual({ account: ACCOUNT, pin: '***', card: '***' });
    expect(rec.path.map((e: { from: string | null; result: string }) => [e.from, e.result])).toEqual([
      [null, ''],
      ['account', ACCOUNT],
      ['pin', '***'],
      ['card', '***'],
      ['card', ''], // the card digits had no branch: the flow ended there
    ]);
    expect(rec.path[2].transitions).toEqual(['pin:default', 'check:case1']);
    const text = JSON.stringify(rec) + JSON.stringify(await store.listFinished(0, 10));
    expect(withoutNoise(text)).not.toContain(PIN);
    expect(text).not.toContain(CARD);
  });

  it('keeps the last `keep` finished calls (the oldest go) for ttlMs', async () => {
    let skew = 0;
    const store = new MemoryStore(() => Date.now() + skew);
    const { app: a } = await server({ store, history: { keep: 3, ttlMs: 60_000 } });
    for (const id of ['11', '12', '13', '14', '15']) {
      await send(a, 'desk', { callid: id });
      await send(a, 'desk', { callid: id, command: 'read', command_id: 1, call_status: 'HANGUP' });
    }
    await finished(a, '15');
    expect((await json(a, '/admin/calls?status=finished')).calls.map((r: { callid: string }) => r.callid)).toEqual([
      '15',
      '14',
      '13',
    ]);
    const gone = await admin(a, '/admin/calls/11');
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: { code: 'CALL_NOT_FOUND', message: 'no live or finished call 11' } });
    expect(store.historySize()).toMatchObject({ paths: 0, finished: 3 });
    skew = 61_000;
    expect(await json(a, '/admin/calls?status=finished')).toEqual({ calls: [], next: null });
    expect((await admin(a, '/admin/calls/15')).statusCode).toBe(404);
  });

  it('caps a path at max_path: a call of 500 requests (10 times the cap) keeps its last entries', async () => {
    const { app: a, store } = await server({ history: { maxPath: 50 } });
    let r = await send(a, 'loop', { callid: '900' });
    for (let i = 0; i < 500; i++)
      r = await send(a, 'loop', {
        callid: '900',
        command: 'read',
        command_id: r.command_id,
        command_result: 'TIMEOUT',
      });
    expect(r.command_id).toBe(501);
    const live = await vi.waitFor(async () => {
      const body = (await admin(a, '/admin/calls/900')).json();
      if (
        body.path.at(-1)?.reply?.command !== 'read' ||
        body.commandId !== 501 ||
        body.path.at(-1).from !== 'ask' ||
        body.path.length !== 50
      )
        throw new Error('not yet');
      if (JSON.parse((await store.readPath('900')).at(-1)!).transitions[0] !== 'ask:TIMEOUT')
        throw new Error('not yet');
      return body;
    });
    expect(live.path).toHaveLength(50);
    await send(a, 'loop', { callid: '900', command: 'read', command_id: r.command_id, call_status: 'HANGUP' });
    const rec = await finished(a, '900');
    expect(rec.commands).toBe(501);
    expect(rec.path).toHaveLength(50);
    expect(rec.path.at(-1)).toMatchObject({ from: 'ask', command: 'read', step: 'ask', reply: { command: 'hangup' } });
    expect(
      rec.path
        .slice(0, -1)
        .every(
          (e: { transitions: string[]; result: string }) =>
            e.result === 'TIMEOUT' && e.transitions[0] === 'ask:TIMEOUT',
        ),
    ).toBe(true);
    expect(rec.path[0]).toMatchObject({
      from: 'ask',
      result: 'TIMEOUT',
      step: 'ask',
      reply: { command: 'read' },
      outcome: 'ok',
    });
    expect(JSON.stringify(rec).length).toBeLessThan(50 * 400);
  });

  it('a flood of calls: what the memory store holds stays bounded by keep', async () => {
    const { app: a, store } = await server({ history: { keep: 20 } });
    for (let i = 0; i < 400; i++) {
      const callid = String(10_000 + i);
      await send(a, 'desk', { callid });
      await send(a, 'desk', { callid, command: 'read', command_id: 1, call_status: 'HANGUP' });
    }
    await finished(a, '10399');
    await vi.waitFor(() => expect(store.historySize()).toMatchObject({ paths: 0, finished: 20 }));
    const list = await json(a, '/admin/calls?status=finished&limit=500');
    expect(list.calls).toHaveLength(20);
    expect(list.calls[0].callid).toBe('10399');
    expect(list.calls[19].callid).toBe('10380');
  });

  it('cuts long strings of the params sent (200 characters and …)', async () => {
    const { app: a } = await server();
    await send(a, 'long', { callid: '31' });
    const live = await vi.waitFor(async () => {
      const body = (await admin(a, '/admin/calls/31')).json();
      if (body.path.length < 1) throw new Error('not yet');
      return body;
    });
    const media = live.path[0].reply.params.media_id as string;
    expect(media).toHaveLength(201);
    expect(media.endsWith('x…')).toBe(true);
    expect(media.startsWith('TTS|TTS_EN-GB_SERENA|Welcome. xxx')).toBe(true);
  });

  it('history: false writes nothing; finished calls are not kept, live ones have an empty path', async () => {
    const { app: a, store } = await server({ history: false });
    await deskCall(a, '50');
    await send(a, 'desk', { callid: '51' });
    await new Promise((r) => setTimeout(r, 20));
    expect(store.historySize()).toMatchObject({ paths: 0, finished: 0 });
    expect(await json(a, '/admin/calls?status=finished')).toEqual({ calls: [], next: null });
    expect((await json(a, '/admin/calls/51')).path).toEqual([]);
    expect((await admin(a, '/admin/calls/50')).statusCode).toBe(404);
  });

  it('a store whose history writes fail: replies are not affected; the failure is logged once', async () => {
    const inner = new MemoryStore();
    const broken = Object.assign(hooked(inner, {}), {
      appendPath: () => Promise.reject(new Error('disk on fire')),
      addFinished: () => Promise.reject(new Error('disk on fire')),
    });
    const { app: a, logs } = await server({ store: broken as unknown as MemoryStore });
    await deskCall(a, '60');
    await deskCall(a, '61');
    await vi.waitFor(() => expect(logs.filter((l) => l.code === 'HISTORY_WRITE_FAILED')).toHaveLength(1));
    const line = logs.find((l) => l.code === 'HISTORY_WRITE_FAILED')!;
    expect(line).toMatchObject({ level: 50, failed: 1, err: 'disk on fire' });
    expect((await admin(a, '/admin/calls/60')).statusCode).toBe(404);
  });

  it('refuses history options out of bounds at registration', async () => {
    for (const [history, msg] of [
      [{ keep: -1 }, 'history.keep must be an integer from 0 to 100000, got -1'],
      [{ maxPath: 0 }, 'history.maxPath must be an integer from 1 to 10000, got 0'],
      [{ ttlMs: 1.5 }, 'history.ttlMs must be an integer from 1000 to 2592000000, got 1.5'],
    ] as const) {
      const f = Fastify({ logger: false });
      await expect(f.register(callscript, { flowsDir: FLOWS, history }).ready()).rejects.toThrow(
        `callscript plugin: ${msg}`,
      );
      await f.close();
    }
  });
});

describe('DELETE /admin/calls/:callid', () => {
  it(
    'ends a live call: tombstone, the next request is ' + 'answered hangup, the record says ended_by_admin, logged',
    async () => {
      const { app: a, logs, store } = await server();
      await send(a, 'desk', { callid: '4242' });
      await send(a, 'desk', { callid: '4242', command: 'read', command_id: 1, command_result: '1' });
      const del = await admin(a, '/admin/calls/4242', 'DELETE');
      expect(del.statusCode, del.body).toBe(200);
      const rec = del.json();
      expect(rec).toMatchObject({
        callid: '4242',
        flow: 'desk',
        version: DESK,
        outcome: 'ended_by_admin',
        status: 'finished',
        callStatus: 'UP',
        lastStep: 'sales',
        commands: 2,
        vars: {},
      });
      expect(rec.path.map(untimed)).toEqual(DESK_PATH.slice(0, 2));
      expect(logs.find((l) => l.code === 'CALL_ENDED_BY_ADMIN')).toMatchObject({
        level: 40,
        callid: '4242',
        flow: 'desk',
        version: DESK,
        step: 'sales',
      });
      // the service's next request: hangup, and nothing more in the history
      const next = await send(a, 'desk', {
        callid: '4242',
        command: 'dialout',
        command_id: 2,
        command_result: 'ANSWER',
      });
      expect(next).toMatchObject({ command: 'hangup', command_id: 3, params: {} });
      await send(a, 'desk', { callid: '4242', command: 'hangup', command_id: 3, call_status: 'HANGUP' });
      await new Promise((r) => setTimeout(r, 20));
      const after = await finished(a, '4242');
      expect(after).toEqual(rec);
      expect(
        (await json(a, '/admin/calls?status=finished')).calls.map((r: { callid: string; outcome: string }) => [
          r.callid,
          r.outcome,
        ]),
      ).toEqual([['4242', 'ended_by_admin']]);
      expect(await json(a, '/admin/calls')).toEqual({ calls: [], next: null });
      expect(store.historySize()).toMatchObject({ paths: 0, finished: 1 });
      // not live any more
      const again = await admin(a, '/admin/calls/4242', 'DELETE');
      expect(again.statusCode).toBe(404);
      expect(again.json()).toEqual({ error: { code: 'CALL_NOT_FOUND', message: 'no live call 4242' } });
      expect((await admin(a, '/admin/calls/1', 'DELETE')).json().error.code).toBe('CALL_NOT_FOUND');
      // counted as ended once, by its outcome; no longer live
      const metrics = (await a.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toContain(
        `callscript_calls_ended_total{flow="desk",version="${DESK}",outcome="ended_by_admin"} 1\n`,
      );
      expect(metrics).not.toMatch(/callscript_calls_ended_total\{[^}]*outcome="(completed|abandoned|error)"/);
      expect(metrics).toContain('callscript_live_calls{flow="desk"} 0\n');
    },
  );

  it(
    'answers 409 CALL_BUSY while another instance holds a ' + 'claim, and ends the call once the claim expired',
    async () => {
      const { app: a, store } = await server();
      await send(a, 'desk', { callid: '88' });
      const raw = (await store.get('88'))!;
      const state = JSON.parse(raw) as Record<string, unknown>;
      await store.set(
        '88',
        JSON.stringify({ ...state, claim: { req: '1:read:UP', until: Date.now() + 60_000 } }),
        60_000,
      );
      const busy = await admin(a, '/admin/calls/88', 'DELETE');
      expect(busy.statusCode).toBe(409);
      expect(busy.json().error.code).toBe('CALL_BUSY');
      expect(busy.json().error.message).toMatch(
        /^call 88 is in a step another instance is running \(an effect, until \d{4}-.*Z at the latest\): nothing was changed, try again in a moment$/,
      );
      expect(JSON.parse((await store.get('88'))!).claim).toBeDefined();
      await store.set('88', JSON.stringify({ ...state, claim: { req: '1:read:UP', until: Date.now() - 1 } }), 60_000);
      const ended = await admin(a, '/admin/calls/88', 'DELETE');
      expect(ended.statusCode).toBe(200);
      expect(ended.json()).toMatchObject({ outcome: 'ended_by_admin', lastStep: 'menu' });
      expect(
        await send(a, 'desk', { callid: '88', command: 'read', command_id: 1, command_result: '1' }),
      ).toMatchObject({
        command: 'hangup',
      });
    },
  );

  it("keeps a deadline fallback's note when it does not end the call (busy)", async () => {
    const { app: a, store } = await server();
    await send(a, 'desk', { callid: '89' });
    const state = JSON.parse((await store.get('89'))!) as Record<string, unknown>;
    await store.set(
      '89',
      JSON.stringify({ ...state, claim: { req: '1:read:UP', until: Date.now() + 60_000 } }),
      60_000,
    );
    await store.setAside('89', '{"fb":"wait"}', 60_000);
    expect((await admin(a, '/admin/calls/89', 'DELETE')).statusCode).toBe(409);
    expect((await store.load('89')).aside).toBe('{"fb":"wait"}');
  });
});

describe('hostile inputs', () => {
  it('refuses callids that are not unsigned 64-bit integers; leading zeros are the same call', async () => {
    const s = await createServer({ flowsDir: FLOWS, logLevel: false, admin: { login: 'boss', password: 's3cret' } });
    app = s.app;
    await send(s.app, 'desk', { callid: '4242' });
    expect((await json(s.app, '/admin/calls/0004242')).callid).toBe('4242');
    for (const bad of [
      'abc',
      '-1',
      '1e3',
      '0x10',
      '1.0',
      '%20',
      '18446744073709551616',
      '99999999999999999999',
      '__proto__',
      'constructor',
      '123456789012345678901',
      '%E2%80%8B1',
      'null',
    ]) {
      for (const method of ['GET', 'DELETE'] as const) {
        const r = await admin(s.app, `/admin/calls/${bad}`, method);
        expect(r.statusCode, `${method} ${bad}`).toBe(400);
        expect(r.json().error.code).toBe('BAD_CALLID');
      }
    }
    const unknown = await admin(s.app, '/admin/calls/18446744073709551615');
    expect(unknown.statusCode).toBe(404);
    const huge = await admin(s.app, `/admin/calls/${'9'.repeat(5000)}`);
    expect(huge.statusCode).toBe(414);
    expect(huge.json().error.code).toBe('URI_TOO_LONG');
    const long = await admin(s.app, `/admin/calls/${'1'.repeat(90)}`);
    expect(long.json()).toEqual({
      error: {
        code: 'BAD_CALLID',
        message: `the callid must be an unsigned 64-bit integer in decimal, got "${'1'.repeat(40)}…"`,
      },
    });
    // the call is untouched by all of that
    expect((await json(s.app, '/admin/calls')).calls.map((r: { callid: string }) => r.callid)).toEqual(['4242']);
  });

  it('refuses bad limits, statuses and cursors with 400 BAD_ADMIN_QUERY', async () => {
    const { app: a } = await server();
    for (const id of ['1', '2', '3']) await send(a, 'desk', { callid: id });
    const finishedCursor = Buffer.from('f:2').toString('base64url');
    const liveCursor = (await json(a, '/admin/calls?limit=1')).next as string;
    const bad = [
      'limit=1e9',
      'limit=1000000000',
      'limit=0',
      'limit=-1',
      'limit=501',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'limit=1&limit=2',
      'limit=%201',
      'status=deleted',
      'status=LIVE',
      'status=live&status=finished',
      'status=',
      'cursor=!!!',
      'cursor=AAAA',
      `cursor=${'A'.repeat(300)}`,
      `cursor=${finishedCursor}`,
      `status=finished&cursor=${liveCursor}`,
      `cursor=${Buffer.from('l:abc').toString('base64url')}`,
      `cursor=${Buffer.from('l:999999999999999999999').toString('base64url')}`,
      `status=finished&cursor=${Buffer.from('f:0').toString('base64url')}`,
      `status=finished&cursor=${Buffer.from('f:-1').toString('base64url')}`,
      `status=finished&cursor=${Buffer.from('f:99999999').toString('base64url')}`,
      `cursor=${liveCursor}=`,
      `cursor=${liveCursor}&cursor=${liveCursor}`,
      'cursor=bDox%00',
    ];
    for (const q of bad) {
      const r = await admin(a, `/admin/calls?${q}`);
      expect(r.statusCode, q).toBe(400);
      expect(r.json().error.code, q).toBe('BAD_ADMIN_QUERY');
    }
    expect((await admin(a, '/admin/calls?limit=1e9')).json().error.message).toBe(
      'limit must be an integer from 1 to 500 (given once)',
    );
    expect((await admin(a, '/admin/calls?cursor=AAAA')).json().error.message).toBe(
      'the cursor is not one this server gave for status=live: start again without it',
    );
    // good ones still work; unknown parameters are ignored; an empty cursor is the first page
    expect((await json(a, `/admin/calls?limit=500&cursor=${liveCursor}&x=1`)).calls).toHaveLength(2);
    expect((await json(a, '/admin/calls?cursor=')).calls).toHaveLength(3);
    expect(await json(a, `/admin/calls?status=finished&cursor=${finishedCursor}`)).toEqual({ calls: [], next: null });
  });

  it("says so when the store no longer keeps a cursor it gave (the Redis store's page rest, expired)", async () => {
    const store = new MemoryStore();
    for (const id of ['1', '2']) await store.commit(id, undefined, 'x', 60_000);
    const liveCursor = Buffer.from('l:1').toString('base64url');
    vi.spyOn(store, 'listLive').mockRejectedValue(new BadCursor('the cursor expired: start the listing again', true));
    const { app: a } = await server({ store });
    const r = await admin(a, `/admin/calls?cursor=${liveCursor}`);
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toMatchObject({
      code: 'BAD_ADMIN_QUERY',
      message: 'the cursor is not one this server gave for status=live, or it expired: start again without it',
    });
  });

  it('needs the admin credentials, and refuses other sites', async () => {
    const { app: a } = await server();
    await send(a, 'desk', { callid: '1' });
    for (const [method, url] of [
      ['GET', '/admin/calls'],
      ['GET', '/admin/calls/1'],
      ['DELETE', '/admin/calls/1'],
    ] as const) {
      const r = await a.inject({ method, url });
      expect(r.statusCode).toBe(401);
      expect(r.json().error.code).toBe('ADMIN_AUTH_REQUIRED');
      const x = await a.inject({ method, url, headers: { authorization: ADMIN, 'sec-fetch-site': 'cross-site' } });
      expect(x.statusCode).toBe(403);
      expect(x.json().error.code).toBe('CROSS_ORIGIN');
    }
    expect((await json(a, '/admin/calls')).calls).toHaveLength(1);
  });
});

describe('a store of your own without history methods', () => {
  it('keeps no history, says so once, and the calls go on; the admin API shows none', async () => {
    const inner = new MemoryStore();
    const old = {
      load: (id: string, keep?: boolean) => inner.load(id, keep),
      commit: (id: string, rev: number | undefined, v: string, ttl: number) => inner.commit(id, rev, v, ttl),
      setAside: (id: string, a: string, ttl: number) => inner.setAside(id, a, ttl),
      get: (id: string) => inner.get(id),
      set: (id: string, v: string, ttl: number) => inner.set(id, v, ttl),
      delete: (id: string) => inner.delete(id),
      size: () => inner.size(),
      ping: () => inner.ping(),
      close: () => inner.close(),
    };
    const { app: a, logs } = await server({ store: old as unknown as MemoryStore });
    expect(logs.filter((l) => l.code === 'HISTORY_UNSUPPORTED')).toHaveLength(1);
    await deskCall(a, '70');
    await send(a, 'desk', { callid: '71' });
    expect(await json(a, '/admin/calls?status=finished')).toEqual({ calls: [], next: null });
    expect((await json(a, '/admin/calls/71')).path).toEqual([]);
    expect((await admin(a, '/admin/calls/71', 'DELETE')).json()).toMatchObject({ outcome: 'ended_by_admin', path: [] });
    expect(await send(a, 'desk', { callid: '71', command: 'read', command_id: 1, command_result: '1' })).toMatchObject({
      command: 'hangup',
    });
    expect(logs.filter((l) => l.code === 'HISTORY_WRITE_FAILED')).toEqual([]);
  });
});

describe('a step that misses the deadline', () => {
  it('is in the path when it lands, marked late, with its effect and timing', async () => {
    const SMS_FLOWS = new URL('../fixtures/sms-flows', import.meta.url).pathname;
    const sms = async () => {
      await new Promise((r) => setTimeout(r, 800)); // past the deadline (its timeout ignored)
      return 'H-42';
    };
    const { app: a } = await server({ flowsDir: SMS_FLOWS, deadlineMs: 600, effects: { sms } });
    const fb = await send(a, 'confirm', { callid: '5' });
    expect(fb).toMatchObject({ command: 'wait', command_id: 0 });
    await new Promise((r) => setTimeout(r, 400));
    const r = await send(a, 'confirm', { callid: '5', command: 'wait', command_id: 0, command_result: '0' });
    expect(r).toMatchObject({
      command: 'play',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Sent H-42.' },
    });
    await send(a, 'confirm', { callid: '5', command: 'play', command_id: 1, command_result: '' });
    await send(a, 'confirm', { callid: '5', command: 'hangup', command_id: 2, call_status: 'HANGUP' });
    const rec = await finished(a, '5');
    expect(rec.path.map(untimed)).toEqual([
      {
        from: null,
        command: '',
        result: '',
        error: '',
        step: 'sent',
        reply: { command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Sent H-42.' } },
        transitions: ['confirm:default'],
        effects: [{ kind: 'sms', step: 'confirm', outcome: 'ok', value: 'H-42', ms: expect.any(Number) }],
        late: true,
        outcome: 'ok',
        // the fallback's report, taken as the replaced request again: a replay, counted here
        replays: 1,
        refused: 0,
      },
      {
        from: 'sent',
        command: 'play',
        result: '',
        error: '',
        step: 'end',
        reply: { command: 'hangup', params: {} },
        transitions: ['sent:default'],
        effects: [],
        late: false,
        outcome: 'ok',
      },
      {
        from: 'end',
        command: 'hangup',
        result: '',
        error: '',
        step: 'end',
        reply: { command: 'hangup', params: {} },
        transitions: [],
        effects: [],
        late: false,
        outcome: 'ok',
      },
    ]);
    expect(rec.path[0].ms).toBeGreaterThanOrEqual(790);
    expect(rec.path[0].effects[0].ms).toBeGreaterThanOrEqual(790);
  });
});
