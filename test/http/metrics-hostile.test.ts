/**
 * What callers send never becomes a label value: a flood of distinct callids, unknown flow
 * names in the URL, unknown apps and numbers, bad bodies, leaves the series of /metrics as
 * they were (flow "" for whatever no loaded flow served). Odd query strings and
 * credentials on /metrics change nothing either.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from '../../src/http/server.js';
import { rtBody, type RtFields } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/metrics-flows', import.meta.url).pathname;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const post = (app: FastifyInstance, url: string, over: Partial<RtFields> = {}) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: rtBody(over) });

/** The series of callscript's own metrics (the process's left out): name and labels, without the value. */
async function series(app: FastifyInstance): Promise<string[]> {
  const body = (await app.inject({ url: '/metrics' })).body;
  return body
    .split('\n')
    .filter((l) => l.startsWith('callscript_') && !/^callscript_(process|nodejs)_/.test(l))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
}

describe('label cardinality under a flood', () => {
  it(
    'distinct callids, unknown flows, apps and numbers add ' + 'no series; flow labels are loaded flows or ""',
    async () => {
      const { app } = await createServer({ flowsDir: FLOWS, logLevel: false, routes: { apps: {}, numbers: {} } });
      apps.push(app);
      // every kind of request once, so that every series the flood could touch exists
      await post(app, '/rt/desk', { callid: '1' });
      await post(app, '/rt/desk', { callid: '1', command: 'read', command_id: 1, command_result: '1' });
      await post(app, '/rt/desk', { callid: '1', command: 'read', command_id: 1, command_result: '1' });
      await post(app, '/rt/desk', { callid: '1', command: 'read', command_id: 99, command_result: '0' });
      await post(app, '/rt/nope', { callid: '2' });
      await post(app, '/rt', { callid: '3' });
      const before = await series(app);

      for (let i = 0; i < 300; i++) {
        const callid = String(1e15 + i * 7919);
        await post(app, `/rt/flow-${i}`, { callid });
        await post(app, '/rt', { callid, app: `APP${i}`, number: `+3312345${String(i).padStart(4, '0')}` });
        // a non-first request of an unknown call (restarted), a stale one, on the loaded flow
        await post(app, '/rt/desk', {
          callid: `${callid}1`,
          command: 'read',
          command_id: 1 + (i % 5),
          command_result: String(i),
        });
        await post(app, '/rt/desk', {
          callid: `${callid}1`,
          command: `cmd${i}`,
          command_id: 99,
          command_result: `r${i}`,
        });
      }
      // bodies that do not parse never reach the step
      for (let i = 0; i < 50; i++) {
        await app.inject({
          method: 'POST',
          url: `/rt/desk-${i}`,
          headers: { 'content-type': 'application/json' },
          payload: `{"callid": ${i}, "flow": "evil-${i}"`,
        });
      }
      const after = await series(app);
      expect(after.filter((l) => !before.includes(l))).toEqual([]);
      const body = (await app.inject({ url: '/metrics' })).body;
      const flows = new Set([...body.matchAll(/flow="([^"]*)"/g)].map((m) => m[1]));
      expect([...flows].sort()).toEqual(['', 'confirm', 'desk']);
      for (const leak of ['flow-1', 'APP1', '+33123450001', '1000000000007919', 'evil', 'cmd1', 'r1'])
        expect(body).not.toContain(leak);
      // yet they were all counted
      expect(body).toMatch(/^callscript_requests_total\{flow="",version="",outcome="no_route"\} 602$/m);
    },
  );

  it(
    'a flood of new calls on a loaded flow: one series per ' + 'version and outcome, whatever the number of calls',
    async () => {
      const { app, registry } = await createServer({ flowsDir: FLOWS, logLevel: false });
      apps.push(app);
      await post(app, '/rt/desk', { callid: '1' });
      const before = await series(app);
      for (let i = 0; i < 500; i++) await post(app, '/rt/desk', { callid: String(10 + i) });
      expect(await series(app)).toEqual(before);
      const v = registry.current('desk')!.version;
      expect((await app.inject({ url: '/metrics' })).body).toContain(
        `callscript_calls_started_total{flow="desk",version="${v}"} 501\n`,
      );
    },
  );
});

describe('odd requests to /metrics', () => {
  it('query strings are ignored; a trailing slash or another path is a 404', async () => {
    const { app } = await createServer({ flowsDir: FLOWS, logLevel: false });
    apps.push(app);
    for (const q of ['?name[]=callscript_requests_total', '?format=openmetrics', `?x=${'a'.repeat(4000)}`, '?%zz']) {
      const res = await app.inject({ url: `/metrics${q}` });
      expect(res.statusCode, q).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.body).toContain('# TYPE callscript_requests_total counter');
    }
    expect((await app.inject({ url: '/metrics/' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/metrics/../admin' })).statusCode).toBe(404);
  });

  it('auth: admin: malformed, empty and huge credentials are 401s', async () => {
    const { app } = await createServer({
      flowsDir: FLOWS,
      logLevel: false,
      admin: { login: 'ops', password: 'pw' },
      metrics: { auth: 'admin' },
      authFailureLimit: 0,
    });
    apps.push(app);
    for (const authorization of [
      'Basic',
      'Basic !!!',
      'Basic ' + Buffer.from('ops').toString('base64'),
      'Bearer x',
      'Basic ' + 'A'.repeat(8000),
      'basic ' + Buffer.from('ops:pw:').toString('base64'),
    ]) {
      const res = await app.inject({ url: '/metrics', headers: { authorization } });
      expect(res.statusCode, authorization.slice(0, 20)).toBe(401);
      expect(res.json().error.code).toBe('ADMIN_AUTH_REQUIRED');
    }
    expect(
      (
        await app.inject({
          url: '/metrics',
          headers: { authorization: 'basic ' + Buffer.from('ops:pw').toString('base64') },
        })
      ).statusCode,
    ).toBe(200);
  });
});
