/** `callscript serve` as a child process (the engine stays a black box to the emulator). */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Served {
  /** http://127.0.0.1:PORT */
  base: string;
  /** Everything the server printed. */
  output(): string;
  stop(): Promise<void>;
}

/** Spawns `node --import tsx src/cli/main.ts serve --port 0 ...` and waits for its URL. */
export async function spawnServe(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`callscript serve did not start:\n${out}`)), 15000);
    const check = () => {
      const m = /callscript serving \d+ flows? from .* on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`callscript serve exited with ${code}:\n${out}`));
    });
  });
  return {
    base,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
