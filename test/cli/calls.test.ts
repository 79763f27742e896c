/**
 * `callscript calls` and `callscript trace` against a real listening server (createServer
 * on a free port): tables, timelines, JSON, the server from --server or the environment,
 * and clear errors (server down, credentials, no admin API, unknown call).
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { calls, trace } from '../../src/cli/calls.js';
import { duration, shortTime } from '../../src/cli/calls-format.js';
import { createServer, type Server } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { CLI } from '../helpers/cli.js';

const root = new URL('../..', import.meta.url).pathname;
const FLOWS = new URL('../fixtures/history', import.meta.url).pathname;

function capture(): { out: Writable; text: () => string } {
  let s = '';
  return {
    out: new Writable({
      write(chunk, _e, cb) {
        s += chunk.toString();
        cb();
      },
    }),
    text: () => s,
  };
}

let server: Server;
let plain: Server;
let url: string;
let withCreds: string;
const noEnv = {} as NodeJS.ProcessEnv;

async function listen(admin: boolean): Promise<Server> {
  const s = await createServer({
    flowsDir: FLOWS,
    logLevel: false,
    ...(admin ? { admin: { login: 'boss', password: 's3 cret:x' } } : {}),
  });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  return s;
}
const port = (s: Server) => (s.app.server.address() as { port: number }).port;
const send = async (over: Partial<RtFields>) => {
  const r = await fetch(`${url}/rt/desk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: rtBody(over),
  });
  expect(r.status).toBe(200);
  return r.json();
};

beforeAll(async () => {
  server = await listen(true);
  plain = await listen(false);
  url = `http://127.0.0.1:${port(server)}`;
  withCreds = `http://boss:${encodeURIComponent('s3 cret:x')}@127.0.0.1:${port(server)}`;
  // 4242: a whole call, finished; 4243 and 4244: live
  await send({ callid: '4242' });
  await send({ callid: '4242', command: 'read', command_id: 1, command_result: '1' });
  await send({ callid: '4242', command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
  await send({ callid: '4242', command: 'play', command_id: 3, command_result: '' });
  await send({ callid: '4242', command: 'hangup', command_id: 4, call_status: 'HANGUP' });
  await send({ callid: '4243' });
  await send({ callid: '4244' });
  await send({ callid: '4244', command: 'read', command_id: 1, command_result: '1' });
  await vi.waitFor(async () => {
    const r = await fetch(`${url}/admin/calls/4242`, {
      headers: { authorization: 'Basic ' + Buffer.from('boss:s3 cret:x').toString('base64') },
    });
    if (((await r.json()) as { status: string }).status !== 'finished') throw new Error('not yet');
  });
});
afterAll(async () => {
  await server.app.close();
  await plain.app.close();
});

describe('callscript calls', () => {
  it('prints the live calls as a table', async () => {
    const c = capture();
    const e = capture();
    expect(await calls({ server: withCreds }, noEnv, c.out, e.out)).toBe(0);
    expect(e.text()).toBe('');
    const lines = c.text().trimEnd().split('\n');
    expect(lines[0]).toBe('CALLID  FLOW  STEP   STARTED (UTC)        DURATION');
    expect(lines.slice(1).map((l) => l.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  \S+$/, '<time>  <dur>'))).toEqual([
      '4243    desk  menu   <time>  <dur>',
      '4244    desk  sales  <time>  <dur>',
    ]);
    expect(lines).toHaveLength(3);
  });

  it('prints the finished calls (--finished), JSON (--json), and says when --limit left some out', async () => {
    const c = capture();
    expect(await calls({ server: withCreds, finished: true }, noEnv, c.out, capture().out)).toBe(0);
    expect(c.text()).toMatch(
      /^CALLID  FLOW  OUTCOME    STARTED \(UTC\)        DURATION\n4242    desk  completed  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  \d+ms\n$/,
    );
    const j = capture();
    expect(await calls({ server: withCreds, json: true }, noEnv, j.out, capture().out)).toBe(0);
    const rows = JSON.parse(j.text()) as { callid: string; step: string }[];
    expect(rows.map((r) => [r.callid, r.step])).toEqual([
      ['4243', 'menu'],
      ['4244', 'sales'],
    ]);
    expect(Object.keys(rows[0]!)).toEqual(['callid', 'flow', 'version', 'step', 'started', 'lastSeen', 'commands']);
    const one = capture();
    expect(await calls({ server: withCreds, limit: '1' }, noEnv, one.out, capture().out)).toBe(0);
    expect(one.text().split('\n')).toHaveLength(4);
    expect(one.text()).toMatch(
      /^CALLID  FLOW  STEP  STARTED \(UTC\)        DURATION\n4243    desk  menu  .*\n\(more live calls: raise --limit\)\n$/,
    );
  });

  it('takes the server from CALLSCRIPT_SERVER and the credentials from ADMIN_LOGIN / ADMIN_PASSWORD', async () => {
    const c = capture();
    expect(
      await calls(
        { finished: true, json: true },
        { CALLSCRIPT_SERVER: url, ADMIN_LOGIN: 'boss', ADMIN_PASSWORD: 's3 cret:x' },
        c.out,
        capture().out,
      ),
    ).toBe(0);
    expect(JSON.parse(c.text())).toMatchObject([
      { callid: '4242', outcome: 'completed', status: 'HANGUP', lastStep: 'end' },
    ]);
  });

  it('says clearly what went wrong: credentials, no admin API, server down, bad flags', async () => {
    const run = async (flags: Parameters<typeof calls>[0], env = noEnv) => {
      const e = capture();
      const code = await calls(flags, env, capture().out, e.out);
      return [code, e.text()];
    };
    expect(await run({ server: url })).toEqual([
      2,
      'callscript calls: no admin credentials given (ADMIN_AUTH_REQUIRED): give them in --server ' +
        'http://LOGIN:PASSWORD@host:port, or ADMIN_LOGIN and ADMIN_PASSWORD\n',
    ]);
    expect(await run({ server: `http://boss:wrong@127.0.0.1:${port(server)}` })).toEqual([
      2,
      'callscript calls: the admin credentials were refused (ADMIN_AUTH_REQUIRED): give them in --server ' +
        'http://LOGIN:PASSWORD@host:port, or ADMIN_LOGIN and ADMIN_PASSWORD\n',
    ]);
    const [code, text] = await run({ server: `http://boss:x@127.0.0.1:${port(plain)}` });
    expect(code).toBe(2);
    expect(text).toBe(
      `callscript calls: http://127.0.0.1:${port(plain)} has no admin API (NOT_FOUND: no route GET ` +
        `/admin/calls?status=live&limit=50): it is on with admin: { login, password } in callscript.yaml, or ` +
        `ADMIN_LOGIN and ADMIN_PASSWORD where the server runs\n`,
    );
    const gone = await listen(true);
    const p = port(gone);
    await gone.app.close();
    expect(await run({ server: `http://boss:x@127.0.0.1:${p}` })).toEqual([
      2,
      `callscript calls: cannot reach callscript at http://127.0.0.1:${p} (ECONNREFUSED): is callscript ` +
        `serve running there? (--server, CALLSCRIPT_SERVER)\n`,
    ]);
    expect(await run({ server: withCreds, limit: '0' })).toEqual([
      2,
      'callscript calls: --limit must be an integer from 1 to 10000, not "0"\n',
    ]);
    expect(await run({ server: withCreds, limit: '1e9' })).toEqual([
      2,
      'callscript calls: --limit must be an integer from 1 to 10000, not "1e9"\n',
    ]);
    expect(await run({ server: 'not a url' })).toEqual([
      2,
      'callscript calls: --server (or CALLSCRIPT_SERVER) must be a URL such as ' +
        'http://LOGIN:PASSWORD@127.0.0.1:3000, not "not a url"\n',
    ]);
    expect(await run({ server: 'ftp://127.0.0.1:21' })).toEqual([
      2,
      'callscript calls: --server must be an http:// or https:// URL, not "ftp://…"\n',
    ]);
  });
});

describe('callscript trace', () => {
  it('prints a finished call as a timeline: +ms, steps, what was reported and sent, transitions', async () => {
    const c = capture();
    expect(await trace('4242', { server: withCreds }, noEnv, c.out, capture().out)).toBe(0);
    const lines = c
      .text()
      .trimEnd()
      .split('\n')
      .map((l) => l.replace(/^ *\+\d+ms/, '+Nms').replace(/\[[\d.]+ms\]$/, '[Nms]'));
    expect(lines[0]).toMatch(/^call 4242 {2}desk [0-9a-f]{12} {2}finished: completed \(HANGUP\), last step end$/);
    // the call's duration: 850ms, or 1.2s on a loaded machine
    expect(lines[1]).toMatch(/^started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, (\d+ms|\d+\.\ds), 4 commands$/);
    expect(lines.slice(2)).toEqual([
      '',
      '+Nms  (new call) → menu  sent read {"media_id":"TTS|TTS_EN-GB_SERENA|Press 1 for sales.","max_digits":1}  [Nms]',
      '+Nms  menu → sales  got read "1"  sent dialout {"targets":[{"number":"+33123456789","timeout":30}]}  ' +
        'via menu:1  [Nms]',
      '+Nms  sales → bye  got dialout "NOANSWER"  sent play {"media_id":"TTS|TTS_EN-GB_SERENA|Goodbye."}  ' +
        'via sales:NOANSWER  [Nms]',
      '+Nms  bye → end  got play ""  sent hangup  via bye:default  [Nms]',
      '+Nms  end → end  got hangup ""  sent hangup  [Nms]',
    ]);
    expect(c.text()).toMatch(/^ *\+0ms {2}\(new call\)/m);
  });

  it('prints a live call, and the JSON of the admin API with --json', async () => {
    const c = capture();
    expect(await trace('4244', { server: withCreds }, noEnv, c.out, capture().out)).toBe(0);
    expect(c.text().split('\n')[0]).toMatch(/^call 4244 {2}desk [0-9a-f]{12} {2}live at step sales$/);
    expect(c.text()).toContain('menu → sales  got read "1"  sent dialout');
    const j = capture();
    expect(await trace('4244', { server: withCreds, json: true }, noEnv, j.out, capture().out)).toBe(0);
    expect(JSON.parse(j.text())).toMatchObject({
      callid: '4244',
      status: 'live',
      step: 'sales',
      path: [{ step: 'menu' }, { step: 'sales' }],
    });
  });

  it('reads a long path page by page (pathNext), says what was dropped, and what each entry counted', async () => {
    const store = new MemoryStore();
    const s = await createServer({ flowsDir: FLOWS, logLevel: false, store, admin: { login: 'a', password: 'b' } });
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const params = { media_id: 'x'.repeat(200), p1: 'y'.repeat(200), p2: 'z'.repeat(200) };
      const entry = (at: number) =>
        JSON.stringify({
          at,
          ms: 1,
          from: 'menu',
          command: 'read',
          result: 'R'.repeat(200),
          error: '',
          step: 'menu',
          reply: { command: 'read', params },
          transitions: ['menu:default'],
          effects: [],
          late: false,
          outcome: 'ok',
          ...(at === 0 ? { replays: 2, refused: 3 } : {}),
        });
      const path = Array.from({ length: 400 }, (_, i) => entry(i));
      expect(path.join(',').length).toBeGreaterThan(256 * 1024); // more than one page
      await store.addFinished(
        '77',
        '{"callid":"77","flow":"desk","version":"abcdef012345","started":"2026-01-01T00:00:00.000Z",' +
          '"ended":"2026-01-01T00:01:00.000Z","durationMs":60000,"outcome":"completed","status":"HANGUP",' +
          `"lastStep":"end","commands":400,"vars":{},"dropped":12,"path":[${path.join(',')}]}`,
        10,
        60_000,
      );
      const server = `http://a:b@127.0.0.1:${port(s)}`;
      const c = capture();
      expect(await trace('77', { server }, noEnv, c.out, capture().out)).toBe(0);
      const lines = c.text().trimEnd().split('\n');
      expect(lines[3]).toBe('(the first 12 requests are not kept: history.max_path, max_path_bytes)');
      expect(lines.slice(4)).toHaveLength(400);
      expect(lines[4]).toContain('  (then retried 2×, refused 3×)  [1ms]');
      expect(lines.at(-1)).toMatch(/^\+399ms {2}menu → menu {2}got read "R+"/);
      const j = capture();
      expect(await trace('77', { server, json: true }, noEnv, j.out, capture().out)).toBe(0);
      const json = JSON.parse(j.text()) as { path: { at: number }[]; pathNext: string | null; dropped: number };
      expect(json.path.map((e) => e.at)).toEqual(path.map((_, i) => i));
      expect(json).toMatchObject({ pathNext: null, dropped: 12 });
    } finally {
      await s.app.close();
    }
  });

  it('exit 1 for a call it does not know, 2 for a callid that cannot be one', async () => {
    const e = capture();
    expect(await trace('999', { server: withCreds }, noEnv, capture().out, e.out)).toBe(1);
    expect(e.text()).toBe('callscript trace: CALL_NOT_FOUND: no live or finished call 999\n');
    const b = capture();
    expect(await trace('12/../../flows', { server: withCreds }, noEnv, capture().out, b.out)).toBe(2);
    expect(b.text()).toBe(
      'callscript trace: BAD_CALLID: the callid must be an unsigned 64-bit integer in decimal, got "12/../../flows"\n',
    );
  });
});

describe('the callscript command', () => {
  it('runs calls and trace as subcommands', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const p = spawn(process.execPath, [...CLI, ...args], {
          cwd: root,
          env: { ...process.env, CALLSCRIPT_SERVER: withCreds },
        });
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (err += d));
        p.on('close', (code) => resolve({ code, out, err }));
      });
    const list = await run(['calls', '--finished']);
    expect(list).toMatchObject({ code: 0, err: '' });
    expect(list.out).toMatch(/^CALLID  FLOW  OUTCOME    STARTED \(UTC\)        DURATION\n4242 /);
    const t = await run(['trace', '4242', '--json']);
    expect(t.code).toBe(0);
    expect(JSON.parse(t.out)).toMatchObject({ callid: '4242', status: 'finished', outcome: 'completed' });
    expect(await run(['trace', '1'])).toMatchObject({
      code: 1,
      err: 'callscript trace: CALL_NOT_FOUND: no live or finished call 1\n',
    });
  }, 30_000);
});

describe('formats', () => {
  it('durations and times', () => {
    expect([0, 850, 12_345, 65_000, 3_723_000, -1, NaN].map(duration)).toEqual([
      '0ms',
      '850ms',
      '12.3s',
      '1m05s',
      '1h02m03s',
      '-',
      '-',
    ]);
    expect(shortTime('2026-11-25T10:11:18.123Z')).toBe('2026-11-25 10:11:18');
    expect(shortTime(null)).toBe('-');
  });
});
