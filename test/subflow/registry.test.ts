/**
 * Subflows in the registry: a changed module gives the flows that may enter it a new
 * version while live calls stay on the old one (pinning covers the modules); a module is
 * never served at /rt; a module that breaks keeps its callers on their current version;
 * two instances on one Redis, one of which never loaded the module, serve the same call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer, createServer, type Server } from '../../src/http/server.js';
import { RedisStore } from '../../src/store/redis.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { MAIN, PIN_CHECK } from './helpers.js';

const missing = await redisMissing();
const dirs: string[] = [];
const closers: (() => Promise<unknown>)[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(async () => {
  if (!missing) for (const p of prefixes) await dropPrefix(p);
});

function dirWith(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'cs-subflow-'));
  for (const [n, t] of Object.entries(files)) writeFileSync(join(d, n), t);
  dirs.push(d);
  return d;
}

const post = (app: FastifyInstance, url: string, over: Partial<RtFields> = {}) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: rtBody(over) });
const TTS = (t: string) => `TTS|TTS_EN-GB_SERENA|${t}`;

describe('hot reload of a module while calls are inside it', () => {
  async function start(files: Record<string, string>): Promise<{ s: Server; dir: string }> {
    const dir = dirWith(files);
    // a file is written, then reloaded at once: the settle window (test/registry/settle.test.ts) is not waited for
    const s = await createServer({ flowsDir: dir, logLevel: false, watch: false, reloadSettleMs: 0 });
    closers.push(() => s.app.close());
    return { s, dir };
  }

  it('live calls keep the old module, new calls get the new one; the module itself is not served', async () => {
    const { s, dir } = await start({ 'main.yaml': MAIN, 'pin-check.yaml': PIN_CHECK });
    expect(s.registry.list().map((f) => f.name)).toEqual(['main']);
    expect((await post(s.app, '/rt/pin-check')).statusCode).toBe(404);
    const before = s.registry.current('main')!.version;
    expect((await post(s.app, '/rt/main', { callid: '1' })).json()).toMatchObject({
      command: 'read',
      params: { media_id: TTS('Enter the PIN of account 12345678.') },
    });

    writeFileSync(
      join(dir, 'pin-check.yaml'),
      PIN_CHECK.replace('Enter the PIN', 'Your PIN').replace('"1234": done', '"9999": done'),
    );
    const r = await s.control.reload!('test');
    const after = s.registry.current('main')!.version;
    expect(after).not.toBe(before);
    expect(r.published).toMatchObject([{ name: 'main', version: after, from: before }]);

    // call 1 is inside the old module: 1234 is still the PIN there
    expect(
      (await post(s.app, '/rt/main', { callid: '1', command: 'read', command_id: 1, command_result: '1234' })).json(),
    ).toMatchObject({ command: 'play', params: { media_id: TTS('Hello Ann, account 12345678.') } });
    // a new call gets the new module
    expect((await post(s.app, '/rt/main', { callid: '2' })).json()).toMatchObject({
      command: 'read',
      params: { media_id: TTS('Your PIN of account 12345678.') },
    });
    expect(
      (await post(s.app, '/rt/main', { callid: '2', command: 'read', command_id: 1, command_result: '1234' })).json(),
    ).toMatchObject({ command: 'read', command_id: 2 });
    expect(s.registry.get('main', before)).toBeDefined();
  });

  it(
    'a module that breaks: its callers keep their current version, with MODULE_INVALID pending at the flow: ' + 'value',
    async () => {
      const { s, dir } = await start({ 'main.yaml': MAIN, 'pin-check.yaml': PIN_CHECK });
      const before = s.registry.current('main')!.version;
      writeFileSync(
        join(dir, 'pin-check.yaml'),
        PIN_CHECK.replace('then: fail }\n      TIMEOUT', 'then: fial }\n      TIMEOUT'),
      );
      const r = await s.control.reload!('test');
      expect(r.kept).toEqual(['main']);
      expect(s.registry.current('main')!.version).toBe(before);
      const pending = s.registry.pendingErrors();
      expect([...pending.get(join(dir, 'main.yaml'))!].map((d) => `${d.line}:${d.column} ${d.code}`)).toEqual([
        '8:13 MODULE_INVALID',
      ]);
      expect([...pending.get(join(dir, 'pin-check.yaml'))!].map((d) => `${d.line}:${d.column} ${d.code}`)).toEqual([
        '15:34 UNKNOWN_STEP',
      ]);
      // fixed: the flow is published again with the module
      writeFileSync(join(dir, 'pin-check.yaml'), PIN_CHECK);
      const again = await s.control.reload!('test');
      expect(again.unchanged).toEqual(['main']);
      expect(s.registry.pendingErrors().size).toBe(0);
    },
  );

  it(
    'the version covers the modules: the same texts give the ' + 'same version, a module removed refuses the caller',
    async () => {
      const { s, dir } = await start({ 'main.yaml': MAIN, 'pin-check.yaml': PIN_CHECK });
      const v = s.registry.current('main')!.version;
      rmSync(join(dir, 'pin-check.yaml'));
      const r = await s.control.reload!('test');
      expect(r.kept).toEqual(['main']);
      expect(
        [...s.registry.pendingErrors().get(join(dir, 'main.yaml'))!].map(
          (d) => `${d.line}:${d.column} ${d.code} ${d.message}`,
        ),
      ).toEqual(["8:13 UNKNOWN_MODULE step 'verify': no flow 'pin-check' in this directory"]);
      expect(s.registry.current('main')!.version).toBe(v);
    },
  );
});

describe.skipIf(!!missing)('two instances on one Redis, one of which never loaded the module', () => {
  it(
    'a call that started inside the module on A goes on through B, which fetches the version with its module ' +
      'from Redis',
    async () => {
      const prefix = testPrefix();
      prefixes.push(prefix);
      const make = async (dir: string) => {
        const store = new RedisStore(REDIS_URL, { prefix });
        await store.ready();
        const app = await buildServer({ flowsDir: dir, logLevel: false, store, watch: false });
        closers.push(async () => {
          await app.close();
          await store.close();
        });
        return app;
      };
      const a = await make(dirWith({ 'main.yaml': MAIN, 'pin-check.yaml': PIN_CHECK }));
      // B has an older deploy: a flow of its own, and neither main nor the module
      const b = await make(dirWith({ 'other.yaml': 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n' }));
      expect((await post(a, '/rt/main', { callid: '77' })).json()).toMatchObject({
        command: 'read',
        command_id: 1,
        params: { media_id: TTS('Enter the PIN of account 12345678.') },
      });
      expect(
        (await post(b, '/rt/main', { callid: '77', command: 'read', command_id: 1, command_result: '0000' })).json(),
      ).toMatchObject({ command: 'read', command_id: 2 });
      expect(
        (await post(b, '/rt/main', { callid: '77', command: 'read', command_id: 2, command_result: '1234' })).json(),
      ).toMatchObject({ command: 'play', command_id: 3, params: { media_id: TTS('Hello Ann, account 12345678.') } });
      expect(
        (await post(a, '/rt/main', { callid: '77', command: 'play', command_id: 3, command_result: '0' })).json(),
      ).toMatchObject({ command: 'hangup', command_id: 4 });
    },
  );
});
