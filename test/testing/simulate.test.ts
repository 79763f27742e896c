/**
 * `callscript simulate`: the session driven by a caller script (exact output), by piped
 * stdin (the real CLI, exact output), and through a pseudo-terminal (`script`), typing
 * answers as the prompts appear.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { simulate } from '../../src/cli/simulate.js';
import { parseLine, SimSession } from '../../src/testing/simulate.js';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';

const FLOW = `version: 1
name: sim-demo
start: menu
voice: TTS_EN-GB_SERENA
vars:
  greeted: false
steps:
  menu:
    read:
      prompt: "Press 1 for sales, 2 for a text."
      max_digits: 1
    save: choice
    on:
      "1": sales
      "2": text
      TIMEOUT: { retry: 1, then: bye }
      default: bye
  sales:
    dialout:
      targets:
        - { number: "+442079460110", timeout: 20 }
    on:
      NOANSWER: { say: "Sales is busy.", goto: bye }
  text:
    sms:
      to: "{{ call.caller }}"
      body: "Hello from Acme"
    save: sms
    on:
      error: bye
    next: bye
  bye:
    say: "Goodbye."
    next: end
  end:
    hangup:
`;

const dir = mkdtempSync(join(tmpdir(), 'callscript-simulate-'));
const flowFile = join(dir, 'sim-demo.yaml');
writeFileSync(flowFile, FLOW);
const callerFile = join(dir, 'caller.yaml');
writeFileSync(
  callerFile,
  'name: times out, then sales\ncall:\n  from: "+33612345678"\nactions:\n  - read: TIMEOUT\n  - read: 1\n  - ' +
    'dialout: noanswer\n  - play: failed\n',
);

const MAIN = join(__dirname, '..', '..', 'src', 'cli', 'main.ts');
const strip = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

function compiled() {
  const { model } = checkFlow(FLOW, 'sim-demo.yaml');
  return compileFlow(model!, FLOW);
}

async function run(flags: Parameters<typeof simulate>[1], input = '') {
  const inp = new PassThrough();
  const output = new PassThrough();
  const err = new PassThrough();
  let text = '';
  output.on('data', (d: Buffer) => (text += d.toString()));
  inp.end(input);
  const code = await simulate(flowFile, flags, { input: inp, output, err });
  return { code, text };
}

describe('simulate session', () => {
  it('reads keys as a phone does: # ends, extra keys ignored, Enter alone is TIMEOUT', () => {
    const q = { kind: 'keys', command: 'read', maxDigits: 2 } as const;
    expect(parseLine(q, '')).toMatchObject({ answer: { kind: 'result', result: 'TIMEOUT' } });
    expect(parseLine(q, '1#9')).toMatchObject({ answer: { kind: 'result', result: '1' } });
    expect(parseLine(q, '123')).toMatchObject({ answer: { kind: 'result', result: '12' } });
    expect(parseLine(q, 'h')).toMatchObject({ answer: { kind: 'hangup' } });
    expect(parseLine(q, 'e MEDIA_NOT_FOUND')).toMatchObject({ answer: { kind: 'error', error: 'MEDIA_NOT_FOUND' } });
    expect(parseLine(q, 'v')).toEqual({ kind: 'vars' });
    expect(parseLine(q, 'x')).toMatchObject({ kind: 'invalid' });
  });

  it('asks sms outcomes, fails the command on e, and records the path', () => {
    const s = new SimSession(compiled(), { from: '+447700900111' });
    s.start();
    expect(s.question).toEqual({ kind: 'keys', command: 'read', maxDigits: 1 });
    const ev = s.answer({ kind: 'result', result: '2' });
    expect(ev).toContainEqual({ kind: 'sms', step: 'text', to: '+447700900111', body: 'Hello from Acme' });
    expect(s.question?.kind).toBe('sms');
    s.answer({ kind: 'sms', result: { ok: false, error: 'REJECTED' } });
    expect(s.question).toMatchObject({ kind: 'menu', command: 'play' });
    s.answer({ kind: 'error', error: 'MEDIA_NOT_FOUND' });
    expect(s.ended).toBe(true);
    expect(s.path).toEqual([
      { step: 'menu', command: 'read', outcome: '2' },
      { step: 'text', command: 'sms', outcome: 'failed REJECTED' },
      { step: 'bye', command: 'play', outcome: 'error MEDIA_NOT_FOUND' },
      { step: 'bye', command: 'hangup' }, // no error branch: the engine hangs up
    ]);
  });

  it('ends the call when a dialout is answered (bridged)', () => {
    const s = new SimSession(compiled());
    s.start();
    s.answer({ kind: 'result', result: '1' });
    expect(s.question).toMatchObject({
      kind: 'menu',
      command: 'dialout',
      options: [{ label: 'answer (bridged: call ends)' }, { label: 'NOANSWER' }],
    });
    const ev = s.answer({ kind: 'bridged' });
    expect(ev.at(-1)).toMatchObject({
      kind: 'end',
      status: 'HANGUP',
      path: [{ step: 'menu' }, { step: 'sales', outcome: 'answered (bridged)' }],
    });
  });
});

describe('callscript simulate', () => {
  it('plays a caller script (the emulator format) with exact output', async () => {
    const { code, text } = await run({ caller: callerFile });
    expect(code).toBe(0);
    expect(text).toBe(`call to flow sim-demo from +33612345678 to +442079460000 at 2026-11-22 10:00:00 UTC (Sunday)
#1 menu: read
  hears: "Press 1 for sales, 2 for a text." (TTS_EN-GB_SERENA)
  max_digits=1
  vars: greeted=false
  -> TIMEOUT (${callerFile}:5:5)
#2 menu: read
  hears: "Press 1 for sales, 2 for a text." (TTS_EN-GB_SERENA)
  max_digits=1
  vars: greeted=false choice="TIMEOUT"
  -> 1 (${callerFile}:6:5)
#3 sales: dialout
  targets: +442079460110 (20 s)
  vars: greeted=false choice="1"
  -> NOANSWER (${callerFile}:7:5)
#4 sales (branch say): play
  hears: "Sales is busy." (TTS_EN-GB_SERENA)
  vars: greeted=false choice="1"
  -> 1 (${callerFile}:8:5)
#5 bye: play
  hears: "Goodbye." (TTS_EN-GB_SERENA)
  vars: greeted=false choice="1"
  -> 0 (built-in)
#6 end: hangup
  vars: greeted=false choice="1"
call ended: HANGUP (the flow hung up)
path:
  1. menu: read -> TIMEOUT
  2. menu: read -> 1
  3. sales: dialout -> NOANSWER
  4. sales (branch say): play -> 1
  5. bye: play -> 0
  6. end: hangup
vars: greeted=false choice="1"
`);
  });

  it('takes answers line by line from piped stdin (the CLI, exact output)', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'simulate', flowFile, '--from', '+447700900111'], {
      input: '9x\n2\nv\n3\n\n',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`call to flow sim-demo from +447700900111 to +442079460000 at 2026-11-22 10:00:00 UTC (Sunday)
#1 menu: read
  hears: "Press 1 for sales, 2 for a text." (TTS_EN-GB_SERENA)
  max_digits=1
  vars: greeted=false
? keys (max 1; Enter alone = TIMEOUT, # ends; h hang up, e fail, v vars)
> 9x
  type the keys (0-9, *, #) then Enter; Enter alone is TIMEOUT; h hang up, e fail, v vars
? keys (max 1; Enter alone = TIMEOUT, # ends; h hang up, e fail, v vars)
> 2
  -> 2
text: sms to +447700900111
  text: "Hello from Acme"
? sms: 1) sent  2) fails: REJECTED  3) fails: TIMEOUT  4) fails: NETWORK  5) fails: FAILED  v) vars (Enter = 1)
> v
  vars (as of the last command): greeted=false
? sms: 1) sent  2) fails: REJECTED  3) fails: TIMEOUT  4) fails: NETWORK  5) fails: FAILED  v) vars (Enter = 1)
> 3
  -> fails: TIMEOUT
  warn EFFECT_FAILED: sms at text failed: TIMEOUT
#2 bye: play
  hears: "Goodbye." (TTS_EN-GB_SERENA)
  vars: greeted=false choice="2"
? play: 1) 0 played  2) 1 failed  h) hang up  e) fail  v) vars (Enter = 1)
> 
  -> 0 played
#3 end: hangup
  vars: greeted=false choice="2"
call ended: HANGUP (the flow hung up)
path:
  1. menu: read -> 2
  2. text: sms -> failed TIMEOUT
  3. bye: play -> 0
  4. end: hangup
vars: greeted=false choice="2"
`);
  }, 60_000);

  it('hangs up when piped input ends', async () => {
    const { text } = await run({}, '1\n');
    expect(text).toContain(
      '  (end of input: the caller hangs up)\ncall ended: HANGUP (the caller hung up during dialout)\n',
    );
    expect(text).toContain('  2. sales: dialout -> caller hung up\n');
  });

  it('runs in a pseudo-terminal: prompts appear, typed answers drive the call', async () => {
    const cmd = `${process.execPath} --import tsx ${MAIN} simulate ${flowFile}`;
    const child = spawn('script', ['-q', '-c', cmd, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, TERM: 'xterm' },
    });
    let screen = '';
    child.stdout.on('data', (d: Buffer) => (screen += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    /** Waits (bounded) until the screen has shown `text` `times` times. */
    const waitFor = async (text: string, times = 1) => {
      for (let i = 0; i < 600; i++) {
        if (strip(screen).split(text).length - 1 >= times) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`"${text}" never appeared; the screen:\n${strip(screen)}`);
    };
    try {
      await waitFor('? keys (max 1;');
      child.stdin.write('1\r');
      await waitFor('? dialout: 1) answer (bridged: call ends)  2) NOANSWER');
      child.stdin.write('2\r');
      await waitFor('? play: 1) 0 played');
      child.stdin.write('h\r');
      await waitFor('vars: greeted=false choice="1"\n', 3);
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
      expect(code).toBe(0);
      const text = strip(screen);
      expect(text).toContain('#1 menu: read\n');
      expect(text).toContain(
        'call ended: HANGUP (the caller hung up during play)\npath:\n  1. menu: read -> 1\n  2. sales: ' +
          'dialout -> NOANSWER\n  3. sales (branch say): play -> caller hung up\n',
      );
      expect(screen).toContain('\x1b['); // colors on a terminal
    } finally {
      child.kill();
    }
  }, 60_000);
});

describe('callscript simulate <unknown flow>', () => {
  it('says which flows there are, with exit code 2', async () => {
    const err = new PassThrough();
    let text = '';
    err.on('data', (c: Buffer) => (text += c.toString()));
    const code = await simulate(
      'nosuch',
      { flows: 'flows' },
      { input: new PassThrough(), output: new PassThrough(), err },
    );
    expect(code).toBe(2);
    expect(text).toBe(
      'callscript simulate: no flow named "nosuch" in flows (flows: appointments, bank-line, call-centre, ' +
        'conference, front-desk, recording-consent, reminder, support-line, voicemail, verify-customer)\n',
    );
  });
});

describe('simulate: dialout targets', () => {
  it('a target without a timeout is shown without one (not "undefined s")', async () => {
    const text =
      'version: 1\nname: d\nstart: out\nsteps:\n  out:\n    dialout: { targets: [{ number: "+33123456789" }, ' +
      '{ number: "+33123456780", timeout: 20 }] }\n    next: end\n  end: { hangup: {} }\n';
    const { model } = checkFlow(text, 'd.yaml');
    const s = new SimSession(compileFlow(model!, text));
    const ev = s.start();
    expect(ev).toContainEqual(
      expect.objectContaining({
        kind: 'command',
        command: 'dialout',
        details: ['targets: +33123456789, +33123456780 (20 s)'],
      }),
    );
  });
});
