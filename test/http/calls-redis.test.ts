/**
 * The call history on Redis, shared by the instances: a call whose requests alternate
 * between two instances has one path, finished on one it is seen on the other; live calls
 * of every instance are listed on each; a live call is ended from either; `keep` holds
 * across instances. Needs Redis (REDIS_URL): skipped with a message when it does not
 * answer, failing under CI=true.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';
import { RedisStore } from '../../src/store/redis.js';
import type { CallscriptPluginOptions } from '../../src/http/options.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';

const missing = await redisMissing();
const FLOWS = new URL('../fixtures/history', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const apps: FastifyInstance[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

/** Two instances on one Redis prefix, each with its own client. */
async function pair(
  opts: Partial<CallscriptPluginOptions> = {},
): Promise<[FastifyInstance, FastifyInstance, RedisStore]> {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const stores: RedisStore[] = [];
  const make = async () => {
    const store = new RedisStore(REDIS_URL, { prefix });
    await store.ready();
    stores.push(store);
    const app = await buildServer({
      flowsDir: FLOWS,
      logLevel: false,
      store,
      watch: false,
      admin: { login: 'boss', password: 's3cret' },
      ...opts,
    });
    app.addHook('onClose', async () => store.close());
    apps.push(app);
    return app;
  };
  return [await make(), await make(), stores[0]!];
}

const rt = async (a: FastifyInstance, over: Partial<RtFields>) => {
  const r = await a.inject({
    method: 'POST',
    url: '/rt/desk',
    headers: { 'content-type': 'application/json' },
    payload: rtBody(over),
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as { command: string; command_id: number };
};
const admin = (a: FastifyInstance, url: string, method: 'GET' | 'DELETE' = 'GET') =>
  a.inject({ method, url, headers: { authorization: ADMIN } });
const finished = (a: FastifyInstance, callid: string) =>
  vi.waitFor(async () => {
    const body = (await admin(a, `/admin/calls/${callid}`)).json();
    if (body.status !== 'finished') throw new Error('not finished yet');
    return body;
  });

/** The callids of every live call listed, following the cursor to the last page (bounded). */
async function liveCallids(a: FastifyInstance): Promise<string[]> {
  const ids: string[] = [];
  let url = '/admin/calls';
  for (let n = 0; n < 1000; n++) {
    const r = await admin(a, url);
    expect(r.statusCode, r.body).toBe(200);
    const page = r.json() as { calls: { callid: string }[]; next: string | null };
    ids.push(...page.calls.map((c) => c.callid));
    if (page.next === null) return ids;
    url = `/admin/calls?cursor=${page.next}`;
  }
  throw new Error('the live listing did not end within 1000 pages');
}

describe.skipIf(!!missing)('call history on Redis, shared by instances', () => {
  it('a call served by both instances has one path; finished on one, it is seen on the other', async () => {
    const [a, b] = await pair();
    await rt(a, { callid: '700' });
    await rt(b, { callid: '700', command: 'read', command_id: 1, command_result: '1' });
    await rt(a, { callid: '700', command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
    // live on b, with the path written by both
    const live = await vi.waitFor(async () => {
      const body = (await admin(b, '/admin/calls/700')).json();
      if (body.path?.length !== 3) throw new Error('path not written yet');
      return body;
    });
    expect(live).toMatchObject({ status: 'live', step: 'bye', commands: 3 });
    expect(live.path.map((e: { transitions: string[] }) => e.transitions)).toEqual([
      [],
      ['menu:1'],
      ['sales:NOANSWER'],
    ]);
    await rt(b, { callid: '700', command: 'play', command_id: 3, command_result: '' });
    await rt(a, { callid: '700', command: 'hangup', command_id: 4, call_status: 'HANGUP' });
    const onB = await finished(b, '700');
    expect(onB).toMatchObject({
      callid: '700',
      flow: 'desk',
      outcome: 'completed',
      status: 'finished',
      callStatus: 'HANGUP',
      lastStep: 'end',
      commands: 4,
    });
    expect(onB.path.map((e: { from: string | null; step: string }) => [e.from, e.step])).toEqual([
      [null, 'menu'],
      ['menu', 'sales'],
      ['sales', 'bye'],
      ['bye', 'end'],
      ['end', 'end'],
    ]);
    expect(await finished(a, '700')).toEqual(onB);
    for (const x of [a, b]) {
      const list = (await admin(x, '/admin/calls?status=finished')).json();
      expect(list.calls.map((r: { callid: string; status: string }) => [r.callid, r.status])).toEqual([
        ['700', 'HANGUP'],
      ]);
      // no live call left: every page, to the end (a page may be empty with a cursor when other tests' keys
      // outnumber this prefix's on the shared Redis: SCAN stops after MAX_SCANS_PER_PAGE batches)
      expect(await liveCallids(x)).toEqual([]);
    }
  });

  it(
    'lists the live calls of both instances on each, paged ' + '(lastSeen only where the call was last served)',
    async () => {
      const [a, b] = await pair();
      for (let i = 0; i < 7; i++) await rt(i % 2 ? a : b, { callid: String(800 + i) });
      const all: { callid: string; lastSeen: string | null }[] = [];
      let url = '/admin/calls?limit=3';
      for (let n = 0; n < 20; n++) {
        const page = (await admin(a, url)).json();
        expect(page.calls.length).toBeLessThanOrEqual(3);
        all.push(...page.calls);
        if (page.next === null) break;
        url = `/admin/calls?limit=3&cursor=${page.next}`;
      }
      // each at least once: on this shared Redis other tests' keys come and go, and SCAN may list a
      // key twice when Redis shrinks its table between pages (each once as the table grows:
      // test/store/redis-paging.test.ts)
      expect([...new Set(all.map((c) => c.callid))].sort()).toEqual(['800', '801', '802', '803', '804', '805', '806']);
      for (const c of all) expect(c.lastSeen === null).toBe(Number(c.callid) % 2 === 0);
    },
  );

  it(
    'a live call ended on one instance: the other answers its next request hangup; the record says ' + 'ended_by_admin',
    async () => {
      const [a, b] = await pair();
      await rt(a, { callid: '900' });
      await rt(a, { callid: '900', command: 'read', command_id: 1, command_result: '1' });
      await vi.waitFor(async () => expect((await admin(b, '/admin/calls/900')).json().path).toHaveLength(2));
      const del = await admin(b, '/admin/calls/900', 'DELETE');
      expect(del.statusCode, del.body).toBe(200);
      expect(del.json()).toMatchObject({
        callid: '900',
        outcome: 'ended_by_admin',
        status: 'finished',
        lastStep: 'sales',
        commands: 2,
      });
      expect(del.json().path).toHaveLength(2);
      expect(await rt(a, { callid: '900', command: 'dialout', command_id: 2, command_result: 'ANSWER' })).toMatchObject(
        {
          command: 'hangup',
          command_id: 3,
        },
      );
      expect((await finished(a, '900')).outcome).toBe('ended_by_admin');
      expect((await admin(a, '/admin/calls/900', 'DELETE')).json().error.code).toBe('CALL_NOT_FOUND');
      // a's live-call bookkeeping forgot it at its next request (the tombstone): its flows count no live call
      expect((await admin(a, '/admin/calls')).json().calls).toEqual([]);
      expect((await admin(a, '/admin/flows')).json().liveCalls).toBe(0);
    },
  );

  it('an instance that stops at once still writes the record of the call it just ended', async () => {
    const [a, b] = await pair();
    await rt(a, { callid: '720' });
    await rt(a, { callid: '720', command: 'read', command_id: 1, call_status: 'HANGUP' });
    await a.close(); // its store is closed with it (onClose), the history written before (preClose)
    apps.splice(apps.indexOf(a), 1);
    const rec = await finished(b, '720');
    expect(rec).toMatchObject({ outcome: 'abandoned', callStatus: 'HANGUP' });
    expect(rec.path.map((e: { from: string | null; step: string }) => [e.from, e.step])).toEqual([
      [null, 'menu'],
      ['menu', 'menu'],
    ]);
  });

  it('answers CALL_BUSY while an instance holds a claim on the call', async () => {
    const [a, , store] = await pair();
    await rt(a, { callid: '950' });
    const state = JSON.parse((await store.get('950'))!) as Record<string, unknown>;
    await store.set(
      '950',
      JSON.stringify({ ...state, claim: { req: '1:read:UP', until: Date.now() + 60_000 } }),
      60_000,
    );
    const r = await admin(a, '/admin/calls/950', 'DELETE');
    expect(r.statusCode).toBe(409);
    expect(r.json().error.code).toBe('CALL_BUSY');
  });

  it('keeps the last `keep` finished calls across instances, for ttlMs', async () => {
    const [a, b] = await pair({ history: { keep: 3, ttlMs: 1000 } });
    for (let i = 0; i < 6; i++) {
      const x = i % 2 ? a : b;
      await rt(x, { callid: String(600 + i) });
      await rt(x, { callid: String(600 + i), command: 'read', command_id: 1, call_status: 'HANGUP' });
      await finished(x, String(600 + i));
    }
    expect(
      (await admin(a, '/admin/calls?status=finished')).json().calls.map((r: { callid: string }) => r.callid),
    ).toEqual(['605', '604', '603']);
    expect((await admin(b, '/admin/calls/600')).statusCode).toBe(404);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await admin(b, '/admin/calls?status=finished')).json()).toEqual({ calls: [], next: null });
    expect((await admin(a, '/admin/calls/605')).statusCode).toBe(404);
  });

  it('Redis away: the listing and the detail answer 503 STORE_UNAVAILABLE', async () => {
    const prefix = testPrefix();
    const store = new RedisStore('redis://127.0.0.1:1', { prefix, redis: { connectTimeout: 200 } });
    const app = await buildServer({
      flowsDir: FLOWS,
      logLevel: false,
      store,
      watch: false,
      admin: { login: 'boss', password: 's3cret' },
    });
    app.addHook('onClose', async () => store.close());
    apps.push(app);
    for (const url of ['/admin/calls', '/admin/calls?status=finished', '/admin/calls/1']) {
      const r = await admin(app, url);
      expect(r.statusCode, url).toBe(503);
      expect(r.json().error.code).toBe('STORE_UNAVAILABLE');
    }
    const del = await admin(app, '/admin/calls/1', 'DELETE');
    expect(del.statusCode).toBe(503);
    expect(del.json().error.code).toBe('STORE_UNAVAILABLE');
  });
});
