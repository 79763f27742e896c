/**
 * Real processes for fault tests: `callscript serve` children (killed with real signals),
 * a redis-server of a test's own, free ports. Every process started through a `Processes`
 * is killed (SIGKILL, by its pid) by `killAll`, which a test file calls in afterAll.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { Redis } from 'ioredis';
import { spawnCli } from '../emulator/serve.js';

/** Why a redis-server of a test's own cannot be started, or undefined. Throws under CI=true. */
export function redisServerMissing(): string | undefined {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.status === 0) return undefined;
  const why = `redis-server cannot be run (${r.error?.message ?? r.stderr.trim()}): install Redis to run these tests`;
  if (process.env.CI === 'true') throw new Error(`${why}; CI=true, so they fail instead of skipping`);
  console.warn(`SKIPPED: ${why}`);
  return why;
}

/** A TCP port nobody listens on right now (for a server that must be told its port). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Polls `fn` every 50 ms until it gives a value (errors count as "not yet"). */
export async function until<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  what: string,
  ms = 15_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Sends `sig` (if still running) and resolves when the process has exited. */
  stop(sig: NodeJS.Signals): Promise<Exit>;
}

export interface ServeProc extends Proc {
  /** http://127.0.0.1:PORT */
  base: string;
  port: number;
}

/** Whether a new connection to `port` (127.0.0.1) is refused. */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function track(child: ChildProcess, output: () => string): Proc {
  const exited = new Promise<Exit>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    pid: child.pid!,
    output,
    exited,
    stop: async (sig) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
      return exited;
    },
  };
}

export class Processes {
  private readonly all: Proc[] = [];

  /**
   * `callscript serve --port 0 --host 127.0.0.1 ...args` (the OS picks the port: no race
   * with other tests), resolved once it printed its URL.
   */
  async serve(args: string[], env: Record<string, string> = {}): Promise<ServeProc> {
    const c = await spawnCli(
      ['serve', '--port', '0', '--host', '127.0.0.1', ...args],
      { LOG_LEVEL: 'info', ...env },
      (out) => /callscript serving \d+ flows? from .* on (http:\/\/\S+)/.exec(out)?.[1],
    );
    const p = track(c.child, c.output);
    this.all.push(p);
    return { ...p, base: c.base, port: Number(new URL(c.base).port) };
  }

  /** A redis-server that keeps nothing (no RDB, no AOF) on `port`, resolved once it answers PING. */
  async redis(port: number): Promise<Proc> {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    child.on('error', (e) => (out += `spawn error: ${e.message}`));
    const p = track(child, () => out);
    this.all.push(p);
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
      return (await ping(port)) ? true : undefined;
    }, `redis-server on port ${port}`);
    return p;
  }

  /** SIGKILL to every process still running (afterAll). */
  async killAll(): Promise<void> {
    await Promise.all(this.all.splice(0).map((p) => p.stop('SIGKILL')));
  }
}

async function ping(port: number): Promise<boolean> {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 500,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** The JSON log lines (pino) in a process's output. */
export function logEntries(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}
