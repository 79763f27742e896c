import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

const root = new URL('../..', import.meta.url).pathname;

async function until<T>(fn: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('callscript serve reloads its flows on SIGHUP (with the watcher off)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-hup-'));
  mkdirSync(join(dir, 'flows'));
  const flow = join(dir, 'flows', 'desk.yaml');
  copyFileSync(join(root, 'test/fixtures/http-flows/desk.yaml'), flow);
  writeFileSync(join(dir, 'callscript.yaml'), 'server: { port: 0, watch: false, reload_settle_ms: 0 }\n');
  const child = spawn(
    process.execPath,
    [...CLI, 'serve', '--config', join(dir, 'callscript.yaml'), '--log-level', 'info'],
    { cwd: root },
  );
  let out = '';
  let log = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (log += d));
  try {
    const url = await until(async () => /on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)?.[1], 'the server');
    const version = async () =>
      ((await (await fetch(`${url}/health`)).json()) as { flows: { version: string }[] }).flows[0]!.version;
    const v1 = await until(version, 'health');
    writeFileSync(flow, readFileSync(flow, 'utf8').replace('Press 1 for sales.', 'Press 1 for sales, please.'));
    await new Promise((r) => setTimeout(r, 300));
    expect(await version(), 'no watcher: nothing changes by itself').toBe(v1);
    child.kill('SIGHUP');
    const v2 = await until(async () => {
      const v = await version();
      return v !== v1 ? v : undefined;
    }, 'the reload');
    expect(v2).toMatch(/^[0-9a-f]{12}$/);
    // The log comes through a pipe, /health through a socket: the line may land just after.
    const line = `flow desk version ${v2} published (was ${v1})`;
    await until(async () => ((out + log).includes(line) ? true : undefined), 'the publish log line');
    expect(out + log).toContain(line);
  } finally {
    child.kill('SIGTERM');
  }
});
