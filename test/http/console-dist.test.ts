/**
 * The console as the built package serves it: `npm run build` copies its page and assets to
 * dist/http/console/ (tsc compiles .ts files only), and `node dist/cli/main.js serve` serves
 * them and lays graphs out on its thread from dist/http/layout-worker.js, without tsx.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, ADMIN_HEADER, flowsDir } from '../helpers/console.js';
import { DESK } from '../helpers/console-flows.js';

const root = new URL('../..', import.meta.url).pathname;
const dist = join(root, 'dist/http/console');
const src = join(root, 'src/http/console');
const built = existsSync(join(root, 'dist/cli/main.js'));
// no config file of the developer's: the server runs in the flows' directory, with no callscript.yaml
const { CALLSCRIPT_CONFIG: _config, ...env } = process.env;

function files(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

let child: ChildProcess | undefined;
let dir: string | undefined;
afterAll(async () => {
  if (child && child.exitCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the built console (dist/)', () => {
  it('dist/ is built (npm ci builds it)', () => {
    expect(built, 'dist/ is not built: run npm ci (or npm run build) first').toBe(true);
  });

  it.runIf(built)('dist/http/console holds the page and assets of src/http/console, as they are', () => {
    expect(files(dist).sort()).toEqual(files(src).sort());
    for (const f of files(src))
      expect(
        readFileSync(join(dist, f)).equals(readFileSync(join(src, f))),
        `dist/http/console/${f} differs from src/: run npm run build`,
      ).toBe(true);
  });

  it.runIf(built)(
    'node dist/cli/main.js serve: the console, its assets and a diagram (laid out on dist/http/layout-worker.js)',
    async () => {
      dir = flowsDir({ 'desk.yaml': DESK });
      child = spawn(
        process.execPath,
        [join(root, 'dist/cli/main.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--flows', dir],
        {
          env: { ...env, ADMIN_LOGIN: ADMIN.login, ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'warn' },
          cwd: dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 30_000);
        const look = () => {
          const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child!.stdout!.on('data', look);
        child!.once('exit', () => reject(new Error(`serve exited:\n${out}`)));
      });
      const get = (path: string) => fetch(base + path, { headers: { authorization: ADMIN_HEADER } });
      const page = await get('/admin/console');
      expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      expect(await page.text()).toBe(readFileSync(join(src, 'index.html'), 'utf8'));
      const app = await get('/admin/console/assets/app.js');
      expect([app.status, await app.text()]).toEqual([200, readFileSync(join(src, 'assets/app.js'), 'utf8')]);
      const graph = await get('/admin/flows/desk/graph');
      expect(graph.status).toBe(200);
      const g = (await graph.json()) as { flow: string; nodes: unknown[]; edges: unknown[] };
      expect([g.flow, g.nodes.length, g.edges.length]).toEqual(['desk', 13, 25]);
    },
    60_000,
  );
});
