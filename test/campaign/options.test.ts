/** `callscript campaign`'s flags, progress output details, the results writer's escaping. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { campaignSettings, durationMs } from '../../src/campaign/options.js';
import { Progress } from '../../src/campaign/progress.js';
import { resultLines, safeCell } from '../../src/campaign/results.js';
import type { RowResult } from '../../src/campaign/types.js';
import { TokenBucket } from '../../src/campaign/bucket.js';

describe('flags', () => {
  it('defaults, and paths beside the CSV', () => {
    expect(campaignSettings('calls/numbers.csv', { app: 'A1B2C3D4' }, '/srv')).toEqual({
      csv: '/srv/calls/numbers.csv',
      app: 'A1B2C3D4',
      rate: 1,
      concurrency: 5,
      retries: 2,
      retryDelayMs: 300_000,
      timeoutMs: 120_000,
      pollMs: 1000,
      results: '/srv/calls/numbers.results.csv',
      resultsGiven: false,
      state: '/srv/calls/numbers.csv.state.json',
    });
    expect(
      campaignSettings(
        'list',
        { app: 'A', results: 'out.csv', state: '/tmp/s.json', rate: '0.2', retryDelay: '90', timeout: '10m' },
        '/srv',
      ),
    ).toMatchObject({
      csv: '/srv/list',
      results: '/srv/out.csv',
      resultsGiven: true,
      state: '/tmp/s.json',
      rate: 0.2,
      retryDelayMs: 90_000,
      timeoutMs: 600_000,
    });
  });

  it('each bad flag named, with what it takes', () => {
    const bad = (f: Record<string, string>) => campaignSettings('n.csv', { app: 'A1', ...f }, '/srv');
    expect(campaignSettings('n.csv', {}, '/srv')).toMatch(/^--app HASH is required/);
    expect(bad({ app: 'a b' })).toMatch(/not "a b"$/);
    expect(bad({ rate: '0' })).toBe(
      '--rate must be the calls placed per second, from 0.001 to 1000 (0.5: one every 2 s), not "0"',
    );
    expect(bad({ rate: '1e3' })).toMatch(/^--rate/);
    expect(bad({ concurrency: '0' })).toMatch(/^--concurrency must be an integer from 1 to 1000/);
    expect(bad({ concurrency: '2.5' })).toMatch(/^--concurrency/);
    expect(bad({ retries: '21' })).toMatch(/^--retries must be an integer from 0 to 20/);
    expect(bad({ retryDelay: '8d' })).toMatch(/^--retry-delay must be a duration from 0s to 7d/);
    expect(bad({ timeout: '500ms' })).toMatch(/^--timeout must be a duration from 1s to 24h/);
    expect(bad({ poll: '10ms' })).toMatch(/^--poll must be a duration from 100ms to 60s/);
    expect(bad({ results: 'n.csv' })).toBe('--results must not be the CSV itself (n.csv)');
    expect(bad({ state: 'r.csv', results: 'r.csv' })).toMatch(/^--state must be a file of its own/);
  });

  it('durations', () => {
    expect(['500ms', '90s', '90', '1.5m', '2h', '1d', ' 5m '].map(durationMs)).toEqual([
      500, 90_000, 90_000, 90_000, 7_200_000, 86_400_000, 300_000,
    ]);
    expect(['', '5 minutes', '-1s', 'm'].map(durationMs).every(Number.isNaN)).toBe(true);
  });
});

describe('the token bucket', () => {
  it('one token, refilled at the rate: evenly spaced', () => {
    const b = new TokenBucket(4);
    expect(b.delay(1000)).toBe(0);
    b.take(1000);
    expect(b.delay(1000)).toBe(250);
    expect(b.delay(1100)).toBe(150);
    b.take(1250);
    expect(b.delay(1400)).toBe(100);
    // idle time does not pile up tokens: after a long pause, one call, then the spacing again
    b.take(9000);
    expect(b.delay(9000)).toBe(250);
    expect(() => new TokenBucket(0)).toThrow(RangeError);
  });
});

describe('the results writer', () => {
  const r = (more: Partial<RowResult>): RowResult => ({
    number: '+33612345678',
    outcome: 'completed',
    callStatus: 'HANGUP',
    lastStep: 'end',
    durationMs: 1200,
    attempts: 1,
    callid: '42',
    line: 2,
    detail: '',
    ...more,
  });

  it('defuses formula cells, not E.164 numbers or integers', () => {
    expect(
      ['=1+1', '+1+1', '-1+1', '@SUM(A1)', '\t=x', '\r=x', '\uFF1D1', '+33612345678', '-12', '42', 'plain'].map(
        safeCell,
      ),
    ).toEqual([
      "'=1+1",
      "'+1+1",
      "'-1+1",
      "'@SUM(A1)",
      "'\t=x",
      "'\r=x",
      "'\uFF1D1",
      '+33612345678',
      '-12',
      '42',
      'plain',
    ]);
  });

  it('quotes what must be, one line per result', () => {
    expect(
      resultLines([
        r({}),
        r({
          number: '=HYPERLINK("http://x","y")',
          outcome: 'invalid',
          detail: 'a "quoted", detail\nover lines',
          durationMs: null,
          callid: '',
          callStatus: '',
          lastStep: '',
        }),
      ]),
    ).toBe(
      '+33612345678,completed,HANGUP,end,1200,1,42,2,\n' +
        `"'=HYPERLINK(""http://x"",""y"")",invalid,,,,1,,2,"a ""quoted"", detail\nover lines"\n`,
    );
    expect(resultLines([])).toBe('');
  });
});

describe('progress', () => {
  function sink() {
    const s = new PassThrough();
    let text = '';
    s.on('data', (c) => (text += c));
    return { s, text: () => text };
  }

  it("a cell's control characters never reach the terminal", () => {
    const out = sink();
    const p = new Progress({ out: out.s, tty: false, total: 1 });
    p.event({ type: 'invalid', line: 2, number: '\x1b]0;pwned\x07', reason: 'number "\x1b]0;pwned\x07" is not E.164' });
    expect(out.text()).toBe('line 2: invalid: number "\\x1b]0;pwned\\x07" is not E.164\n');
  });

  it('on a terminal, the line is cut to the columns and redrawn at most every 100 ms', () => {
    const out = sink();
    let now = 0;
    const p = new Progress({ out: out.s, tty: true, total: 100, columns: 40, now: () => now });
    p.event({ type: 'placed', line: 2, number: '+33612345678', attempt: 1, id: 'X' });
    p.event({ type: 'placed', line: 3, number: '+33612345679', attempt: 1, id: 'Y' });
    now = 150;
    p.event({ type: 'placed', line: 4, number: '+33612345670', attempt: 1, id: 'Z' });
    p.end();
    const draws = out.text().split('\r\x1b[2K').filter(Boolean);
    expect(draws).toEqual([
      '[------------------------] 0/100  1 ca…',
      '[------------------------] 0/100  3 ca…',
      '[------------------------] 0/100  3 ca…\n',
    ]);
  });

  it('the summary counts outcomes, most first', () => {
    const p = new Progress({ out: new PassThrough(), tty: false, total: 3 });
    for (const outcome of ['completed', 'invalid', 'completed'])
      p.event({
        type: 'result',
        result: {
          number: '+1',
          outcome,
          callStatus: '',
          lastStep: '',
          durationMs: null,
          attempts: 1,
          callid: '',
          line: 2,
          detail: '',
        },
      });
    expect(p.summary()).toBe('2 completed, 1 invalid');
  });
});
