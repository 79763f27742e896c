/**
 * `callscript emulator`'s banner (docs/emulator.md "Start"): its run-a-call line names the
 * emulator's own URL and the real-time server's (--server, or the origin of a --webhook to
 * callscript's receiver), or says the server's is not known; never a fixed port.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { emulator } from '../../src/cli/emulator.js';
import type { Emulator } from '../../src/emulator/server.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

const started: Emulator[] = [];
afterAll(async () => {
  for (const s of started) await s.close();
});

/** Runs the command in process; the signal handlers it adds are removed (only those). */
async function run(flags: Parameters<typeof emulator>[0], env: NodeJS.ProcessEnv = {}) {
  const out = new Capture();
  const err = new Capture();
  const before = { int: process.listeners('SIGINT'), term: process.listeners('SIGTERM') };
  const r = await emulator({ port: '0', logLevel: 'silent', ...flags }, { LOG_FORMAT: 'json', ...env }, out, err);
  for (const l of process.listeners('SIGINT')) if (!before.int.includes(l)) process.off('SIGINT', l);
  for (const l of process.listeners('SIGTERM')) if (!before.term.includes(l)) process.off('SIGTERM', l);
  if (typeof r !== 'number') started.push(r);
  const base = /callscript emulator on (\S+)/.exec(out.text)?.[1] ?? '';
  return { r, out: out.text, err: err.text, base, tail: out.text.split('\n').slice(-3).join('\n') };
}

describe('callscript emulator: how to run a call', () => {
  it("names its own port, and says the server's URL is not known", async () => {
    const e = await run({});
    expect(e.err).toBe('');
    expect(e.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(e.base).not.toBe('http://127.0.0.1:4010');
    expect(e.tail).toBe(
      "  server         not known: give callscript serve's URL with --server (its default: http://127.0.0.1:3000)\n" +
        `run a call: callscript call --emulator ${e.base} --url <server>/rt/<flow> --caller caller.yaml\n`,
    );
  });

  it('takes the server from --server (or CALLSCRIPT_SERVER_URL), else from --webhook', async () => {
    const a = await run({ server: 'http://127.0.0.1:3100/' });
    expect(a.tail).toBe(
      '  server         http://127.0.0.1:3100 (--server)\n' +
        `run a call: callscript call --emulator ${a.base} --url http://127.0.0.1:3100/rt/<flow> --caller caller.yaml\n`,
    );
    const b = await run({}, { CALLSCRIPT_SERVER_URL: 'http://10.0.0.5:8080' });
    expect(b.tail).toContain(`--url http://10.0.0.5:8080/rt/<flow> --caller caller.yaml\n`);
    const c = await run({ webhook: 'http://127.0.0.1:3200/webhooks/callr' });
    expect(c.tail).toBe(
      '  server         http://127.0.0.1:3200 (the origin of --webhook)\n' +
        `run a call: callscript call --emulator ${c.base} --url http://127.0.0.1:3200/rt/<flow> --caller caller.yaml\n`,
    );
  });

  it('refuses a --server that is not an http URL', async () => {
    const e = await run({ server: 'localhost:3000' });
    expect(e.r).toBe(2);
    expect(e.err).toBe('callscript emulator: --server must be an http:// or https:// URL, got localhost:3000\n');
  });
});
