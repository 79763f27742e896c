/**
 * `callscript mock-http --routes file.yaml --port N`: answers http steps from mock routes (src/testing/mock-http.ts).
 */
import { readToolFile } from '../testing/tool-file.js';
import { parseRoutes, startMockHttp, type MockServer } from '../testing/mock-http.js';
import { printable } from '../terminal/printable.js';

export interface MockHttpFlags {
  routes?: string;
  port?: string;
  host?: string;
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
  try {
    const s = await startMockHttp(routes, port, flags.host ?? '127.0.0.1');
    out.write(`callscript mock-http: ${routes.length} routes from ${flags.routes} at ${s.url}\n`);
    return s;
  } catch (e) {
    err.write(`callscript mock-http: ${(e as Error).message}\n`);
    return 2;
  }
}
