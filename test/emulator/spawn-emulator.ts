/** `callscript emulator` as a child process, to crash it for real (kill -9) and restart it. */
import { spawnCli } from './serve.js';

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
  const c = await spawnCli(['emulator', '--port', '0', ...args], { LOG_LEVEL: 'info', ...env }, (out) =>
    out.includes('run a call:') ? /callscript emulator on (http:\/\/\S+)/.exec(out)?.[1] : undefined,
  );
  const signal = async (s: NodeJS.Signals) => {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill(s);
    return c.exited;
  };
  return {
    base: c.base,
    output: c.output,
    kill9: async () => void (await signal('SIGKILL')),
    stop: () => signal('SIGTERM'),
  };
}
