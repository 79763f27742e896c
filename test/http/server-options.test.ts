/** What the server sets up around the route: per-request loggers. */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';

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
    bindings: typeof (req.log as { bindings?: () => object }).bindings === 'function' ? (req.log as unknown as { bindings: () => object }).bindings() : {},
  }));
  return (await a.inject({ method: 'GET', url: '/probe-logger' })).json();
}

describe('per-request loggers', () => {
  it.each(['info', 'warn', 'error'])('at %s (request logging off) requests log through the app logger: no child per request', async (level) => {
    expect(await probe(level)).toEqual({ appLogger: true, bindings: {} });
  });

  it('at debug (request logging on) each request gets a child logger bound to its reqId', async () => {
    const got = await probe('debug');
    expect(got.appLogger).toBe(false);
    expect(got.bindings).toMatchObject({ reqId: expect.any(String) });
  });
});

