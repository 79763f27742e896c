/**
 * `callscript mock-http --routes file.yaml --port N [--log [file]]`: answers http steps from mock routes
 * (src/testing/mock-http.ts); `--log` says what each request sent and what answered it.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { readToolFile } from '../testing/tool-file.js';
import { parseRoutes, startMockHttp, type MockServer, type SeenRequest } from '../testing/mock-http.js';
import { printable } from '../terminal/printable.js';

export interface MockHttpFlags {
  routes?: string;
  port?: string;
  host?: string;
  /** true: a line per request on stdout; a file name: a JSON line per request appended to it. */
  log?: boolean | string;
}

/** The most characters of a body a log line shows. */
const LOG_BODY = 200;

/** A request as a line of the log: method, path, body, and what answered (`routes.yaml:4`, the n-th answer). */
export function logLine(r: SeenRequest, file: string): string {
  const body = r.body.length > LOG_BODY ? `${r.body.slice(0, LOG_BODY)}…` : r.body;
  const by =
    r.route === undefined ? 'no route' : `${file}:${r.route}${r.answer !== undefined ? `, answer ${r.answer}` : ''}`;
  return printable(`${r.method} ${r.url}${body ? ` ${body}` : ''} -> ${r.outcome} (${by})`);
}

export async function mockHttp(
  flags: MockHttpFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<MockServer | number> {
  if (!flags.routes) {
    err.write('callscript mock-http: --routes <file.yaml> is required\n');
    return 2;
  }
  const port = Number(flags.port ?? 4020);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    err.write(`callscript mock-http: --port must be 0 to 65535, got ${flags.port}\n`);
    return 2;
  }
  let text: string;
  try {
    // bounded as flow files are (a routes file is checked as one: at most 2 MB of YAML)
    text = await readToolFile(flags.routes, '--routes');
  } catch (e) {
    err.write(`callscript mock-http: ${(e as Error).message}\n`);
    return 2;
  }
  const { routes, problems } = parseRoutes(text, flags.routes);
  if (problems.length > 0) {
    // each at its file:line:col, quoting the file's values: control characters escaped
    for (const p of problems) err.write(`${printable(p)}\n`);
    return 2;
  }
  const file = flags.routes;
  let log: ((r: SeenRequest) => void) | undefined;
  let stream: WriteStream | undefined;
  if (flags.log === true) log = (r) => out.write(`${logLine(r, file)}\n`);
  else if (typeof flags.log === 'string') {
    const w = (stream = createWriteStream(flags.log, { flags: 'a' }));
    const opened = await new Promise<Error | undefined>((resolve) => {
      w.once('open', () => resolve(undefined));
      w.once('error', resolve);
    });
    if (opened) {
      err.write(`callscript mock-http: --log ${flags.log}: ${opened.message}\n`);
      return 2;
    }
    w.on('error', () => undefined);
    log = (r) => w.write(JSON.stringify(r) + '\n');
  }
  try {
    const s = await startMockHttp(routes, port, flags.host ?? '127.0.0.1', log ? { log } : {});
    out.write(`callscript mock-http: ${routes.length} routes from ${flags.routes} at ${s.url}\n`);
    const w = stream;
    // closing the server flushes and closes the log file
    if (w) return { ...s, close: () => s.close().then(() => new Promise<void>((r) => w.end(() => r()))) };
    return s;
  } catch (e) {
    stream?.destroy();
    err.write(`callscript mock-http: ${(e as Error).message}\n`);
    return 2;
  }
}
