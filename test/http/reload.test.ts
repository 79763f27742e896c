import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, renameSync, rmSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from '../../src/http/server.js';
import { flowVersion } from '../../src/engine/compile.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { V1, V2 } from '../registry/fixtures.js';

let server: Server | undefined;
let dir: string | undefined;

afterEach(async () => {
  await server?.app.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/**
 * A server on these files. A file is written, then reloaded at once: the settle window is not waited for, but by the
 * test of half-written files (`settle`: the default, 1 s).
 */
async function start(files: Record<string, string>, watch = false, settle = false) {
  dir = mkdtempSync(join(tmpdir(), 'callscript-reload-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  server = await createServer({
    flowsDir: dir,
    logLevel: false,
    watch: watch ? { debounceMs: 50 } : false,
    ...(settle ? {} : { reloadSettleMs: 0 }),
  });
  return server;
}

const post = (s: Server, over: Partial<RtFields>) =>
  s.app.inject({
    method: 'POST',
    url: '/rt/desk',
    headers: { 'content-type': 'application/json' },
    payload: rtBody(over),
  });

/**
 * Waits for `cond`, at most `timeoutMs`: a bound, not a guess of how long a reload takes (a changed flow is checked on
 * a worker thread, whose start takes seconds on a loaded machine: 5 s was once too short).
 */
async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('hot reload through the HTTP layer', () => {
  it('finishes a call started on v1 on v1 after v2 lands, while new calls get v2', async () => {
    const s = await start({ 'desk.yaml': V1 });
    const a = (await post(s, { callid: '1' })).json();
    expect(a).toEqual({
      command: 'read',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.', max_digits: 1 },
      variables: {},
    });
    writeFileSync(join(dir!, 'desk.yaml'), V2);
    const r = await s.control.reload!('test');
    expect(r.published.map((p) => p.version)).toEqual([flowVersion(V2)]);
    // The live call goes on on v1: "1" still leads to sales (a dialout), which v2 removed.
    expect((await post(s, { callid: '1', command: 'read', command_id: 1, command_result: '1' })).json()).toEqual({
      command: 'dialout',
      command_id: 2,
      params: { targets: [{ number: '+33123456789', timeout: 30 }] },
      variables: {},
    });
    // A new call gets v2.
    expect((await post(s, { callid: '2' })).json()).toEqual({
      command: 'read',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for help.', max_digits: 1 },
      variables: {},
    });
    expect((await post(s, { callid: '2', command: 'read', command_id: 1, command_result: '1' })).json()).toMatchObject({
      command: 'play',
      command_id: 2,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Help is on the way.' },
    });
    // v1's call ends on v1.
    expect(
      (await post(s, { callid: '1', command: 'dialout', command_id: 2, command_result: 'NOANSWER' })).json(),
    ).toMatchObject({ command: 'play', command_id: 3, params: { media_id: 'TTS|TTS_EN-GB_SERENA|Goodbye.' } });
    expect((await post(s, { callid: '1', command: 'play', command_id: 3, command_result: '0' })).json()).toMatchObject({
      command: 'hangup',
      command_id: 4,
    });
    const v1 = flowVersion(V1);
    expect(s.registry.get('desk', v1)).toBeDefined(); // kept as the canary base / rollback target
    expect(s.live.count('desk', v1)).toBe(1);
    await post(s, { callid: '1', command: 'hangup', command_id: 4, call_status: 'HANGUP' });
    expect(s.live.count('desk', v1)).toBe(0);
    expect(s.live.statsFor('desk', v1)).toEqual({ calls: 1, errors: 0 });
  });

  it('keeps v1 serving after a broken edit and shows the diagnostics in /health until fixed', async () => {
    const s = await start({ 'desk.yaml': V1 });
    writeFileSync(join(dir!, 'desk.yaml'), V1.replace('next: end', 'next: nowhere'));
    const r = await s.control.reload!('test');
    expect(r.refused).toEqual([
      {
        file: 'desk.yaml',
        diagnostics: [expect.objectContaining({ code: 'UNKNOWN_STEP', file: 'desk.yaml', line: 19, column: 11 })],
      },
    ]);
    expect((await post(s, { callid: '5' })).json()).toMatchObject({
      command: 'read',
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Press 1 for sales.' },
    });
    const h = (await s.app.inject({ method: 'GET', url: '/health' })).json();
    expect(h.flows).toEqual([
      {
        name: 'desk',
        version: flowVersion(V1),
        file: 'desk.yaml',
        errors: [expect.objectContaining({ code: 'UNKNOWN_STEP', file: 'desk.yaml', line: 19, column: 11 })],
      },
    ]);
    expect(h.refused[0].file).toBe('desk.yaml');
    writeFileSync(join(dir!, 'desk.yaml'), V2);
    await s.control.reload!('test');
    const h2 = (await s.app.inject({ method: 'GET', url: '/health' })).json();
    expect(h2.flows).toEqual([{ name: 'desk', version: flowVersion(V2), file: 'desk.yaml', errors: [] }]);
    expect(h2.refused).toEqual([]);
  });

  it("finishes a deleted flow's live call; new calls get 404", async () => {
    const s = await start({ 'desk.yaml': V1 });
    await post(s, { callid: '7' });
    rmSync(join(dir!, 'desk.yaml'));
    expect((await s.control.reload!('test')).deleted).toEqual(['desk']);
    expect((await post(s, { callid: '8' })).statusCode).toBe(404);
    expect((await post(s, { callid: '7', command: 'read', command_id: 1, command_result: '2' })).json()).toMatchObject({
      command: 'play',
      command_id: 2,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Goodbye.' },
    });
    expect((await post(s, { callid: '7', command: 'play', command_id: 2, command_result: '0' })).json()).toMatchObject({
      command: 'hangup',
      command_id: 3,
    });
    await post(s, { callid: '7', command: 'hangup', command_id: 3, call_status: 'HANGUP' });
    expect(s.registry.get('desk', flowVersion(V1))).toBeUndefined(); // released with its last call
    expect(s.registry.entry('desk')).toBeUndefined();
  });

  it(
    'watches the directory: rapid successive saves (chunked writes, rename saves) never load a half-written ' + 'file',
    async () => {
      const s = await start({ 'desk.yaml': V1 }, true, true);
      const texts = Array.from({ length: 6 }, (_, i) => V1.replace('Goodbye.', `Goodbye ${i}.`));
      const complete = new Set([V1, ...texts].map(flowVersion));
      const published: string[] = [];
      const seen = setInterval(() => {
        for (const r of s.registry.entry('desk')?.history ?? [])
          if (!published.includes(r.version)) published.push(r.version);
      }, 5);
      try {
        for (const [i, text] of texts.entries()) {
          const file = join(dir!, 'desk.yaml');
          if (i % 2 === 0) {
            // In place, in two chunks: the first half alone is valid YAML but not the flow.
            const fd = openSync(file, 'w');
            const cut = text.indexOf('  bye:');
            writeSync(fd, text.slice(0, cut));
            await new Promise((r) => setTimeout(r, 5));
            writeSync(fd, text.slice(cut));
            closeSync(fd);
          } else {
            writeFileSync(join(dir!, '.desk.yaml.tmp'), text);
            renameSync(join(dir!, '.desk.yaml.tmp'), file);
          }
          await new Promise((r) => setTimeout(r, 10));
        }
        const last = flowVersion(texts[texts.length - 1]!);
        await until(() => s.registry.current('desk')?.version === last);
      } finally {
        clearInterval(seen);
      }
      for (const r of s.registry.entry('desk')!.history)
        expect(complete.has(r.version), `published ${r.version}`).toBe(true);
      expect(s.registry.pendingErrors().size).toBe(0);
    },
  );

  it('reloads a flow added to the watched directory', async () => {
    const s = await start({ 'desk.yaml': V1 }, true);
    writeFileSync(join(dir!, 'other.yaml'), V1.replace('name: desk', 'name: other'));
    await until(() => s.registry.has('other'));
    expect(s.registry.list().map((f) => f.name)).toEqual(['desk', 'other']);
  });
});

describe('the Fastify plugin in an app of your own', () => {
  it('reloads on file changes with watch: true, and not without it', async () => {
    const Fastify = (await import('fastify')).default;
    const { callscript } = await import('../../src/http/plugin.js');
    const watched = mkdtempSync(join(tmpdir(), 'callscript-plugin-watch-'));
    const still = mkdtempSync(join(tmpdir(), 'callscript-plugin-nowatch-'));
    writeFileSync(join(watched, 'desk.yaml'), V1);
    writeFileSync(join(still, 'desk.yaml'), V1);
    const a = Fastify();
    await a.register(callscript, { flowsDir: watched, watch: { debounceMs: 50 } });
    const b = Fastify();
    await b.register(callscript, { flowsDir: still });
    try {
      const versions = async (app: typeof a) =>
        ((await app.inject({ url: '/health' })).json() as { flows: { name: string; version: string }[] }).flows.map(
          (f) => f.version,
        );
      expect(await versions(a)).toEqual([flowVersion(V1)]);
      writeFileSync(join(watched, 'desk.yaml'), V2);
      writeFileSync(join(still, 'desk.yaml'), V2);
      await until(async () => (await versions(a))[0] === flowVersion(V2));
      await new Promise((r) => setTimeout(r, 300));
      expect(await versions(b)).toEqual([flowVersion(V1)]);
    } finally {
      await a.close();
      await b.close();
      rmSync(watched, { recursive: true, force: true });
      rmSync(still, { recursive: true, force: true });
    }
  });
});
