/**
 * SIGTERM to a serving `callscript serve` (calls in Redis) while requests are in flight:
 * steps waiting for their SMS, and a request whose body is still arriving. They complete
 * with their normal answers and their state committed; a request arriving meanwhile on an
 * open connection is answered 503 SHUTTING_DOWN, a new connection is refused; the process
 * exits 0 and leaves nothing running. Needs Redis (REDIS_URL): skipped with a message when
 * it does not answer, failing under CI=true.
 */
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { decodeState } from '../../src/engine/call-record.js';
import { REDIS_URL } from '../helpers/redis.js';
import { redisTestbed } from './testbed.js';
import { alive, refused, until } from '../helpers/processes.js';
import { openSocket } from '../helpers/socket.js';
import { rtBody } from '../helpers/rt.js';
import { drainedAnswers, networkCode, postRt, rawPost } from './service.js';
import { smsApi } from './sms-api.js';

const { missing, procs, prefix, closers } = await redisTestbed();

/** The pids of a process's children (none expected: serve runs worker threads, not processes). */
const childrenOf = (pid: number) =>
  // ps exits 1 when there is none
  spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map(Number);

describe.skipIf(!!missing)('SIGTERM while requests are in flight', () => {
  it(
    'the requests in flight complete with their normal answers and their state saved; new ones are refused; ' +
      'exit 0, nothing left running',
    async () => {
      const sms = await smsApi();
      closers.push(() => sms.close());
      const flows = mkdtempSync(join(tmpdir(), 'cs-drain-'));
      for (const f of ['sms-flows/confirm.yaml', 'http-flows/desk.yaml'])
        copyFileSync(new URL(`../fixtures/${f}`, import.meta.url), join(flows, f.split('/')[1]!));
      const env = {
        CALLSCRIPT_STORE: REDIS_URL,
        CALLSCRIPT_STORE_PREFIX: prefix,
        SMS_LOGIN: 'acme',
        SMS_PASSWORD: 's3cret',
        SMS_BASE_URL: sms.url,
        SMS_TIMEOUT_MS: '30000',
        DEADLINE_MS: '4900',
      };
      const srv = await procs.serve(['--flows', flows], env);
      const kids = childrenOf(srv.pid);

      // five calls whose first step waits for its SMS, and a request whose body is half sent
      const callids = ['7100', '7101', '7102', '7103', '7104'];
      const smsCalls = callids.map((callid) => postRt(srv.base, '/rt/confirm', { callid }));
      await until(() => (sms.held() === callids.length ? true : undefined), 'the five SMS sends');
      const body = rtBody({ callid: '7200' });
      const half = await openSocket(srv.port);
      const head = rawPost('/rt/desk', body).slice(0, -body.length);
      half.socket.write(head + body.slice(0, 40));
      // an idle keep-alive connection (its request answered): closed by the server when it stops
      const idle = await openSocket(srv.port);
      idle.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await until(
        () => (/^HTTP\/1\.1 200 [^]*\r\n\r\n\{.*\}$/.test(idle.data()) ? true : undefined),
        'the health answer',
      );

      srv.child.kill('SIGTERM');
      await until(async () => ((await refused(srv.port)) ? true : undefined), 'new connections refused');
      expect(alive(srv.pid), 'still draining').toBe(true);
      await idle.closed;

      // the rest of the half-sent request, and a second request pipelined behind it
      const late = rtBody({ callid: '7201' });
      half.socket.write(body.slice(40) + rawPost('/rt/desk', late));
      sms.release();

      const answers = await Promise.all(smsCalls);
      for (const [i, a] of answers.entries()) {
        expect(a.status).toBe(200);
        expect(a.json).toMatchObject({
          command: 'play',
          command_id: 1,
          params: { media_id: `TTS|TTS_EN-GB_SERENA|Sent SMS${callids[i]}N1.` },
        });
      }
      await half.closed;
      expect(drainedAnswers(half.data())).toMatchObject({
        command: 'read',
        command_id: 1,
        params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.' },
      });

      expect(await srv.exited).toEqual({ code: 0, signal: null });
      expect(alive(srv.pid)).toBe(false);
      for (const k of kids) expect(alive(k), `child ${k}`).toBe(false);
      expect(await refused(srv.port)).toBe(true);
      await postRt(srv.base, '/rt/desk', { callid: '7202' }).then(
        (r) => expect.unreachable(`answered ${r.status}`),
        (err) => expect(networkCode(err)).toBe('ECONNREFUSED'),
      );

      // what the drained steps did is in Redis: each SMS call at its play, no claim left; the
      // half-sent call at its menu; the refused one nowhere
      const redis = new Redis(REDIS_URL);
      try {
        for (const callid of callids) {
          const raw = await redis.hget(`${prefix}call:{${callid}}`, 'v');
          expect(raw, `call ${callid}`).not.toContain('"claim"');
          expect(decodeState(raw!)).toMatchObject({ flow: 'confirm', commandId: 1, step: 'sent' });
        }
        expect(decodeState((await redis.hget(`${prefix}call:{7200}`, 'v'))!)).toMatchObject({
          flow: 'desk',
          commandId: 1,
          step: 'menu',
        });
        expect(await redis.exists(`${prefix}call:{7201}`)).toBe(0);
      } finally {
        redis.disconnect();
      }
    },
    40_000,
  );
});
