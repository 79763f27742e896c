/**
 * `callscript dial` against a server and the emulator over HTTP: through --server the call is
 * placed, followed to its end, and its outcome printed from the call history (text and
 * --json, exit codes); without --server it goes straight to the service. Then the same with
 * real processes: `callscript serve` taking the account from its environment, and `callscript
 * dial` run as a command.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dial, type DialFlags } from '../../src/cli/dial.js';
import { ServiceClient } from '../../src/service/jsonrpc.js';
import { spawnServe } from '../emulator/serve.js';
import {
  ADMIN,
  ROOT,
  admin,
  capture,
  fakeService,
  freePort,
  registerCaller,
  reminderFlows,
  silentServer,
  startEmulator,
  startServer,
  type Emu,
  type Served,
} from './helpers.js';
import { CLI } from '../helpers/cli.js';

let emu: Emu;
let srv: Served;
let appHash: string;

beforeAll(async () => {
  emu = await startEmulator();
  srv = await startServer({ service: { url: emu.base, login: 'emulator', password: 'emulator' } });
  const client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
  appHash = (await client.apps.create('reminder', { url: `${srv.base}/rt/reminder` })).hash;
  await registerCaller(emu.base, '+33622222222', { name: 'away', call: { answer: 'BUSY' } });
});
afterAll(async () => {
  await srv.close();
  await emu.close();
});

async function run(number: string, flags: DialFlags, env: NodeJS.ProcessEnv = {}) {
  const out = capture();
  const err = capture();
  const code = await dial(number, flags, { env, cwd: ROOT, out: out.out, err: err.out });
  return { code, out: out.text(), err: err.text() };
}

describe('callscript dial --server', () => {
  it('places the call, follows it to its end and prints the outcome; the vars reach the flow (exit 0)', async () => {
    const r = await run('+33612345678', {
      app: appHash,
      server: srv.admin,
      vars: ['patient=Ms Jones', 'dentist=Doctor Who'],
      poll: '100ms',
    });
    expect(r.code).toBe(0);
    const id =
      /^placed call ([A-Z0-9]{8}) to \+33612345678 \(app [A-Z0-9]{8}\) through http:\/\/127\.0\.0\.1:\d+\n/.exec(
        r.err,
      )?.[1];
    expect(id, r.err).toBeDefined();
    expect(r.out).toMatch(
      new RegExp(
        `^call ${id}: completed \\(HANGUP\\)\\n  number    \\+33612345678\\n  callid    (\\d+)\\n  last step ` +
          `end\\n  duration  \\d+(ms|\\.\\ds)\\n$`,
      ),
    );
    const callid = /callid {4}(\d+)/.exec(r.out)![1]!;
    const call = await admin(srv.base, 'GET', `/admin/calls/${callid}`);
    expect(call.body.vars).toMatchObject({ patient: 'Ms Jones', dentist: 'Doctor Who' });
    expect(JSON.stringify(call.body.path)).toContain('with Doctor Who on');
  });

  it('--json: the outbound call as the server shows it, and timedOut', async () => {
    const r = await run('+33612345678', {
      app: appHash,
      server: srv.admin,
      json: true,
      cdrField: 'ext12',
      poll: '100ms',
    });
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({
      id: expect.any(String),
      app: appHash,
      number: '+33612345678',
      placedAt: expect.any(String),
      callid: expect.stringMatching(/^\d+$/),
      status: 'finished',
      outcome: 'completed',
      lastStep: 'end',
      durationMs: expect.any(Number),
      callStatus: 'HANGUP',
      timedOut: false,
    });
  });

  it('a busy number: its outcome and status, exit 1; the server from CALLSCRIPT_SERVER', async () => {
    const r = await run('+33622222222', { app: appHash, poll: '100ms' }, { CALLSCRIPT_SERVER: srv.admin });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^call [A-Z0-9]{8}: abandoned \(BUSY\)\n  number {4}\+33622222222\n  callid {4}\d+\n  last step -\n  duration  \d+ms\n$/,
    );
  });

  it('a call transferred to reception (its dialout answered, bridged): a normal end, exit 0', async () => {
    await registerCaller(emu.base, '+33633333333', {
      name: 'wants reception',
      actions: [{ play_talk_detect: 'TALK' }, { read: 3 }, { dialout: 'answer' }],
    });
    const r = await run('+33633333333', { app: appHash, server: srv.admin, poll: '100ms' });
    expect(r.out).toMatch(
      /^call [A-Z0-9]{8}: transferred \(HANGUP\)\n {2}number {4}\+33633333333\n {2}callid {4}\d+\n {2}last step reception\n/,
    );
    expect(r.code).toBe(0);
  });

  it('a call the service never connects: given up after --timeout, exit 1', async () => {
    const fake = await fakeService((_req, body) => ({
      body: JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: 'NEVER001' }),
    }));
    const s = await startServer({ service: { url: fake.url, login: 'a', password: 'b' } });
    try {
      const t0 = Date.now();
      const r = await run('+33612345678', { app: appHash, server: s.admin, timeout: '1s', poll: '200ms' });
      expect(r.code).toBe(1);
      expect(r.out).toBe(
        'call NEVER001: not over after 1.0s (still placed: the service has not connected it)\n  number    ' +
          '+33612345678\n  callid    -\n',
      );
      expect(Date.now() - t0).toBeLessThan(10_000);
      const j = await run('+33612345678', { app: appHash, server: s.admin, timeout: '1s', poll: '500ms', json: true });
      expect(JSON.parse(j.out)).toMatchObject({ id: 'NEVER001', status: 'placed', callid: null, timedOut: true });
    } finally {
      await s.close();
      await fake.close();
    }
  });

  it('refusals and failures: their message and exit code', async () => {
    const port = await freePort();
    const none = await startServer();
    try {
      const unknown = await run('+33612345678', { app: 'ZZZZZZZZ', server: srv.admin });
      expect(unknown).toEqual({
        code: 1,
        out: '',
        err:
          'callscript dial: SERVICE_ERROR: the service refused the call: calls.realtime: no application with ' +
          'hash ZZZZZZZZ (code 20)\n',
      });
      const down = await run('+33612345678', { app: appHash, server: `http://boss:x@127.0.0.1:${port}` });
      expect(down.code).toBe(2);
      expect(down.err).toMatch(
        new RegExp(
          `^callscript dial: cannot reach callscript at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): ` +
            `is callscript serve running there\\?`,
        ),
      );
      const creds = await run('+33612345678', {
        app: appHash,
        server: srv.base.replace('http://', 'http://boss:wrong@'),
      });
      expect(creds.code).toBe(2);
      expect(creds.err).toBe(
        'callscript dial: the admin credentials were refused (ADMIN_AUTH_REQUIRED): give them in --server ' +
          'http://LOGIN:PASSWORD@host:port, or ADMIN_LOGIN and ADMIN_PASSWORD\n',
      );
      const unconfigured = await run('+33612345678', { app: appHash, server: none.admin });
      expect(unconfigured.code).toBe(2);
      expect(unconfigured.err).toMatch(
        /^callscript dial: SERVICE_UNCONFIGURED: no service account is configured on this server/,
      );
      // --api, --account, --config would do nothing with --server: refused
      const unused = await run('+33612345678', {
        app: appHash,
        server: srv.admin,
        api: emu.base,
        config: 'callscript.yaml',
      });
      expect(unused).toEqual({
        code: 2,
        out: '',
        err:
          'callscript dial: --api, --config: not used with --server (the server places the call with its own ' +
          'account and api:); give them without --server to call the service directly\n',
      });
    } finally {
      await none.close();
    }
  });

  it(
    "the call may or may not have been placed (the service's " + 'answer lost, or late): exit 3, said so, never 2',
    async () => {
      const lost = await fakeService(() => ({ status: 500, type: 'text/html', body: '<h1>oops</h1>' }));
      const s = await startServer({ service: { url: lost.url, login: 'a', password: 'b' } });
      const silent = await silentServer();
      const slow = await startServer({ service: { url: silent.url, login: 'a', password: 'b', timeoutMs: 300 } });
      try {
        const a = await run('+33612345678', { app: appHash, server: s.admin });
        expect(a.code).toBe(3);
        expect(a.err).toMatch(
          /^callscript dial: SERVICE_OUTCOME_UNKNOWN: calls\.realtime: .*: the call may or may not have been placed; it is not tried again: the call may or may not have been placed: check before dialling again \(exit 3\)\n$/,
        );
        const b = await run('+33612345678', { app: appHash, server: slow.admin });
        expect(b.code).toBe(3);
        expect(b.err).toMatch(/^callscript dial: SERVICE_TIMEOUT: .*check before dialling again \(exit 3\)\n$/);
        // straight to the service: the same
        const c = await run('+33612345678', { app: appHash, api: lost.url, account: 'a:b' });
        expect(c.code).toBe(3);
        expect(c.err).toMatch(
          /^callscript dial: calls\.realtime: .* answered HTTP 500.*: the call may or may not have been placed: check before dialling again \(exit 3\)\n$/,
        );
        expect(lost.requests).toHaveLength(2);
      } finally {
        await s.close();
        await slow.close();
        await lost.close();
        await silent.close();
      }
    },
    30_000,
  );

  it('what the service says is shown with its control characters escaped', async () => {
    const evil = await fakeService((_r, body) => ({
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: (JSON.parse(body) as { id: number }).id,
        error: { code: 20, message: 'no \u001b[2J\u001b[31mapp' },
      }),
    }));
    try {
      const r = await run('+33612345678', { app: appHash, api: evil.url, account: 'a:b' });
      expect(r).toEqual({
        code: 1,
        out: '',
        err: 'callscript dial: calls.realtime: no \\x1b[2J\\x1b[31mapp (code 20)\n',
      });
    } finally {
      await evil.close();
    }
  });

  it('bad input is refused before anything is sent (exit 2)', async () => {
    const cases: [string, DialFlags, string][] = [
      ['0612345678', { app: appHash, server: srv.admin }, 'callscript dial: number "0612345678" is not E.164: '],
      ['+33612345678', { server: srv.admin }, 'callscript dial: --app HASH is required'],
      [
        '+33612345678',
        { app: appHash, server: srv.admin, vars: ['patient'] },
        'callscript dial: --vars takes name=value pairs, not "patient"',
      ],
      [
        '+33612345678',
        { app: appHash, server: srv.admin, vars: [`a=${'x'.repeat(2000)}`] },
        'callscript dial: --vars.a is 2000 characters long, at most 1024',
      ],
      [
        '+33612345678',
        { app: appHash, server: srv.admin, vars: ['a-b=1'] },
        'callscript dial: --vars: "a-b" is not a variable name',
      ],
      [
        '+33612345678',
        { app: appHash, server: srv.admin, cdrField: 'not ok!' },
        'callscript dial: --cdr-field "not ok!": ',
      ],
      [
        '+33612345678',
        { app: appHash, server: srv.admin, timeout: 'never' },
        'callscript dial: --timeout must be a duration',
      ],
      [
        '+33612345678',
        { app: appHash, server: 'ftp://x' },
        'callscript dial: --server must be an http:// or https:// URL',
      ],
    ];
    for (const [number, flags, msg] of cases) {
      const r = await run(number, flags);
      expect(r.code, msg).toBe(2);
      expect(r.err.startsWith(msg), r.err).toBe(true);
      expect(r.out).toBe('');
    }
  });
});

describe('callscript dial without --server: calls.realtime straight to the service', () => {
  it('prints the call id; --vars are not sent, with a warning', async () => {
    const r = await run('+33612345678', {
      app: appHash,
      api: emu.base,
      account: 'emulator:emulator',
      vars: ['patient=Nobody'],
    });
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      'callscript dial: warning: --vars are not sent without --server: the service carries no variables to ' +
        'the flow (give --server http://LOGIN:PASSWORD@host:port of your callscript server, or ' +
        'CALLSCRIPT_SERVER)\n',
    );
    expect(r.out).toMatch(
      new RegExp(
        `^placed call ([A-Z0-9]{8}) to \\+33612345678 \\(app ${appHash}\\) ` +
          `through ${emu.base.replace(/\./g, '\\.')}/json-rpc/v1\\.1/: the service runs it on the ` +
          `application's URL \\(its requests carry request_hash \\1\\); without --server it is not followed\\n$`,
      ),
    );
    const j = await run(
      '+33612345678',
      { app: appHash, json: true },
      { CALLSCRIPT_API: emu.base, CALLSCRIPT_ACCOUNT: 'emulator:emulator' },
    );
    expect(JSON.parse(j.out)).toEqual({
      id: expect.stringMatching(/^[A-Z0-9]{8}$/),
      app: appHash,
      number: '+33612345678',
    });
  });

  it("the service's refusals: an unknown app exit 1, a wrong account exit 2, no account exit 2", async () => {
    const unknown = await run('+33612345678', { app: 'ZZZZZZZZ', api: emu.base, account: 'emulator:emulator' });
    expect(unknown).toEqual({
      code: 1,
      out: '',
      err: 'callscript dial: calls.realtime: no application with hash ZZZZZZZZ (code 20)\n',
    });
    const wrong = await run('+33612345678', { app: appHash, api: emu.base, account: 'emulator:nope' });
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/^callscript dial: the service refused the account \(code 22, authentication failed\)/);
    const none = await run('+33612345678', { app: appHash, api: emu.base });
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^callscript dial: no service account/);
  });
});

/** Runs `callscript ...args` as a process; its exit code and output. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`callscript ${args[0]} did not end:\n${out}\n${err}`));
    }, 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('real processes: callscript serve and callscript dial', () => {
  it('serve places the call with the account of its environment; dial follows it to its end', async () => {
    const served = await spawnServe(['--flows', reminderFlows()], {
      CALLSCRIPT_API: emu.base,
      CALLSCRIPT_ACCOUNT: 'emulator:emulator',
      ADMIN_LOGIN: ADMIN.login,
      ADMIN_PASSWORD: ADMIN.password,
      CALLSCRIPT_CONFIG: '',
      LOG_LEVEL: 'warn',
    });
    try {
      // the banner's lines may come after the first one
      await vi.waitFor(
        () =>
          expect(served.output()).toContain(
            `outbound calls (POST /admin/calls) placed through ${emu.base}/json-rpc/v1.1/ as emulator`,
          ),
        { timeout: 10_000 },
      );
      const client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
      const app = await client.apps.create('reminder (process)', { url: `${served.base}/rt/reminder` });
      const r = await cli(
        ['dial', '+33612345678', '--app', app.hash, '--vars', 'patient=Mx Process', '--json', '--poll', '200ms'],
        {
          CALLSCRIPT_SERVER: served.base.replace(
            'http://',
            `http://${ADMIN.login}:${encodeURIComponent(ADMIN.password)}@`,
          ),
        },
      );
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const res = JSON.parse(r.out) as { callid: string; outcome: string };
      expect(res.outcome).toBe('completed');
      const call = await admin(served.base, 'GET', `/admin/calls/${res.callid}`);
      expect(call.body.vars).toMatchObject({ patient: 'Mx Process' });
      // a usage mistake exits 2
      const bad = await cli(['dial', '+33612345678'], {});
      expect(bad.code).toBe(2);
    } finally {
      await served.stop();
    }
  }, 120_000);
});
