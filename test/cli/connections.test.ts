/**
 * A real `callscript serve` process with few file descriptors (ulimit -n 160): many idle
 * connections must not starve it. Over server.max_connections they are closed as they come,
 * and the process can still open files (a reload reads the flows) and answer on the
 * connections it holds. Without the cap the connections take every descriptor and the
 * reload fails with EMFILE.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { openSocket, parseAnswer, within } from '../helpers/socket.js';

const root = new URL('../..', import.meta.url).pathname;

it('callscript serve under ulimit -n 160 keeps working with 150 connections open (max_connections: 60)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-fds-'));
  mkdirSync(join(dir, 'flows'));
  copyFileSync(join(root, 'test/fixtures/http-flows/desk.yaml'), join(dir, 'flows', 'desk.yaml'));
  writeFileSync(
    join(dir, 'callscript.yaml'),
    'server: { port: 0, watch: false, max_connections: 60, headers_timeout_ms: 60000, request_timeout_ms: ' +
      '60000 }\nadmin: { login: boss, password: s3cret }\n',
  );
  const cmd =
    `ulimit -n 160 && exec "${process.execPath}" ${CLI.map((a) => `"${a}"`).join(' ')} serve --config ` +
    `"${join(dir, 'callscript.yaml')}" --log-level warn`;
  const child = spawn('sh', ['-c', cmd], { cwd: root });
  let out = '';
  let log = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (log += d));
  const sockets: Awaited<ReturnType<typeof openSocket>>[] = [];
  try {
    const started = Date.now();
    while (!/on http:\/\/127\.0\.0\.1:(\d+)\n/.test(out)) {
      if (Date.now() - started > 20_000) throw new Error(`the server did not start: ${out}${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const port = Number(/on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(out)![1]);
    for (let i = 0; i < 150; i++) sockets.push(await openSocket(port));
    // the ones over the cap are closed by the server: waited for (5 s at most), the others are held
    const closed = sockets.map(() => false);
    sockets.forEach((s, i) => void s.closed.then(() => (closed[i] = true)));
    for (const end = Date.now() + 5000; closed.filter(Boolean).length < 150 - 60 && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 20));
    const refused = [...closed];
    expect(refused.filter(Boolean).length).toBeGreaterThanOrEqual(150 - 60);
    const held = sockets.filter((_, i) => !refused[i]);
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThanOrEqual(60);
    // on a connection it holds, the server reloads its flows (opens files) and answers
    const s = held[0]!;
    const auth = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
    s.socket.write(
      `POST /admin/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\nConnection: close\r\n\r\n`,
    );
    await within(s.closed, 15_000);
    const a = parseAnswer(s.data(), true, 0);
    expect(a.status, s.data()).toBe(200);
    expect(JSON.parse(a.body)).toMatchObject({ ok: true });
    expect(log + out).toContain('CONNECTION_LIMIT');
    expect(log + out).not.toContain('EMFILE');
  } finally {
    for (const s of sockets) s.socket.destroy();
    child.kill('SIGTERM');
  }
}, 60_000);
