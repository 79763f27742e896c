/** `callscript serve` as a child process (the engine stays a black box to the emulator). */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI } from '../helpers/cli.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Served {
  /** http://127.0.0.1:PORT */
  base: string;
  /** Everything the server printed. */
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnedCli {
  child: ChildProcess;
  /** The base URL it printed. */
  base: string;
  /** Everything it printed (stdout and stderr). */
  output(): string;
  /** Resolves to the exit code when it exits. */
  exited: Promise<number | null>;
}

/** Spawns `callscript ...args` (test/helpers/cli.ts) and waits until `started(output)` gives its URL. */
export async function spawnCli(
  args: string[],
  env: Record<string, string>,
  started: (out: string) => string | undefined,
): Promise<SpawnedCli> {
  const child: ChildProcess = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running: the caller never gets hold of it
      reject(new Error(`callscript ${args[0]} did not start:\n${out}`));
    }, 20000);
    child.stdout!.on('data', () => {
      const url = started(out);
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`callscript ${args[0]} exited with ${code}:\n${out}`));
    });
  });
  return { child, base, output: () => out, exited };
}

/** Spawns `callscript serve --port 0 ...` and waits for its URL. */
export async function spawnServe(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const c = await spawnCli(
    ['serve', '--port', '0', '--host', '127.0.0.1', ...args],
    { LOG_LEVEL: 'warn', ...env },
    (out) => /callscript serving \d+ flows? from .* on (http:\/\/\S+)/.exec(out)?.[1],
  );
  return {
    base: c.base,
    output: c.output,
    stop: async () => {
      if (c.child.exitCode === null) c.child.kill('SIGTERM');
      await c.exited;
    },
  };
}
