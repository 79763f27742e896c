/**
 * `callscript serve --workers N` as real processes (node:cluster): the workers share one
 * port and, through Redis, the calls; the start output is printed once; a worker killed
 * with SIGKILL is replaced while the other keeps the port served; SIGTERM to the primary
 * drains every worker (the request in progress is answered) and leaves no process behind;
 * the memory store is refused (exit 2). Needs Redis for all but the refusal (REDIS_URL):
 * skipped with a message when it does not answer, failing under CI=true.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import http from 'node:http';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { openSocket, parseAnswer } from '../helpers/socket.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { CLI } from '../helpers/cli.js';

const root = new URL('../..', import.meta.url).pathname;
const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
const missing = await redisMissing();
const prefixes: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

// a primary left running is drained (its workers with it), or killed if that takes over 10 s
afterEach(async () => {
  await Promise.all(
    children.splice(0).map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }),
  );
});
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

interface Served {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  /** The pino lines printed so far (primary's and workers'). */
  logs: () => Record<string, unknown>[];
  exit: Promise<{ code: number | null; signal: string | null }>;
}

/** `callscript serve <args>` (by default on any free port, with the http fixture flows). */
function start(args: string[], env: Record<string, string> = {}, where = ['--port', '0', '--flows', FLOWS]): Served {
  const child = spawn(process.execPath, [...CLI, 'serve', ...where, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exit = new Promise<{ code: number | null; signal: string | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  const logs = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, out: () => out, err: () => err, logs, exit };
}

async function until<T>(fn: () => T | undefined | Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits for the banner's workers line: the port and the workers' pids. */
async function ready(s: Served): Promise<{ port: number; pids: number[] }> {
  const m = await until(
    () =>
      /on http:\/\/127\.0\.0\.1:(\d+)\n[\s\S]*\n {2}2 workers \(pids (\d+), (\d+); primary (\d+)\)/.exec(s.out()) ??
      undefined,
    `the workers line\n${s.out()}${s.err()}`,
  );
  expect(Number(m[4])).toBe(s.child.pid);
  return { port: Number(m[1]), pids: [Number(m[2]), Number(m[3])] };
}

/** POST on a connection of its own (the primary spreads connections over the workers). */
function post(port: number, over: Partial<RtFields>): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/rt/desk',
        agent: false,
        headers: { 'content-type': 'application/json', connection: 'close' },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(rtBody(over));
  });
}

/** The pids whose per-request debug lines show a POST /rt/desk. */
const rtPids = (s: Served) =>
  new Set(
    s
      .logs()
      .filter((l) => l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === '/rt/desk')
      .map((l) => l.pid as number),
  );

/** A connection with a request in progress: its headers and the start of its body sent. */
async function holdRequest(s: Served, port: number, body: string) {
  const c = await openSocket(port);
  c.socket.write(
    `POST /rt/desk HTTP/1.1\r\nHost: x\r\nContent-Type: ` +
      `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  // the worker holding it has the request (its per-request line is logged)
  await until(() => rtPids(s).size > 0 || undefined, 'the request in progress');
  return c;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('--workers 2 with the memory store: exit 2 and why, before any process is forked', async () => {
  const s = start(['--workers', '2']);
  expect(await s.exit).toEqual({ code: 2, signal: null });
  expect(s.err()).toBe(
    'callscript serve: 2 workers need a shared call store: with the memory store each process keeps its own ' +
      'calls, and the requests of one call reach any process. Give a Redis URL (--store, CALLSCRIPT_STORE, or ' +
      'store: in the config file), or run 1 worker\n',
  );
  expect(s.out()).toBe('');
}, 30_000);

it('CALLSCRIPT_WORKERS out of bounds: exit 2 and the bounds', async () => {
  const s = start([], { CALLSCRIPT_WORKERS: '0' });
  expect(await s.exit).toEqual({ code: 2, signal: null });
  expect(s.err()).toBe('callscript serve: CALLSCRIPT_WORKERS must be an integer from 1 to 256, not "0"\n');
}, 30_000);

describe.skipIf(!!missing)('serve --workers 2 on Redis', () => {
  const serveTwo = (flows = FLOWS) => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    return start(
      ['--workers', '2', '--store', REDIS_URL, '--log-level', 'debug'],
      { CALLSCRIPT_STORE_PREFIX: prefix },
      ['--port', '0', '--flows', flows],
    );
  };

  it(
    'serves /rt from both workers on one port, a call going on whichever worker gets its requests; the start ' +
      'output is printed once',
    async () => {
      const s = serveTwo();
      const { port, pids } = await ready(s);
      expect(new Set([...pids, s.child.pid]).size).toBe(3);
      expect(s.out().match(/callscript serving 2 flows from /g)).toHaveLength(1);
      expect(s.out().match(/ {2}health: GET /g)).toHaveLength(1);
      // the refused flow's diagnostic, printed by each worker's load, is shown once
      expect(s.err().match(/broken\.yaml:2:8 error UNKNOWN_STEP/g)).toHaveLength(1);
      // a whole call, each request on a new connection
      const callid = '91000000000000001';
      expect((await post(port, { callid })).body).toMatchObject({ command: 'read', command_id: 1 });
      expect((await post(port, { callid, command: 'read', command_id: 1, command_result: '1' })).body).toMatchObject({
        command: 'dialout',
        command_id: 2,
      });
      expect(
        (await post(port, { callid, command: 'dialout', command_id: 2, command_result: 'NOANSWER' })).body,
      ).toMatchObject({ command: 'play', command_id: 3 });
      expect((await post(port, { callid, command: 'play', command_id: 3, command_result: '0' })).body).toMatchObject({
        command: 'hangup',
        command_id: 4,
      });
      for (let i = 0; i < 6; i++) expect((await post(port, { callid: `92000000000000000${i}` })).status).toBe(200);
      const served = await until(
        () => (rtPids(s).size === 2 ? rtPids(s) : undefined),
        'requests logged by both workers',
      );
      expect([...served].sort()).toEqual([...pids].sort());
    },
    60_000,
  );

  it('server.workers from callscript.yaml; SIGHUP to the primary reloads the flows in every worker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callscript-workers-'));
    mkdirSync(join(dir, 'flows'));
    const flow = join(dir, 'flows', 'desk.yaml');
    copyFileSync(join(FLOWS, 'desk.yaml'), flow);
    const prefix = testPrefix();
    prefixes.push(prefix);
    writeFileSync(
      join(dir, 'callscript.yaml'),
      `server: { port: 0, watch: false, workers: 2, log_level: info, reload_settle_ms: 0 }\nstore: { url: ` +
        `"${REDIS_URL}", prefix: ` +
        `"${prefix}" }\n`,
    );
    const s = start(['--config', join(dir, 'callscript.yaml')], {}, []);
    const { pids } = await ready(s);
    writeFileSync(flow, readFileSync(flow, 'utf8').replace('Press 1 for sales.', 'Press 1 for sales, please.'));
    s.child.kill('SIGHUP');
    const published = () =>
      new Set(
        s
          .logs()
          .filter(
            (l) =>
              typeof l.msg === 'string' &&
              /^flow desk version [0-9a-f]{12} published \(was [0-9a-f]{12}\): /.test(l.msg),
          )
          .map((l) => l.pid as number),
      );
    await until(() => (published().size === 2 ? true : undefined), `both workers to reload\n${s.out()}`);
    expect([...published()].sort()).toEqual([...pids].sort());
    expect(alive(s.child.pid!)).toBe(true);
  }, 60_000);

  it(
    'a worker killed with SIGKILL: the other keeps the port served, the call goes on, the primary logs it and ' +
      'starts another (the banner is not printed again)',
    async () => {
      const s = serveTwo();
      const { port, pids } = await ready(s);
      const callid = '93000000000000001';
      expect((await post(port, { callid })).body).toMatchObject({ command: 'read', command_id: 1 });
      process.kill(pids[0]!, 'SIGKILL');
      const died = await until(() => s.logs().find((l) => l.worker === pids[0]), 'the log line of the death');
      expect(died).toMatchObject({
        pid: s.child.pid,
        level: 50,
        signal: 'SIGKILL',
        msg: `worker ${pids[0]} was killed by SIGKILL: starting another`,
      });
      expect(alive(pids[0]!)).toBe(false);
      // served meanwhile, by the worker left (or the new one)
      expect((await post(port, { callid, command: 'read', command_id: 1, command_result: '1' })).body).toMatchObject({
        command: 'dialout',
        command_id: 2,
      });
      expect((await post(port, { callid: '93000000000000002' })).status).toBe(200);
      const replaced = await until(
        () => s.logs().find((l) => l.pid === s.child.pid && typeof l.msg === 'string' && l.msg.endsWith(' serving')),
        'the replacement',
      );
      const fresh = replaced.worker as number;
      expect(pids).not.toContain(fresh);
      expect(alive(fresh)).toBe(true);
      await until(async () => {
        await post(port, { callid: `9400${Date.now()}` });
        return rtPids(s).has(fresh) || undefined;
      }, 'a request served by the new worker');
      expect(s.out().match(/callscript serving /g)).toHaveLength(1);
    },
    60_000,
  );

  it('a start that fails in the workers: the diagnostic once, every process gone, exit 2', async () => {
    const flows = join(mkdtempSync(join(tmpdir(), 'callscript-workers-')), 'flows');
    const s = serveTwo(flows);
    expect(await s.exit).toEqual({ code: 2, signal: null });
    expect(s.err()).toBe(
      `${flows}:1:1 error FLOWS_DIR_MISSING cannot read the flows directory ${flows}: ENOENT\nhint: Create ` +
        `it, or point FLOWS_DIR / --flows / server.flows_dir at the folder holding your *.yaml flows.\n`,
    );
    const failed = s.logs().find((l) => l.pid === s.child.pid)!;
    expect(failed).toMatchObject({
      level: 50,
      code: 2,
      msg: `worker ${failed.worker} exited with code 2 while starting: stopping the others`,
    });
    expect(s.out()).not.toContain('callscript serving');
    const workers = new Set(
      s
        .logs()
        .filter((l) => l.pid !== s.child.pid)
        .map((l) => l.pid as number),
    );
    for (const pid of workers) expect(alive(pid)).toBe(false);
  }, 30_000);

  it(
    'replacements that cannot start: their output is printed, the next tries wait longer, and serving resumes ' +
      'once they can',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'callscript-workers-'));
      const flows = join(dir, 'flows');
      mkdirSync(flows);
      copyFileSync(join(FLOWS, 'desk.yaml'), join(flows, 'desk.yaml'));
      const s = serveTwo(flows);
      const { port, pids } = await ready(s);
      renameSync(flows, join(dir, 'away'));
      process.kill(pids[0]!, 'SIGKILL');
      const deaths = () => s.logs().filter((l) => l.pid === s.child.pid && l.level === 50);
      await until(() => deaths().length >= 3 || undefined, 'two replacements failing');
      const [killed, first, second] = deaths();
      expect(killed).toMatchObject({ worker: pids[0], signal: 'SIGKILL', restartInMs: 0 });
      expect(first).toMatchObject({
        code: 2,
        signal: null,
        restartInMs: 500,
        msg: `worker ${first!.worker} exited with code 2: starting another in 0.5 s`,
      });
      expect(second).toMatchObject({
        code: 2,
        restartInMs: 1000,
        msg: `worker ${second!.worker} exited with code 2: starting another in 1 s`,
      });
      expect(s.err()).toContain(
        `${flows}:1:1 error FLOWS_DIR_MISSING cannot read the flows directory ${flows}: ENOENT\n`,
      );
      // the worker left serves meanwhile
      expect((await post(port, { callid: '9600000000000000001' })).body).toMatchObject({
        command: 'read',
        command_id: 1,
      });
      renameSync(join(dir, 'away'), flows);
      const back = await until(
        () => s.logs().find((l) => l.pid === s.child.pid && typeof l.msg === 'string' && l.msg.endsWith(' serving')),
        'a replacement serving',
        40_000,
      );
      expect(alive(back.worker as number)).toBe(true);
      expect(s.out().match(/callscript serving /g)).toHaveLength(1);
    },
    90_000,
  );

  it('a second SIGTERM while the workers drain kills them: the primary exits 1', async () => {
    const s = serveTwo();
    const { port, pids } = await ready(s);
    const c = await holdRequest(s, port, rtBody({ callid: '97000000000000001' }));
    s.child.kill('SIGTERM');
    await until(() => s.logs().some((l) => l.msg === 'SIGTERM: draining 2 workers') || undefined, 'the drain');
    // within 1 s it would be the same stop delivered twice (a terminal's Ctrl-C through npm start)
    await new Promise((r) => setTimeout(r, 1200));
    s.child.kill('SIGTERM');
    expect(await s.exit).toEqual({ code: 1, signal: null });
    expect(s.logs().find((l) => l.pid === s.child.pid && l.level === 40)).toMatchObject({
      msg: expect.stringMatching(/^SIGTERM again: killing the [12] workers still draining$/),
    });
    await c.closed;
    expect(c.data()).toBe('');
    await until(() => pids.every((p) => !alive(p)) || undefined, 'the workers to be gone', 5000);
  }, 60_000);

  it('the primary killed with SIGKILL: the workers exit by themselves (no orphan keeps the port)', async () => {
    const s = serveTwo();
    const { port, pids } = await ready(s);
    s.child.kill('SIGKILL');
    expect(await s.exit).toEqual({ code: null, signal: 'SIGKILL' });
    await until(() => pids.every((p) => !alive(p)) || undefined, 'the workers to be gone', 10_000);
    const probe = await new Promise<string>((r) =>
      http
        .get({ port, host: '127.0.0.1', path: '/health', agent: false }, () => r('answered'))
        .on('error', (e: NodeJS.ErrnoException) => r(e.code ?? e.message)),
    );
    expect(probe).toBe('ECONNREFUSED');
  }, 60_000);

  it(
    'SIGTERM to the primary drains: no new connection is taken, the request in progress is answered (a ' +
      'pipelined one after it gets 503 SHUTTING_DOWN), every process exits, the primary with 0',
    async () => {
      const s = serveTwo();
      const { port, pids } = await ready(s);
      const body = rtBody({ callid: '95000000000000001' });
      const c = await holdRequest(s, port, body);
      s.child.kill('SIGTERM');
      await until(() => s.logs().some((l) => l.msg === 'SIGTERM: draining 2 workers') || undefined, 'the drain');
      // the listening socket goes once every worker has stopped accepting
      await until(
        () =>
          new Promise<true | undefined>((r) => {
            const probe = http.get({ port, host: '127.0.0.1', path: '/health', agent: false }, (res) => {
              res.resume();
              r(undefined);
            });
            probe.on('error', (e: NodeJS.ErrnoException) => r(e.code === 'ECONNREFUSED' || undefined));
          }),
        'the port to refuse connections',
      );
      expect(s.child.exitCode).toBe(null);
      c.socket.write(`${body.slice(10)}GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await c.closed;
      const text = c.data();
      const first = parseAnswer(text, true, 0);
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body)).toMatchObject({ command: 'read', command_id: 1 });
      const second = parseAnswer(text.slice(text.indexOf('HTTP/1.1', 10)), true, 0);
      expect(second.status).toBe(503);
      expect(JSON.parse(second.body)).toEqual({
        error: { code: 'SHUTTING_DOWN', message: 'the server is shutting down: send the request to another instance' },
      });
      expect(await s.exit).toEqual({ code: 0, signal: null });
      await until(() => pids.every((p) => !alive(p)) || undefined, 'the workers to be gone', 5000);
    },
    60_000,
  );
});
