/**
 * What `callscript test` says and compares, in process (the CLI function, files in a
 * temporary directory): a difference past the 60 characters of a summary line is visible in
 * the diff lines; a sensitive value a request saved and sent is never printed; a recording's
 * params are compared in full (a hand-written scenario's as a subset); a step's `now:` where
 * it cannot apply, or going back in time, is an error of the file at its position.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test as runTests } from '../../src/cli/test.js';
import { diffLines, MAX_DIFF_VALUE } from '../../src/testing/runner.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-failure-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const flows = join(dir, 'flows');
mkdirSync(flows);

const LONG = 'Welcome to the Acme Bank telephone line. Calls are recorded for training. For your balance, press 1.';
writeFileSync(
  join(flows, 'long.yaml'),
  `version: 1
name: long
start: menu
steps:
  menu:
    read: { prompt: "${LONG}", max_digits: 1, attempts: 3 }
    next: end
  end: { hangup: {} }
`,
);
writeFileSync(
  join(flows, 'pin.yaml'),
  `version: 2
name: pin
module:
  params: { api: required }
  results: [ok, failed]
sensitive: [pin]
start: ask
steps:
  ask:
    read: { prompt: "Your PIN?", max_digits: 4 }
    save: pin
    next: check
  check:
    http:
      method: POST
      url: "{{ vars.api }}/verify"
      body: { pin: "{{ vars.pin }}" }
    on: { ok: good, default: bad, error: bad }
  good: { return: ok }
  bad: { return: failed }
`,
);

async function run(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  let out = '';
  const code = await runTests([file], { flows }, { write: (s: string) => (out += s) });
  return { code, out };
}

describe('diff lines', () => {
  it('a prompt that differs past the summary cut shows a window around its first difference, with …', async () => {
    const changed = LONG.replace('press 1.', 'press one.');
    const { code, out } = await run(
      'long.test.yaml',
      `flow: long
cases:
  - name: the prompt
    steps:
      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|${changed}" } }
`,
    );
    expect(code).toBe(1);
    const minus = out.split('\n').find((l) => l.startsWith('      - params.media_id: '))!;
    const plus = out.split('\n').find((l) => l.startsWith('      + params.media_id: '))!;
    expect(minus).not.toBe(plus.replace('+', '-'));
    // 40 characters before the first difference ("o" of "one" against "1"), and the rest
    const e = `"TTS|TTS_EN-GB_SERENA|${changed}"`;
    const a = `"TTS|TTS_EN-GB_SERENA|${LONG}"`;
    const at = e.indexOf('one.') - 40;
    expect(minus).toBe(`      - params.media_id: …${e.slice(at)}`);
    expect(plus).toBe(`      + params.media_id: …${a.slice(at)}`);
    expect(minus).toContain('press one.');
    expect(plus).toContain('press 1.');
  });

  it('the summary lines cut a long param around its first difference, not both at the same head', async () => {
    const { code, out } = await run(
      'summary.test.yaml',
      `flow: long
cases:
  - name: the end of the prompt
    steps:
      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|${LONG.replace('1.', '2.')}" } }
`,
    );
    expect(code).toBe(1);
    expect(out).toContain(
      '      expected: read { media_id: …lls are recorded for training. For your balance, press 2." }\n' +
        '      actual:   read { media_id: …lls are recorded for training. For your balance, press 1.", ' +
        'attempts: 3, max_digits: 1 }\n',
    );
  });

  it('a long map in expect: vars is narrowed to the member that differs; --full-diff shows both whole', async () => {
    writeFileSync(
      join(flows, 'customer.yaml'),
      `version: 1
name: customer
vars:
  customer:
    name: Ann
    address: "12 The Long Road, Little Snoring, Norfolk, NR21 0AA, United Kingdom of Great Britain"
    dob: "1970-01-01"
start: a
steps:
  a: { hangup: {} }
`,
    );
    const text = `flow: customer
cases:
  - name: the date of birth
    steps:
      - expect: { command: hangup, vars: { customer: { dob: "1970-01-02", name: Ann } } }
`;
    const narrowed = await run('customer.test.yaml', text);
    expect(narrowed.code).toBe(1);
    expect(narrowed.out).toContain(
      'step 1: vars.customer differs (at flow step "a")\n' +
        '      - vars.customer.dob: "1970-01-02"\n' +
        '      + vars.customer.dob: "1970-01-01"\n',
    );
    let out = '';
    const code = await runTests(
      [join(dir, 'customer.test.yaml')],
      { flows, fullDiff: true },
      { write: (s: string) => (out += s) },
    );
    expect(code).toBe(1);
    expect(out).toContain(
      '      - vars.customer: {"dob":"1970-01-02","name":"Ann"}\n' +
        '      + vars.customer: {"name":"Ann","address":"12 The Long Road, Little Snoring, Norfolk, NR21 0AA, United ' +
        'Kingdom of Great Britain","dob":"1970-01-01"}\n',
    );
  });

  it('--full-diff: the summary and diff lines show long values whole', async () => {
    const changed = LONG.replace('press 1.', 'press one.');
    writeFileSync(
      join(dir, 'whole.test.yaml'),
      `flow: long
cases:
  - name: the prompt
    steps:
      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|${changed}" } }
`,
    );
    let out = '';
    expect(
      await runTests([join(dir, 'whole.test.yaml')], { flows, fullDiff: true }, { write: (s: string) => (out += s) }),
    ).toBe(1);
    expect(out).toContain(
      `      expected: read { media_id: "TTS|TTS_EN-GB_SERENA|${changed}" }\n` +
        `      actual:   read { media_id: "TTS|TTS_EN-GB_SERENA|${LONG}", attempts: 3, max_digits: 1 }\n` +
        `      - params.media_id: "TTS|TTS_EN-GB_SERENA|${changed}"\n` +
        `      + params.media_id: "TTS|TTS_EN-GB_SERENA|${LONG}"\n`,
    );
  });

  it('a short value in full; a long one windowed on both sides, the same characters of each', () => {
    expect(diffLines({ label: 'params.x', expected: '"ab"', actual: '"ac"' })).toEqual([
      '- params.x: "ab"',
      '+ params.x: "ac"',
    ]);
    const e = 'a'.repeat(200) + 'X' + 'b'.repeat(200);
    const a = 'a'.repeat(200) + 'Y' + 'b'.repeat(200);
    const [m, p] = diffLines({ label: 'v', expected: e, actual: a });
    const body = 'a'.repeat(40) + 'X' + 'b'.repeat(MAX_DIFF_VALUE - 41);
    expect(m).toBe(`- v: …${body}…`);
    expect(p).toBe(`+ v: …${body.replace('X', 'Y')}…`);
  });

  it('scrubs before it cuts: a window never shows part of a sensitive value', () => {
    const secret = 'S3CRET-' + 'z'.repeat(30);
    const scrub = (t: string) => t.split(secret).join('***');
    const lines = diffLines(
      { label: 'v', expected: `"${'q'.repeat(150)}A"`, actual: `"${'q'.repeat(150)}B${secret}"` },
      { scrub },
    );
    expect(lines.join('\n')).not.toContain('S3CRET');
    expect(lines[1]).toContain('B***');
  });
});

describe('sensitive values in a failure', () => {
  it('a PIN the request saved and sent in the body that failed shows ***, in every line', async () => {
    const { code, out } = await run(
      'pin.test.yaml',
      `flow: pin
cases:
  - name: wrong body
    with: { api: "https://bank.example" }
    mocks: { http: [{ url: "https://bank.example/verify", status: 200 }] }
    steps:
      - expect: read
        result: "2468"
      - expect: { http: { body: { pin: "1111" } } }
`,
    );
    expect(code).toBe(1);
    expect(out).not.toContain('2468');
    expect(out).toContain('      - params.body: {"pin":"1111"}\n      + params.body: {"pin":"***"}\n');
    expect(out).toContain('body: {"pin":"***"} }');
  });
});

describe("a recording's params", () => {
  const steps = `    steps:
      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|${LONG}", max_digits: 1 } }
        result: "1"
      - expect: { command: hangup, params: {} }
`;
  const body = `flow: long
cases:
  - name: recorded call 1
    call: { callid: "1" }
${steps}`;

  it('are compared in full: a param the flow sends that the recording does not have is a divergence', async () => {
    const { code, out } = await run(
      'long-1.test.yaml',
      `# Recorded by callscript serve --record: flow long, version 0123456789ab, 2026-11-22T10:00:00.000Z\n` +
        `# A scenario file (docs/testing.md): \`callscript test\` replays it against the current flow.\n\n${body}`,
    );
    expect(code).toBe(1);
    expect(out).toContain('read: params differ (from flow step "menu")');
    expect(out).toContain('      - params.attempts: (absent)\n      + params.attempts: 3\n');
  });

  it('a hand-written scenario matches them as a subset', async () => {
    const { code, out } = await run('long-2.test.yaml', body);
    expect(out).toContain('1 passed, 0 failed');
    expect(code).toBe(0);
  });
});

describe("a step's now:", () => {
  it('on an http or sms step, or on a check alone, is refused at its position (it would be ignored)', async () => {
    const { code, out } = await run(
      'now-effect.test.yaml',
      `flow: pin
cases:
  - name: now on an http step
    with: { api: "https://bank.example" }
    steps:
      - expect: read
        result: "2468"
      - expect: http
        now: "2026-11-22T11:00:00Z"
      - expect: { vars: { pin: "2468" } }
        now: "2026-11-22T11:00:00Z"
`,
    );
    expect(code).toBe(2);
    expect(out).toContain(
      "now-effect.test.yaml:9:14: `now:` moves the clock on from the request that reports a command's outcome; " +
        'an http step has none (it runs inside a request): write it on the step of the command whose outcome ' +
        'comes at that time\n',
    );
    expect(out).toContain('now-effect.test.yaml:11:14: `now:` moves the clock on');
  });

  it('earlier than the clock it follows is refused, in a hand-written file, not in a recording', async () => {
    const steps = (header: string) =>
      `${header}flow: long
cases:
  - name: back in time
    mocks: { now: "2026-11-23T10:00:00Z" }
    steps:
      - expect: read
        result: "1"
        now: "2026-11-23T09:00:00Z"
      - expect: hangup
`;
    const hand = await run('back.test.yaml', steps(''));
    expect(hand.code).toBe(2);
    expect(hand.out).toContain(
      'back.test.yaml:8:14: now: 2026-11-23T09:00:00Z is earlier than the clock it follows ' +
        '(2026-11-23T10:00:00Z, mocks.now): time only moves forward during a call\n',
    );
    const rec = await run(
      'back-rec.test.yaml',
      steps('# Recorded by callscript serve --record: flow long, version 0123456789ab, 2026-11-23T10:00:00.000Z\n'),
    );
    expect(rec.out).toContain('1 passed, 0 failed');
  });
});
