/**
 * The package as a user installs it for production: `npm pack` of this checkout (its
 * dist/ as `npm ci` built it), installed with `--omit=dev` into an empty project (npm's
 * cache first, the registry only for what it lacks). No tsx, no TypeScript there: every
 * command runs from dist/ through the `callscript` bin: serve (with a reload checked on the
 * checker's worker thread), serve --workers 2 (Redis), the emulator and a call through it,
 * mock-http, validate, test, simulate, paths, graph, errors, schema.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rtBody } from '../helpers/rt.js';
import { logEntries } from '../helpers/processes.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { allGone, descendants, killLeftovers, spawnTracked, until, type Spawned } from '../helpers/tree.js';

const root = new URL('../..', import.meta.url).pathname;
const missing = await redisMissing();
const prefixes: string[] = [];
const project = mkdtempSync(join(tmpdir(), 'callscript-installed-'));
const bin = join(project, 'node_modules/.bin/callscript');
const pkg = join(project, 'node_modules/callscript');
const { LOG_FORMAT: _drop, ...env } = process.env;

beforeAll(() => {
  if (!existsSync(join(root, 'dist/cli/main.js')))
    throw new Error('dist/ is not built: run npm ci (or npm run build) first');
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', project], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(packed.status, packed.stderr).toBe(0);
  const tgz = join(project, packed.stdout.trim().split('\n').at(-1)!);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-ivr', version: '1.0.0', private: true }));
  const installed = spawnSync('npm', ['install', tgz, '--omit=dev', '--no-audit', '--no-fund'], {
    cwd: project,
    encoding: 'utf8',
    env: { ...env, npm_config_prefer_offline: 'true' },
    timeout: 400_000,
  });
  expect(installed.status, installed.stdout + installed.stderr).toBe(0);
}, 600_000);
afterEach(killLeftovers);
afterAll(async () => {
  // fs/promises' rm: rmSync takes many seconds over a node_modules
  await rm(project, { recursive: true, force: true });
  if (!missing) for (const p of prefixes) await dropPrefix(p);
}, 120_000);

/** `callscript <args>` from the installed package, to its end. */
function run(args: string[], cwd = project) {
  return spawnSync(bin, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
}

/** `callscript <args>` from the installed package, to its end, without blocking (so that several run at once). */
function runAsync(args: string[], cwd = project): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => c.kill('SIGKILL'), 120_000);
    c.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** `callscript <args>` left running, resolved once `started` finds what it waits for in its output. */
async function running(
  args: string[],
  started: RegExp,
  extra: Record<string, string> = {},
): Promise<{ s: Spawned; m: RegExpExecArray }> {
  const s = spawnTracked(bin, args, { cwd: project, env: { ...env, ...extra } });
  const m = await until(
    () => started.exec(s.out()) ?? (s.child.exitCode !== null ? null : undefined),
    `callscript ${args[0]} to start`,
    60_000,
  );
  if (!m) throw new Error(`callscript ${args.join(' ')} exited:\n${s.out()}${s.err()}`);
  return { s, m };
}

function flowsDir(): string {
  const d = mkdtempSync(join(project, 'flows-'));
  copyFileSync(join(root, 'test/fixtures/http-flows/desk.yaml'), join(d, 'desk.yaml'));
  return d;
}

describe('installed with --omit=dev', () => {
  it('holds dist/ and the runtime dependencies, not tsx, TypeScript or the sources', () => {
    for (const dev of ['tsx', 'typescript', 'vitest', 'esbuild'])
      expect(existsSync(join(project, 'node_modules', dev)), dev).toBe(false);
    for (const f of [
      'dist/cli/main.js',
      'dist/registry/check-worker.js',
      'dist/index.js',
      'bin/callscript.js',
      'flows/front-desk.yaml',
      'docs/deploy.md',
    ])
      expect(existsSync(join(pkg, f)), f).toBe(true);
    expect(existsSync(join(pkg, 'src'))).toBe(false);
    expect(run(['--version']).stdout).toBe('0.1.0\n');
  });

  it('the library: import { callscript } from "callscript"', () => {
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('callscript'); console.log(typeof m.callscript)"],
      { cwd: project, env, encoding: 'utf8' },
    );
    expect({ status: r.status, out: r.stdout, err: r.stderr }).toEqual({ status: 0, out: 'function\n', err: '' });
  });

  it('validate, test, simulate, paths, graph, errors, schema', async () => {
    const flows = join(pkg, 'flows');
    const caller = join(project, 'sales.caller.yaml');
    copyFileSync(join(root, 'test/fixtures/callers/front-desk/sales-answered.yaml'), caller);
    // independent commands: run at once
    const [validated, tested, sim, paths, graph, code, schema] = await Promise.all([
      runAsync(['validate', flows]),
      runAsync(['test', flows, '--flows', flows]),
      runAsync(['simulate', 'front-desk', '--flows', flows, '--caller', caller, '--from', '+33612345678']),
      runAsync(['paths', 'desk', '--flows', flowsDir(), '--max-seconds', '30']),
      runAsync(['graph', 'front-desk', '--flows', flows]),
      runAsync(['errors', 'UNKNOWN_KEY']),
      runAsync(['schema']),
    ]);
    // every example flow the package ships (its scenario files are not flows)
    const shipped = readdirSync(flows).filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml')).length;
    expect(shipped).toBe(readdirSync(join(root, 'flows')).filter((f) => /(?<!\.test)\.yaml$/.test(f)).length);
    expect(validated.stdout).toBe(`${shipped} files checked, ${shipped} valid: no problems\n`);
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(sim.status, sim.stderr).toBe(0);
    expect(sim.stdout).toContain('3. sales: dialout -> answered (bridged)');
    expect(paths.status, paths.stderr).toBe(0);
    expect(paths.stdout).toContain('flow: "desk"');
    expect(graph.stdout).toMatch(/^flowchart TD\n/);
    expect(code.status).toBe(0);
    expect(code.stdout).toContain('UNKNOWN_KEY');
    expect(JSON.parse(schema.stdout)).toMatchObject({ $schema: expect.any(String) });
  }, 180_000);

  it(
    'serve: answers /rt; a changed flow reloads on SIGHUP, checked on the worker thread (no tsx needed); ' +
      'SIGTERM drains, exit 0',
    async () => {
      const flows = flowsDir();
      const { s, m } = await running(['serve', '--port', '0', '--flows', flows], /on (http:\/\/127\.0\.0\.1:(\d+))\n/);
      const base = m[1]!;
      const first = await fetch(`${base}/rt/desk`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: rtBody({ callid: '99000000000000001' }),
      });
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject({ command: 'read', command_id: 1 });
      const file = join(flows, 'desk.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('Press 1 for sales.', 'Press 1 for sales, please.'));
      s.child.kill('SIGHUP');
      const published = await until(
        () => logEntries(s.out()).find((l) => l.code === 'FLOW_PUBLISHED'),
        'the reload',
        60_000,
      );
      expect(published).toMatchObject({ flow: 'desk', reason: 'SIGHUP' });
      expect(logEntries(s.out()).filter((l) => typeof l.code === 'string' && l.code.startsWith('CHECK_'))).toEqual([]);
      s.child.kill('SIGTERM');
      expect(await s.exit).toEqual({ code: 0, signal: null });
      await allGone(Number(m[2]), [s.pid]);
    },
    120_000,
  );

  it('the emulator, a call through it to the server, and mock-http', async () => {
    const emu = await running(['emulator', '--port', '0'], /callscript emulator on (http:\/\/127\.0\.0\.1:\d+)/);
    const srv = await running(['serve', '--port', '0', '--flows', flowsDir()], /on (http:\/\/127\.0\.0\.1:\d+)\n/);
    const call = run(['call', '--url', `${srv.m[1]}/rt/desk`, '--emulator', emu.m[1]!, '--json']);
    expect(call.status, call.stdout + call.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(call.stdout))).toContain('"read"');
    const routes = join(project, 'routes.yaml');
    writeFileSync(routes, 'routes:\n  - { method: GET, url: /v1/ping, status: 200, body: { pong: true } }\n');
    const mock = await running(['mock-http', '--routes', routes, '--port', '0'], /at (http:\/\/127\.0\.0\.1:\d+)/);
    expect(await (await fetch(`${mock.m[1]}/v1/ping`)).json()).toEqual({ pong: true });
    for (const p of [emu, srv, mock]) {
      p.s.child.kill('SIGTERM');
      await p.s.exit;
    }
  }, 120_000);

  it.skipIf(!!missing)(
    'serve --workers 2 on Redis: serves /rt; SIGTERM to the primary leaves no process',
    async () => {
      const prefix = testPrefix();
      prefixes.push(prefix);
      const { s, m } = await running(
        ['serve', '--port', '0', '--flows', flowsDir(), '--workers', '2', '--store', REDIS_URL],
        /on http:\/\/127\.0\.0\.1:(\d+)\n[\s\S]* 2 workers \(pids /,
        { CALLSCRIPT_STORE_PREFIX: prefix },
      );
      const port = Number(m[1]);
      const answer = await fetch(`http://127.0.0.1:${port}/rt/desk`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: rtBody({ callid: '99000000000000002' }),
      });
      expect(await answer.json()).toMatchObject({ command: 'read', command_id: 1 });
      const tree = descendants(s.pid);
      expect(tree).toHaveLength(2);
      s.child.kill('SIGTERM');
      expect(await s.exit).toEqual({ code: 0, signal: null });
      await allGone(port, tree);
    },
    120_000,
  );
});
