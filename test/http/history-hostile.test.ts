/**
 * A client without credentials against the call history (issue 21, item 1), through the server on the memory store
 * and on Redis: replays and stale requests of 60 KB on one call leave one entry, counted, whose strings are cut; the
 * stored path and record stay small. Then the admin API's answers paged by size: a listing of big records, a call's
 * path read in pages with its cursor (live and finished). Redis: skipped with a message when it does not answer.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { pathEntry, textBytes, type PathEntry } from '../../src/engine/history.js';
import type { StepEvent } from '../../src/engine/observe.js';
import { PAGE_BYTES } from '../../src/http/calls.js';
import { buildServer } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';
import type { CallStore } from '../../src/store/types.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { rtBody, type RtFields } from '../helpers/rt.js';

const missing = await redisMissing();
const FLOWS = new URL('../fixtures/history', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const RESULT = 'R'.repeat(40_000);
const ERROR = 'E'.repeat(20_000);
const apps: FastifyInstance[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

async function server(kind: 'memory' | 'redis'): Promise<{ app: FastifyInstance; store: CallStore }> {
  let store: CallStore;
  if (kind === 'redis') {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const r = new RedisStore(REDIS_URL, { prefix });
    await r.ready();
    store = r;
  } else store = new MemoryStore();
  const app = await buildServer({
    flowsDir: FLOWS,
    logLevel: false,
    store,
    watch: false,
    admin: { login: 'boss', password: 's3cret' },
  });
  app.addHook('onClose', async () => store.close());
  apps.push(app);
  return { app, store };
}

const rt = (a: FastifyInstance, over: Partial<RtFields>) =>
  a.inject({ method: 'POST', url: '/rt/desk', headers: { 'content-type': 'application/json' }, payload: rtBody(over) });
const admin = async (a: FastifyInstance, url: string) => {
  const r = await a.inject({ method: 'GET', url, headers: { authorization: ADMIN } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as Record<string, unknown> & { path: PathEntry[] };
};
const untimed = ({ at: _at, ms: _ms, ...rest }: PathEntry) => rest;

describe.each(['memory', 'redis'] as const)('a client flooding one call (%s store)', (kind) => {
  it.skipIf(kind === 'redis' && !!missing)(
    '200 replays and stale requests of 60 KB: one entry, counted; its strings and the record cut',
    async () => {
      const { app, store } = await server(kind);
      expect((await rt(app, { callid: '900' })).statusCode).toBe(200); // menu: read, command 1
      for (let i = 0; i < 200; i++) {
        const replay = i % 2 === 0;
        const r = await rt(app, {
          callid: '900',
          command: replay ? '' : 'read',
          command_id: replay ? 0 : 7,
          command_result: RESULT,
          command_error: ERROR,
        });
        expect(r.statusCode).toBe(replay ? 200 : 409);
      }
      const live = await vi.waitFor(async () => {
        const body = await admin(app, '/admin/calls/900');
        if (body.path[0]?.refused !== 100) throw new Error('not written yet');
        return body;
      });
      const first = {
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
      };
      expect(live.path.map(untimed)).toEqual([{ ...first, replays: 100, refused: 100 }]);
      expect(live).toMatchObject({ dropped: 0, pathNext: null });
      const stored = await store.readPath('900');
      expect(stored).toHaveLength(1);
      expect(stored[0]!.endsWith(',"replays":100,"refused":100}')).toBe(true);

      // the call goes on with a result of 60 KB: kept cut, marked with its size
      await rt(app, { callid: '900', command: 'read', command_id: 1, command_result: 'R'.repeat(60_000) });
      await rt(app, { callid: '900', command: 'play', command_id: 2, call_status: 'HANGUP' });
      const done = await vi.waitFor(async () => {
        const body = await admin(app, '/admin/calls/900');
        if (body.status !== 'finished') throw new Error('not finished yet');
        return body;
      });
      expect(done.path.map((e) => [e.from, e.result, e.replays, e.refused])).toEqual([
        [null, '', 100, 100],
        ['menu', `${'R'.repeat(240)}…(60000 bytes)`, undefined, undefined],
        [done.path[1]!.step, '', undefined, undefined],
      ]);
      const record = (await store.getFinished('900'))!;
      expect(textBytes(record)).toBeLessThan(4096);
      expect(await store.readPath('900')).toEqual([]);
    },
  );
});

/** A path entry of about 2 KB (its result cut to 256 bytes, its params' strings to 200 characters: many params). */
function bigEntry(at: number): string {
  const params = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`p${i}`, 'x'.repeat(200)]));
  const e = {
    callid: '1',
    flow: 'desk',
    outcome: 'ok',
    answer: 'answered',
    late: false,
    at,
    ms: 1,
    request: { command: 'read', result: '1', error: '', callStatus: 'UP', commandId: at },
    from: 'menu',
    step: 'menu',
    reply: { command: 'read', commandId: at + 1, params },
    isNew: false,
    ended: false,
    transitions: [],
    effects: [],
    errors: [],
  } satisfies StepEvent;
  return JSON.stringify(pathEntry(e));
}

describe('the admin API pages by size', () => {
  it('a call of 300 entries of 2 KB (finished, then live): its path in pages of at most 256 KiB', async () => {
    const { app, store } = await server('memory');
    const entries = Array.from({ length: 300 }, (_, i) => bigEntry(i));
    expect(textBytes(entries[0]!)).toBeGreaterThan(1900);
    const record =
      '{"callid":"31","flow":"desk","version":"abcdef012345","started":"2026-01-01T00:00:00.000Z",' +
      '"ended":"2026-01-01T00:01:00.000Z","durationMs":60000,"outcome":"completed","status":"HANGUP",' +
      `"lastStep":"end","commands":300,"vars":{},"dropped":5,"path":[${entries.join(',')}]}`;
    await store.addFinished('31', record, 10, 60_000);
    const pages: PathEntry[][] = [];
    const first = await admin(app, '/admin/calls/31');
    expect(first).toMatchObject({ callid: '31', status: 'finished', dropped: 5 });
    pages.push(first.path);
    let next = first.pathNext as string | null;
    while (next !== null) {
      const page = await admin(app, `/admin/calls/31/path?cursor=${next}`);
      expect(Object.keys(page)).toEqual(['callid', 'status', 'dropped', 'path', 'next']);
      pages.push(page.path);
      next = page.next as string | null;
    }
    expect(pages.length).toBeGreaterThan(2);
    for (const p of pages) expect(textBytes(p.map((e) => JSON.stringify(e)).join(''))).toBeLessThanOrEqual(PAGE_BYTES);
    expect(pages.flat().map((e) => e.at)).toEqual(entries.map((_, i) => i));
    // a page asked again answers the same; a cursor of another call, or not one, is refused
    const again = await admin(app, `/admin/calls/31/path?cursor=${first.pathNext as string}`);
    expect(again.path).toEqual(pages[1]);
    expect((await admin(app, '/admin/calls/31/path')).path).toEqual(pages[0]);
    for (const [url, callid] of [
      [`/admin/calls/32/path?cursor=${first.pathNext as string}`, '32'],
      ['/admin/calls/31/path?cursor=nope', '31'],
      [`/admin/calls/31/path?cursor=${Buffer.from('f:10').toString('base64url')}`, '31'],
    ] as const) {
      const r = await app.inject({ method: 'GET', url, headers: { authorization: ADMIN } });
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({
        error: {
          code: 'BAD_ADMIN_QUERY',
          message: `the cursor is not one this server gave for the path of call ${callid}: start again without it`,
        },
      });
    }

    // live: the call's path as stored, the entries dropped from its start counted in the cursor
    expect((await rt(app, { callid: '33' })).statusCode).toBe(200);
    await vi.waitFor(async () => expect((await store.readPath('33')).length).toBe(1));
    await store.appendPaths(
      entries.map((entry) => ({ callid: '33', entry })),
      250,
      60_000,
    );
    const live = await admin(app, '/admin/calls/33');
    expect(live).toMatchObject({ status: 'live', dropped: 51 });
    expect(live.path[0]!.at).toBe(50);
    const rest = await admin(app, `/admin/calls/33/path?cursor=${live.pathNext as string}`);
    expect(rest.path[0]!.at).toBe(50 + live.path.length);
  });

  it('a listing of records written without rows: at most 256 KiB of them a page, all of them in turn', async () => {
    const { app, store } = await server('memory');
    const pad = 'x'.repeat(100_000);
    for (let i = 1; i <= 7; i++)
      await store.addFinished(
        String(i),
        JSON.stringify({
          callid: String(i),
          flow: 'desk',
          version: 'abcdef012345',
          started: '2026-01-01T00:00:00.000Z',
          ended: '2026-01-01T00:01:00.000Z',
          durationMs: 60000,
          outcome: 'completed',
          status: 'HANGUP',
          lastStep: 'end',
          commands: 1,
          vars: { pad },
          path: [],
        }),
        100,
        60_000,
      );
    const seen: string[] = [];
    let url = '/admin/calls?status=finished&limit=50';
    for (;;) {
      const page = await admin(app, url);
      const calls = page.calls as { callid: string }[];
      expect(calls.length).toBeLessThanOrEqual(2);
      expect(Object.keys(calls[0]!)).toEqual([
        'callid',
        'flow',
        'version',
        'started',
        'ended',
        'durationMs',
        'outcome',
        'status',
        'lastStep',
      ]);
      seen.push(...calls.map((c) => c.callid));
      if (page.next === null) break;
      url = `/admin/calls?status=finished&limit=50&cursor=${page.next as string}`;
    }
    expect(seen).toEqual(['7', '6', '5', '4', '3', '2', '1']);
  });
});
