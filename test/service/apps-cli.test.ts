/**
 * `callscript apps list | create | update | show` against the emulator over HTTP: exact
 * tables and --json, the account and address from flags, the environment and callscript.yaml,
 * and the failures people meet (a wrong account, an unknown app, no account, a service that
 * never answers, bad flags), with their exit codes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apps, type AppFlags } from '../../src/cli/apps.js';
import { ServiceClient } from '../../src/service/jsonrpc.js';
import { capture, silentServer, startEmulator, type Emu } from './helpers.js';

const NOW = Date.parse('2026-11-25T10:00:00Z');
let emu: Emu;
/** A directory with no callscript.yaml: the cwd of the commands. */
const empty = mkdtempSync(join(tmpdir(), 'callscript-apps-'));

beforeAll(async () => {
  emu = await startEmulator({ clock: { now: () => NOW } });
});
afterAll(async () => {
  await emu.close();
});

async function run(
  action: 'list' | 'create' | 'update' | 'show',
  hash: string | undefined,
  flags: AppFlags,
  env: NodeJS.ProcessEnv = {},
  cwd = empty,
) {
  const out = capture();
  const err = capture();
  const code = await apps(action, hash, flags, { env, cwd, out: out.out, err: err.out });
  return { code, out: out.text(), err: err.text() };
}

describe('callscript apps against the emulator', () => {
  const account = () => ({ api: emu.base, account: 'emulator:emulator' });
  let hash = '';

  it('list of no applications says how to create one', async () => {
    const r = await run('list', undefined, account());
    expect(r).toEqual({ code: 0, out: 'no applications (create one: callscript apps create --url URL)\n', err: '' });
  });

  it('create prints the application, its password masked', async () => {
    const r = await run('create', undefined, {
      ...account(),
      url: 'http://127.0.0.1:3000/rt/reminder',
      login: 'callscript',
      password: 'change:me',
      name: 'reminder',
    });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    hash = /^created application ([A-Z0-9]{8})\n/.exec(r.out)![1]!;
    expect(r.out).toBe(
      [
        `created application ${hash}`,
        `hash     ${hash}`,
        'name     reminder',
        'type     REALTIME10',
        'url      http://127.0.0.1:3000/rt/reminder',
        'login    callscript',
        'password ****',
        'format   JSON',
        'created  2026-11-25 10:00:00',
        'updated  2026-11-25 10:00:00',
        '',
      ].join('\n'),
    );
  });

  it(
    'create without credentials, and a name made from the ' + 'URL; --json is the app object as the API returns it',
    async () => {
      const r = await run('create', undefined, { ...account(), url: 'http://10.0.0.5:3000/rt/front-desk', json: true });
      expect(r.code).toBe(0);
      const app = JSON.parse(r.out);
      expect(app).toEqual({
        hash: expect.stringMatching(/^[A-Z0-9]{8}$/),
        name: 'callscript 10.0.0.5:3000/rt/front-desk',
        package: 'REALTIME10',
        p: { url: 'http://10.0.0.5:3000/rt/front-desk', login: '', password: '', data_format: 'JSON' },
        date_creation: '2026-11-25 10:00:00',
        date_update: '2026-11-25 10:00:00',
      });
    },
  );

  it('list prints a table; --json the objects', async () => {
    const r = await run('list', undefined, account());
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'HASH      NAME                                    URL                                 LOGIN       UPDATED (UTC)',
    );
    expect(lines).toContain(
      `${hash}  reminder                                http://127.0.0.1:3000/rt/reminder   callscript  ` +
        `2026-11-25 10:00:00`,
    );
    expect(
      lines.some((l) =>
        / {2}callscript 10\.0\.0\.5:3000\/rt\/front-desk {2}http:\/\/10\.0\.0\.5:3000\/rt\/front-desk {2}\(no auth\) {3}2026-11-25 10:00:00$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(lines).toHaveLength(3);
    const j = await run('list', undefined, { ...account(), json: true });
    const list = JSON.parse(j.out) as { hash: string; p: { password: string } }[];
    expect(list.map((a) => a.hash)).toContain(hash);
    expect(list.find((a) => a.hash === hash)!.p.password).toBe('change:me');
  });

  it('show prints one application; update changes what is given and keeps the rest', async () => {
    const s = await run('show', hash, account());
    expect(s.code).toBe(0);
    expect(s.out.split('\n').slice(0, 5)).toEqual([
      `hash     ${hash}`,
      'name     reminder',
      'type     REALTIME10',
      'url      http://127.0.0.1:3000/rt/reminder',
      'login    callscript',
    ]);
    const u = await run('update', hash, { ...account(), url: 'https://ivr.example.com/rt/reminder' });
    expect(u.code).toBe(0);
    expect(u.out.split('\n').slice(0, 7)).toEqual([
      `updated application ${hash}`,
      `hash     ${hash}`,
      'name     reminder',
      'type     REALTIME10',
      'url      https://ivr.example.com/rt/reminder',
      'login    callscript',
      'password ****',
    ]);
    const j = JSON.parse((await run('show', hash, { ...account(), json: true })).out);
    expect(j.p).toEqual({
      url: 'https://ivr.example.com/rt/reminder',
      login: 'callscript',
      password: 'change:me',
      data_format: 'JSON',
    });
    const n = JSON.parse(
      (await run('update', hash, { ...account(), name: 'reminder v2', login: 'cs2', password: 'p2', json: true })).out,
    );
    expect(n).toMatchObject({
      name: 'reminder v2',
      p: { url: 'https://ivr.example.com/rt/reminder', login: 'cs2', password: 'p2' },
    });
  });

  it("an unknown application: the service's message, exit 1", async () => {
    const r = await run('show', 'ZZZZZZZZ', account());
    expect(r).toEqual({
      code: 1,
      out: '',
      err: 'callscript apps show: apps.get: no application with hash ZZZZZZZZ (code 20)\n',
    });
    const u = await run('update', 'ZZZZZZZZ', { ...account(), name: 'x' });
    expect(u.code).toBe(1);
  });

  it('a wrong account: code 22 said plainly, with where the account came from; exit 2', async () => {
    const r = await run('list', undefined, { api: emu.base, account: 'emulator:wrong' });
    expect(r).toEqual({
      code: 2,
      out: '',
      err:
        `callscript apps list: the service refused the account (code 22, authentication failed): check the ` +
        `login and password (--account) for ${emu.base}/json-rpc/v1.1/\n`,
    });
    const e = await run('list', undefined, {}, { CALLSCRIPT_API: emu.base, CALLSCRIPT_ACCOUNT: 'nobody:x' });
    expect(e.err).toMatch(/\(CALLSCRIPT_ACCOUNT\) for /);
  });

  it('an account with colons in its password, from the environment', async () => {
    const other = await startEmulator({ login: 'acme', password: 'p:a:ss' });
    try {
      const r = await run('list', undefined, {}, { CALLSCRIPT_API: other.base, CALLSCRIPT_ACCOUNT: 'acme:p:a:ss' });
      expect(r).toEqual({ code: 0, out: 'no applications (create one: callscript apps create --url URL)\n', err: '' });
    } finally {
      await other.close();
    }
  });

  it(
    'api and account from callscript.yaml (found in the cwd, or given with --config); a file with errors is ' +
      'refused',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'callscript-apps-cfg-'));
      writeFileSync(
        join(dir, 'callscript.yaml'),
        `api: ${emu.base}\naccount:\n  login: emulator\n  password: emulator\n`,
      );
      const r = await run('show', hash, { json: true }, {}, dir);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out).hash).toBe(hash);
      writeFileSync(join(dir, 'other.yaml'), `api: ${emu.base}\naccount:\n  login: emulator\n`);
      const bad = await run('list', undefined, { config: 'other.yaml' }, {}, dir);
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(
        /other\.yaml:2:1 error CONFIG_AUTH account needs both login and password \(password is missing\)/,
      );
      expect(bad.err).toMatch(/callscript apps list: other\.yaml has errors \(above\)/);
    },
  );

  it('no account anywhere: says where to give one, exit 2, nothing sent', async () => {
    const r = await run('list', undefined, { api: emu.base });
    expect(r).toEqual({
      code: 2,
      out: '',
      err:
        'callscript apps list: no service account: give --account LOGIN:PASSWORD, or set CALLSCRIPT_ACCOUNT, ' +
        "or account: { login, password } in callscript.yaml (the emulator's is emulator:emulator)\n",
    });
  });

  it('a service that never answers: a timeout after --timeout, exit 2', async () => {
    const silent = await silentServer();
    try {
      const t0 = Date.now();
      const r = await run('list', undefined, { api: silent.url, account: 'a:b', timeout: '300ms' });
      expect(r).toEqual({
        code: 2,
        out: '',
        err:
          `callscript apps list: apps.get_list: no answer from ${silent.url}/json-rpc/v1.1/ within 300 ms (the ` +
          `API address is from --api: --api, CALLSCRIPT_API, api: in callscript.yaml)\n`,
      });
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      await silent.close();
    }
  });

  it(
    'names and URLs the service holds are shown with their control characters escaped (another tool may have ' +
      'set them)',
    async () => {
      const client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
      const evil = await client.apps.create('evil\u001b[2J\u001b[31mname', { url: 'http://h/rt?\u001b]0;x\u0007' });
      const show = await run('show', evil.hash, account());
      expect(show.out.split('\n').slice(1, 4)).toEqual([
        'name     evil\\x1b[2J\\x1b[31mname',
        'type     REALTIME10',
        'url      http://h/rt?\\x1b]0;x\\x07',
      ]);
      const list = await run('list', undefined, account());
      expect(list.out).toContain('evil\\x1b[2J\\x1b[31mname');
      expect(list.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      // --json keeps the objects as the API returns them (JSON escapes them)
      const json = await run('show', evil.hash, { ...account(), json: true });
      expect(JSON.parse(json.out).name).toBe('evil\u001b[2J\u001b[31mname');
    },
  );

  it('bad flags are refused before anything is sent (exit 2)', async () => {
    const cases: [Parameters<typeof run>, string][] = [
      [['create', undefined, { ...account() }], '--url is required'],
      [
        ['create', undefined, { ...account(), url: 'file:///etc/passwd' }],
        '--url must be the http:// or https:// address',
      ],
      [['create', undefined, { ...account(), url: 'http://h/rt', login: 'a' }], '--login and --password go together'],
      [
        ['create', undefined, { ...account(), url: 'http://h/rt', login: 'a:b', password: 'c' }],
        '--login: an HTTP Basic login has no ":"',
      ],
      [['show', '../../etc', account()], "give the application's hash"],
      [['update', hash, account()], 'nothing to change'],
      [['list', undefined, { api: 'ftp://x', account: 'a:b' }], '--api: "ftp://x" is not an http:// or https:// URL'],
      [['list', undefined, { api: emu.base, account: 'a:b', timeout: 'forever' }], '--timeout must be a duration'],
      [
        ['create', undefined, { ...account(), url: 'http://h/rt', name: 'evil\u001b[2J\u001b[31mname' }],
        '--name may not hold control characters',
      ],
    ];
    for (const [args, msg] of cases) {
      const r = await run(...args);
      expect(r.code, msg).toBe(2);
      expect(r.err).toContain(msg);
      expect(r.out).toBe('');
    }
  });
});
