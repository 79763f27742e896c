/**
 * A module run on its own by the tools, in process (the CLI functions on streams):
 * `paths` samples its required params (or takes --with), writes them in each case's
 * `with:`, ends each case with the module's return, and every case it writes passes
 * `callscript test`; `simulate` asks for its required params up front and takes --with.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { paths } from '../../src/cli/paths.js';
import { simulate } from '../../src/cli/simulate.js';
import { test as runTests } from '../../src/cli/test.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-module-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MODULE = join(process.cwd(), 'flows/verify-customer.yaml');

const sink = () => {
  let text = '';
  return { w: new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) }), text: () => text };
};

async function testCli(file: string) {
  let out = '';
  const code = await runTests([file], { flows: 'flows' }, { write: (s: string) => (out += s) });
  return { code, out };
}

describe('paths of a module', () => {
  it('samples its required param, writes with: and the return, and every case passes callscript test', async () => {
    const out = join(dir, 'verify-customer.test.yaml');
    const err = sink();
    expect(await paths(MODULE, { flows: 'flows', out }, sink().w, err.w)).toBe(0);
    expect(err.text()).toBe(
      'paths: verify-customer is a module: its required param bank_api is sampled as "https://bank-api.example" ' +
        '(give another with --with bank_api=...)\n' +
        `${out}: 20 cases for 20 uncovered transitions\n`,
    );
    const text = readFileSync(out, 'utf8');
    expect(text).toContain(
      "# The module's required param bank_api is sampled in with: (give it with --with bank_api=...).\n",
    );
    expect(text.match(/^ {4}with: \{ bank_api: "https:\/\/bank-api\.example" \}$/gm)).toHaveLength(20);
    expect(text).not.toContain('expect: hangup');
    // the lookup's answer is found through the http step, and the case ends with the module's return
    expect(text).toContain(
      '  - name: "check:ok"\n' +
        '    with: { bank_api: "https://bank-api.example" }\n' +
        '    mocks:\n' +
        '      http:\n' +
        '        - { method: POST, url: "https://bank-api.example/v1/verify", status: 200 }\n' +
        '    steps:\n' +
        '      - expect: read\n' +
        '        result: "00000000"\n' +
        '      # takes check:ok, in the request that reports this read\n' +
        '      - expect: read\n' +
        '        result: "0000"\n' +
        '      - expect: http\n' +
        '      - expect: { return: "verified" }\n',
    );
    // a key of the read's own step is said plainly
    expect(text).toContain('      # takes account:TIMEOUT\n      - expect: read\n');
    const run = await testCli(out);
    expect(run.out).toContain('20 passed, 0 failed');
    expect(run.code).toBe(0);
  });

  it('--with gives the param; an unknown one is refused with a did-you-mean', async () => {
    const out = join(dir, 'given.test.yaml');
    const err = sink();
    expect(await paths(MODULE, { flows: 'flows', out, with: ['bank_api=http://bank.test'] }, sink().w, err.w)).toBe(0);
    expect(err.text()).toBe(`${out}: 20 cases for 20 uncovered transitions\n`);
    expect(readFileSync(out, 'utf8')).toContain('url: "http://bank.test/v1/verify"');
    const bad = sink();
    expect(await paths(MODULE, { flows: 'flows', with: ['bank_ap=x'] }, sink().w, bad.w)).toBe(2);
    expect(bad.text()).toBe(
      'callscript paths: --with bank_ap: module verify-customer has no such param (did you mean "bank_api"?)\n',
    );
  });
});

describe('simulate a module', () => {
  async function sim(flags: { with?: string[] }, input: string) {
    const inp = new PassThrough();
    const output = sink();
    const err = sink();
    inp.end(input);
    const code = await simulate(MODULE, { flows: 'flows', ...flags }, { input: inp, output: output.w, err: err.w });
    return { code, out: output.text(), err: err.text() };
  }

  it('without its required param: said up front, exit 2', async () => {
    expect(await sim({}, '')).toEqual({
      code: 2,
      out: '',
      err:
        'callscript simulate: verify-customer is a module: give its required param bank_api ' +
        "(--with bank_api=...), as a scenario's with: does\n",
    });
  });

  it('with --with: to its return', async () => {
    const r = await sim({ with: ['bank_api=https://bank.test'] }, '12345678\n2468\n200 {"name":"Ann"}\n');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('check: http POST https://bank.test/v1/verify\n');
    expect(r.out).toContain('call ended: HANGUP (the module returned verified)\n');
    expect(r.out).toContain('  4. verified: return -> verified\n');
    expect(r.out).not.toContain('RUNTIME_PARAM');
  });
});

describe("a module's param defaults, when a tool runs it on its own", () => {
  const mod = join(dir, 'defaults');
  const MOD = [
    'version: 2',
    'name: greet',
    'module:',
    '  params: { who: friend, tries: 3, account: required }',
    '  results: [done]',
    'start: hello',
    'steps:',
    '  hello:',
    '    say: "Hello {{ vars.who }}, {{ vars.account }}: {{ vars.tries }} tries."',
    '    next: fin',
    '  fin: { return: done }',
    '',
  ].join('\n');
  const SCENARIOS = [
    'flow: greet',
    'cases:',
    '  - name: the defaults',
    '    with: { account: "42" }',
    '    steps:',
    '      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Hello friend, 42: 3 tries." } }',
    '      - expect: { return: done }',
    '  - name: a default given',
    '    with: { account: "42", tries: 5 }',
    '    vars: { who: Ann }',
    '    steps:',
    '      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Hello Ann, 42: 5 tries." } }',
    '      - expect: { return: done }',
    '',
  ].join('\n');

  it('callscript test: the params the case does not give have their defaults', async () => {
    mkdirSync(mod, { recursive: true });
    writeFileSync(join(mod, 'greet.yaml'), MOD);
    writeFileSync(join(mod, 'greet.test.yaml'), SCENARIOS);
    let out = '';
    const code = await runTests([join(mod, 'greet.test.yaml')], { flows: mod }, { write: (s: string) => (out += s) });
    const shown = relative(process.cwd(), join(mod, 'greet.test.yaml'));
    expect(out).toBe(`✓ ${shown} › the defaults\n✓ ${shown} › a default given\n\n2 passed, 0 failed\n`);
    expect(code).toBe(0);
  });

  it('simulate: the first prompt and the vars show the defaults', async () => {
    mkdirSync(mod, { recursive: true });
    writeFileSync(join(mod, 'greet.yaml'), MOD);
    const inp = new PassThrough();
    const output = sink();
    const err = sink();
    inp.end('h\n');
    const code = await simulate(
      join(mod, 'greet.yaml'),
      { flows: mod, with: ['account=42'] },
      { input: inp, output: output.w, err: err.w },
    );
    expect(err.text()).toBe('');
    expect(code).toBe(0);
    expect(output.text()).toContain(
      '#1 hello: play\n  hears: "Hello friend, 42: 3 tries." (TTS_EN-GB_SERENA)\n' +
        '  vars: who="friend" tries=3 account="42"\n',
    );
  });
});
