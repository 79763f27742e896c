/**
 * The Dockerfile, without a Docker daemon: its instructions are read, and its stages are
 * played in temporary directories standing for /app: COPY from the build context (the
 * repository, less what .dockerignore leaves out) or from the build stage, RUN through
 * `sh -c` (npm's cache mount left to npm's own cache, preferring it to the registry),
 * ENV kept; then the final stage's CMD is started as the container would start it
 * (flows mounted at /app/flows), its HEALTHCHECK command run, and its STOPSIGNAL sent.
 * What cannot run here (the base image, USER) is checked as written.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, until } from '../helpers/processes.js';
import { allGone, killLeftovers, spawnTracked } from '../helpers/tree.js';

const root = new URL('../..', import.meta.url).pathname;
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

afterEach(killLeftovers);

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  body: Instruction[];
}

/** The stages of a Dockerfile: continuation lines joined, comments and parser directives dropped. */
function parse(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const stages: Stage[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(\w+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`unreadable Dockerfile line: ${line}`);
    const op = m[1]!.toUpperCase();
    const args = m[2]!.replace(/\s+/g, ' ').trim();
    if (op === 'FROM') {
      const f = /^(\S+)(?: AS (\S+))?$/i.exec(args)!;
      stages.push({ from: f[1]!, ...(f[2] ? { name: f[2] } : {}), body: [] });
    } else stages.at(-1)!.body.push({ op, args });
  }
  return stages;
}

/**
 * Whether .dockerignore leaves out this path of the context (patterns from the context's root, as Docker matches them).
 */
function ignored(rel: string): boolean {
  const glob = (p: string) =>
    new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')}(/.*)?$`,
    );
  return ignore.some((p) => glob(p.replace(/^\/|\/$/g, '')).test(rel));
}

/** ENV's KEY=VALUE pairs (values without spaces or in double quotes). */
function envPairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/(\w+)=("([^"]*)"|\S+)/g)) out[m[1]!] = m[3] ?? m[2]!;
  return out;
}

const stages = parse(dockerfile);
const [build, final] = stages as [Stage, Stage];
const instr = (s: Stage, op: string) => s.body.filter((i) => i.op === op).map((i) => i.args);

describe('the Dockerfile as written', () => {
  it('two stages on node:20-slim: a build stage, and a final one with the production dependencies only', () => {
    expect(stages.map((s) => [s.from, s.name])).toEqual([
      ['node:20-slim', 'build'],
      ['node:20-slim', undefined],
    ]);
    expect(instr(build, 'RUN').some((r) => r.endsWith('npm run build'))).toBe(true);
    const installs = instr(final, 'RUN').filter((r) => / npm ci /.test(` ${r} `));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/ --omit=dev /);
    expect(instr(final, 'COPY')).toContain('--from=build /app/dist ./dist');
  });

  it(
    'runs as a non-root user, listens on 3000 on every address, checks /health/live, stops with SIGTERM, runs ' +
      'dist directly (no npm, no tsx)',
    () => {
      expect(instr(final, 'USER')).toEqual(['node']);
      expect(instr(final, 'EXPOSE')).toEqual(['3000']);
      const env = Object.assign({}, ...instr(final, 'ENV').map(envPairs)) as Record<string, string>;
      expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '3000', LOG_FORMAT: 'json' });
      expect(instr(final, 'WORKDIR')).toEqual(['/app']);
      expect(instr(final, 'HEALTHCHECK')).toHaveLength(1);
      expect(instr(final, 'HEALTHCHECK')[0]).toContain('/health/live');
      expect(instr(final, 'STOPSIGNAL')).toEqual(['SIGTERM']);
      expect(JSON.parse(instr(final, 'CMD')[0]!)).toEqual(['node', 'dist/cli/main.js', 'serve']);
    },
  );

  it('.dockerignore keeps installed and built files, secrets and local settings out of the context', () => {
    for (const p of [
      'node_modules',
      'dist',
      '.git',
      '.env',
      'prod.env',
      'callscript.yaml',
      'coverage',
      'npm-debug.log',
      'test/http/x.test.ts',
    ])
      expect(ignored(p), p).toBe(true);
    for (const p of [
      'src/cli/main.ts',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'bin/callscript.js',
      'flows/front-desk.yaml',
    ])
      expect(ignored(p), p).toBe(false);
  });
});

describe('the Dockerfile played without Docker', () => {
  const dirs = new Map<string, string>();
  const env: Record<string, string> = {};

  /**
   * Copies `from` (a file or a directory) to `to`, leaving out what .dockerignore says when copying from the context.
   */
  function copy(from: string, to: string, context: boolean): void {
    cpSync(from, to, {
      recursive: true,
      filter: (src) => !context || src === root.replace(/\/$/, '') || !ignored(relative(root, src)),
    });
  }

  /** Runs `cmd` through `sh -c` in `cwd`; resolves with its exit status and output. */
  function sh(cmd: string, cwd: string, env: Record<string, string>) {
    return new Promise<{ status: number | null; out: string }>((resolve) => {
      const c = spawn('sh', ['-c', cmd], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (out += d));
      const timer = setTimeout(() => c.kill('SIGKILL'), 400_000);
      c.on('exit', (status) => {
        clearTimeout(timer);
        resolve({ status, out });
      });
    });
  }

  /**
   * Plays a stage in a directory of its own; a `COPY --from=<stage>` first waits for that stage to be played (as
   * BuildKit does, the stages run at the same time up to there).
   */
  async function play(stage: Stage, name: string, played: Record<string, Promise<void>>): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), `callscript-docker-${name}-`));
    dirs.set(name, dir);
    const stageEnv: Record<string, string> = {};
    for (const { op, args } of stage.body) {
      if (op === 'WORKDIR') expect(args).toBe('/app');
      else if (op === 'ENV') Object.assign(stageEnv, envPairs(args));
      else if (op === 'COPY') {
        const parts = args.split(' ');
        const from = parts[0]!.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : undefined;
        const dest = join(dir, parts.pop()!);
        if (from) await played[from];
        for (const src of parts) {
          if (from) copy(join(dirs.get(from)!, src.replace(/^\/app\/?/, '')), dest, false);
          else if (src === '.') copy(root, dest, true);
          else {
            expect(ignored(src), `COPY ${src}: left out by .dockerignore`).toBe(false);
            const target =
              dest.endsWith('/') || (existsSync(dest) && statSync(dest).isDirectory()) ? join(dest, src) : dest;
            copy(join(root, src), target, true);
          }
        }
      } else if (op === 'RUN') {
        const cmd = args.replace(/^(--mount=\S+ )+/, '');
        const r = await sh(cmd, dir, { ...stageEnv, npm_config_prefer_offline: 'true' });
        expect(r.status, `RUN ${cmd}\n${r.out}`).toBe(0);
      }
    }
    if (name === 'final') Object.assign(env, stageEnv);
  }

  beforeAll(async () => {
    const built = play(build, 'build', {});
    await Promise.all([built, play(final, 'final', { build: built })]);
  }, 600_000);
  afterAll(async () => {
    // fs/promises' rm: rmSync took some 20 s over the build stage's node_modules (11,000 files), this under a second
    await Promise.all([...dirs.values()].map((d) => rm(d, { recursive: true, force: true })));
  }, 120_000);

  it('the final stage holds dist/ and the production dependencies: no TypeScript, no tsx, no sources, no tests', () => {
    const app = dirs.get('final')!;
    expect(existsSync(join(app, 'dist/cli/main.js'))).toBe(true);
    expect(existsSync(join(app, 'dist/registry/check-worker.js'))).toBe(true);
    for (const dev of ['typescript', 'tsx', 'vitest', 'esbuild', 'autocannon'])
      expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    for (const dep of ['fastify', 'pino', 'pino-pretty', 'xstate', 'ioredis'])
      expect(existsSync(join(app, 'node_modules', dep)), dep).toBe(true);
    expect(readdirSync(app).sort()).toEqual(['bin', 'dist', 'node_modules', 'package-lock.json', 'package.json']);
  });

  it(
    'its CMD serves the flows mounted at /app/flows on every address; the HEALTHCHECK command passes on a 200 ' +
      'from /health/live only; STOPSIGNAL drains and exits 0',
    async () => {
      const app = dirs.get('final')!;
      mkdirSync(join(app, 'flows'));
      cpSync(join(root, 'test/fixtures/http-flows/desk.yaml'), join(app, 'flows/desk.yaml'));
      const port = await freePort();
      const [cmd, ...argv] = JSON.parse(instr(final, 'CMD')[0]!) as string[];
      const { LOG_FORMAT: _a, HOST: _b, PORT: _c, FLOWS_DIR: _d, CALLSCRIPT_CONFIG: _e, ...base } = process.env;
      const s = spawnTracked(cmd === 'node' ? process.execPath : cmd!, argv, {
        cwd: app,
        env: { ...base, ...env, PORT: String(port) },
      });
      await until(
        () =>
          s.out().includes(`callscript serving 1 flow from ${app}/flows on http://0.0.0.0:${port}\n`) ||
          s.child.exitCode !== null
            ? true
            : undefined,
        'the banner',
        60_000,
      );
      expect(s.child.exitCode, s.out() + s.err()).toBe(null);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      // JSON log lines (LOG_FORMAT=json in the image)
      expect(s.out()).toMatch(new RegExp(`^\\{"level":30,.*"msg":"Server listening at http://[^"]+:${port}"\\}$`, 'm'));

      // the HEALTHCHECK command, against a stand-in answering as told (the route itself is the server's: docs/http.md)
      const check = instr(final, 'HEALTHCHECK')[0]!.replace(/^(--\S+ )*CMD /, '');
      const seen: string[] = [];
      let status = 200;
      const stub = http.createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        res.statusCode = req.url === '/health/live' ? status : 404;
        res.end('{}');
      });
      await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
      const stubPort = (stub.address() as { port: number }).port;
      const healthcheck = () =>
        new Promise<number | null>((resolve) => {
          const c = spawn('sh', ['-c', check], {
            cwd: app,
            env: { ...base, ...env, PORT: String(stubPort) },
            stdio: 'ignore',
          });
          c.on('exit', (code) => resolve(code));
        });
      try {
        expect(await healthcheck()).toBe(0);
        status = 503;
        expect(await healthcheck()).toBe(1);
        expect(seen).toEqual(['GET /health/live', 'GET /health/live']);
      } finally {
        await new Promise((r) => stub.close(r));
      }
      const closedPort = await freePort();
      expect(
        await new Promise((resolve) =>
          spawn('sh', ['-c', check], { env: { ...base, ...env, PORT: String(closedPort) }, stdio: 'ignore' }).on(
            'exit',
            resolve,
          ),
        ),
      ).toBe(1);

      s.child.kill(instr(final, 'STOPSIGNAL')[0] as NodeJS.Signals);
      expect(await s.exit).toEqual({ code: 0, signal: null });
      await allGone(port, [s.pid]);
    },
    120_000,
  );
});
