/**
 * A draining server (SIGTERM) is not held up by clients that send nothing or trickle: once
 * it closes, Node no longer enforces headers_timeout_ms and request_timeout_ms (their
 * checking timer stops) and never closes a connection that has not sent a whole request,
 * so before the fix a silent connection kept the process up to socket_timeout_ms and one
 * trickling its headers or its body kept it forever. Memory store: needs no Redis.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Processes, alive } from '../helpers/processes.js';
import { openSocket, within } from '../helpers/socket.js';
import { rtBody } from '../helpers/rt.js';
import { DESK_V1, flowsDir } from './desk.js';

const procs = new Processes();
afterAll(() => procs.killAll());

it(
  'SIGTERM: connections that sent nothing, or trickle their ' + 'headers or body, do not hold the process (exit 0)',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-slow-'));
    // socket_timeout_ms at its maximum: it is not what ends these connections
    writeFileSync(
      join(dir, 'callscript.yaml'),
      'server: { watch: false, headers_timeout_ms: 2000, request_timeout_ms: 2000, socket_timeout_ms: 600000 }\n',
    );
    const srv = await procs.serve(['--flows', flowsDir(DESK_V1), '--config', join(dir, 'callscript.yaml')]);
    const silent = await openSocket(srv.port);
    const headers = await openSocket(srv.port);
    headers.socket.write('POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const body = await openSocket(srv.port);
    const text = rtBody({ callid: '7300' });
    body.socket.write(
      `POST /rt/desk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n{`,
    );
    // a byte every 200 ms: always moving, never done
    let sent = 0;
    const trickle = setInterval(() => {
      if (!headers.socket.destroyed) headers.socket.write(`X-Slow-${sent}: 1\r\n`);
      if (!body.socket.destroyed) body.socket.write(' ');
      sent++;
    }, 200);
    try {
      await new Promise((r) => setTimeout(r, 300));
      srv.child.kill('SIGTERM');
      // generous bounds: before the fix none of these happened within 600 s
      expect(await within(silent.closed, 10_000), 'the silent connection closed').toBe(true);
      expect(await within(headers.closed, 10_000), 'the connection trickling headers closed').toBe(true);
      expect(await within(body.closed, 15_000), 'the connection trickling its body closed').toBe(true);
      expect(await within(srv.exited, 10_000), 'the process exited').toBe(true);
    } finally {
      clearInterval(trickle);
    }
    expect(await srv.exited).toEqual({ code: 0, signal: null });
    expect(alive(srv.pid)).toBe(false);
    // nothing was answered on them: no request of theirs was ever handled
    expect([silent.data(), headers.data(), body.data()]).toEqual(['', '', '']);
  },
  60_000,
);
