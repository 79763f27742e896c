/**
 * `callscript campaign` end to end over real HTTP: callscript's server (the reminder flow, an
 * admin API, the emulator's account) places the calls through the emulator's calls.realtime,
 * the emulator calls the server back and plays each number's caller script (one busy, one
 * that answers and confirms, the default for the others); the campaign follows each call in
 * the server's call history. Then real processes: Ctrl-C (SIGINT) and kill -9 mid-way, the
 * same command run again, and no number called twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign } from '../../src/cli/campaign.js';
import {
  admin,
  capture,
  placedNumbers,
  registerCaller,
  reminderTestbed,
  ROOT,
  startServer,
  type Emu,
  type Served,
} from '../service/helpers.js';
import { CLI } from '../helpers/cli.js';

let emu: Emu;
let srv: Served;
let app: string;
let dir: string;

const BUSY = '+33699999999';
const CONFIRMS = '+33611111111';

beforeAll(async () => {
  ({ emu, srv, app } = await reminderTestbed());
  await registerCaller(emu.base, BUSY, { name: 'always busy', call: { answer: 'BUSY' } });
  await registerCaller(emu.base, CONFIRMS, { name: 'confirms', actions: [{ play_talk_detect: 'TALK' }, { read: 1 }] });
  dir = await mkdtemp(join(tmpdir(), 'campaign-e2e-'));
});
afterAll(async () => {
  await srv?.close();
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

const placedHere = () => placedNumbers(srv);

describe('a campaign through the server and the emulator', () => {
  it('calls each row with its vars, retries the busy number, writes the results file', async () => {
    const csv = join(dir, 'reminders.csv');
    await writeFile(
      csv,
      [
        'number,patient,appointment',
        '+33612345678,Ms Jones,2026-12-01T09:15:00',
        `${CONFIRMS},Mr Brown,`,
        '0612345678,Bad Number,',
        `${BUSY},Mr Busy,`,
        '',
      ].join('\n'),
    );
    const before = placedHere().length;
    const err = capture();
    const code = await campaign(
      csv,
      {
        app,
        server: srv.admin,
        rate: '20',
        concurrency: '2',
        retries: '2',
        retryDelay: '300ms',
        poll: '100ms',
        timeout: '20s',
      },
      { err: err.out, env: {} },
    );
    expect(err.text()).toContain('campaign finished: 4 rows: 2 completed, 1 abandoned, 1 invalid');
    expect(code).toBe(0);

    // the busy number three times (the first call and two retries), the others once
    const placed = placedHere().slice(before);
    expect([...placed].sort()).toEqual(['+33612345678', CONFIRMS, BUSY, BUSY, BUSY].sort());

    const results = (await readFile(join(dir, 'reminders.results.csv'), 'utf8')).split('\n');
    expect(results[0]).toBe('number,outcome,call_status,last_step,duration_ms,attempts,callid,line,detail');
    expect(results[1]).toMatch(/^\+33612345678,completed,HANGUP,end,\d+,1,\d+,2,$/);
    expect(results[2]).toMatch(/^\+33611111111,completed,HANGUP,end,\d+,1,\d+,3,$/);
    expect(results[3]).toBe(
      '0612345678,invalid,,,,0,,4,"number ""0612345678"" is not E.164: an E.164 number is ""+"" then 2 to 15 ' +
        'digits, the first not 0 (e.g. +33123456789)"',
    );
    expect(results[4]).toMatch(/^\+33699999999,abandoned,BUSY,,\d+,3,\d+,5,$/);
    expect(results.slice(5)).toEqual(['']);

    // the flow got the row's vars: the call history of the call that confirmed
    const callid = results[2]!.split(',')[6]!;
    const call = await admin(srv.base, 'GET', `/admin/calls/${callid}`);
    expect(call.body.vars).toMatchObject({ patient: 'Mr Brown', outcome: 'confirmed' });
    const jones = await admin(srv.base, 'GET', `/admin/calls/${results[1]!.split(',')[6]}`);
    expect(jones.body.vars).toMatchObject({ patient: 'Ms Jones', appointment: '2026-12-01T09:15:00' });

    const state = JSON.parse(await readFile(`${csv}.state.json`, 'utf8'));
    expect(state).toMatchObject({ finished: true, rows: [], next: 4 });
  });

  it(
    'refuses wrong admin credentials at the first call: stops, ' + 'exit 1, nothing placed, the state kept for later',
    async () => {
      const csv = join(dir, 'creds.csv');
      await writeFile(csv, 'number\n+33612345601\n+33612345602\n');
      const before = placedHere().length;
      const err = capture();
      const code = await campaign(
        csv,
        { app, server: srv.base.replace('http://', 'http://boss:wrong@'), rate: '20', poll: '100ms' },
        { err: err.out, env: {} },
      );
      expect(code).toBe(1);
      expect(err.text()).toContain('campaign stopped: the admin credentials were refused (ADMIN_AUTH_REQUIRED)');
      expect(placedHere().length).toBe(before);
    },
  );

  it(
    'a server without the service account: stops at the ' + 'first row, exit 1, the row left for the next run',
    async () => {
      const bare = await startServer();
      try {
        const csv = join(dir, 'unconfigured.csv');
        await writeFile(csv, 'number\n+33612345621\n+33612345622\n');
        const err = capture();
        const code = await campaign(
          csv,
          { app, server: bare.admin, rate: '20', poll: '100ms' },
          { err: err.out, env: {} },
        );
        expect(code).toBe(1);
        expect(err.text()).toContain(
          'campaign stopped: SERVICE_UNCONFIGURED: no service account is configured on this server',
        );
        const state = JSON.parse(await readFile(`${csv}.state.json`, 'utf8'));
        expect(state.rows).toEqual([expect.objectContaining({ index: 0, phase: 'waiting', attempts: 0 })]);
      } finally {
        await bare.close();
      }
    },
  );
});

/** callscript campaign as a process; resolves with its exit code (or signal) and stderr. */
function spawnCampaign(args: string[]): {
  child: ChildProcess;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: string | null }>;
} {
  const child = spawn(process.execPath, [...CLI, 'campaign', ...args], {
    cwd: ROOT,
    env: { ...process.env, CALLSCRIPT_SERVER: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  child.stderr!.on('data', (d) => (text += d));
  const done = new Promise<{ code: number | null; signal: string | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { child, stderr: () => text, done };
}

async function until(fn: () => boolean, what: string, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a reader that goes away (| head -3)', () => {
  it('silences the progress, not the campaign: every row called, exit 0, the lock dropped', async () => {
    const csv = join(dir, 'headed.csv');
    const numbers = ['+33612345631', '+33612345632', '+33612345633', '+33612345634', '+33612345635'];
    await writeFile(csv, `number\n${numbers.join('\n')}\n`);
    const run = spawnCampaign([
      csv,
      '--app',
      app,
      '--server',
      srv.admin,
      '--rate',
      '10',
      '--concurrency',
      '2',
      '--poll',
      '100ms',
    ]);
    // as `head -3`: three lines read, then the pipe closed (the campaign's next write: EPIPE)
    await until(() => run.stderr().split('\n').length > 3, 'three lines');
    run.child.stderr!.destroy();
    const r = await run.done;
    expect(r).toEqual({ code: 0, signal: null });
    const results = (await readFile(join(dir, 'headed.results.csv'), 'utf8')).trim().split('\n').slice(1);
    expect(results.map((l) => l.split(',').slice(0, 2).join(','))).toEqual(numbers.map((n) => `${n},completed`));
    await expect(readFile(`${csv}.state.json.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(JSON.parse(await readFile(`${csv}.state.json`, 'utf8'))).toMatchObject({ finished: true });
  }, 60_000);
});

describe('real processes: interrupted, then resumed; no number called twice', () => {
  const numbers = ['+33612345611', '+33612345612', '+33612345613', '+33612345614', '+33612345615'];

  for (const [how, signal, exit] of [
    ['Ctrl-C (SIGINT)', 'SIGINT', 130],
    ['kill -9', 'SIGKILL', null],
  ] as const) {
    it(`${how} after the second call, then the same command again`, async () => {
      const csv = join(dir, `${signal}.csv`);
      await writeFile(csv, `number,patient\n${numbers.map((n, i) => `${n},P${i}`).join('\n')}\n`);
      const args = [
        csv,
        '--app',
        app,
        '--server',
        srv.admin,
        '--rate',
        '2',
        '--concurrency',
        '1',
        '--poll',
        '100ms',
        '--retries',
        '0',
      ];
      const before = placedHere().length;
      const first = spawnCampaign(args);
      await until(() => first.stderr().includes('[2/5]'), 'two rows done');
      first.child.kill(signal);
      const r1 = await first.done;
      expect(r1.code).toBe(exit);
      if (signal === 'SIGINT')
        expect(first.stderr()).toContain('run the same command again to go on (no number is called twice)');
      const state = JSON.parse(await readFile(`${csv}.state.json`, 'utf8'));
      expect(state.finished).toBe(false);

      const second = spawnCampaign(args);
      const r2 = await second.done;
      // the second row may be saved as in progress still: it is followed again
      expect(second.stderr()).toMatch(/resuming the campaign of (SIGINT|SIGKILL)\.csv: [0-5] of 5 rows done/);
      expect(r2.code).toBe(0);
      const results = (await readFile(join(dir, `${signal}.results.csv`), 'utf8')).trim().split('\n').slice(1);
      const outcomes = results.map((l) => l.split(',').slice(0, 3).join(','));
      // killed while a call was being placed (its id not saved yet), that row is `unknown`:
      // perhaps called, never called again. Otherwise every call completed.
      const unknown = outcomes.filter((o) => o.endsWith(',unknown,'));
      expect(unknown.length).toBeLessThanOrEqual(signal === 'SIGKILL' ? 1 : 0);
      expect(outcomes.filter((o) => !o.endsWith(',unknown,'))).toEqual(
        numbers.filter((n) => !unknown.includes(`${n},unknown,`)).map((n) => `${n},completed,HANGUP`),
      );
      // no number called twice over the two runs; each called once but an unknown one (at most once)
      const placed = placedHere().slice(before);
      expect(new Set(placed).size).toBe(placed.length);
      expect(placed.filter((n) => !unknown.includes(`${n},unknown,`)).sort()).toEqual(
        numbers.filter((n) => !unknown.includes(`${n},unknown,`)),
      );
    }, 60_000);
  }
});
