/**
 * Terminal escapes from outside never reach the operator's terminal (docs/security.md, "Terminal output"): what
 * callers send, flows and scenario files hold, the store keeps and remote servers answer is printed by every
 * human-readable output with its control characters and bidi controls escaped (\x1b, \x9b, \u202e), while the
 * tools' own layout and colours stay.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { pino } from 'pino';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../src/cli/call.js';
import { calls, trace } from '../../src/cli/calls.js';
import { finishedTable, liveTable, traceText, type CallDetail, type FinishedRow } from '../../src/cli/calls-format.js';
import { graph } from '../../src/cli/graph.js';
import { logStream } from '../../src/cli/log-format.js';
import { mockHttp } from '../../src/cli/mock-http.js';
import { paths } from '../../src/cli/paths.js';
import { simulate } from '../../src/cli/simulate.js';
import { test as runTests } from '../../src/cli/test.js';
import { validate } from '../../src/cli/validate.js';
import { formatTranscript } from '../../src/emulator/driver/format.js';
import type { Transcript } from '../../src/emulator/driver/transcript.js';
import { createServer, type Server } from '../../src/http/server.js';
import { scenarioYaml } from '../../src/testing/paths.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { cmd, fakeServer, LOGIN, PASSWORD, startEmulator } from '../emulator/helpers.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { CLI } from '../helpers/cli.js';

/** An attacker's text: a window title, a screen clear, red fake text, CSI as one C1 character, a bidi override. */
const EVIL = '\x1b]0;pwned\x07\x1b[2J\x1b[31mFAKE\u009b2J\u202eevil\r\bX\x7f';
/** The same, as the tools show it. */
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mFAKE\\x9b2J\\u202eevil\\x0d\\x08X\\x7f';
/** What a terminal acts on (C0 but the line feed, DEL, C1) or what reorders text (bidi controls). */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function capture() {
  let text = '';
  const out = new Writable({
    write(chunk, _e, cb) {
      text += String(chunk);
      cb();
    },
  });
  return { out, text: () => text };
}

const dir = mkdtempSync(join(tmpdir(), 'callscript-escapes-'));

/** A flow with the attacker's text in a var, a prompt and a say (YAML's escapes: the file itself is plain text). */
const EVIL_YAML = '\\e]0;pwned\\a\\e[2J\\e[31mFAKE\\x9b2J\\u202eevil\\r\\bX\\x7f';
const FLOW = `version: 1
name: evil
start: menu
vars:
  note: "${EVIL_YAML}"
steps:
  menu:
    read:
      prompt: "${EVIL_YAML}"
      max_digits: 1
    save: choice
    on:
      "1": bye
      default: bye
  bye:
    say: "Bye ${EVIL_YAML}"
    next: end
  end:
    hangup: {}
`;
const flows = join(dir, 'flows');
mkdirSync(flows);
writeFileSync(join(flows, 'evil.yaml'), FLOW);

describe('trace and calls: what a caller sent, as the admin API gives it back', () => {
  let server: Server;
  let admin: string;
  const port = (s: Server) => (s.app.server.address() as { port: number }).port;
  const send = async (over: Partial<RtFields>) => {
    const r = await fetch(`http://127.0.0.1:${port(server)}/rt/desk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rtBody(over),
    });
    expect(r.status).toBe(200);
  };
  beforeAll(async () => {
    server = await createServer({
      flowsDir: new URL('../fixtures/history', import.meta.url).pathname,
      logLevel: false,
      admin: { login: 'boss', password: 'pw' },
    });
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    admin = `http://boss:pw@127.0.0.1:${port(server)}`;
    await send({ callid: '5150' });
    await send({ callid: '5150', command: 'read', command_id: 1, command_result: '\u202e1', command_error: EVIL });
  });
  afterAll(async () => server.app.close());

  it("trace prints a command_error's escapes visibly, and no control byte", async () => {
    const c = capture();
    expect(await trace('5150', { server: admin }, {}, c.out, capture().out)).toBe(0);
    expect(c.text()).not.toMatch(RAW);
    expect(c.text()).toMatch(new RegExp(` {2}got read "\\\\u202e1" error ${escapeRe(SHOWN)} {2}sent `));
  });

  it("calls and trace print the server's error messages escaped", async () => {
    const fake = createHttpServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'STORE_UNAVAILABLE', message: EVIL } }));
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const at = `http://boss:pw@127.0.0.1:${(fake.address() as { port: number }).port}`;
    try {
      const e = capture();
      expect(await calls({ server: at }, {}, capture().out, e.out)).toBe(2);
      const t = capture();
      expect(await trace('5150', { server: at }, {}, capture().out, t.out)).toBe(2);
      for (const text of [e.text(), t.text()]) {
        expect(text).not.toMatch(RAW);
        expect(text).toContain(SHOWN);
      }
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });
});

describe('the call tables and the timeline, from any answer of the admin API', () => {
  const call: CallDetail = {
    callid: EVIL,
    status: 'finished',
    flow: EVIL,
    version: EVIL,
    started: EVIL,
    commands: 1,
    vars: { note: EVIL },
    path: [
      {
        at: 0,
        ms: 1,
        from: EVIL,
        command: EVIL,
        result: EVIL,
        error: `${EVIL}\nFAKE LINE`,
        step: EVIL,
        reply: { command: EVIL, params: { media_id: EVIL } },
        transitions: [EVIL],
        effects: [{ kind: 'http', step: EVIL, outcome: EVIL, value: EVIL, ms: 1 }],
        late: false,
        outcome: 'ok',
        traceId: EVIL,
      },
    ],
    sms: [{ hash: EVIL, step: EVIL, status: EVIL, error: EVIL, updatedAt: EVIL, history: [] }],
    ended: EVIL,
    durationMs: 1,
    outcome: EVIL,
    callStatus: EVIL,
    lastStep: EVIL,
  };

  it('traceText: every value escaped, a line feed in one starts no line', () => {
    const text = traceText(call);
    expect(text).not.toMatch(RAW);
    // header, started, vars, blank, the request, its effect, blank, the sms heading and its line
    expect(text.split('\n')).toHaveLength(9);
    expect(text).toContain(`error ${SHOWN}\\x0aFAKE LINE`);
  });

  it('liveTable and finishedTable: cells escaped, columns lined up on what is shown', () => {
    const live = liveTable(
      [{ callid: EVIL, flow: 'desk', version: EVIL, step: EVIL, started: EVIL, lastSeen: null, commands: 1 }],
      0,
    );
    const row = { callid: '1', flow: EVIL, outcome: EVIL, started: EVIL, durationMs: 1 };
    const done = finishedTable([row as unknown as FinishedRow]);
    for (const t of [live, done]) expect(t).not.toMatch(RAW);
    const [head, line] = live.split('\n');
    expect(line!.indexOf('desk')).toBe(head!.indexOf('FLOW'));
    expect(line!.startsWith(SHOWN)).toBe(true);
  });
});

describe('validate: the values and the text of a flow', () => {
  it('prints no control byte of a flow: messages and code frames escaped, the caret under what is shown', async () => {
    const file = join(dir, 'broken.yaml');
    // a raw ESC and BEL in the file itself before the misspelt key, an escaped one in a step name
    writeFileSync(
      file,
      'version: 1\nstart: menu\nsteps:\n  menu:\n    read: { prompt: "a\x1b[2J\x07", max_digits: 1, promt: x }\n' +
        `    next: "nowhere ${EVIL_YAML}"\n`,
    );
    const c = capture();
    expect(await validate([file], c.out)).toBe(1);
    expect(c.text()).not.toMatch(RAW);
    expect(c.text()).toContain(
      [
        `${file}:5:46 error UNKNOWN_KEY step 'menu': unknown key 'promt' in read`,
        '4 |   menu:',
        '5 |     read: { prompt: "a\\x1b[2J\\x07", max_digits: 1, promt: x }',
        '  |                                                    ^^^^^',
      ].join('\n'),
    );
    expect(c.text()).toContain(`error UNKNOWN_STEP no step 'nowhere ${SHOWN}' in this flow`);
  });

  it("escapes a file's name", async () => {
    const sub = join(dir, 'names');
    mkdirSync(sub);
    writeFileSync(join(sub, 'a\x1b]0;x\x07.yaml'), 'version: 1\nstart: nowhere\nsteps: {}\n');
    const c = capture();
    expect(await validate([sub], c.out)).toBe(1);
    expect(c.text()).not.toMatch(RAW);
    expect(c.text()).toContain('a\\x1b]0;x\\x07.yaml');
  });
});

describe('simulate, test, graph and paths: a flow whose prompts hold terminal escapes', () => {
  const SAY_SHOWN = `"Bye ${SHOWN}" (TTS_EN-GB_SERENA)`;
  async function sim(isTTY: boolean) {
    const input = new PassThrough();
    const output = Object.assign(new PassThrough(), { isTTY });
    let text = '';
    output.on('data', (d: Buffer) => (text += d.toString()));
    input.end(`1\n\u202e\x1b[2J\n`);
    const code = await simulate('evil', { flows }, { input, output, err: new PassThrough() });
    return { code, text };
  }

  it('simulate: prompts, vars, typed lines and the path escaped; its own colours kept on a terminal', async () => {
    const plain = await sim(false);
    expect(plain.code).toBe(0);
    expect(plain.text).not.toMatch(RAW);
    expect(plain.text).toContain(`  hears: "${SHOWN}" (TTS_EN-GB_SERENA)`);
    expect(plain.text).toContain(`  hears: ${SAY_SHOWN}`);
    expect(plain.text).toContain('> \\u202e\\x1b[2J');
    const tty = await sim(true);
    expect(tty.text).toMatch(/\x1b\[1;36m#1 menu: read\x1b\[0m/);
    expect(tty.text.replace(/\x1b\[[0-9;]*m/g, '')).not.toMatch(RAW);
    expect(tty.text).toContain(`  hears: \x1b[32m${SAY_SHOWN}\x1b[0m\n`);
  });

  it('test: a failing case shows the values escaped, its name too', async () => {
    const file = join(dir, 'evil.test.yaml');
    writeFileSync(
      file,
      'flow: evil\ncases:\n  - name: "menu \\e[2J\\u202e"\n    steps:\n' +
        '      - expect: { command: read, params: { media_id: "TTS|TTS_EN-GB_SERENA|Press 1" } }\n' +
        '        result: "1"\n',
    );
    let text = '';
    expect(await runTests([file], { flows }, { write: (s: string) => (text += s) })).toBe(1);
    expect(text).not.toMatch(RAW);
    expect(text).toContain('menu \\x1b[2J\\u202e');
    expect(text).toContain('FAKE\\x9b2J\\u202eevil\\r\\bX\\x7f"');
  });

  it('graph: Mermaid and dot labels escaped', async () => {
    for (const format of ['mermaid', 'dot']) {
      const c = capture();
      expect(await graph('evil', { flows, format }, c.out, capture().out)).toBe(0);
      expect(c.text()).not.toMatch(RAW);
      expect(c.text()).toContain(format === 'dot' ? 'FAKE\\\\x9b2J' : 'FAKE\\x9b2J');
    }
  });

  it('paths: the scenario file and its notes escaped; a quoted value read back the same', async () => {
    const pathsDir = join(dir, 'paths');
    mkdirSync(pathsDir);
    writeFileSync(
      join(pathsDir, 'check.yaml'),
      'version: 2\nname: check\nstart: ask\nsteps:\n  ask:\n    read: { prompt: "Code?", max_digits: 4 }\n' +
        '    save: code\n    next: check\n  check:\n' +
        `    when: "vars.code == '12\\u202e\\x9b' || call.cli_name == 'Ada\\e[2J'"\n` +
        '    then: bye\n    else: end\n  bye:\n    say: "Bye"\n    next: end\n  end:\n    hangup: {}\n',
    );
    const out = capture();
    const err = capture();
    expect(await paths('check', { flows: pathsDir, maxSeconds: '20' }, out.out, err.out)).toBe(0);
    for (const t of [out.text(), err.text()]) {
      expect(t).not.toMatch(RAW);
      expect(t).toContain(`vars.code == '12\\u202e\\x9b' || call.cli_name == 'Ada\\x1b[2J'`);
    }
    const g = {
      cases: [
        { transition: 'x', found: undefined as never, lines: ['  - name: "a\u009bb\u202ec\\u001bd"', '    steps: []'] },
      ],
      skipped: [],
    };
    const yaml = scenarioYaml({ name: 'x' } as CompiledFlow, g);
    expect(yaml).not.toMatch(RAW);
    expect(yaml).toContain('name: "a\\x9bb\\u202ec\\u001bd"');
    expect(parse(yaml).cases[0].name).toBe('a\u009bb\u202ec\u001bd');
  });
});

describe('call: what a server answered, in the transcript', () => {
  it("a play's text and a caller script's name escaped", async () => {
    const e = await startEmulator();
    const server = await fakeServer((r) =>
      r.json?.call_status !== 'UP'
        ? { body: cmd('hangup', 99) }
        : r.json?.command === ''
          ? { body: cmd('play', 1, { media_id: `TTS|TTS_EN-GB_SERENA|${EVIL}`, [EVIL]: EVIL }) }
          : { body: cmd('hangup', 2) },
    );
    try {
      const caller = join(dir, 'caller.yaml');
      writeFileSync(caller, `name: "${EVIL_YAML}"\nactions:\n  - play: played\n`);
      const out = capture();
      const err = capture();
      const code = await call(
        { url: server.url, caller, emulator: e.base, login: LOGIN, password: PASSWORD },
        {},
        out.out,
        err.out,
      );
      expect(err.text()).toBe('');
      expect(code).toBe(1); // the unknown param is a violation
      expect(out.text()).not.toMatch(RAW);
      expect(out.text()).toContain(`media_id: TTS|TTS_EN-GB_SERENA|${SHOWN}`);
      expect(out.text()).toContain(`caller: ${SHOWN}`);
    } finally {
      await server.close();
      await e.close();
    }
  });

  it('formatTranscript: every line escaped whole', () => {
    const t = {
      id: EVIL,
      callid: EVIL,
      direction: 'inbound',
      url: EVIL,
      app: EVIL,
      request_hash: EVIL,
      from: EVIL,
      cli_name: EVIL,
      to: `${EVIL}\nFAKE LINE`,
      date_started: EVIL,
      cdr_field: EVIL,
      caller: EVIL,
      status: 'ended',
      end_reason: EVIL,
      duration_ms: 0,
      requests: 1,
      commands: [],
      violations: [{ request: 1, code: EVIL, field: EVIL, message: EVIL }],
      warnings: [],
      unused_actions: [EVIL],
      sms: [
        { request: 1, hash: EVIL, from: EVIL, to: EVIL, text: EVIL, encoding: EVIL, parts: 1, matched_by: 'header' },
      ],
    } as unknown as Transcript;
    const text = formatTranscript(t);
    expect(text).not.toMatch(RAW);
    expect(text).toContain(`${SHOWN}\\x0aFAKE LINE`);
  });
});

describe('serve', () => {
  it("its start output: the flows' files escaped, those it refused too", async () => {
    const d = join(dir, 'served');
    mkdirSync(d);
    writeFileSync(
      join(d, 'desk\x1b]0;x\x07.yaml'),
      'version: 1\nname: desk\nstart: end\nsteps:\n  end:\n    hangup: {}\n',
    );
    writeFileSync(join(d, 'bad\u202e.yaml'), 'version: 1\nname: bad\nstart: nowhere\nsteps: {}\n');
    const { out, err } = await new Promise<{ out: string; err: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [...CLI, 'serve', '--port', '0', '--flows', d, '--log-level', 'silent']);
      let out = '';
      let err = '';
      child.stderr.on('data', (b) => (err += b));
      child.stdout.on('data', (b) => {
        out += b;
        // the last line of its start output
        if (out.includes('  watching ')) child.kill('SIGTERM');
      });
      child.on('close', () => (out.includes('  watching ') ? resolve({ out, err }) : reject(new Error(err))));
    });
    for (const t of [out, err]) expect(t).not.toMatch(RAW);
    expect(out).toMatch(/ {2}POST http:\/\/127\.0\.0\.1:\d+\/rt\/desk {2}\(desk\\x1b\]0;x\\x07\.yaml, version /);
    expect(out).toContain(`  refused (errors above): ${join(d, 'bad\\u202e.yaml')}\n`);
    expect(err).toContain(`${join(d, 'bad\\u202e.yaml')}:3:8 error UNKNOWN_STEP`);
  });
});

describe('mock-http and the logs', () => {
  it("mock-http: a routes file's problems escaped", async () => {
    const routes = join(dir, 'routes.yaml');
    writeFileSync(routes, `"rout${EVIL_YAML}": []\n`);
    const err = capture();
    expect(await mockHttp({ routes, port: '0' }, capture().out, err.out)).toBe(2);
    expect(err.text()).not.toMatch(RAW);
    expect(err.text()).toContain(`unknown key "rout${SHOWN}"`);
  });

  it('the readable log lines: messages and fields escaped, one line per entry', () => {
    const c = capture();
    const log = pino({ level: 'info' }, logStream('pretty', c.out)!);
    log.warn({ url: `/rt/x${EVIL}`, file: EVIL }, `reload failed ${EVIL}\nFAKE LINE`);
    const text = c.text();
    expect(text).not.toMatch(RAW);
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toContain(`reload failed ${SHOWN}\\x0aFAKE LINE {"url":"/rt/x\\u001b]0;pwned`);
    expect(text).toContain('FAKE\\x9b2J\\u202eevil');
  });
});

const escapeRe = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
