/**
 * `callscript serve --workers 2` as real processes: GET /metrics on either worker answers
 * the sum of both (through the primary, src/http/metrics-cluster.ts); a worker that hangs
 * (SIGSTOP) or dies does not hang a scrape: the others answer, and the log says what is
 * missing. Needs Redis (REDIS_URL): skipped with a message when it does not answer,
 * failing under CI=true.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import http from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { CLI } from '../helpers/cli.js';

const root = new URL('../..', import.meta.url).pathname;
const FLOWS = new URL('../fixtures/metrics-flows', import.meta.url).pathname;
const missing = await redisMissing();
const prefixes: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
const stopped: number[] = [];

afterEach(async () => {
  for (const pid of stopped.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone already
    }
  }
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
  logs: () => Record<string, unknown>[];
}

function serveTwo(): Served {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const args = [
    ...CLI,
    'serve',
    '--port',
    '0',
    '--flows',
    FLOWS,
    '--workers',
    '2',
    '--store',
    REDIS_URL,
    '--log-level',
    'debug',
  ];
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, CALLSCRIPT_STORE_PREFIX: prefix } });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', () => {});
  const logs = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, out: () => out, logs };
}

async function until<T>(fn: () => T | undefined | Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ready(s: Served): Promise<{ port: number; pids: number[] }> {
  const m = await until(
    () =>
      /on http:\/\/127\.0\.0\.1:(\d+)\n[\s\S]*\n {2}2 workers \(pids (\d+), (\d+); primary (\d+)\)/.exec(s.out()) ??
      undefined,
    `the workers line\n${s.out()}`,
  );
  return { port: Number(m[1]), pids: [Number(m[2]), Number(m[3])] };
}

/**
 * One request on a connection of its own (the primary spreads connections over the workers); undefined past
 * `timeoutMs`.
 */
function request(
  port: number,
  method: string,
  path: string,
  body?: string,
  timeoutMs = 10_000,
): Promise<{ status: number; text: string } | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        method,
        path,
        agent: false,
        headers: body ? { 'content-type': 'application/json', connection: 'close' } : { connection: 'close' },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve(undefined);
    });
    req.on('error', (e) => (req.destroyed ? resolve(undefined) : reject(e)));
    req.end(body);
  });
}

const call = (port: number, over: Partial<RtFields>) => request(port, 'POST', '/rt/desk', rtBody(over));
const scrape = (port: number, timeoutMs?: number) => request(port, 'GET', '/metrics', undefined, timeoutMs);
const sample = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));

/** The pids whose per-request debug lines show `url`. */
const pidsServing = (s: Served, url: string) =>
  new Set(
    s
      .logs()
      .filter((l) => l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === url)
      .map((l) => l.pid as number),
  );

describe.skipIf(!!missing)('GET /metrics with --workers 2', () => {
  it('either worker answers the sum of both: requests, calls, live calls, transitions; 2 processes', async () => {
    const s = serveTwo();
    const { port, pids } = await ready(s);
    for (let i = 0; i < 8; i++) expect((await call(port, { callid: `81000000000000000${i}` }))?.status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect(
        (await call(port, { callid: `81000000000000000${i}`, command: 'read', command_id: 1, command_result: '1' }))
          ?.status,
      ).toBe(200);
    await until(() => (pidsServing(s, '/rt/desk').size === 2 ? true : undefined), 'calls served by both workers');
    // scrape until both workers have answered a scrape: the same sums from each
    const answers: string[] = [];
    await until(async () => {
      const r = await scrape(port);
      expect(r?.status).toBe(200);
      answers.push(r!.text);
      return pidsServing(s, '/metrics').size === 2 ? true : undefined;
    }, 'scrapes answered by both workers');
    expect([...pidsServing(s, '/metrics')].sort()).toEqual([...pids].sort());
    for (const text of answers) {
      expect(sample(text, 'callscript_processes ')).toEqual(['callscript_processes 2']);
      expect(sample(text, 'callscript_requests_total{')).toEqual([
        expect.stringMatching(/^callscript_requests_total\{flow="desk",version="[0-9a-f]{12}",outcome="ok"\} 11$/),
      ]);
      expect(sample(text, 'callscript_calls_started_total{')).toEqual([
        expect.stringMatching(/^callscript_calls_started_total\{flow="desk",version="[0-9a-f]{12}"\} 8$/),
      ]);
      expect(sample(text, 'callscript_transitions_total{')).toEqual([
        expect.stringMatching(
          /^callscript_transitions_total\{flow="desk",version="[0-9a-f]{12}",transition="menu:1"\} 3$/,
        ),
      ]);
      expect(sample(text, 'callscript_request_duration_seconds_count{')).toEqual([
        'callscript_request_duration_seconds_count{flow="desk",step="menu"} 8',
        'callscript_request_duration_seconds_count{flow="desk",step="sales"} 3',
      ]);
      // each worker counts the live calls it served last: 8 in all
      expect(sample(text, 'callscript_live_calls{')).toEqual([
        'callscript_live_calls{flow="confirm"} 0',
        'callscript_live_calls{flow="desk"} 8',
      ]);
      expect(sample(text, 'callscript_refused_edits ')).toEqual(['callscript_refused_edits 0']);
      expect(sample(text, 'callscript_nodejs_version_info')).toHaveLength(1);
      expect(text).toMatch(/^callscript_process_resident_memory_bytes \d+$/m);
    }
  }, 90_000);

  it(
    'a worker that hangs (SIGSTOP): a scrape on the other is answered with its metrics, and the log says 1 of ' +
      '2 answered',
    async () => {
      const s = serveTwo();
      const { port, pids } = await ready(s);
      for (let i = 0; i < 4; i++) await call(port, { callid: `82000000000000000${i}` });
      process.kill(pids[0]!, 'SIGSTOP');
      stopped.push(pids[0]!);
      // connections handed to the stopped worker hang (its own scrape too): the ones to the other are answered.
      // Two at once: the primary hands them to the workers in turn, one of them reaches the worker left.
      const answered = await until(
        () =>
          Promise.any(
            [scrape(port, 30_000), scrape(port, 30_000)].map((p) =>
              p.then((r) => (r?.status === 200 ? r.text : Promise.reject(new Error('not answered')))),
            ),
          ).catch(() => undefined),
        'a scrape answered by the worker left',
        60_000,
      );
      expect(sample(answered, 'callscript_processes ')).toEqual(['callscript_processes 1']);
      const partial = await until(() => s.logs().find((l) => l.code === 'METRICS_PARTIAL'), 'the METRICS_PARTIAL line');
      expect(partial).toMatchObject({
        pid: pids[1],
        level: 40,
        answered: 1,
        expected: 2,
        msg: 'metrics: 1 of 2 workers answered in time',
      });
    },
    90_000,
  );

  it(
    'a worker killed: scrapes go on being answered (the dead one is not waited for), the replacement counted ' +
      'once it serves',
    async () => {
      const s = serveTwo();
      const { port, pids } = await ready(s);
      process.kill(pids[0]!, 'SIGKILL');
      // once the primary knows (before, node:cluster may still hand it a connection, which is then lost)
      await until(() => s.logs().find((l) => l.worker === pids[0]), 'the log line of the death');
      const r = await scrape(port, 5000);
      expect(r?.status).toBe(200);
      expect(sample(r!.text, 'callscript_processes ')).toEqual([expect.stringMatching(/^callscript_processes [12]$/)]);
      await until(
        () => s.logs().find((l) => l.pid === s.child.pid && typeof l.msg === 'string' && l.msg.endsWith(' serving')),
        'the replacement',
      );
      await until(async () => {
        const again = await scrape(port, 5000);
        return again && sample(again.text, 'callscript_processes ')[0] === 'callscript_processes 2' ? true : undefined;
      }, 'the replacement in the sums');
    },
    90_000,
  );
});
