/**
 * Shared by the tests of the service client, `apps`, outbound calls and `dial`: the emulator
 * listening on a free port (a black box: only its HTTP API is used), a callscript server
 * listening with the reminder flow and an admin API, fake services that misbehave, and
 * captured output.
 */
import { copyFileSync, mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createEmulator, type Emulator } from '../../src/emulator/server.js';
import { createServer, type Server, type ServerOptions } from '../../src/http/server.js';
import { ServiceClient } from '../../src/service/jsonrpc.js';

export const ROOT = new URL('../..', import.meta.url).pathname;

export function capture(): { out: Writable; text: () => string } {
  let s = '';
  return {
    out: new Writable({
      write(chunk, _e, cb) {
        s += chunk.toString();
        cb();
      },
    }),
    text: () => s,
  };
}

export interface Emu {
  emu: Emulator;
  /** http://127.0.0.1:PORT */
  base: string;
  close(): Promise<void>;
}

export async function startEmulator(
  opts: { login?: string; password?: string; clock?: { now(): number } } = {},
): Promise<Emu> {
  const emu = await createEmulator({ logLevel: false, ...opts });
  const base = await emu.listen(0, '127.0.0.1');
  return { emu, base, close: () => emu.close() };
}

/** A JSON-RPC call to the emulator, as any client would make it. */
export async function rpc(
  base: string,
  method: string,
  params: unknown[],
  auth = 'emulator:emulator',
): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const r = await fetch(`${base}/json-rpc/v1.1/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json-rpc; charset=utf-8',
      authorization: 'Basic ' + Buffer.from(auth).toString('base64'),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await r.json()) as { result?: unknown; error?: { code: number; message: string } };
}

/** Registers a caller script for calls to `number` (the emulator's control API). */
export async function registerCaller(base: string, number: string, caller: object): Promise<void> {
  const r = await fetch(`${base}/emulator/callers/${encodeURIComponent(number)}`, {
    method: 'PUT',
    headers: {
      'content-type': 'application/json',
      authorization: 'Basic ' + Buffer.from('emulator:emulator').toString('base64'),
    },
    body: JSON.stringify({ caller }),
  });
  if (r.status !== 200) throw new Error(`caller not registered: ${r.status} ${await r.text()}`);
}

export interface Served {
  server: Server;
  /** http://127.0.0.1:PORT */
  base: string;
  /** With the admin credentials in it, for --server. */
  admin: string;
  /** The log lines written (JSON). */
  logs: () => Record<string, unknown>[];
  close(): Promise<void>;
}

export const ADMIN = { login: 'boss', password: 's3 cret:x' };

/** A flows directory with the reminder flow (the example of an outbound flow). */
export function reminderFlows(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-svc-'));
  copyFileSync(join(ROOT, 'flows/reminder.yaml'), join(dir, 'reminder.yaml'));
  return dir;
}

/** callscript's server on a free port, with the admin API and (unless given otherwise) no service account. */
export async function startServer(opts: Partial<ServerOptions> = {}): Promise<Served> {
  const lines: string[] = [];
  const server = await createServer({
    flowsDir: reminderFlows(),
    logLevel: 'info',
    logStream: { write: (l: string) => void lines.push(l) },
    admin: ADMIN,
    ...opts,
  });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (server.app.server.address() as { port: number }).port;
  return {
    server,
    base: `http://127.0.0.1:${port}`,
    admin: `http://${ADMIN.login}:${encodeURIComponent(ADMIN.password)}@127.0.0.1:${port}`,
    logs: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    close: () => server.app.close(),
  };
}

export const adminAuth = 'Basic ' + Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64');

/** A request to the server's admin API: status and JSON body. */
export async function admin(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: adminAuth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: r.status, body: await r.json() };
}

/** A TCP server that accepts connections and never answers (a service that hangs). */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const s: NetServer = createNetServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const k of sockets) k.destroy();
        s.close(() => r());
      }),
  };
}

/** An HTTP server answering every request with `answer` (and keeping what it was sent). */
export async function fakeService(
  answer: (req: IncomingMessage, body: string) => { status?: number; type?: string; body: string },
): Promise<{
  url: string;
  requests: { headers: IncomingMessage['headers']; body: string; method: string; url: string }[];
  close(): Promise<void>;
}> {
  const requests: { headers: IncomingMessage['headers']; body: string; method: string; url: string }[] = [];
  const s: HttpServer = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ headers: req.headers, body, method: req.method ?? '', url: req.url ?? '' });
      const a = answer(req, body);
      res.writeHead(a.status ?? 200, { 'content-type': a.type ?? 'application/json-rpc; charset=utf-8' });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((r) => s.close(() => r())) };
}

/** A port nothing listens on (taken, then freed). */
export async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * The emulator, a server that places calls through it (the reminder flow), and a REALTIME10 application calling that
 * server.
 */
export async function reminderTestbed(): Promise<{ emu: Emu; srv: Served; app: string }> {
  const emu = await startEmulator();
  const srv = await startServer({ service: { url: emu.base, login: 'emulator', password: 'emulator' } });
  const app = (
    await new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' }).apps.create('reminder', {
      url: `${srv.base}/rt/reminder`,
    })
  ).hash;
  return { emu, srv, app };
}

/** The numbers a server placed calls to, in order (its OUTBOUND_PLACED log lines). */
export function placedNumbers(srv: Served): string[] {
  return srv
    .logs()
    .filter((l) => l.code === 'OUTBOUND_PLACED')
    .map((l) => l.number as string);
}
