/**
 * Scale out on Redis, fault: Redis stalls (SIGSTOP, then SIGCONT) under a serving instance with calls in progress,
 * on a redis-server of the test's own (not the shared one). The service ends a call on any answer but 200, so the
 * callers here send each request once: a 503 (or anything but 200) is a lost call.
 *
 * Found by attacking a running server (issue 21): every request in flight was answered 503 STORE_UNAVAILABLE once
 * Redis had not answered for command_timeout_ms (1 s); a 3 s pause lost 51 calls of about 240. The reply deadline
 * (4 s) can ride such a stall: the requests wait for Redis and get their reply when it comes back; past the deadline
 * they get the fallback, their step applied when it does (src/engine/stall.ts). Past what the fallback covers, 503:
 * ./redis-restart.test.ts. Needs redis-server on PATH: skipped with a message when it is not, failing under CI=true.
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
afterAll(() => procs.killAll());

interface Stalled {
  /** Calls that got an answer but 200 (the service would have ended them): callid and why. */
  lost: { callid: string; why: string }[];
  /** Requests sent before Redis resumed and answered 200 after. */
  rode: number;
  /** Deadline fallbacks answered (a late HANGUP report's included). */
  fallbacks: number;
}

/**
 * A server on a Redis of its own, `callers` placing desk calls one after another; once the load is under way, Redis
 * is paused for `pauseMs`, then each caller finishes its call. Checks every call finished exactly, stepped once (in
 * Redis), and the server logged no error but the history's; answers what the callers saw.
 */
async function stallUnderLoad(callers: number, pauseMs: number, env: Record<string, string> = {}): Promise<Stalled> {
  const port = await freePort();
  const redis = await procs.redis(port);
  const prefix = testPrefix();
  const srv = await procs.serve(['--flows', flowsDir(DESK_V1), '--store', `redis://127.0.0.1:${port}`], {
    CALLSCRIPT_STORE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const out: Stalled = { lost: [], rode: 0, fallbacks: 0 };
  let answered = 0;
  const phase = { resumed: false, over: false };
  const done: { run: CallRun; digit: string }[] = [];
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
            if (ok) answered++;
            if (ok && sentBeforeResume && phase.resumed) out.rode++;
          },
        });
        done.push({ run, digit });
        out.fallbacks += run.fallbacks + (run.end.json?.command === 'wait' ? 1 : 0);
      } catch (err) {
        out.lost.push({ callid, why: err instanceof Error ? err.message : String(err) });
      }
    }
  };
  const all = Array.from({ length: callers }, (_, i) => caller(i));

  await until(() => (answered >= callers ? true : undefined), 'the load under way');
  redis.child.kill('SIGSTOP');
  try {
    await sleep(pauseMs);
  } finally {
    redis.child.kill('SIGCONT');
    phase.resumed = true;
    // each caller finishes the call the stall held, and places no more
    phase.over = true;
  }
  await Promise.all(all);

  // every call: its exact commands, numbered 1.., its HANGUP report answered hangup (or, late, the fallback: the
  // service ignores the answer to a terminal request, and the late step still lands)
  for (const { run, digit } of done) {
    expect(shape(run.commands), `call ${run.callid}`).toEqual(deskCommands(digit));
    const n = run.commands.length;
    expect([
      { command: 'hangup', command_id: n + 1 },
      { command: 'wait', command_id: n },
    ]).toContainEqual({
      command: run.end.json.command,
      command_id: run.end.json.command_id,
    });
  }
  // in Redis: each call a tombstone (once the late steps have landed), committed once per step (the start, each
  // result, the tombstone)
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  try {
    const read = () => Promise.all(done.map(({ run }) => client.hmget(`${prefix}call:{${run.callid}}`, 'v', 'r')));
    const ended = async () => {
      const s = await read();
      return s.every(([v]) => v === ENDED) ? s : undefined;
    };
    // not all within the bound: read once more, and the expectations below say which
    const stored = await until(ended, 'every call a tombstone').catch(read);
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
  await srv.stop('SIGKILL');
  await redis.stop('SIGKILL');
  return out;
}

describe.skipIf(!!missing)('Redis stalled under load', () => {
  it('a 3 s SIGSTOP of Redis, 40 callers at work: no call lost, each step once', async () => {
    const s = await stallUnderLoad(40, 3000);
    expect(s.lost).toEqual([]);
    // the stall held a request of every caller (each has one at a time), answered 200 once Redis was back
    expect(s.rode).toBe(40);
  }, 40_000);

  it('longer than the deadline (2 s, the deadline 1 s): the held requests get the fallback, no call lost', async () => {
    const s = await stallUnderLoad(20, 2000, { DEADLINE_MS: '1000' });
    expect(s.lost).toEqual([]);
    expect(s.rode).toBe(20);
    // every caller's held request waited past the deadline: answered the fallback, its step applied on resuming
    expect(s.fallbacks).toBeGreaterThanOrEqual(20);
  }, 40_000);
});
