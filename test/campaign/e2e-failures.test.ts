/**
 * `callscript campaign` against a server that is down, hangs, or is given a wrong --app, over
 * real HTTP (callscript's server, the emulator): a problem of every row stops the campaign
 * without spending any row's attempt, and the same command (or the corrected one) then calls
 * every row as its first attempt.
 */
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminDialer, campaign } from '../../src/cli/campaign.js';
import { adminServer, type AdminServer } from '../../src/cli/outbound.js';
import { FollowInterrupted } from '../../src/campaign/types.js';
import {
  capture,
  freePort,
  placedNumbers,
  reminderTestbed,
  silentServer,
  type Emu,
  type Served,
} from '../service/helpers.js';

let emu: Emu;
let srv: Served;
let app: string;
let dir: string;

beforeAll(async () => {
  ({ emu, srv, app } = await reminderTestbed());
  dir = await mkdtemp(join(tmpdir(), 'campaign-e2e-fail-'));
});
afterAll(async () => {
  await srv?.close();
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

const placedHere = () => placedNumbers(srv);

const NUMBERS = [
  '+33611111501',
  '+33611111502',
  '+33611111503',
  '+33611111504',
  '+33611111505',
  '+33611111506',
  '+33611111507',
  '+33611111508',
];
const FLAGS = { rate: '50', concurrency: '5', poll: '100ms', timeout: '20s' };

async function csvFile(name: string): Promise<string> {
  const csv = join(dir, name);
  await writeFile(csv, `number\n${NUMBERS.join('\n')}\n`);
  return csv;
}

async function results(csv: string): Promise<string[]> {
  return (await readFile(csv.replace(/\.csv$/, '.results.csv'), 'utf8')).trim().split('\n').slice(1);
}

const state = async (csv: string) => JSON.parse(await readFile(`${csv}.state.json`, 'utf8'));

describe('a problem of every row: stop, exit 1, no attempt spent', () => {
  it(
    'nothing listening at --server: stops at the first call, saying so; three runs later (--retries 0) every ' +
      'row is still to call',
    async () => {
      const csv = await csvFile('down.csv');
      const down = `http://boss:change-me@127.0.0.1:${await freePort()}`;
      for (let i = 0; i < 3; i++) {
        const err = capture();
        expect(await campaign(csv, { app, server: down, ...FLAGS, retries: '0' }, { err: err.out, env: {} })).toBe(1);
        expect(err.text()).toMatch(
          /\ncampaign stopped: cannot reach callscript at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): is callscript serve running there\? \(--server, CALLSCRIPT_SERVER\); no call was placed; the state is saved in .*down\.csv\.state\.json: run the same command again to go on \(no number is called twice\)\n$/,
        );
        const s = await state(csv);
        expect(s.attemptsSpent).toBe(0);
        expect(
          s.rows.every((r: { phase: string; attempts: number }) => r.phase === 'waiting' && r.attempts === 0),
        ).toBe(true);
      }
      expect(await results(csv)).toEqual([]);

      const before = placedHere().length;
      const err = capture();
      expect(await campaign(csv, { app, server: srv.admin, ...FLAGS, retries: '0' }, { err: err.out, env: {} })).toBe(
        0,
      );
      expect(err.text()).toContain('campaign finished: 8 rows: 8 completed;');
      // number, outcome, call_status, last_step, attempts
      expect(
        (await results(csv)).map((line) =>
          line
            .split(',')
            .filter((_, i) => [0, 1, 2, 3, 5].includes(i))
            .join(','),
        ),
      ).toEqual(NUMBERS.map((n) => `${n},completed,HANGUP,end,1`));
      expect(placedHere().slice(before).sort()).toEqual(NUMBERS);
    },
    60_000,
  );

  it(
    'a wrong --app (the service: code 20, no such application): stops at once, nothing spent; the corrected ' +
      '--app is taken',
    async () => {
      const csv = await csvFile('wrong-app.csv');
      const err = capture();
      expect(await campaign(csv, { app: 'ZZZZZZZZ', server: srv.admin, ...FLAGS }, { err: err.out, env: {} })).toBe(1);
      expect(err.text()).toContain(
        '\ncampaign stopped: SERVICE_ERROR: the service refused the call: calls.realtime: no application with ' +
          'hash ZZZZZZZZ (code 20); the state is saved in',
      );
      expect(await state(csv)).toMatchObject({ app: 'ZZZZZZZZ', attemptsSpent: 0 });

      const before = placedHere().length;
      const again = capture();
      expect(await campaign(csv, { app, server: srv.admin, ...FLAGS }, { err: again.out, env: {} })).toBe(0);
      expect(again.text()).toContain(`\nthe app is now ${app}: no call was placed with ZZZZZZZZ\n`);
      expect(again.text()).toContain('campaign finished: 8 rows: 8 completed;');
      expect((await results(csv)).map((l) => l.split(',')[5])).toEqual(NUMBERS.map(() => '1'));
      expect(placedHere().slice(before).sort()).toEqual(NUMBERS);
      expect(await state(csv)).toMatchObject({ app, finished: true, attemptsSpent: 8 });

      // once a call was placed with it, the app is the campaign's
      await rm(`${csv}.state.json`);
      await rm(csv.replace(/\.csv$/, '.results.csv'));
      const signals = new EventEmitter();
      const first = capture();
      const p = campaign(
        csv,
        { app, server: srv.admin, ...FLAGS, rate: '1' },
        { err: first.out, env: {}, signals, stopWaitMs: 5000 },
      );
      for (const end = Date.now() + 10_000; !first.text().includes('[1/8]') && Date.now() < end;)
        await new Promise((r) => setTimeout(r, 20));
      signals.emit('SIGINT');
      expect(await p).toBe(130);
      const other = capture();
      expect(await campaign(csv, { app: 'ZZZZZZZZ', server: srv.admin, ...FLAGS }, { err: other.out, env: {} })).toBe(
        2,
      );
      expect(other.text()).toContain(`is the state of another campaign: it calls with the app ${app}, not ZZZZZZZZ`);
    },
    60_000,
  );

  it(
    'a server that takes the connection and never answers: the rows being placed are unknown (their requests ' +
      'were sent), no other row is tried; the next run against the real server calls the rest',
    async () => {
      const csv = await csvFile('silent.csv');
      const silent = await silentServer();
      try {
        const err = capture();
        expect(
          await campaign(csv, { app, server: silent.url, ...FLAGS }, { err: err.out, env: {}, placeTimeoutMs: 1000 }),
        ).toBe(1);
        expect(err.text()).toContain(
          `\ncampaign stopped: 5 calls in a row could not be placed; the last: cannot reach callscript ` +
            `at ${silent.url} (no answer within 1 s)`,
        );
      } finally {
        await silent.close();
      }
      const first = await results(csv);
      expect(first.map((l) => l.split(',').slice(0, 2).join(','))).toEqual(
        NUMBERS.slice(0, 5).map((n) => `${n},unknown`),
      );
      expect(await state(csv)).toMatchObject({ next: 5, rows: [] });

      const before = placedHere().length;
      const again = capture();
      expect(await campaign(csv, { app, server: srv.admin, ...FLAGS }, { err: again.out, env: {} })).toBe(0);
      expect(again.text()).toContain('campaign finished: 8 rows: 5 unknown, 3 completed;');
      expect(placedHere().slice(before).sort()).toEqual(NUMBERS.slice(5));
    },
    60_000,
  );
});

describe('following a call', () => {
  it(
    'the server not reached: FollowInterrupted (followed again by the next run); a call the server does not ' +
      'know (404): lost',
    async () => {
      const down = adminServer(`http://boss:change-me@127.0.0.1:${await freePort()}`, {}) as AdminServer;
      const e = await adminDialer(down, app, 5000, 100)
        .follow('abc', new AbortController().signal)
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(FollowInterrupted);
      expect((e as Error).message).toMatch(
        /^could not follow call abc: cannot reach callscript at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
      );
      const up = adminServer(srv.admin, {}) as AdminServer;
      const gone = await adminDialer(up, app, 5000, 100)
        .follow('abc', new AbortController().signal)
        .catch((x: unknown) => x);
      expect(gone).not.toBeInstanceOf(FollowInterrupted);
      expect((gone as { code?: string }).code).toBe('OUTBOUND_NOT_FOUND');
    },
  );
});
