/** `callscript emulator` as a child process, to crash it for real (kill -9) and restart it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './serve.js';

export interface SpawnedEmulator {
  /** http://127.0.0.1:PORT */
  base: string;
  /** Everything it printed (stdout and stderr). */
  output(): string;
  /** SIGKILL: no shutdown code runs; resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (a clean shutdown); resolves to the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the emulator with `args` (after `emulator --port 0`) and waits for its URL. */
export async function spawnEmulator(args: string[], env: Record<string, string> = {}): Promise<SpawnedEmulator> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'emulator', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the emulator did not start:\n${out}`)), 20000);
    child.stdout!.on('data', () => {
      const m = /callscript emulator on (http:\/\/\S+)/.exec(out);
      if (m && out.includes('run a call:')) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited with ${code}:\n${out}`));
    });
  });
  return {
    base,
    output: () => out,
    kill9: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Runs `args` as `callscript emulator ...` to its end: exit code and output. */
export function runEmulatorToEnd(args: string[], timeoutMs = 20000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'emulator', '--port', '0', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: out });
    });
  });
}
