/**
 * Scale out on Redis, fault: the Redis of a serving instance goes away mid-call, on a
 * redis-server of the test's own that keeps nothing (not the shared one). While it is
 * stopped, requests are answered 503 STORE_UNAVAILABLE in the envelope within the deadline
 * and /health is 503 with the reason; nothing is half-written (no request refused meanwhile
 * reaches Redis later). It comes back empty: the server reconnects by itself, the next
 * request of the call in progress follows unknown_call (restart, logged UNKNOWN_CALL), new
 * calls work. Frozen (SIGSTOP) instead, past what the deadline fallback covers (twice the
 * deadline and the fallback's second; riding a shorter stall under load:
 * ./redis-stall.test.ts): the request gets the fallback, so does its report, the next
 * report 503, and once it resumes the report sent again goes on where the call was.
 * The server's deadline is 1 s here. Needs redis-server on PATH: skipped with a message
 * when it is not, failing under CI=true.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  Processes,
  freePort,
  logEntries,
  redisServerMissing,
  until,
  type Proc,
  type ServeProc,
} from '../helpers/processes.js';
import { testPrefix } from '../helpers/redis.js';
import { playCall, postRt, type Sent } from './service.js';
import { DESK_V1, deskCaller, deskCommands, flowsDir, shape } from './desk.js';

const missing = redisServerMissing();
const procs = new Processes();
const prefix = testPrefix();
afterAll(() => procs.killAll());

/** The reply deadline of this file's server: an answer past it would be the fallback (200), not a 503. */
const DEADLINE_MS = 1000;
/** The service's budget for an answer (a bound, not a speed check). */
const BUDGET_MS = 5000;
const UNAVAILABLE = {
  error: {
    code: 'STORE_UNAVAILABLE',
    message: expect.stringMatching(/^the call store is unavailable \(Redis: .+\); nothing was changed, retry$/),
  },
};

/** A request, and how long its answer took (bounded by the service's budget, not a speed check). */
async function timed(base: string, fields: Parameters<typeof postRt>[2]): Promise<Sent & { ms: number }> {
  const t0 = Date.now();
  const r = await postRt(base, '/rt/desk', fields);
  return { ...r, ms: Date.now() - t0 };
}

const health = async (base: string) => {
  const r = await fetch(`${base}/health`);
  return { status: r.status, json: (await r.json()) as { status: string; store: string; calls: number } };
};

describe.skipIf(!!missing)('Redis stopped and restarted under a serving instance', () => {
  const ctx: { port?: number; redis?: Proc; srv?: ServeProc } = {};
  /** A client of the test's Redis for `fn`. */
  const inRedis = async <T>(fn: (r: Redis) => Promise<T>): Promise<T> => {
    const r = new Redis({ port: ctx.port!, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      return await fn(r);
    } finally {
      r.disconnect();
    }
  };
  const callKeys = () => inRedis((r) => r.keys(`${prefix}call:*`));

  it(
    'down: 503 STORE_UNAVAILABLE within the deadline, /health 503; back empty: reconnected, the call in ' +
      'progress restarts (UNKNOWN_CALL), new calls work',
    async () => {
      ctx.port = await freePort();
      ctx.redis = await procs.redis(ctx.port);
      const srv = (ctx.srv = await procs.serve(
        ['--flows', flowsDir(DESK_V1), '--store', `redis://127.0.0.1:${ctx.port}`],
        { CALLSCRIPT_STORE_PREFIX: prefix, DEADLINE_MS: String(DEADLINE_MS) },
      ));
      expect((await health(srv.base)).status).toBe(200);
      // a call in progress: at its dialout
      expect((await postRt(srv.base, '/rt/desk', { callid: '930000' })).json).toMatchObject({
        command: 'read',
        command_id: 1,
      });
      expect(
        (await postRt(srv.base, '/rt/desk', { callid: '930000', command: 'read', command_id: 1, command_result: '1' }))
          .json,
      ).toMatchObject({ command: 'dialout', command_id: 2 });
      expect(await callKeys()).toEqual([`${prefix}call:{930000}`]);

      expect(await ctx.redis.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      // the call's next request, and a new call: 503 in the envelope, before the deadline
      const next = { callid: '930000', command: 'dialout', command_id: 2, command_result: 'NOANSWER' };
      for (const r of [
        await timed(srv.base, next),
        await timed(srv.base, { callid: '930001' }),
        await timed(srv.base, next),
      ]) {
        expect(r.status).toBe(503);
        expect(r.json).toEqual(UNAVAILABLE);
        expect(r.ms).toBeLessThan(BUDGET_MS);
      }
      const down = await health(srv.base);
      expect(down.status).toBe(503);
      expect(down.json).toMatchObject({
        status: 'unavailable',
        store: expect.stringMatching(/^unreachable: Redis: /),
        calls: 1,
      }); // the refused new call is not live
      expect(
        logEntries(srv.output())
          .filter(
            (l) => l.code === 'STORE_UNAVAILABLE' && l.msg === 'the call store is unavailable: the service will retry',
          )
          .map((l) => l.callid),
      ).toEqual(['930000', '930001', '930000']);

      // back, empty (it kept nothing): the server reconnects by itself
      ctx.redis = await procs.redis(ctx.port);
      await until(async () => ((await health(srv.base)).status === 200 ? true : undefined), '/health 200 again');
      expect((await health(srv.base)).json).toMatchObject({ status: 'ok', store: 'ok' });
      // nothing refused during the outage was queued and written on reconnecting
      expect(await callKeys()).toEqual([]);

      // the call's next request: unknown call, restarted (the default policy), its commands numbered on
      const restarted = await postRt(srv.base, '/rt/desk', next);
      expect(restarted.status).toBe(200);
      expect(restarted.json).toMatchObject({
        command: 'read',
        command_id: 3,
        params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.' },
      });
      await until(() => logEntries(srv.output()).find((l) => l.code === 'UNKNOWN_CALL'), 'the UNKNOWN_CALL log line');
      expect(logEntries(srv.output()).filter((l) => l.code === 'UNKNOWN_CALL')).toEqual([
        expect.objectContaining({
          level: 40,
          callid: '930000',
          msg: 'no state for call 930000 (command dialout, command_id 2): restarting the flow',
        }),
      ]);
      expect(
        (await postRt(srv.base, '/rt/desk', { callid: '930000', command: 'read', command_id: 3, command_result: '7' }))
          .json,
      ).toMatchObject({ command: 'play', command_id: 4 });
      expect(
        (await postRt(srv.base, '/rt/desk', { callid: '930000', command: 'play', command_id: 4, command_result: '0' }))
          .json,
      ).toMatchObject({ command: 'hangup', command_id: 5 });
      expect(
        (
          await postRt(srv.base, '/rt/desk', {
            callid: '930000',
            command: 'hangup',
            command_id: 5,
            call_status: 'HANGUP',
          })
        ).status,
      ).toBe(200);
      // the new call refused during the outage, sent again, and another: whole calls
      const calls = await Promise.all(
        ['930001', '930002'].map((callid) =>
          playCall({ callid, path: '/rt/desk', route: () => srv.base, result: deskCaller('1') }),
        ),
      );
      for (const c of calls) expect(shape(c.commands)).toEqual(deskCommands('1'));
    },
    40_000,
  );

  it(
    'frozen (SIGSTOP) past what the fallback covers: fallbacks, then 503 for the next report and new calls; ' +
      'resumed (SIGCONT): the report sent again goes on where the call was',
    async () => {
      const { srv, redis } = ctx;
      if (!srv || !redis) return expect.unreachable('runs after the test above');
      expect((await postRt(srv.base, '/rt/desk', { callid: '931000' })).json).toMatchObject({
        command: 'read',
        command_id: 1,
      });
      const report = { callid: '931000', command: 'wait', command_id: 1, command_result: '0' };
      const fallback = '{"command":"wait","command_id":1,"params":{"wait":1},"variables":{}}';
      redis.child.kill('SIGSTOP');
      try {
        // the request waits for Redis until the deadline: the fallback, echoing its command_id; its report, waiting
        // behind it, the same at its own deadline
        for (const r of [
          await timed(srv.base, { callid: '931000', command: 'read', command_id: 1, command_result: '1' }),
          await timed(srv.base, report),
        ]) {
          expect([r.status, r.text]).toEqual([200, fallback]);
          expect(r.ms).toBeLessThan(BUDGET_MS);
        }
        // 3 s (twice the deadline and the fallback's second) after the request's load: given up on, and so is
        // what waits behind it, not sent to Redis; so is a new call
        const stalled = {
          error: {
            code: 'STORE_UNAVAILABLE',
            message: expect.stringMatching(
              /^the call store is unavailable \(stalled: no answer for \d+ ms\); nothing was changed, retry$/,
            ),
          },
        };
        for (const x of [await timed(srv.base, report), await timed(srv.base, { callid: '931001' })]) {
          expect(x.status).toBe(503);
          expect(x.json).toEqual(stalled);
          expect(x.ms).toBeLessThan(BUDGET_MS);
        }
        expect((await health(srv.base)).status).toBe(503);
      } finally {
        redis.child.kill('SIGCONT');
      }
      await until(async () => ((await health(srv.base)).status === 200 ? true : undefined), '/health 200 again');
      // the report sent again stands for the request (its note reached Redis when it resumed): the call advances
      // once, from where it was; a copy gets the same bytes
      const again = await postRt(srv.base, '/rt/desk', report);
      expect(again.json).toMatchObject({ command: 'dialout', command_id: 2 });
      expect((await postRt(srv.base, '/rt/desk', report)).text).toBe(again.text);
      // two commits: the start and this step
      expect(await inRedis((r) => r.hget(`${prefix}call:{931000}`, 'r'))).toBe('2');
      expect(
        (
          await postRt(srv.base, '/rt/desk', {
            callid: '931000',
            command: 'dialout',
            command_id: 2,
            command_result: 'NOANSWER',
          })
        ).json,
      ).toMatchObject({ command: 'play', command_id: 3 });
    },
    40_000,
  );
});
