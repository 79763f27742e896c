/** Test helpers: an in-process emulator, authenticated requests, and a fake customer server. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import type { Transcript } from '../../src/emulator/driver/transcript.js';

export const LOGIN = 'acme';
export const PASSWORD = 's3cret';
export const AUTH = 'Basic ' + Buffer.from(`${LOGIN}:${PASSWORD}`).toString('base64');

export interface Running {
  emu: Emulator;
  base: string;
  /** fetch with the account's Basic credentials (unless headers.authorization is given). */
  req(
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: string },
  ): Promise<{ status: number; json: any; text: string; headers: Headers }>;
  rpc(method: string, params?: unknown, id?: unknown): Promise<any>;
  /** POST /emulator/calls and the transcript (status 200 expected). */
  call(body: Record<string, unknown>): Promise<Transcript>;
  close(): Promise<void>;
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<Running> {
  const emu = await createEmulator({ login: LOGIN, password: PASSWORD, logLevel: false, ...opts });
  const base = await emu.listen(0, '127.0.0.1');
  const req: Running['req'] = async (path, init = {}) => {
    const headers: Record<string, string> = { authorization: AUTH, ...init.headers };
    let body: string | undefined = init.raw;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + path, {
      method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
      headers,
      body,
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  };
  return {
    emu,
    base,
    req,
    rpc: async (method, params = [], id = 1) =>
      (
        await req('/json-rpc/v1.1/', {
          body: { jsonrpc: '2.0', method, params, id },
          headers: { 'content-type': 'application/json-rpc; charset=utf-8' },
        })
      ).json,
    call: async (body) => {
      const r = await req('/emulator/calls', { body });
      if (r.status !== 200) throw new Error(`POST /emulator/calls: HTTP ${r.status} ${r.text}`);
      return r.json as Transcript;
    },
    close: () => emu.close(),
  };
}

export interface SeenRequest {
  headers: IncomingMessage['headers'];
  body: string;
  json: any;
}

export type Answer = { status?: number; body: string | object; type?: string; delayMs?: number };

/**
 * A fake customer server: `answer(request, n)` decides each reply; every request is kept
 * (raw text too, to check the wire format).
 */
export async function fakeServer(
  answer: (r: SeenRequest, n: number) => Answer,
): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const r = { headers: req.headers, body, json };
      seen.push(r);
      const a = answer(r, seen.length);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status ?? 200, { 'content-type': a.type ?? 'application/json' });
        res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/rt`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A reply of the customer server. */
export const cmd = (command: string, command_id: number, params: object = {}, variables: object = {}) => ({
  command,
  command_id,
  params,
  variables,
});

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` (request line and headers, CRLF-separated, without the blank line) and
 * `body` over a plain socket, exactly as written (fetch would fix up a bad Content-Type),
 * and reads the answer until the server closes the connection.
 */
export function rawHttp(base: string, head: string, body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    s.on('data', (d) => chunks.push(d));
    s.on('error', reject);
    s.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1))
        headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    s.write(`${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

/** A maker of temporary folders for this test file; they are removed after each test. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
