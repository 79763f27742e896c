/**
 * Real processes started through npm, a shell or `script`: their whole tree (read from
 * /proc), and a wait for a port to refuse connections. For the tests of `npm start` and of
 * the installed package (test/deploy/).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { alive, refused, until } from './processes.js';

/** The pids of every process below `pid` (children, their children...), from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, the last ')' ends it
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
  }
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    for (const c of children.get(todo.pop()!) ?? []) {
      out.push(c);
      todo.push(c);
    }
  }
  return out;
}

/** The command line of a process (its argv joined by spaces), or undefined when it is gone. */
export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return undefined;
  }
}

export interface Spawned {
  child: ChildProcess;
  pid: number;
  /** stdout so far. */
  out(): string;
  /** stderr so far. */
  err(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Spawned[] = [];

/**
 * Spawns a process with piped output, in a process group of its own (so that the group can be signalled, as a terminal
 * does).
 */
export function spawnTracked(command: string, args: string[], opts: SpawnOptions): Spawned {
  const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const s = { child, pid: child.pid!, out: () => out, err: () => err, exit };
  started.push(s);
  return s;
}

/** SIGKILL to what a test left running: each tracked process and its descendants, by pid (afterEach). */
export async function killLeftovers(): Promise<void> {
  for (const s of started.splice(0)) {
    const pids = [...descendants(s.pid), s.pid];
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (s.child.exitCode === null && s.child.signalCode === null) await s.exit;
  }
}

/** Resolves once a new connection to `port` is refused and every pid is gone. */
export async function allGone(port: number, pids: number[], ms = 20_000): Promise<void> {
  await until(
    async () => ((await refused(port)) && pids.every((p) => !alive(p)) ? true : undefined),
    `port ${port} to be closed and pids ${pids.join(', ')} to be gone ` +
      `(alive: ${pids.filter(alive).join(', ') || 'none'})`,
    ms,
  );
}

export { alive, until };
