/**
 * Scale out on Redis, fault: Redis stalls (SIGSTOP for 3 s, then SIGCONT) under a serving instance with calls in
 * progress, on a redis-server of the test's own (not the shared one). The service ends a call on any answer but 200,
 * so the callers here send each request once: a 503 (or anything but 200) is a lost call.
 *
 * Found by attacking a running server (issue 21): every request in flight was answered 503 STORE_UNAVAILABLE once
 * Redis had not answered for command_timeout_ms (1 s); a 3 s pause lost 51 calls of about 240. The reply deadline
 * (4 s) can ride such a stall: the requests wait for Redis, and get their reply when it comes back (or, past the
 * deadline, the fallback, their step applied when it does). Needs redis-server on PATH: skipped with a message when
 * it is not, failing under CI=true.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ENDED } from '../../src/engine/call-record.js';
import { Processes, freePort, logEntries, redisServerMissing, sleep, until } from '../helpers/processes.js';
import { testPrefix } from '../helpers/redis.js';
import { int, rng } from '../helpers/random.js';
import { playCall, type CallRun } from './service.js';
import { DESK_V1, deskCaller, deskCommands, flowsDir, shape } from './desk.js';

const missing = redisServerMissing();
const procs = new Processes();
const prefix = testPrefix();
afterAll(() => procs.killAll());

/** Callers at once, each placing calls one after another. */
const CALLERS = 40;
const PAUSE_MS = 3000;

interface Lost {
  callid: string;
  why: string;
}

describe.skipIf(!!missing)('Redis stalled under load', () => {
  it(`a ${PAUSE_MS / 1000} s SIGSTOP of Redis, ${CALLERS} callers at work: no call lost, each step once`, async () => {
    const port = await freePort();
    const redis = await procs.redis(port);
    const srv = await procs.serve(['--flows', flowsDir(DESK_V1), '--store', `redis://127.0.0.1:${port}`], {
      CALLSCRIPT_STORE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    });

    const at = { answered: 0, rode: 0, doneAfterResume: 0 };
    const phase = { resumed: false, over: false };
    const done: { run: CallRun; digit: string }[] = [];
    const lost: Lost[] = [];
    const r = rng(20260321);
    let next = 950_000;
    const caller = async (i: number) => {
      while (!phase.over) {
        const callid = String(next++);
        const digit = i % 3 === 0 ? '7' : '1';
        let sentBeforeResume = false;
        try {
          const run = await playCall({
            callid,
            path: '/rt/desk',
            route: () => srv.base,
            result: deskCaller(digit),
            // the service ends the call on anything but 200: no second try
            maxAttempts: 1,
            before: () => sleep(int(r, 40)),
            sending: () => void (sentBeforeResume = !phase.resumed),
            done: (_b, ok) => {
              if (ok) at.answered++;
              if (ok && sentBeforeResume && phase.resumed) at.rode++;
            },
          });
          done.push({ run, digit });
          if (phase.resumed) at.doneAfterResume++;
        } catch (err) {
          lost.push({ callid, why: err instanceof Error ? err.message : String(err) });
        }
      }
    };
    const callers = Array.from({ length: CALLERS }, (_, i) => caller(i));

    await until(() => (at.answered >= 2 * CALLERS ? true : undefined), 'the load under way');
    redis.child.kill('SIGSTOP');
    try {
      await sleep(PAUSE_MS);
    } finally {
      redis.child.kill('SIGCONT');
      phase.resumed = true;
    }
    // calls go on after the stall
    await until(() => (at.doneAfterResume >= CALLERS ? true : undefined), 'calls done after the stall');
    phase.over = true;
    await Promise.all(callers);

    expect(lost).toEqual([]);
    // the stall held a request of every caller (each has one at a time), answered 200 once Redis was back
    expect(at.rode).toBe(CALLERS);
    // every call: its exact commands, numbered 1.., its HANGUP report answered hangup
    for (const { run, digit } of done) {
      expect(shape(run.commands), `call ${run.callid}`).toEqual(deskCommands(digit));
      expect(run.end.json).toMatchObject({ command: 'hangup', command_id: run.commands.length + 1 });
    }
    // in Redis: each call a tombstone, committed once per step (the start, each result, the tombstone)
    const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      const stored = await Promise.all(done.map(({ run }) => client.hmget(`${prefix}call:{${run.callid}}`, 'v', 'r')));
      expect(stored.map(([v]) => v)).toEqual(done.map(() => ENDED));
      expect(stored.map(([, rev]) => Number(rev))).toEqual(done.map(({ digit }) => deskCommands(digit).length + 1));
    } finally {
      client.disconnect();
    }
    // nothing else failed on the server's side: the call history's background writes of the stall time out
    // (command_timeout_ms; logged, the calls unaffected), a call's own commands do not
    const historyTimeout = (l: Record<string, unknown>) =>
      l.code === 'HISTORY_WRITE_FAILED' && l.err === 'Redis: Command timed out';
    expect(logEntries(srv.output()).filter((l) => (l.level as number) >= 50 && !historyTimeout(l))).toEqual([]);
  }, 40_000);
});
