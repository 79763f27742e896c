import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { callscript } from '../../src/index.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;

describe('the Fastify plugin inside a user app', () => {
  it('serves under a prefix and leaves the rest of the app as it was', async () => {
    const app = Fastify({ logger: false });
    app.post('/orders', async (req) => ({ got: req.body }));
    await app.register(callscript, { flowsDir: FLOWS, prefix: '/ivr', auth: { login: 'svc', password: 'pw' } });
    const rt = await app.inject({
      method: 'POST',
      url: '/ivr/rt/desk',
      headers: {
        'content-type': 'application/json',
        authorization: 'Basic ' + Buffer.from('svc:pw').toString('base64'),
      },
      payload: rtBody(),
    });
    expect(rt.statusCode).toBe(200);
    expect(rt.json()).toMatchObject({ command: 'read', command_id: 1 });
    // The user's own route still gets Fastify's JSON parser, auth and error handling.
    const own = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'content-type': 'application/json' },
      payload: '{"n":1}',
    });
    expect(own.json()).toEqual({ got: { n: 1 } });
    const ownBad = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(ownBad.statusCode).toBe(400);
    expect(ownBad.json().code).toBe('FST_ERR_CTP_INVALID_JSON_BODY');
    const health = await app.inject({ method: 'GET', url: '/ivr/health' });
    expect(health.json().flows.map((f: { name: string }) => f.name)).toEqual(['desk', 'other']);
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(404);
    await app.close();
  });

  it('logs one line per call when it ends, none per request at info', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = { write: (s: string) => lines.push(JSON.parse(s)) };
    const app = Fastify({ logger: { level: 'info', stream } });
    await app.register(callscript, { flowsDir: FLOWS });
    await app.ready();
    lines.length = 0; // diagnostics of the fixture flows logged at load
    const post = (over: Parameters<typeof rtBody>[0]) =>
      app.inject({
        method: 'POST',
        url: '/rt/other',
        headers: { 'content-type': 'application/json' },
        payload: rtBody(over),
      });
    await post({});
    await post({ command: 'play', command_id: 1, command_result: '0' });
    await post({ command: 'hangup', command_id: 2, call_status: 'HANGUP' });
    const ours = lines.filter((l) => l.msg !== 'incoming request' && l.msg !== 'request completed');
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatchObject({
      level: 30,
      msg: 'call ended',
      callid: '4242',
      flow: 'other',
      status: 'HANGUP',
      commands: 2,
    });
    await app.close();
  });
});
