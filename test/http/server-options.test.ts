/** What the server and plugin set up around the route: per-request loggers, the body parser. */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/http-flows', import.meta.url).pathname;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function probe(logLevel: string | false): Promise<{ appLogger: boolean; bindings: Record<string, unknown> }> {
  app = await buildServer({ flowsDir: FLOWS, logLevel });
  const a = app;
  a.get('/probe-logger', async (req) => ({
    appLogger: req.log === a.log,
    bindings:
      typeof (req.log as { bindings?: () => object }).bindings === 'function'
        ? (req.log as unknown as { bindings: () => object }).bindings()
        : {},
  }));
  return (await a.inject({ method: 'GET', url: '/probe-logger' })).json();
}

describe('per-request loggers', () => {
  it.each(['info', 'warn', 'error'])(
    'at %s (request logging off) requests log through the app logger: no child per request',
    async (level) => {
      expect(await probe(level)).toEqual({ appLogger: true, bindings: {} });
    },
  );

  it('at debug (request logging on) each request gets a child logger bound to its reqId', async () => {
    const got = await probe('debug');
    expect(got.appLogger).toBe(false);
    expect(got.bindings).toMatchObject({ reqId: expect.any(String) });
  });
});

describe('request bodies are JSON, read as text and parsed losslessly', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset="UTF-8"',
  ])('%s', async (type) => {
    app = await buildServer({ flowsDir: FLOWS, logLevel: false });
    for (let i = 0; i < 2; i++) {
      // twice: the second request takes the parser Fastify cached for the content type
      const res = await app.inject({
        method: 'POST',
        url: '/rt/desk',
        headers: { 'content-type': type },
        payload: rtBody({ callid: String(100 + i) }),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ command: 'read', command_id: 1 });
    }
    const bad = await app.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { 'content-type': type },
      payload: '{"app":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'BAD_JSON' } });
  });
});
