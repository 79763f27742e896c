/** Raw HTTP over a real socket, for what fastify.inject cannot send (half requests, broken framing). */
import net from 'node:net';

export interface RawAnswer {
  /** Everything the server wrote. */
  text: string;
  /** The status of the first response, or 0 if none. */
  status: number;
  /** Its headers, lower-cased names. */
  headers: Record<string, string>;
  /** Its body. */
  body: string;
  /** Whether the server closed the connection (before `waitMs`). */
  closed: boolean;
  /** ms from connecting to the close (or to giving up). */
  ms: number;
}

export interface RawOptions {
  /** Give up after this long (default 5000 ms). */
  waitMs?: number;
  /** Half-close the connection after sending (the client sends nothing more). */
  end?: boolean;
  /** Stop at the first whole response (with a Content-Length) instead of waiting for the close. */
  firstResponse?: boolean;
}

/** Sends `bytes` (none: just connect) and collects what comes back until the server closes or `waitMs` passes. */
export function rawHttp(
  port: number,
  bytes: string | Buffer,
  { waitMs = 5000, end = false, firstResponse = false }: RawOptions = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const done = () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks).toString('latin1'), closed, Date.now() - started));
    };
    const timer = setTimeout(() => {
      s.removeAllListeners('close');
      s.destroy();
      done();
    }, waitMs);
    s.on('data', (d) => {
      chunks.push(d);
      if (!firstResponse) return;
      const a = parseAnswer(Buffer.concat(chunks).toString('latin1'), false, 0);
      if (a.status > 0 && a.body.length === Number(a.headers['content-length'])) {
        s.removeAllListeners('close');
        s.destroy();
        done();
      }
    });
    s.on('error', () => {});
    s.on('close', () => {
      closed = true;
      done();
    });
    if (bytes.length > 0) s.write(bytes);
    if (end) s.end();
  });
}

export function parseAnswer(text: string, closed: boolean, ms: number): RawAnswer {
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  const rest = end < 0 ? '' : text.slice(end + 4);
  return {
    text,
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    body: Number.isFinite(length) ? rest.slice(0, length) : rest,
    closed,
    ms,
  };
}

/** A connected socket, resolved once connected; `closed` resolves when the server closes it. */
export function openSocket(port: number): Promise<{ socket: net.Socket; closed: Promise<void>; data: () => string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, closed, data: () => text }));
    socket.once('error', reject);
  });
}

/** Waits for `p`, or gives up after `ms` with `false`. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  const ok = await Promise.race([p.then(() => true), timeout]);
  clearTimeout(timer);
  return ok;
}
