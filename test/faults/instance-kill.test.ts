/**
 * Scale out on Redis, fault: two `callscript serve` processes on one Redis, the requests of
 * each call alternating between them, 30 calls at once; one instance is killed with
 * SIGKILL while requests are in flight on it. The service sends a request that failed on
 * the dead instance again to the other. Every call must end with exactly the commands of
 * its flow, none lost, none advanced twice. Needs Redis (REDIS_URL): skipped with a message
 * when it does not answer, failing under CI=true.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ENDED } from '../../src/engine/call.js';
import { REDIS_URL } from '../helpers/redis.js';
import { redisTestbed } from './testbed.js';
import { alive, sleep, until } from '../helpers/processes.js';
import { int, rng } from '../helpers/random.js';
import { playCall, type CallRun } from './service.js';
import { DESK_V1, deskCaller, deskCommands, flowsDir, shape } from './desk.js';

const { missing, procs, prefix } = await redisTestbed();

const CALLS = 30;

describe.skipIf(!!missing)('an instance killed (SIGKILL) under load', () => {
  it('30 calls alternating between two instances, one killed mid-load: every call completes with its exact commands, once', async () => {
    const flows = flowsDir(DESK_V1);
    const env = { CALLSCRIPT_STORE: REDIS_URL, CALLSCRIPT_STORE_PREFIX: prefix, LOG_LEVEL: 'warn' };
    const [a, b] = await Promise.all([procs.serve(['--flows', flows], env), procs.serve(['--flows', flows], env)]);
    const bases = [a.base, b.base];
    const inflight = new Map<string, number>(bases.map((x) => [x, 0]));
    const at = { answered: 0, finished: 0 };
    const kill: { done?: Promise<unknown>; inflightOnA?: number; unfinished?: number; answered?: number } = {};
    // A dies once a third of the requests are answered, at a moment when at least 3 are in flight on it.
    const maybeKill = () => {
      if (kill.done || at.answered < 40 || inflight.get(a.base)! < 3) return;
      kill.inflightOnA = inflight.get(a.base)!;
      kill.unfinished = CALLS - at.finished;
      kill.answered = at.answered;
      kill.done = a.stop('SIGKILL');
    };
    const r = rng(20261122);
    const digits = Array.from({ length: CALLS }, (_, i) => (i % 3 === 0 ? '7' : '1'));
    const pauses = Array.from({ length: CALLS }, () => Array.from({ length: 8 }, () => int(r, 30)));
    const runs: CallRun[] = await Promise.all(
      digits.map(async (digit, i) => {
        let step = 0;
        const run = await playCall({
          callid: String(880_000 + i),
          path: '/rt/desk',
          // request k of call i goes to instance (i + k) % 2; a retry goes to the other one
          route: (k, attempt) => bases[(i + k + attempt) % 2]!,
          result: deskCaller(digit),
          before: () => sleep(pauses[i]![step++ % 8]!),
          sending: (base) => {
            inflight.set(base, inflight.get(base)! + 1);
            maybeKill();
          },
          done: (base, ok) => {
            inflight.set(base, inflight.get(base)! - 1);
            if (ok) at.answered++;
            maybeKill();
          },
        });
        at.finished++;
        return run;
      }),
    );
    expect(kill.done, 'A was killed during the load').toBeDefined();
    expect(await kill.done).toEqual({ code: null, signal: 'SIGKILL' });
    expect(alive(a.pid)).toBe(false);
    // the kill happened mid-load: requests in flight on A, calls not finished
    expect(kill.inflightOnA).toBeGreaterThanOrEqual(3);
    expect(kill.unfinished).toBeGreaterThan(0);
    // requests did fail on A (and only on A) and went to B
    const failures = runs.flatMap((x) => x.failures);
    expect(failures.length).toBeGreaterThan(0);
    expect(new Set(failures.map((f) => f.base))).toEqual(new Set([a.base]));
    for (const f of failures) expect(f.why).toMatch(/^(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|EPIPE|UND_ERR_CLOSED)$/);
    // every call: its exact commands, numbered 1.., the HANGUP report answered 200 (a hangup)
    for (const [i, run] of runs.entries()) {
      expect(shape(run.commands), `call ${run.callid}`).toEqual(deskCommands(digits[i]!));
      expect(run.end.status, `call ${run.callid} end`).toBe(200);
      expect(run.end.json).toMatchObject({ command: 'hangup', command_id: run.commands.length + 1 });
    }
    // in Redis: each call is a tombstone, committed once per request it advanced on (no double step)
    const redis = new Redis(REDIS_URL);
    try {
      for (const [i, run] of runs.entries()) {
        const [v, rev] = await redis.hmget(`${prefix}call:{${run.callid}}`, 'v', 'r');
        expect(v, `call ${run.callid}`).toBe(ENDED);
        // one commit per step: the start, each command's result, the tombstone
        expect(Number(rev), `call ${run.callid} revision`).toBe(deskCommands(digits[i]!).length + 1);
      }
    } finally {
      redis.disconnect();
    }
    // B is healthy, and a new call still works on it
    await until(async () => ((await fetch(`${b.base}/health`)).status === 200 ? true : undefined), 'B healthy');
    const late = await playCall({ callid: '889999', path: '/rt/desk', route: () => b.base, result: deskCaller('7') });
    expect(shape(late.commands)).toEqual(deskCommands('7'));
    expect(b.output()).not.toMatch(/"level":50/); // no error logged by the survivor
  }, 60_000);
});
