/**
 * What each fault test file on the shared Redis sets up: whether Redis answers (skipped
 * with a message if not, failing under CI=true), its processes, a key prefix of its own;
 * after all, the processes killed, the keys dropped, and `closers` run.
 */
import { afterAll } from 'vitest';
import { dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { Processes } from '../helpers/processes.js';

export async function redisTestbed() {
  const bed = {
    missing: await redisMissing(),
    procs: new Processes(),
    prefix: testPrefix(),
    closers: [] as (() => Promise<void>)[],
  };
  afterAll(async () => {
    await bed.procs.killAll();
    for (const c of bed.closers.splice(0)) await c();
    if (!bed.missing) await dropPrefix(bed.prefix);
  });
  return bed;
}
