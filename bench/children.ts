/**
 * The server processes of `npm run bench` and `npm run bench:alloc` (bench/servers.mjs, plain
 * `node` on dist/), and what the parent asks them over IPC: their CPU time, the heap growth over a
 * batch of requests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { BenchRedis } from './redis.js';

export type ServerKind = 'bare' | 'rt' | 'redis';

export interface Server {
  kind: ServerKind;
  child: ChildProcess;
  url: string;
  path: string;
}

/**
 * Starts one server: `node --expose-gc bench/servers.mjs <kind>` (the same flags for every kind).
 * BENCH_PROFILE=dir: the /rt servers run under `node --cpu-prof` and write into dir/memory/ and
 * dir/redis/.
 */
export function startServer(kind: ServerKind, redis?: BenchRedis): Promise<Server> {
  const dir = `${process.env.BENCH_PROFILE}/${kind === 'rt' ? 'memory' : kind}`;
  const profile = process.env.BENCH_PROFILE && kind !== 'bare' ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
  const args = redis ? [redis.url, redis.prefix] : [];
  // stdout to /dev/null: the /rt servers' log lines are written (a cost), not read.
  const child = spawn(
    process.execPath,
    [...profile, '--expose-gc', new URL('./servers.mjs', import.meta.url).pathname, kind, ...args],
    { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  );
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready?: number }) => {
      if (m.ready)
        resolve({
          kind,
          child,
          url: `http://127.0.0.1:${m.ready}`,
          path: kind === 'bare' ? '/bare' : '/rt/front-desk',
        });
    });
    child.once('exit', (code) => reject(new Error(`bench server ${kind} exited with ${code}`)));
  });
}

/** Sends `message` to the server and resolves with its first answer that `pick` accepts. */
export function ask<T>(s: Server, message: string, pick: (m: any) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: unknown) => {
      const got = pick(m);
      if (got === undefined) return;
      s.child.off('message', on);
      s.child.off('exit', exit);
      resolve(got);
    };
    const exit = (code: number | null) => {
      s.child.off('message', on);
      reject(new Error(`bench server ${s.kind} exited with ${code} before answering '${message}'`));
    };
    s.child.on('message', on);
    s.child.once('exit', exit);
    s.child.send(message);
  });
}

/** The server process's CPU time so far (user and system), µs. */
export const cpuOf = (s: Server): Promise<NodeJS.CpuUsage> => ask(s, 'cpu', (m) => m?.cpu);

/** Stops the servers (they write their profiles as they exit). */
export async function stopAll(servers: Server[]): Promise<void> {
  await Promise.all(
    servers.map((s) =>
      s.child.exitCode === null && s.child.connected
        ? new Promise((r) => (s.child.once('exit', r), s.child.disconnect()))
        : undefined,
    ),
  );
}
