/**
 * `npm start` as an operator runs it: the built JavaScript (dist/, built by `npm ci`),
 * stopped by a signal to the npm process with nothing left behind (single process and
 * `--workers 2`), a terminal's Ctrl-C (SIGINT to the whole process group, which npm also
 * passes on) taken as one stop; log lines as JSON when stdout is not a terminal, readable
 * on a terminal (`script` gives the server one), `LOG_FORMAT` forcing either.
 * The --workers cases need Redis (REDIS_URL): skipped with a message without it, failing
 * under CI=true.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rtBody } from '../helpers/rt.js';
import { openSocket, parseAnswer } from '../helpers/socket.js';
import { logEntries, refused, sleep } from '../helpers/processes.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import {
  allGone,
  alive,
  commandLine,
  descendants,
  killLeftovers,
  spawnTracked,
  until,
  type Spawned,
} from '../helpers/tree.js';

const root = new URL('../..', import.meta.url).pathname;
const FLOWS = join(root, 'test/fixtures/http-flows');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const missing = await redisMissing();
const prefixes: string[] = [];

beforeAll(() => {
  // npm ci builds dist/ (prepare); the sources alone do not make npm start work
  if (!existsSync(join(root, 'dist/cli/main.js')))
    throw new Error('dist/ is not built: run npm ci (or npm run build) first');
});
afterEach(killLeftovers);
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

/** `npm start -- <args>` in the repository, on a free port, with the http fixture flows. */
function npmStart(args: string[], env: Record<string, string> = {}): Spawned {
  const { LOG_FORMAT: _drop, ...base } = process.env;
  return spawnTracked('npm', ['start', '--', '--port', '0', '--host', '127.0.0.1', '--flows', FLOWS, ...args], {
    cwd: root,
    env: { ...base, ...env },
  });
}

/** Waits for the banner: the port, and the pid of the server (the process below npm). */
async function served(s: Spawned, workers = 1): Promise<{ port: number; server: number }> {
  const m = await until(
    () =>
      /callscript serving \d+ flows? from .* on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(s.out()) ??
      (s.child.exitCode !== null ? null : undefined),
    'the banner',
    60_000,
  );
  if (!m) throw new Error(`npm start exited:\n${s.out()}${s.err()}`);
  if (workers > 1)
    await until(
      () => (new RegExp(` ${workers} workers \\(pids `).test(s.out()) ? true : undefined),
      'the workers line',
      60_000,
    );
  // the server, or the primary and its workers (the same command line)
  const below = descendants(s.pid).filter((p) => commandLine(p)?.includes('dist/cli/main.js serve'));
  expect(below.length).toBe(workers === 1 ? 1 : workers + 1);
  const server = below.find((p) => readParent(p) === s.pid)!; // npm's own child: exec'd, no shell between
  return { port: Number(m[1]), server };
}

/**
 * A request to /rt/desk in progress on its own connection: headers and the start of the body sent, its log line seen.
 */
async function holdRequest(s: Spawned, port: number, body: string) {
  const c = await openSocket(port);
  c.socket.write(
    `POST /rt/desk HTTP/1.1\r\nHost: x\r\nContent-Type: ` +
      `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  await until(
    () =>
      logEntries(s.out()).some(
        (l) => l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === '/rt/desk',
      )
        ? true
        : undefined,
    'the request in progress',
    30_000,
  );
  return c;
}

/** The parent pid of a process (from /proc). */
function readParent(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('npm start', () => {
  it('runs the built JavaScript, without tsx', () => {
    expect(pkg.scripts.start).toBe('exec node dist/cli/main.js serve');
    expect(pkg.scripts.start).not.toMatch(/tsx/);
  });

  it('SIGTERM to the npm process: the server drains and exits, npm exits 0, no process is left', async () => {
    const s = npmStart([]);
    const { port, server } = await served(s);
    // exec: npm's own child is the server (a shell between them would die and leave it running)
    expect(commandLine(server)).toBe(`node dist/cli/main.js serve --port 0 --host 127.0.0.1 --flows ${FLOWS}`);
    const tree = [...descendants(s.pid)];
    s.child.kill('SIGTERM');
    expect(await s.exit).toEqual({ code: 0, signal: null });
    await allGone(port, tree);
  }, 90_000);

  it('SIGINT to the npm process: the same', async () => {
    const s = npmStart([]);
    const { port } = await served(s);
    const tree = [...descendants(s.pid)];
    s.child.kill('SIGINT');
    expect(await s.exit).toEqual({ code: 0, signal: null });
    await allGone(port, tree);
  }, 90_000);

  it(
    "a terminal's Ctrl-C (SIGINT to npm and the server, and npm passes it on): one stop, the request in " +
      'progress is answered, exit 0',
    async () => {
      const s = npmStart(['--log-level', 'debug']);
      const { port, server } = await served(s);
      const body = rtBody({ callid: '98000000000000001' });
      const c = await holdRequest(s, port, body);
      process.kill(-s.pid, 'SIGINT'); // the process group, as the terminal does
      await until(async () => ((await refused(port)) ? true : undefined), 'the port to refuse new connections', 30_000);
      expect(alive(server)).toBe(true); // still draining: the second SIGINT did not end it
      c.socket.write(body.slice(10));
      await c.closed;
      const a = parseAnswer(c.data(), true, 0);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({ command: 'read', command_id: 1 });
      expect(await s.exit).toEqual({ code: 0, signal: null });
      await allGone(port, [server]);
    },
    90_000,
  );

  it(
    'a second signal more than a second after the first: the server exits at once, with 1, without waiting for ' +
      'the request in progress',
    async () => {
      const s = npmStart(['--log-level', 'debug']);
      const { port, server } = await served(s);
      const c = await holdRequest(s, port, rtBody({ callid: '98000000000000002' }));
      s.child.kill('SIGTERM');
      await sleep(1500);
      expect(alive(server)).toBe(true);
      s.child.kill('SIGTERM');
      expect(await s.exit).toEqual({ code: 1, signal: null });
      await c.closed;
      expect(c.data()).toBe('');
      expect(logEntries(s.out()).find((l) => l.level === 40)).toMatchObject({
        signal: 'SIGTERM',
        msg: 'SIGTERM again: exiting without waiting for the requests in progress',
      });
      await allGone(port, [server]);
    },
    90_000,
  );

  describe.skipIf(!!missing)('--workers 2 on Redis', () => {
    const workers = (env: Record<string, string> = {}) => {
      const prefix = testPrefix();
      prefixes.push(prefix);
      return npmStart(['--workers', '2', '--store', REDIS_URL], { CALLSCRIPT_STORE_PREFIX: prefix, ...env });
    };

    it(
      'SIGTERM to the npm process: the primary drains both workers, npm exits 0, none of the four processes is ' +
        'left',
      async () => {
        const s = workers();
        const { port } = await served(s, 2);
        const tree = descendants(s.pid);
        expect(tree.filter((p) => commandLine(p)?.includes('dist/cli/main.js serve'))).toHaveLength(3);
        s.child.kill('SIGTERM');
        expect(await s.exit).toEqual({ code: 0, signal: null });
        await allGone(port, tree);
        expect(logEntries(s.out()).filter((l) => l.msg === 'SIGTERM: draining 2 workers')).toHaveLength(1);
      },
      120_000,
    );

    it(
      'Ctrl-C (SIGINT to the whole group: npm, the primary, the workers; npm passes it on): one drain, exit 0, ' +
        "nothing left; the primary's lines readable with LOG_FORMAT=pretty",
      async () => {
        const s = workers({ LOG_FORMAT: 'pretty' });
        const { port } = await served(s, 2);
        const tree = descendants(s.pid);
        process.kill(-s.pid, 'SIGINT');
        expect(await s.exit).toEqual({ code: 0, signal: null });
        await allGone(port, tree);
        // not "SIGINT again: killing the workers": the repeat is the same stop
        expect(s.out()).toMatch(
          /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): SIGINT: draining 2 workers \{"signal":"SIGINT"\}$/m,
        );
        expect(s.out()).not.toContain('again');
        expect(logEntries(s.out())).toEqual([]);
      },
      120_000,
    );
  });
});

describe('log format', () => {
  /** `node dist/cli/main.js serve` (no npm), stopped once it listens; its whole output. */
  async function logsOf(
    env: Record<string, string>,
    tty: boolean,
  ): Promise<{ out: string; err: string; code: number | null }> {
    const { LOG_FORMAT: _drop, ...base } = process.env;
    const argv = ['dist/cli/main.js', 'serve', '--port', '0', '--host', '127.0.0.1', '--flows', FLOWS];
    // script(1) runs the command on a pseudo-terminal: stdout is then a TTY
    const s = tty
      ? spawnTracked('script', ['-qec', `exec ${process.execPath} ${argv.join(' ')}`, '/dev/null'], {
          cwd: root,
          env: { ...base, ...env },
        })
      : spawnTracked(process.execPath, argv, { cwd: root, env: { ...base, ...env } });
    await until(
      () =>
        /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(s.out()) || s.child.exitCode !== null ? true : undefined,
      `the listening line\n${s.out()}${s.err()}`,
      60_000,
    );
    const server = tty ? descendants(s.pid).find((p) => commandLine(p)?.includes('dist/cli/main.js serve')) : s.pid;
    if (server !== undefined) process.kill(server, 'SIGTERM');
    const { code } = await s.exit;
    // a terminal writes CR LF
    return { out: s.out().replace(/\r\n/g, '\n'), err: s.err(), code };
  }
  const stripColours = (t: string) => t.replace(/\x1b\[[0-9;]*m/g, '');

  it('stdout not a terminal: pino JSON lines', async () => {
    const { out, code } = await logsOf({}, false);
    expect(code).toBe(0);
    const listening = logEntries(out).find(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at '),
    );
    expect(listening).toMatchObject({
      level: 30,
      pid: expect.any(Number),
      hostname: expect.any(String),
      time: expect.any(Number),
    });
    expect(out).not.toMatch(/^\[\d\d:\d\d/m);
  }, 60_000);

  it(
    'LOG_FORMAT=pretty on a pipe: one readable line per entry ' + '(time, level, pid, message, fields), no colours',
    async () => {
      const { out, code } = await logsOf({ LOG_FORMAT: 'pretty' }, false);
      expect(code).toBe(0);
      expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): Server listening at http:\/\/127\.0\.0\.1:\d+$/m);
      expect(logEntries(out)).toEqual([]);
      expect(out).not.toContain('\x1b[');
      expect(out).not.toContain('hostname');
    },
    60_000,
  );

  it('on a terminal: readable, in colour', async () => {
    const { out, code } = await logsOf({}, true);
    expect(code).toBe(0);
    expect(out).toContain('\x1b[');
    expect(stripColours(out)).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): Server listening at http:\/\/127\.0\.0\.1:\d+$/m,
    );
    expect(logEntries(out)).toEqual([]);
  }, 60_000);

  it('LOG_FORMAT=json on a terminal: JSON lines', async () => {
    const { out, code } = await logsOf({ LOG_FORMAT: 'json' }, true);
    expect(code).toBe(0);
    expect(logEntries(out).some((l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at '))).toBe(
      true,
    );
    expect(stripColours(out)).not.toMatch(/^\[\d\d:\d\d/m);
  }, 60_000);

  // the values refused (any case but lower, spaces, lists): test/cli/log-format.test.ts
  it('LOG_FORMAT="pretty,json": exit 2 and the values it takes, nothing served', async () => {
    const s = spawnTracked(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '--flows', FLOWS], {
      cwd: root,
      env: { ...process.env, LOG_FORMAT: 'pretty,json' },
    });
    expect(await s.exit).toEqual({ code: 2, signal: null });
    expect(s.err()).toBe(
      `callscript serve: LOG_FORMAT must be json, pretty or auto (json when stdout is not a terminal), ` +
        `not "pretty,json"\n`,
    );
    expect(s.out()).toBe('');
  }, 60_000);
});
