/** `callscript call` and `callscript emulator`: output, exit codes, and the two spawned together. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../src/cli/call.js';
import { emulator } from '../../src/cli/emulator.js';
import { cmd, fakeServer, LOGIN, PASSWORD, startEmulator, type Running } from './helpers.js';
import { ROOT } from './serve.js';
import { CLI } from '../helpers/cli.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

function runChild(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [...CLI, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

let e: Running;
let server: Awaited<ReturnType<typeof fakeServer>>;
let dir: string;
beforeAll(async () => {
  e = await startEmulator();
  server = await fakeServer((r, n) => {
    if (r.json?.call_status !== 'UP') return { body: cmd('hangup', 99) };
    if (n % 3 === 1)
      return { body: cmd('read', 1, { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.', max_digits: 1 }) };
    return { body: cmd('hangup', 2) };
  });
  dir = mkdtempSync(join(tmpdir(), 'cli-'));
});
afterAll(async () => {
  await server.close();
  await e.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(flags: Parameters<typeof call>[0]) {
  const out = new Capture();
  const err = new Capture();
  const code = await call({ emulator: e.base, login: LOGIN, password: PASSWORD, ...flags }, {}, out, err);
  return { code, out: out.text, err: err.text };
}

describe('callscript call', () => {
  it('prints the transcript: each command, its params, the result, the caller, timing; exit 0', async () => {
    const file = join(dir, 'sales.yaml');
    writeFileSync(file, 'name: presses 1\nactions:\n  - read: 1\n');
    const r = await run({ url: server.url, caller: file });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^call [A-Z0-9]{8} {2}inbound {2}\+447700900123 -> \+442079460000 {2}caller: presses 1$/);
    expect(r.out).toContain('  1  0:00.0  read #1  (reply ');
    expect(r.out).toContain('       media_id: TTS|TTS_EN-GB_SERENA|Press 1 for sales.  max_digits: 1');
    expect(r.out).toContain('       -> 1   pressed 1');
    expect(r.out).toMatch(/ {2}2 {2}0:0\d\.\d {2}hangup #2/);
    expect(r.out).toMatch(/HANGUP {2}\(command hangup, command_id 2\) -> HTTP 200/);
    expect(r.out).toContain('ended by flow: the server answered hangup');
    expect(r.out).toMatch(/3 requests · 2 commands · 0 violations · 0 warnings\n$/);
  });

  it('--json prints the transcript with its violations array; exit 1 when there are violations', async () => {
    const bad = await fakeServer(() => ({ body: cmd('read', 1, { media_id: '1', max_digits: 25 }) }));
    try {
      const r = await run({ url: bad.url, json: true });
      expect(r.code).toBe(1);
      const t = JSON.parse(r.out);
      expect(t.violations).toEqual([
        {
          request: 1,
          code: 'OUT_OF_BOUNDS',
          field: 'params.max_digits',
          message: 'read.max_digits is 25; it must be from 1 to 20',
        },
      ]);
      expect(t.caller).toBe('default caller');
      const text = await run({ url: bad.url });
      expect(text.code).toBe(1);
      expect(text.out).toContain(
        '  violation  request 1  OUT_OF_BOUNDS  params.max_digits: read.max_digits is 25; it must be from 1 to 20',
      );
      expect(text.out).toContain('[refused]');
    } finally {
      await bad.close();
    }
  });

  it('--app, --did and --outbound', async () => {
    const app = (await e.rpc('apps.create', ['REALTIME10', 'cli', { url: server.url }])).result;
    expect((await run({ app: app.hash })).code).toBe(0);
    await e.req('/emulator/dids/+442079460777', { method: 'PUT', body: { app: app.hash } });
    const did = await run({ did: '+442079460777', json: true });
    expect(JSON.parse(did.out)).toMatchObject({ to: '+442079460777', app: app.hash });
    const out = await run({ app: app.hash, outbound: '+447700900888', json: true });
    expect(JSON.parse(out.out)).toMatchObject({ direction: 'outbound', to: '+447700900888' });
  });

  it(
    'exit 2 with a clear message: no target, two targets, a ' + 'bad caller script, an unknown app, no emulator',
    async () => {
      expect(await run({})).toMatchObject({
        code: 2,
        err:
          'callscript call: give one of --url <real-time URL>, --app <app hash> ' +
          'or --did <number routed to an app>\n',
      });
      expect((await run({ url: server.url, app: 'ABCD1234' })).code).toBe(2);
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'actions:\n  - raed: 1\n');
      const r = await run({ url: server.url, caller: bad });
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `callscript call: BAD_CALLER\n${bad}:2:5 actions[0].raed: raed is not an action (did you mean read?); ` +
          `an action is a command (read, play, dialout...), error, hangup or hangup_after\n  2 |   - raed: 1\n   ` +
          ` |     ^\n`,
      );
      expect((await run({ url: server.url, caller: join(dir, 'missing.yaml') })).err).toMatch(
        /cannot read the caller script .*missing.yaml/,
      );
      expect((await run({ app: 'ZZZZ0000' })).err).toBe(
        'callscript call: NOT_FOUND: no application "ZZZZ0000" (create one with apps.create)\n',
      );
      expect((await run({ url: server.url, password: 'wrong' })).err).toMatch(/AUTH_REQUIRED/);
      const closed = await fakeServer(() => ({ body: '' }));
      const port = new URL(closed.url).port;
      await closed.close();
      const gone = await run({ url: server.url, emulator: `http://127.0.0.1:${port}` });
      expect(gone).toEqual({
        code: 2,
        out: '',
        err:
          `callscript call: cannot reach the emulator at http://127.0.0.1:${port} (ECONNREFUSED); start it with: ` +
          `callscript emulator\n`,
      });
    },
  );
});

describe('callscript emulator', () => {
  it('refuses a bad port, a bad reply timeout and an unreadable data file (exit 2)', async () => {
    const err = new Capture();
    expect(await emulator({ port: 'x' }, {}, new Capture(), err)).toBe(2);
    expect(await emulator({ replyTimeout: '10' }, {}, new Capture(), err)).toBe(2);
    expect(await emulator({ data: join(dir, 'never.json'), dataCompactBytes: '100' }, {}, new Capture(), err)).toBe(2);
    expect(
      await emulator({ data: join(dir, 'never.json') }, { EMULATOR_DATA_COMPACT_BYTES: '1e3x' }, new Capture(), err),
    ).toBe(2);
    expect(await emulator({ maxLiveCalls: '0' }, {}, new Capture(), err)).toBe(2);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, 'nope');
    expect(await emulator({ port: '0', data: bad }, {}, new Capture(), err)).toBe(2);
    expect(err.text.split('\n').filter(Boolean)).toEqual([
      'callscript emulator: --port must be 0 to 65535, got x',
      'callscript emulator: --reply-timeout must be 50 to 60000 ms, got 10',
      'callscript emulator: --data-compact-bytes must be a whole number of bytes from 4096 to 2147483648, got 100',
      'callscript emulator: --data-compact-bytes must be a whole number of bytes from 4096 to 2147483648, got 1e3x',
      'callscript emulator: --max-live-calls must be 1 to 10000, got 0',
      expect.stringMatching(/^callscript emulator: .*bad.json: not valid JSON/),
    ]);
  });

  it('spawned: prints its URLs, runs a call from `callscript call`, keeps its data, stops on SIGTERM', async () => {
    const data = join(dir, 'data.json');
    const child = spawn(
      process.execPath,
      [...CLI, 'emulator', '--port', '0', '--login', 'me', '--password', 'pw', '--data', data],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(out)), 15000);
        child.stdout.on('data', () => {
          const m = /callscript emulator on (http:\/\/\S+)/.exec(out);
          if (m && out.includes('run a call:')) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      expect(out).toContain(`  SMS REST v1.1  ${base}/rest/v1.1/sms`);
      expect(out).toContain(`  JSON-RPC       ${base}/json-rpc/v1.1/`);
      expect(out).toContain(`  data           ${data} (0 apps, 0 SMS, 0 calls)`);
      // Not spawnSync: the fake customer server lives in this process and must keep answering.
      const r = await runChild([
        'call',
        '--url',
        server.url,
        '--emulator',
        base,
        '--login',
        'me',
        '--password',
        'pw',
        '--json',
      ]);
      expect(r.status, r.stderr).toBe(0);
      const t = JSON.parse(r.stdout);
      expect(t.commands.map((c: { command: string }) => c.command)).toEqual(['read', 'hangup']);
      child.kill('SIGTERM');
      const code = await new Promise((resolve) => child.once('exit', resolve));
      expect(code).toBe(0);
      expect(JSON.parse(readFileSync(data, 'utf8')).calls.map((c: { id: string }) => c.id)).toEqual([t.id]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
