/**
 * Scale out on Redis, fault: a rolling deploy with processes. Instance A serves v1 of a
 * flow, calls start on it; instance B starts with v2; A is stopped with SIGTERM while a
 * request is in flight on it (its body half sent). That request gets its normal answer; a
 * request reaching A during the drain is 503 SHUTTING_DOWN, later ones are refused; the
 * service sends them to B. The calls started on A finish on v1 through B (which fetches v1
 * from Redis), new calls on B get v2. Needs Redis (REDIS_URL): skipped with a message when
 * it does not answer, failing under CI=true.
 */
import { describe, expect, it } from 'vitest';
import { REDIS_URL } from '../helpers/redis.js';
import { redisTestbed } from './testbed.js';
import { refused, until } from '../helpers/processes.js';
import { openSocket } from '../helpers/socket.js';
import { rtBody } from '../helpers/rt.js';
import { drainedAnswers, playCall, postRt, rawPost, type CallRun } from './service.js';
import { DESK_V1, DESK_V2, deskCaller, deskCommands, flowsDir, shape } from './desk.js';

const { missing, procs, prefix } = await redisTestbed();

const versionOf = (out: string) => /\(desk\.yaml, version ([0-9a-f]{12})\)/.exec(out)?.[1];

describe.skipIf(!!missing)('rolling deploy, with processes', () => {
  it(
    'calls started on A (v1) finish on v1 through B (v2) ' + 'after A drains on SIGTERM; new calls on B get v2',
    async () => {
      const env = { CALLSCRIPT_STORE: REDIS_URL, CALLSCRIPT_STORE_PREFIX: prefix };
      const a = await procs.serve(['--flows', flowsDir(DESK_V1)], env);

      // six calls start on A and make their first two requests there, then wait for the deploy
      const deployed: { done?: () => void } = {};
      const gate = new Promise<void>((r) => (deployed.done = r));
      const started = { n: 0 };
      const onA = ['1', '7', '1', '7', '1', '7'].map((digit, i) =>
        playCall({
          callid: String(910_000 + i),
          path: '/rt/desk',
          // A while it lives; from the deploy on the service finds A gone and goes to B
          route: (k, attempt) => (k < 2 || attempt === 0 ? a.base : b.base),
          result: deskCaller(digit),
          before: async (k) => {
            if (k === 2) {
              started.n++;
              await gate;
            }
          },
        }),
      );
      // two more on A, driven by hand: X's next request will be in flight at SIGTERM, Y's will come during the drain
      for (const callid of ['919000', '919001'])
        expect((await postRt(a.base, '/rt/desk', { callid })).json).toMatchObject({ command: 'read', command_id: 1 });
      await until(() => (started.n === onA.length ? true : undefined), 'the calls on A');

      const b = await procs.serve(['--flows', flowsDir(DESK_V2)], env);
      // the banner's lines may come in more than one chunk
      const [v1, v2] = await Promise.all([a, b].map((p) => until(() => versionOf(p.output()), 'the banner')));
      expect(v1).toMatch(/^[0-9a-f]{12}$/);
      expect(v2).toMatch(/^[0-9a-f]{12}$/);
      expect(v2).not.toBe(v1);

      // X: its request (7 at the menu) half sent to A; then SIGTERM
      const x = rtBody({ callid: '919000', command: 'read', command_id: 1, command_result: '7' });
      const conn = await openSocket(a.port);
      conn.socket.write(rawPost('/rt/desk', x).slice(0, -x.length) + x.slice(0, 30));
      await until(async () => ((await fetch(`${a.base}/health`)).status === 200 ? true : undefined), 'A healthy');
      a.child.kill('SIGTERM');
      await until(async () => ((await refused(a.port)) ? true : undefined), 'A refusing connections');
      // the rest of X's request, and Y's (1 at the menu) pipelined behind it, during the drain
      conn.socket.write(
        x.slice(30) +
          rawPost('/rt/desk', rtBody({ callid: '919001', command: 'read', command_id: 1, command_result: '1' })),
      );
      await conn.closed;
      expect(drainedAnswers(conn.data())).toMatchObject({
        command: 'play',
        command_id: 2,
        params: { media_id: 'TTS|TTS_EN-GB_SERENA|Goodbye.' },
      });
      expect(await a.exited).toEqual({ code: 0, signal: null });

      // the service goes on: Y's refused request to B, X's next, the six calls
      const y = await postRt(b.base, '/rt/desk', {
        callid: '919001',
        command: 'read',
        command_id: 1,
        command_result: '1',
      });
      expect(y.json).toMatchObject({ command: 'dialout', command_id: 2 });
      expect(
        (
          await postRt(b.base, '/rt/desk', {
            callid: '919001',
            command: 'dialout',
            command_id: 2,
            command_result: 'NOANSWER',
          })
        ).json,
      ).toMatchObject({ command: 'play', command_id: 3, params: { media_id: 'TTS|TTS_EN-GB_SERENA|Goodbye.' } });
      expect(
        (await postRt(b.base, '/rt/desk', { callid: '919000', command: 'play', command_id: 2, command_result: '0' }))
          .json,
      ).toMatchObject({ command: 'hangup', command_id: 3 });
      deployed.done!();
      const runs: CallRun[] = await Promise.all(onA);
      for (const [i, run] of runs.entries()) {
        expect(shape(run.commands), `call ${run.callid}`).toEqual(deskCommands(i % 2 === 0 ? '1' : '7', 'v1'));
        expect(run.end.status).toBe(200);
        // its requests from the third on were refused by A (gone) and answered by B
        expect(run.failures.map((f) => [f.base, f.why])).toEqual(
          Array.from({ length: run.commands.length - 1 }, () => [a.base, 'ECONNREFUSED']),
        );
      }
      // B fetched v1 from Redis for them; its new calls get v2
      expect(b.output()).toContain(
        `flow desk version ${v1} fetched from the shared store for a call that started on another instance`,
      );
      const fresh = await Promise.all(
        ['1', '7'].map((digit, i) =>
          playCall({ callid: String(920_000 + i), path: '/rt/desk', route: () => b.base, result: deskCaller(digit) }),
        ),
      );
      expect(fresh.map((r) => shape(r.commands))).toEqual([deskCommands('1', 'v2'), deskCommands('7', 'v2')]);
      const health = (await (await fetch(`${b.base}/health`)).json()) as { flows: { name: string; version: string }[] };
      expect(health.flows).toEqual([expect.objectContaining({ name: 'desk', version: v2 })]);
    },
    60_000,
  );
});
