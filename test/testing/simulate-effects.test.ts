/**
 * `callscript simulate` with the tools' effect model, in process (the CLI function on
 * streams): --mocks (mock-http routes) runs bank-line to the balance, --now is the clock
 * its calendar reads, --vars are an outbound call's start vars typed as declared, a lookup
 * without --mocks is asked; and what bad input gets (exit 2, said plainly, bounded).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { simulate, type SimulateFlags } from '../../src/cli/simulate.js';
import { mockHttp } from '../../src/cli/mock-http.js';
import { DEFAULT_NOW, parseLine, type Question } from '../../src/testing/simulate.js';
import { clockOf, DEFAULT_CALL } from '../../src/testing/scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'callscript-sim-effects-'));
const BANK = 'flows/bank-line.yaml';
const ROUTES = 'flows/mocks/bank-api.yaml';

async function run(ref: string, flags: SimulateFlags, input = '') {
  const inp = new PassThrough();
  const output = new PassThrough();
  const err = new PassThrough();
  let text = '';
  let errText = '';
  output.on('data', (d: Buffer) => (text += d.toString()));
  err.on('data', (d: Buffer) => (errText += d.toString()));
  inp.end(input);
  const code = await simulate(ref, { flows: 'flows', ...flags }, { input: inp, output, err });
  return { code, text, err: errText };
}

describe('simulate bank-line', () => {
  it('--mocks and --now: to the balance, after the filler, the account never shown', async () => {
    const { code, text, err } = await run(
      BANK,
      { mocks: ROUTES, now: '2026-11-23T10:00:00Z', from: '+442071234567' },
      '\n1\n12345678\n2468\n\n\nh\n',
    );
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(text).toContain(
      'verify-customer:check: http POST http://127.0.0.1:4020/v1/verify\n' +
        '  body: {"account":"***","pin":"***"}\n' +
        '  -> 200 {"name":"Alice"} (bank-api.yaml)\n' +
        'lookup: http GET http://127.0.0.1:4020/v1/accounts/***/balance\n' +
        '  -> still running: the filler plays (bank-api.yaml)\n' +
        '#5 lookup: play\n' +
        '  hears: "One moment please, I am fetching your balance." (TTS_EN-GB_SERENA)\n',
    );
    expect(text).toContain(
      'lookup: http GET http://127.0.0.1:4020/v1/accounts/***/balance (waited for again after the filler)\n' +
        '  -> 200 {"amount":120.5} (bank-api.yaml)\n' +
        '#6 say_balance: play\n' +
        '  hears: "Alice, your balance is 120.5 pounds." (TTS_EN-GB_SERENA)\n',
    );
    // the keys typed show where they are typed (the echo of piped input, the answer), never after
    const shown = text.split('\n').filter((l) => !/^(> |  -> )/.test(l));
    expect(shown.filter((l) => l.includes('12345678') || l.includes('2468'))).toEqual([]);
    expect(text).toContain('  3. verify-customer:account: read -> ***\n');
  });

  it('--vars, --mocks and --now: an outbound call in French (its language variable) to the balance', async () => {
    const { code, text, err } = await run(
      BANK,
      { mocks: ROUTES, now: '2026-11-23T10:00:00Z', from: '+442071234567', vars: ['lang=fr-FR'] },
      '\n1\n12345678\n2468\n\n\nh\n',
    );
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(text).toContain('  hears: "Bienvenue chez Acme Banque." (TTS_FR-FR_AUDREY)\n');
    expect(text).toContain('  hears: "Alice, votre solde est de 120.5 livres." (TTS_FR-FR_AUDREY)\n');
  });

  it('--now is the clock the calendar reads: open on a Monday morning, a bank holiday on Christmas', async () => {
    const at = async (now: string) => (await run(BANK, { mocks: ROUTES, now, from: '+442071234567' }, '\n2\nh\n')).text;
    expect(await at('2026-11-23T10:00:00Z')).toContain('#3 advisor: dialout');
    expect(await at('2026-12-25T10:00:00Z')).toContain('Our advisors are away today for the bank holiday.');
    expect(await at('2026-11-22T03:00:00Z')).toContain('Our advisors are available Monday to Friday');
  });

  it('one default clock with test and paths (2026-11-22 10:00 UTC, a Sunday), shown on the first line', async () => {
    const { text } = await run(BANK, { mocks: ROUTES, from: '+442071234567' }, '\n2\nh\n');
    expect(text).toMatch(
      /^call to flow bank-line from \+442071234567 to \+442079460000 at 2026-11-22 10:00:00 UTC \(Sunday\)\n/,
    );
    // the same key goes the same way as in a scenario with no mocks.now: closed on that Sunday
    expect(text).toContain('Our advisors are available Monday to Friday');
    expect(DEFAULT_NOW).toBe(clockOf(DEFAULT_CALL));
  });

  it("without --now, a caller script's call.date is the clock; --now wins", async () => {
    const caller = join(dir, 'monday.caller.yaml');
    writeFileSync(
      caller,
      'call: { from: "+442071234567", date: "2026-11-23 10:00:00" }\nactions:\n  - read: 2\n  - dialout: noanswer\n',
    );
    const monday = await run(BANK, { mocks: ROUTES, caller });
    expect(monday.text).toMatch(/^call to flow bank-line .* at 2026-11-23 10:00:00 UTC \(Monday\)\n/);
    expect(monday.text).toContain('#3 advisor: dialout');
    const christmas = await run(BANK, { mocks: ROUTES, caller, now: '2026-12-25T10:00:00Z' });
    expect(christmas.text).toMatch(/ at 2026-12-25 10:00:00 UTC \(Friday\)\n/);
    expect(christmas.text).toContain('Our advisors are away today for the bank holiday.');
  });

  it('without --mocks a lookup is asked: the statuses named, timeout, error, or one typed with a body', async () => {
    const { text } = await run(
      BANK,
      { now: '2026-11-23T10:00:00Z', from: '+442071234567' },
      '\n1\n12345678\n2468\n2\nh\n',
    );
    expect(text).toContain(
      '? http: 1) 200 (ok)  2) 401  3) 423  4) 500  5) timeout  6) error NETWORK  or a status and JSON body ' +
        '(200 {"amount": 12})  t) timeout  e) error  v) vars (Enter = 1)\n',
    );
    expect(text).toContain('  -> 401\n');
    expect(text).toContain('That PIN is not right.');
    const q: Question = { kind: 'http', options: [] };
    expect(parseLine(q, '200 {"amount": 7}')).toMatchObject({
      answer: { kind: 'http', result: { ok: true, value: '200', data: { status: 200, body: { amount: 7 } } } },
    });
    expect(parseLine(q, 't')).toMatchObject({ answer: { result: { ok: false, error: 'TIMEOUT' } } });
    expect(parseLine(q, 'e REFUSED')).toMatchObject({ answer: { result: { ok: false, error: 'REFUSED' } } });
    expect(parseLine(q, '200 {not json')).toMatchObject({ kind: 'invalid', message: /^the body is not JSON: / });
    expect(parseLine(q, `200 "${'x'.repeat(70000)}"`)).toMatchObject({ kind: 'invalid', message: /at most 65536/ });
    expect(parseLine(q, `200 ${'['.repeat(4500)}${']'.repeat(4500)}`)).toMatchObject({
      kind: 'invalid',
      message: /^the body nests arrays and objects more than 64 levels deep: /,
    });
    expect(parseLine(q, `200 ${'['.repeat(64)}${']'.repeat(64)}`)).toMatchObject({ kind: 'answer' });
    expect(parseLine(q, '700')).toMatchObject({ kind: 'invalid' });
  });
});

describe('simulate: an asked lookup', () => {
  it('"still running" on a step with a filler: the filler plays, then the lookup is asked again', async () => {
    const { code, text } = await run(
      BANK,
      { now: '2026-11-23T10:00:00Z', from: '+442071234567' },
      '\n1\n12345678\n2468\n200 {"name":"Alice"}\n6\n\n200 {"amount": 7}\nh\n',
    );
    expect(code).toBe(0);
    expect(text).toContain(
      '? http: 1) 200 (ok)  2) 404  3) 500  4) timeout  5) error NETWORK  6) still running (the filler plays)  ' +
        'or a status and JSON body (200 {"amount": 12})  t) timeout  e) error  v) vars (Enter = 1)\n' +
        '> 6\n' +
        '  -> still running (the filler plays)\n' +
        '#5 lookup: play\n' +
        '  hears: "One moment please, I am fetching your balance." (TTS_EN-GB_SERENA)\n',
    );
    expect(text).toContain('lookup: http GET http://127.0.0.1:4020/v1/accounts/***/balance (waited for again after');
    expect(text).toContain('  hears: "Alice, your balance is 7 pounds." (TTS_EN-GB_SERENA)\n');
    expect(text).toContain('  6. lookup: http -> still running: the filler plays\n');
  });

  it('takes the error kinds a scenario takes (did-you-mean), and a status 100..599', () => {
    const q: Question = { kind: 'http', options: [{ key: '1', label: 'x', answer: { kind: 'hangup' } }] };
    expect(parseLine(q, 'e TIMEOUTX')).toEqual({
      kind: 'invalid',
      message:
        '"TIMEOUTX" is not an error of a lookup (did you mean TIMEOUT?): e TIMEOUT, e NETWORK, e REFUSED, ' +
        'e TOO_LARGE, e BAD_BODY, e TOO_DEEP; e alone is NETWORK',
    });
    expect(parseLine(q, 'e refused')).toMatchObject({ answer: { result: { ok: false, error: 'REFUSED' } } });
    expect(parseLine(q, 'e')).toMatchObject({ answer: { result: { ok: false, error: 'NETWORK' } } });
    expect(parseLine(q, '999')).toEqual({
      kind: 'invalid',
      message:
        'a status is 100..599, not 999: choose 1, or type a status and a JSON body (200 {"amount": 12}), ' +
        't (timeout), e [KIND] (an error), v (vars)',
    });
  });
});

describe('simulate: a lookup whose answer is nested too deep (TOO_DEEP), asked or from --mocks', () => {
  const flow = join(dir, 'deep-answer.yaml');
  writeFileSync(
    flow,
    [
      'version: 2',
      'name: deep-answer',
      'start: lookup',
      'steps:',
      '  lookup:',
      '    http: { url: "http://127.0.0.1:4020/v1/x" }',
      '    on: { ok: found, error: failed }',
      '  found: { say: "Found.", next: end }',
      '  failed: { say: "Failed {{ error }}.", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n'),
  );
  const routes = join(dir, 'deep.routes.yaml');
  writeFileSync(routes, 'routes:\n  - { url: /v1/x, error: TOO_DEEP }\n');

  it('e TOO_DEEP: the step takes its error way, error = TOO_DEEP', async () => {
    const q: Question = { kind: 'http', options: [{ key: '1', label: 'x', answer: { kind: 'hangup' } }] };
    expect(parseLine(q, 'e too_deep')).toEqual({
      kind: 'answer',
      answer: { kind: 'http', result: { ok: false, error: 'TOO_DEEP', message: 'answered TOO_DEEP' } },
      text: 'error TOO_DEEP',
    });
    const { code, text, err } = await run(flow, {}, 'e TOO_DEEP\n\n');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(text).toContain('> e TOO_DEEP\n  -> error TOO_DEEP\n');
    expect(text).toContain('#1 failed: play\n  hears: "Failed TOO_DEEP." (TTS_EN-GB_SERENA)\n');
  });

  it('--mocks with a route answering TOO_DEEP: the same way', async () => {
    const { code, text, err } = await run(flow, { mocks: routes }, '\n');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(text).toContain('  -> failed TOO_DEEP (deep.routes.yaml)\n');
    expect(text).toContain('#1 failed: play\n  hears: "Failed TOO_DEEP." (TTS_EN-GB_SERENA)\n');
  });
});

describe('simulate --vars: an outbound call’s start vars, typed as the flow declares them', () => {
  const flow = join(dir, 'typed.yaml');
  writeFileSync(
    flow,
    [
      'version: 1',
      'name: typed',
      'start: hello',
      'vars: { name: "", count: 0, vip: false }',
      'steps:',
      '  hello:',
      '    when: "vars.vip && vars.count + 1 == 4 && call.request_hash == \'SIMULATED\'"',
      '    then: yes',
      '    else: no',
      '  "yes": { say: "Hello {{ vars.name }}, VIP.", next: end }',
      '  "no": { say: "Hello.", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n'),
  );

  it('typed as declared (3 a number, true a boolean); the call is outbound', async () => {
    const { code, text } = await run(flow, { vars: ['name=Ada', 'count=3', 'vip=true'] }, '\n');
    expect(code).toBe(0);
    expect(text).toContain('hears: "Hello Ada, VIP."');
  });

  it('a name not declared, a value not of its type, a line that is no name=value: exit 2, each said', async () => {
    const { code, err } = await run(flow, { vars: ['nmae=Ada', 'count=three', 'oops'] });
    expect(code).toBe(2);
    expect(err).toBe(
      'callscript simulate: --vars "oops": write name=value\n' +
        '--vars nmae: not a var of typed (its vars: name, count, vip)\n' +
        '--vars count: declared as a number, got "three"\n',
    );
    // bank-line declares no vars; its language variable takes one of its languages
    expect((await run(BANK, { vars: ['lang=de-DE', 'name=Ada'] })).err).toBe(
      "callscript simulate: --vars lang: the flow's language variable takes one of its languages (en-GB, fr-FR), " +
        'got "de-DE"\n' +
        '--vars name: not a var of bank-line (its vars: lang (its language))\n',
    );
    const many = await run(flow, { vars: Array.from({ length: 101 }, (_, i) => `v${i}=1`) });
    expect(many).toMatchObject({ code: 2, err: 'callscript simulate: --vars: 101 given, at most 100\n' });
  });
});

describe('simulate: bad --now, --mocks and --caller', () => {
  it('a scenario file given as --caller is named as one, with the command that runs it', async () => {
    const { code, err } = await run(BANK, { caller: 'flows/bank-line.test.yaml' });
    expect(code).toBe(2);
    expect(err).toBe(
      'callscript simulate: BAD_CALLER\nflows/bank-line.test.yaml:6:1 flow: this is a scenario file (flow: and ' +
        'cases:), not a caller script: run it with callscript test\n',
    );
  });

  it('a time that is not one, exit 2', async () => {
    const { code, err } = await run(BANK, { now: 'next tuesday' });
    expect(code).toBe(2);
    expect(err).toMatch(/^callscript simulate: --now "next tuesday" is not a time: write ISO 8601 with its zone/);
  });

  it('an empty routes file, routes: with no value, a misspelt key: refused alike (simulate, mock-http)', async () => {
    const file = join(dir, 'routes.yaml');
    const said = (line: string) =>
      `${file}:${line}: no routes: a routes file lists its routes, routes: [ { method, url, ` +
      `status, body, headers, delay_ms, error } ] (routes: [] for none)\n`;
    const cases: [string, string][] = [
      ['', said('1:1')],
      ['# nothing yet\n', said('1:1')],
      ['routes:\n', said('1:1')],
      [
        'routs:\n  - { url: /x }\n',
        `${file}:1:1: unknown key "routs" in a routes file: did you mean "routes"? (routes: [ { method, url, ` +
          `status, body, headers, delay_ms, error } ])\n`,
      ],
    ];
    for (const [text, problem] of cases) {
      writeFileSync(file, text);
      const sim = await run(BANK, { mocks: file });
      expect(sim).toMatchObject({
        code: 2,
        err: `callscript simulate: --mocks: ${file} is not a routes file:\n${problem}`,
      });
      const err = new PassThrough();
      let errText = '';
      err.on('data', (d: Buffer) => (errText += d.toString()));
      expect(await mockHttp({ routes: file, port: '0' }, new PassThrough(), err)).toBe(2);
      expect(errText).toBe(problem);
    }
    // routes: [] is none, said as such: every request gets 404
    writeFileSync(file, 'routes: []\n');
    expect((await run(BANK, { mocks: file }, 'h\n')).code).toBe(0);
  });

  it('a routes file missing, malformed (with positions), or huge: exit 2, bounded', async () => {
    const missing = await run(BANK, { mocks: join(dir, 'none.yaml') });
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^callscript simulate: --mocks: no such file .*none\.yaml\n$/);
    const bad = join(dir, 'bad-routes.yaml');
    writeFileSync(bad, 'routes:\n  - { url: /v1/x, status: 999 }\n  - { method: FETCH, url: /y }\n');
    const malformed = await run(BANK, { mocks: bad });
    expect(malformed.code).toBe(2);
    expect(malformed.err).toBe(
      `callscript simulate: --mocks: ${bad} is not a routes file:\n` +
        `${bad}:2:27: routes: status is an HTTP status, 100 to 599\n` +
        `${bad}:3:15: routes: method is GET, POST, PUT, PATCH or DELETE\n`,
    );
    const huge = join(dir, 'huge-routes.yaml');
    writeFileSync(huge, 'routes:\n' + '  - { url: /x, status: 200 }\n'.repeat(120_000));
    const big = await run(BANK, { mocks: huge });
    expect(big.code).toBe(2);
    expect(big.err).toMatch(
      /is not a routes file:\n.*huge-routes\.yaml:1:1: the file is [\d,]+ bytes; a file may be at most/,
    );
  });
});
