import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
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
});

const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const RT = 'Basic ' + Buffer.from('svc:rtpass').toString('base64');

async function start(admin = true) {
  dir = mkdtempSync(join(tmpdir(), 'callscript-admin-'));
  writeFileSync(join(dir, 'desk.yaml'), V1);
  // a file is written, then reloaded at once: the settle window (test/registry/settle.test.ts) is not waited for
  server = await createServer({
    flowsDir: dir,
    logLevel: false,
    reloadSettleMs: 0,
    auth: { login: 'svc', password: 'rtpass' },
    ...(admin ? { admin: { login: 'boss', password: 's3cret' } } : {}),
  });
  return server;
}
const get = (s: Server, url: string, auth = ADMIN) =>
  s.app.inject({ method: 'GET', url, headers: { authorization: auth } });
const postJson = (s: Server, url: string, body: unknown, auth = ADMIN) =>
  s.app.inject({
    method: 'POST',
    url,
    headers: { authorization: auth, 'content-type': 'application/json' },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
const call = (s: Server, over: Partial<RtFields>) =>
  s.app.inject({
    method: 'POST',
    url: '/rt/desk',
    headers: { authorization: RT, 'content-type': 'application/json' },
    payload: rtBody(over),
  });

describe('admin API', () => {
  it('does not exist unless configured', async () => {
    const s = await start(false);
    const r = await get(s, '/admin/flows');
    expect(r.statusCode).toBe(404);
    expect(r.json().error.code).toBe('NOT_FOUND');
  });

  it('takes its own credentials, not the service’s', async () => {
    const s = await start();
    for (const auth of ['', RT, 'Basic ' + Buffer.from('boss:wrong').toString('base64')]) {
      const r = await get(s, '/admin/flows', auth);
      expect(r.statusCode).toBe(401);
      expect(r.json()).toEqual({
        error: { code: 'ADMIN_AUTH_REQUIRED', message: 'valid admin HTTP Basic credentials are required' },
      });
      expect(r.headers['www-authenticate']).toContain('callscript-admin');
    }
    expect((await get(s, '/admin/flows')).statusCode).toBe(200);
    // and the admin's are not the service's
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/rt/desk',
          headers: { authorization: ADMIN, 'content-type': 'application/json' },
          payload: rtBody({}),
        })
      ).statusCode,
    ).toBe(401);
  });

  it('lists versions, the current one and live calls per version; shows a live call; reports the impact', async () => {
    const s = await start();
    const v1 = flowVersion(V1);
    const v2 = flowVersion(V2);
    await call(s, { callid: '11' });
    await call(s, { callid: '11', command: 'read', command_id: 1, command_result: '1' }); // at sales
    writeFileSync(join(dir!, 'desk.yaml'), V2);
    const reload = (await postJson(s, '/admin/reload', undefined)).json();
    expect(reload).toMatchObject({ ok: true, published: [{ name: 'desk', version: v2, from: v1 }] });
    await call(s, { callid: '12' });
    const list = (await get(s, '/admin/flows')).json();
    expect(list.liveCalls).toBe(2);
    expect(list.flows).toHaveLength(1);
    const desk = list.flows[0];
    expect(desk).toMatchObject({
      name: 'desk',
      file: 'desk.yaml',
      deleted: false,
      current: v2,
      newest: v2,
      previous: v1,
      pinned: null,
      canary: null,
      liveCalls: 2,
      errors: [],
    });
    expect(
      desk.versions.map((v: Record<string, unknown>) => [
        v.version,
        v.current,
        v.loaded,
        v.liveCalls,
        v.calls,
        v.errors,
      ]),
    ).toEqual([
      [v1, false, true, 1, 1, 0],
      [v2, true, true, 1, 1, 0],
    ]);
    const one = (await get(s, '/admin/flows/desk')).json();
    expect(one.impact).toMatchObject({
      from: v1,
      to: v2,
      changed: ['menu'],
      added: ['help'],
      removed: ['sales'],
      liveCalls: 1,
      inChanged: 0,
      inRemoved: 1,
      byStep: { sales: 1 },
    });
    const c = (await get(s, '/admin/calls/11')).json();
    expect(c).toMatchObject({
      callid: '11',
      flow: 'desk',
      version: v1,
      step: 'sales',
      vars: {},
      commandId: 2,
      commands: 2,
    });
    const missing = await get(s, '/admin/calls/999');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('CALL_NOT_FOUND');
    expect((await get(s, '/admin/flows/nope')).json().error.code).toBe('UNKNOWN_FLOW');
  });

  it('rolls back with POST /admin/flows/:name/current and sets a canary', async () => {
    const s = await start();
    const v1 = flowVersion(V1);
    const v2 = flowVersion(V2);
    writeFileSync(join(dir!, 'desk.yaml'), V2);
    await postJson(s, '/admin/reload', {});
    const back = await postJson(s, '/admin/flows/desk/current', { version: v1 });
    expect(back.statusCode).toBe(200);
    expect(back.json()).toMatchObject({ current: v1, pinned: v1, newest: v2 });
    expect((await call(s, { callid: '21' })).json().params.media_id).toBe('TTS|TTS_EN-GB_SERENA|Press 1 for sales.');
    const canary = await postJson(s, '/admin/flows/desk/canary', { percent: 100 });
    expect(canary.json()).toMatchObject({ canary: { percent: 100, newest: v2, base: v1 } });
    expect((await call(s, { callid: '22' })).json().params.media_id).toBe('TTS|TTS_EN-GB_SERENA|Press 1 for help.');
    await postJson(s, '/admin/flows/desk/canary', { percent: 0 });
    expect((await call(s, { callid: '23' })).json().params.media_id).toBe('TTS|TTS_EN-GB_SERENA|Press 1 for sales.');
    expect((await postJson(s, '/admin/flows/desk/canary', { percent: null })).json()).toMatchObject({ canary: null });

    const bad = await postJson(s, '/admin/flows/desk/current', { version: 'ffffffffffff' });
    expect(bad.statusCode).toBe(404);
    expect(bad.json().error.code).toBe('UNKNOWN_VERSION');
    for (const [url, body] of [
      ['/admin/flows/desk/current', {}],
      ['/admin/flows/desk/canary', { percent: 101 }],
      ['/admin/flows/desk/canary', [1]],
    ] as const) {
      const r = await postJson(s, url, body);
      expect(r.statusCode).toBe(400);
      expect(r.json().error.code).toBe('BAD_ADMIN_BODY');
    }
    const notJson = await s.app.inject({
      method: 'POST',
      url: '/admin/flows/desk/canary',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      payload: '{',
    });
    expect(notJson.json().error).toEqual({ code: 'BAD_ADMIN_BODY', message: 'the body is not valid JSON' });
    expect((await postJson(s, '/admin/flows/nope/canary', { percent: 5 })).json().error.code).toBe('UNKNOWN_FLOW');
  });

  it('shows a refused edit’s diagnostics, file names only', async () => {
    const s = await start();
    writeFileSync(join(dir!, 'desk.yaml'), V1.replace('next: end', 'next: nowhere'));
    const r = (await postJson(s, '/admin/reload', undefined)).json();
    expect(r).toMatchObject({ ok: true, kept: ['desk'], refused: [{ file: 'desk.yaml' }] });
    const desk = (await get(s, '/admin/flows/desk')).json();
    expect(desk.current).toBe(flowVersion(V1));
    expect(desk.errors).toEqual([
      expect.objectContaining({ code: 'UNKNOWN_STEP', file: 'desk.yaml', line: 19, column: 11 }),
    ]);
  });

  it('counts errors per version (command errors, 5xx)', async () => {
    const s = await start();
    await call(s, { callid: '31' });
    await call(s, { callid: '31', command: 'read', command_id: 1, command_error: 'BAD_PARAMS' });
    const v = (await get(s, '/admin/flows/desk')).json().versions[0];
    expect(v).toMatchObject({ calls: 1, errors: 1 });
  });
});
