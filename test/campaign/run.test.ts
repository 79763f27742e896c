/**
 * A campaign from its CSV file to its exit code (src/campaign/run.ts), with a fake dialer
 * and a fake clock: the results file's exact content, the progress lines, stop (SIGINT) and
 * resume, the refusals.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaignSettings, type CampaignFlags } from '../../src/campaign/options.js';
import { runCampaignFile, type RunContext } from '../../src/campaign/run.js';
import { Journal } from '../../src/campaign/journal.js';
import { FakeClock, FakeDialer, type Behaviour } from './fakes.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'campaign-run-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CSV = [
  'number,name,slot',
  '+33612345678,Ann,Monday 10:00',
  '+442079460123,Bob,"Tuesday, 11:00"',
  "=cmd|' /C calc'!A0,Eve,x",
  '+33612345679,Dan,',
  '@SUM(1+1),Fay,',
  '+14155550123,"Gus ""the busy""",Friday',
  '',
].join('\n');

const BUSY = '+14155550123';
const behaviour: Behaviour = (n, a) => {
  if (n === BUSY && a < 3)
    return { afterMs: 25_000, view: { outcome: 'abandoned', callStatus: 'BUSY', lastStep: null, durationMs: 0 } };
  if (n === '+33612345679') return { afterMs: 30_000, view: { status: 'placed', callid: null } };
  return { afterMs: 42_000, view: { lastStep: 'confirm' } };
};

function sink() {
  const s = new PassThrough();
  let text = '';
  s.on('data', (c) => (text += c));
  return { s, text: () => text };
}

async function campaign(
  flags: CampaignFlags = {},
  ctx: Partial<RunContext> & { clock?: FakeClock; dialer?: FakeDialer } = {},
) {
  const file = join(dir, 'numbers.csv');
  const settings = campaignSettings(file, {
    app: 'A1B2C3D4',
    retries: '2',
    retryDelay: '5m',
    rate: '1',
    concurrency: '2',
    ...flags,
  });
  if (typeof settings === 'string') throw new Error(settings);
  const clock = ctx.clock ?? new FakeClock();
  const dialer = ctx.dialer ?? new FakeDialer(clock, behaviour);
  const err = sink();
  const code = await clock.drive(runCampaignFile(settings, { ...ctx, dialer, clock, err: err.s }));
  return { code, dialer, clock, stderr: err.text(), settings };
}

const RESULTS = [
  'number,outcome,call_status,last_step,duration_ms,attempts,callid,line,detail',
  '+33612345678,completed,HANGUP,confirm,42000,1,1001,2,',
  '+442079460123,completed,HANGUP,confirm,42000,1,1002,3,',
  `'=cmd|' /C calc'!A0,invalid,,,,0,,4,"number ""=cmd|' /C calc'!A0"" is not E.164: an E.164 number is ""+"" ` +
    `then 2 to 15 digits, the first not 0 (e.g. +33123456789)"`,
  '+33612345679,not_connected,,,,3,,5,the service never connected the call',
  `'@SUM(1+1),invalid,,,,0,,6,"number ""@SUM(1+1)"" is not E.164: an E.164 number is ""+"" then 2 to 15 ` +
    `digits, the first not 0 (e.g. +33123456789)"`,
  '+14155550123,completed,HANGUP,confirm,42000,3,1007,7,',
  '',
].join('\n');

describe('a campaign run', () => {
  it(
    'writes the results file, exactly; invalid rows ' + 'included, formulas defused; the progress as plain lines',
    async () => {
      await writeFile(join(dir, 'numbers.csv'), CSV);
      const { code, stderr, dialer } = await campaign();
      expect(code).toBe(0);
      expect(await readFile(join(dir, 'numbers.results.csv'), 'utf8')).toBe(RESULTS);
      expect(dialer.placed.map((p) => [p.number, p.vars])).toEqual([
        ['+33612345678', { name: 'Ann', slot: 'Monday 10:00' }],
        ['+442079460123', { name: 'Bob', slot: 'Tuesday, 11:00' }],
        ['+33612345679', { name: 'Dan' }],
        ['+14155550123', { name: 'Gus "the busy"', slot: 'Friday' }],
        // the retries, each when its time came
        ['+14155550123', { name: 'Gus "the busy"', slot: 'Friday' }],
        ['+33612345679', { name: 'Dan' }],
        ['+14155550123', { name: 'Gus "the busy"', slot: 'Friday' }],
        ['+33612345679', { name: 'Dan' }],
      ]);
      const state = JSON.parse(await readFile(join(dir, 'numbers.csv.state.json'), 'utf8'));
      expect(state).toMatchObject({ finished: true, next: 6, rows: [], app: 'A1B2C3D4' });
      expect(stderr).toBe(
        [
          'campaign of numbers.csv: 6 rows (2 invalid), app A1B2C3D4, 1 calls/s, 2 at once, 2 retries after 5 min',
          `results: ${join(dir, 'numbers.results.csv')}`,
          `state: ${join(dir, 'numbers.csv.state.json')}`,
          // rows are read when a call can be placed: row 4 once Ann's call is over
          '[1/6] line 2 +33612345678: completed (HANGUP), last step confirm, 42.0 s, attempt 1, callid 1001',
          'line 4: invalid: number "=cmd|\' /C calc\'!A0" is not E.164: an E.164 number is "+" then 2 to 15 ' +
            'digits, the first not 0 (e.g. +33123456789)',
          '[3/6] line 3 +442079460123: completed (HANGUP), last step confirm, 42.0 s, attempt 1, callid 1002',
          'line 6: invalid: number "@SUM(1+1)" is not E.164: an E.164 number is "+" then 2 to 15 digits, the ' +
            'first not 0 (e.g. +33123456789)',
          'line 7 +14155550123: BUSY, tried again at 10:06:08 UTC (attempt 2)',
          'line 5 +33612345679: never connected, tried again at 10:06:12 UTC (attempt 2)',
          'line 7 +14155550123: BUSY, tried again at 10:11:33 UTC (attempt 3)',
          'line 5 +33612345679: never connected, tried again at 10:11:42 UTC (attempt 3)',
          '[5/6] line 5 +33612345679: not_connected, attempts 3, the service never connected the call',
          '[6/6] line 7 +14155550123: completed (HANGUP), last step confirm, 42.0 s, attempts 3, callid 1007',
          `campaign finished: 6 rows: 3 completed, 2 invalid, 1 not_connected; results ` +
            `in ${join(dir, 'numbers.results.csv')}`,
          '',
        ].join('\n'),
      );
    },
  );

  it('on a terminal: one progress line redrawn in place, invalid rows printed above it', async () => {
    await writeFile(join(dir, 'numbers.csv'), CSV);
    const { stderr } = await campaign({}, { tty: true, columns: 200 });
    expect(stderr).toContain('\r\x1b[2K[------------------------] 0/6  1 calling  0 to retry');
    expect(stderr).toContain('\r\x1b[2Kline 4: invalid: number');
    expect(stderr).toContain(
      '\r\x1b[2K[########################] 6/6  0 calling  0 to retry  3 completed, 2 invalid, 1 not_connected\n',
    );
    expect(stderr).not.toContain('[1/6]');
  });

  it(
    'SIGINT (stop): exit 130, the state saved; the same command goes on, calls no number twice, and the ' +
      'results are those of a run never stopped',
    async () => {
      await writeFile(join(dir, 'numbers.csv'), CSV);
      const stop = new AbortController();
      const clock = new FakeClock();
      const first = new FakeDialer(clock, behaviour);
      // stopped as the 4th call is being placed
      first.onPlace = (n) => n === 4 && stop.abort();
      const a = await campaign({}, { clock, dialer: first, stop: stop.signal, stopWaitMs: 1000 });
      expect(first.placed).toHaveLength(4);
      expect(a.code).toBe(130);
      expect(a.stderr.split('\n').at(-2)).toBe(
        `campaign stopped: 4 of 6 rows done (2 completed, 2 invalid); the state is saved ` +
          `in ${join(dir, 'numbers.csv.state.json')}: run the same command again to go on (no number is called ` +
          `twice)`,
      );
      const state = JSON.parse(await readFile(join(dir, 'numbers.csv.state.json'), 'utf8'));
      expect(state.finished).toBe(false);

      const second = new FakeDialer(clock, behaviour, first.placed);
      const b = await campaign({}, { clock, dialer: second });
      expect(b.code).toBe(0);
      expect(b.stderr).toMatch(/^resuming the campaign of numbers\.csv: 4 of 6 rows done/);
      // the summary is the whole campaign's (as the results file has it), not this run's 3 rows
      expect(b.stderr.split('\n').at(-2)).toBe(
        `campaign finished: 6 rows: 3 completed, 2 invalid, 1 not_connected; results ` +
          `in ${join(dir, 'numbers.results.csv')}`,
      );
      // each attempt of each number placed once over the two runs: the attempts of a run never stopped
      const attempts = [...first.placed, ...second.placed].map((p) => `${p.number}#${p.attempt}`);
      expect(new Set(attempts).size).toBe(attempts.length);
      expect(attempts.sort()).toEqual([
        '+14155550123#1',
        '+14155550123#2',
        '+14155550123#3',
        '+33612345678#1',
        '+33612345679#1',
        '+33612345679#2',
        '+33612345679#3',
        '+442079460123#1',
      ]);
      const results = await readFile(join(dir, 'numbers.results.csv'), 'utf8');
      // the callids differ (ids are numbered by each fake service), nothing else
      const strip = (t: string) => t.replace(/,10\d\d,/g, ',ID,');
      expect(strip(results)).toBe(strip(RESULTS));

      // a third time: finished already, nothing called
      const third = new FakeDialer(clock, behaviour);
      const c = await campaign({}, { clock, dialer: third });
      expect(c.code).toBe(0);
      expect(third.placed).toEqual([]);
      expect(c.stderr).toContain('finished already');
    },
  );

  it(
    'resumed without the --results it started with: goes on in ' + 'the results file the state names, and says which',
    async () => {
      await writeFile(join(dir, 'numbers.csv'), CSV);
      const stop = new AbortController();
      const clock = new FakeClock();
      const first = new FakeDialer(clock, behaviour);
      first.onPlace = (n) => n === 4 && stop.abort();
      expect(
        (
          await campaign(
            { results: join(dir, 'out.csv') },
            { clock, dialer: first, stop: stop.signal, stopWaitMs: 1000 },
          )
        ).code,
      ).toBe(130);
      const b = await campaign({}, { clock, dialer: new FakeDialer(clock, behaviour, first.placed) });
      expect(b.code).toBe(0);
      expect(b.stderr).toContain(`\nresults: ${join(dir, 'out.csv')}\n`);
      expect(b.stderr.split('\n').at(-2)).toBe(
        `campaign finished: 6 rows: 3 completed, 2 invalid, 1 not_connected; results in ${join(dir, 'out.csv')}`,
      );
      const strip = (t: string) => t.replace(/,10\d\d,/g, ',ID,');
      expect(strip(await readFile(join(dir, 'out.csv'), 'utf8'))).toBe(strip(RESULTS));
      expect(JSON.parse(await readFile(join(dir, 'numbers.csv.state.json'), 'utf8'))).toMatchObject({
        finished: true,
        results: join(dir, 'out.csv'),
      });
    },
  );

  it(
    'refuses to start, exit 2, with no call: a CSV that cannot be read, a changed CSV, results of another run, ' +
      'a campaign running already',
    async () => {
      await writeFile(join(dir, 'numbers.csv'), 'number,name\n+33612345678,"Ann\n');
      const a = await campaign();
      expect([a.code, a.stderr]).toEqual([
        2,
        'callscript campaign: numbers.csv:2: a quoted cell of this row is never closed (the file ends inside ' +
          'it); no call was placed\n',
      ]);
      expect(a.dialer.placed).toEqual([]);

      await writeFile(join(dir, 'numbers.csv'), CSV);
      const stop = new AbortController();
      const clock = new FakeClock();
      const first = new FakeDialer(clock, behaviour);
      first.onPlace = () => stop.abort(); // one call placed
      expect((await campaign({}, { clock, dialer: first, stop: stop.signal, stopWaitMs: 100_000 })).code).toBe(130);
      expect(first.placed).toHaveLength(1);
      await writeFile(join(dir, 'numbers.csv'), `${CSV}+33612345670,Zoe,\n`);
      const b = await campaign();
      expect(b.code).toBe(2);
      expect(b.stderr).toContain('numbers.csv changed since the campaign started');
      await writeFile(join(dir, 'numbers.csv'), CSV);
      const c = await campaign({ app: 'OTHER1' });
      expect(c.stderr).toContain('it calls with the app A1B2C3D4, not OTHER1');

      await rm(join(dir, 'numbers.csv.state.json'));
      const d = await campaign();
      expect(d.code).toBe(2);
      expect(d.stderr).toContain('numbers.results.csv exists already and no campaign state');

      await rm(join(dir, 'numbers.results.csv'));
      await writeFile(join(dir, 'numbers.csv.state.json.lock'), `${process.ppid}\n`);
      const e = await campaign();
      expect(e.code).toBe(2);
      expect(e.stderr).toContain(`the campaign is running already (process ${process.ppid} holds`);
      // a lock left by a process that died is taken over
      await writeFile(join(dir, 'numbers.csv.state.json.lock'), '999999999\n');
      expect((await campaign()).code).toBe(0);
    },
  );

  it(
    'refuses up front, exit 2, a CSV path that is not a regular file (a pipe, a directory): read twice and ' +
      'hashed, it must be a file; nothing written beside it',
    async () => {
      const fifo = join(dir, 'piped.csv');
      execFileSync('mkfifo', [fifo]);
      await mkdir(join(dir, 'folder.csv'));
      for (const [file, kind] of [
        [fifo, 'a pipe'],
        [join(dir, 'folder.csv'), 'a directory'],
      ] as const) {
        const settings = campaignSettings(file, { app: 'A1B2C3D4' });
        if (typeof settings === 'string') throw new Error(settings);
        const clock = new FakeClock();
        const dialer = new FakeDialer(clock, behaviour);
        const err = sink();
        const code = await clock.drive(runCampaignFile(settings, { dialer, clock, err: err.s }));
        expect([code, err.text()]).toEqual([
          2,
          `callscript campaign: ${file} is ${kind}, not a regular file: the campaign reads its CSV twice ` +
            `(checked whole first, then as it calls) and hashes it to resume; save the rows to a file first; no ` +
            `call was placed\n`,
        ]);
        expect(dialer.placed).toEqual([]);
      }
      expect((await readdir(dir)).sort()).toEqual(['folder.csv', 'piped.csv']);
    },
  );

  it('a state file that is not one (corrupt, hostile) is refused, not trusted', async () => {
    await writeFile(join(dir, 'numbers.csv'), CSV);
    for (const text of [
      '{',
      '{"format":"callscript-campaign/1"}',
      JSON.stringify({
        format: 'callscript-campaign/1',
        csv: { path: join(dir, 'numbers.csv'), bytes: 1, sha256: 'x', rows: 1 },
        app: 'A',
        results: '/etc/passwd',
        resultsBytes: 0,
        next: 0,
        finished: false,
        rows: [{ index: 0, line: 2, number: '+1', attempts: 1, phase: 'calling' }],
      }),
    ]) {
      await writeFile(join(dir, 'numbers.csv.state.json'), text);
      const r = await campaign();
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('is not a campaign state file callscript can read');
    }
  });

  it('a results file shorter than the state says is refused (the results of rows done would be lost)', async () => {
    await writeFile(join(dir, 'numbers.csv'), CSV);
    const stop = new AbortController();
    const clock = new FakeClock();
    const first = new FakeDialer(clock, behaviour);
    first.onPlace = (n) => n === 3 && stop.abort();
    await campaign({}, { clock, dialer: first, stop: stop.signal, stopWaitMs: 100_000 });
    await writeFile(join(dir, 'numbers.results.csv'), 'number\n');
    const r = await campaign({}, { clock });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/numbers\.results\.csv is shorter \(7 bytes\) than the \d+ bytes .* counts/);
  });
});

it('Journal.open keeps a second process off a running campaign', async () => {
  const setup = {
    statePath: join(dir, 's.json'),
    resultsPath: join(dir, 'r.csv'),
    app: 'A',
    csv: { path: '/x.csv', bytes: 1, sha256: 'a', rows: 1 },
  };
  const a = await Journal.open(setup);
  expect(a.ok).toBe(true);
  // the same process (a test) may take it again only after close: the lock names this pid, which is alive
  await writeFile(join(dir, 's.json.lock'), `${process.ppid}\n`);
  const b = await Journal.open(setup);
  expect(b).toMatchObject({ ok: false, message: expect.stringContaining('the campaign is running already') });
  if (a.ok) await a.journal.close();
});
