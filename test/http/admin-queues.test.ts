/**
 * The admin API's queues (docs/admin.md "Queues") through the plugin and fastify.inject, on a store whose queues are
 * a fake (test/http/queues-fake.ts): the exact answers, the request's time given to the store, credentials, bad
 * bodies and queries, unknown queues, a store without queues or unavailable, and a pause seen by the next view.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { FakeQueues, QueuesStore, sampleViews, T } from './queues-fake.js';

const FLOWS = new URL('../fixtures/history', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');

let app: FastifyInstance | undefined;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T);
});
afterEach(async () => {
  vi.useRealTimers();
  await app?.close();
  app = undefined;
});

async function server(fake: FakeQueues | undefined) {
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  app = Fastify({ logger: { level: 'info', stream } });
  await app.register(callscript, {
    flowsDir: FLOWS,
    admin: { login: 'boss', password: 's3cret' },
    store: new QueuesStore(fake),
  });
  return { app, logs };
}

const get = (a: FastifyInstance, url: string, auth = true) =>
  a.inject({ method: 'GET', url, headers: auth ? { authorization: ADMIN } : {} });
const post = (a: FastifyInstance, url: string, payload: string, headers: Record<string, string> = {}) =>
  a.inject({
    method: 'POST',
    url,
    headers: { authorization: ADMIN, 'content-type': 'application/json', ...headers },
    payload,
  });
const error = (code: string, message: string) => ({ error: { code, message } });

const SALES = {
  name: 'sales',
  waiting: 3,
  longestWaitMs: 83_000,
  answered: 12,
  abandoned: 3,
  timedOut: 1,
  handleMs: 125_000,
  agentCounts: { free: 1, busy: 1, wrapUp: 1, paused: 1 },
  line: [
    {
      position: 1,
      callid: '4242',
      since: '2026-11-25T09:58:37.000Z',
      lastSeen: '2026-11-25T09:59:59.000Z',
      waitedMs: 83_000,
      ringing: null,
    },
    {
      position: null,
      callid: '4243',
      since: '2026-11-25T09:59:20.000Z',
      lastSeen: '2026-11-25T09:59:58.000Z',
      waitedMs: 40_000,
      ringing: '+33612345678',
    },
    {
      position: 2,
      callid: '4244',
      since: '2026-11-25T09:59:54.500Z',
      lastSeen: '2026-11-25T09:59:59.500Z',
      waitedMs: 5_500,
      ringing: null,
    },
  ],
  agents: [
    {
      number: '+33612345678',
      state: 'busy',
      paused: false,
      since: '2026-11-25T09:59:50.000Z',
      until: null,
      callid: '4243',
      queue: 'sales',
    },
    {
      number: '+33612345679',
      state: 'free',
      paused: false,
      since: '2026-11-25T09:50:00.000Z',
      until: null,
      callid: null,
      queue: null,
    },
    {
      number: '+33612345680',
      state: 'wrap_up',
      paused: false,
      since: '2026-11-25T09:59:30.000Z',
      until: '2026-11-25T10:00:15.000Z',
      callid: null,
      queue: null,
    },
    { number: '+33612345681', state: 'free', paused: true, since: null, until: null, callid: null, queue: null },
  ],
};
const SUPPORT = {
  name: 'support',
  waiting: 0,
  longestWaitMs: 0,
  answered: 0,
  abandoned: 0,
  timedOut: 0,
  handleMs: null,
  agentCounts: { free: 1, busy: 0, wrapUp: 0, paused: 0 },
  line: [],
  agents: [
    { number: '+442079460000', state: 'free', paused: false, since: null, until: null, callid: null, queue: null },
  ],
};

describe('GET /admin/queues', () => {
  it('answers every queue, exactly, the store asked at the request time', async () => {
    const fake = new FakeQueues(sampleViews());
    const { app } = await server(fake);
    const r = await get(app, '/admin/queues');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.json()).toEqual({ queues: [SALES, SUPPORT] });
    expect(fake.calls).toEqual([['view', T]]);
    // the fields in the order documented
    expect(Object.keys(r.json().queues[0])).toEqual(Object.keys(SALES));
  });

  it('lists at most `limit` callers per line (waiting counts them all); a bad limit is 400', async () => {
    const { app } = await server(new FakeQueues(sampleViews()));
    const r = await get(app, '/admin/queues?limit=1');
    expect(r.statusCode).toBe(200);
    expect(r.json().queues[0]).toEqual({ ...SALES, line: SALES.line.slice(0, 1) });
    for (const q of ['limit=0', 'limit=1001', 'limit=x', 'limit=1&limit=2', 'limit=']) {
      const bad = await get(app, `/admin/queues?${q}`);
      expect(bad.statusCode, q).toBe(400);
      expect(bad.json(), q).toEqual(
        error('BAD_ADMIN_QUERY', 'limit must be an integer from 1 to 1000 (given once): the callers listed per line'),
      );
    }
  });

  it('is empty when the store knows no queue', async () => {
    const { app } = await server(new FakeQueues());
    expect((await get(app, '/admin/queues')).json()).toEqual({ queues: [] });
  });

  it('needs the admin credentials', async () => {
    const fake = new FakeQueues(sampleViews());
    const { app } = await server(fake);
    for (const r of [
      await get(app, '/admin/queues', false),
      await get(app, '/admin/queues/sales', false),
      await app.inject({
        method: 'POST',
        url: '/admin/queues/sales/agents',
        headers: { 'content-type': 'application/json' },
        payload: '{"number":"+33612345679","paused":true}',
      }),
    ]) {
      expect(r.statusCode).toBe(401);
      expect(r.json()).toEqual(error('ADMIN_AUTH_REQUIRED', 'valid admin HTTP Basic credentials are required'));
    }
    expect(fake.calls).toEqual([]);
  });
});

describe('GET /admin/queues/:name', () => {
  it('answers one queue; 404 UNKNOWN_QUEUE for a name the store does not know', async () => {
    const fake = new FakeQueues(sampleViews());
    const { app } = await server(fake);
    expect((await get(app, '/admin/queues/support')).json()).toEqual(SUPPORT);
    expect((await get(app, '/admin/queues/sales?limit=2')).json()).toEqual({ ...SALES, line: SALES.line.slice(0, 2) });
    const r = await get(app, '/admin/queues/Sales');
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual(
      error('UNKNOWN_QUEUE', 'no queue named "Sales": no caller waits in it and no agent is known'),
    );
    expect(fake.calls).toEqual([
      ['view', T, 'support'],
      ['view', T, 'sales'],
      ['view', T, 'Sales'],
    ]);
    for (const [url, shown] of [
      ['/admin/queues/a%0Ab', 'a\\nb'],
      ['/admin/queues/sales%20fr', 'sales fr'],
      [`/admin/queues/${'q'.repeat(65)}`, `${'q'.repeat(64)}…`],
    ]) {
      const bad = await get(app, url!);
      expect(bad.statusCode).toBe(404);
      expect(bad.json()).toEqual(
        error('UNKNOWN_QUEUE', `no queue can be named "${shown}": a queue name is 1 to 64 letters, digits, - and _`),
      );
    }
    const pause = await post(app, '/admin/queues/sales.fr/agents', '{"number":"+33612345679","paused":true}');
    expect(pause.statusCode).toBe(404);
    expect(pause.json().error.code).toBe('UNKNOWN_QUEUE');
    expect(fake.calls).toHaveLength(3);
  });
});

describe('POST /admin/queues/:name/agents', () => {
  it('pauses an agent, answers the queue, logs it; the next view shows it paused; then resumes it', async () => {
    const fake = new FakeQueues(sampleViews());
    const { app, logs } = await server(fake);
    const r = await post(app, '/admin/queues/sales/agents', '{"number":"+33612345679","paused":true}');
    expect(r.statusCode, r.body).toBe(200);
    const paused = { ...SALES.agents[1], paused: true };
    const after = {
      ...SALES,
      agentCounts: { free: 0, busy: 1, wrapUp: 1, paused: 2 },
      agents: [SALES.agents[0], paused, SALES.agents[2], SALES.agents[3]],
    };
    expect(r.json()).toEqual(after);
    expect((await get(app, '/admin/queues/sales')).json()).toEqual(after);
    expect(fake.calls.slice(0, 2)).toEqual([
      ['pause', 'sales', '+33612345679', true, T],
      ['view', T, 'sales'],
    ]);
    expect(logs.filter((l) => l.code === 'QUEUE_AGENT_PAUSED').map((l) => [l.level, l.msg, l.queue, l.paused])).toEqual(
      [[30, 'queue sales: agent +33612345679 paused (set by the admin API)', 'sales', true]],
    );
    const back = await post(app, '/admin/queues/sales/agents', '{"paused":false,"number":"+33612345679"}');
    expect(back.json()).toEqual(SALES);
  });

  it('pauses an agent of a queue the store does not know yet (before its first caller)', async () => {
    const fake = new FakeQueues();
    const { app } = await server(fake);
    const r = await post(app, '/admin/queues/night/agents', '{"number":"+442079460000","paused":true}');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      ...SUPPORT,
      name: 'night',
      agentCounts: { free: 0, busy: 0, wrapUp: 0, paused: 1 },
      agents: [{ ...SUPPORT.agents[0], paused: true }],
    });
  });

  it('refuses a bad body with 400 BAD_ADMIN_BODY saying what is wrong, and changes nothing', async () => {
    const fake = new FakeQueues(sampleViews());
    const { app } = await server(fake);
    const cases: [string, string][] = [
      ['{"number":"+33612345679"', 'the body is not valid JSON'],
      ['[1]', 'the body must be a JSON object'],
      ['', "number: the agent's number, E.164 (e.g. +33612345678), is required, got nothing"],
      ['{"paused":true}', "number: the agent's number, E.164 (e.g. +33612345678), is required, got nothing"],
      [
        '{"number":33612345679,"paused":true}',
        "number: the agent's number, E.164 (e.g. +33612345678), is required, got 33612345679",
      ],
      [
        '{"number":"0612345679","paused":true}',
        'number "0612345679" is not E.164: an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. ' +
          '+33123456789)',
      ],
      [
        '{"number":"+33612345679"}',
        'paused: true (pause the agent in this queue) or false (resume it) is required, got nothing',
      ],
      [
        '{"number":"+33612345679","paused":"yes"}',
        'paused: true (pause the agent in this queue) or false (resume it) is required, got "yes"',
      ],
      [
        '{"number":"+33612345679","paused":true,"queue":"x"}',
        'unknown field "queue": the body is {"number": "+33…", "paused": true|false}',
      ],
    ];
    for (const [body, message] of cases) {
      const r = await post(app, '/admin/queues/sales/agents', body);
      expect(r.statusCode, body).toBe(400);
      expect(r.json(), body).toEqual(error('BAD_ADMIN_BODY', message));
    }
    const text = await post(app, '/admin/queues/sales/agents', 'number=+33612345679', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(fake.calls).toEqual([]);
  });
});

describe('a store without queues, or unavailable', () => {
  it('answers 404 QUEUES_UNSUPPORTED on every queue route', async () => {
    const { app } = await server(undefined);
    const body = error(
      'QUEUES_UNSUPPORTED',
      'the call store has no queues (its capabilities declare no queues()): there is nothing to show or pause',
    );
    for (const r of [
      await get(app, '/admin/queues'),
      await get(app, '/admin/queues/sales'),
      await post(app, '/admin/queues/sales/agents', '{"number":"+33612345679","paused":true}'),
    ]) {
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual(body);
    }
  });

  it('answers 503 STORE_UNAVAILABLE when the store fails', async () => {
    const fake = new FakeQueues(sampleViews());
    fake.fail = Object.assign(new Error('connection refused'), { code: 'STORE_UNAVAILABLE' });
    const { app } = await server(fake);
    const body = error('STORE_UNAVAILABLE', 'the call store is unavailable (connection refused)');
    for (const r of [
      await get(app, '/admin/queues'),
      await get(app, '/admin/queues/sales'),
      await post(app, '/admin/queues/sales/agents', '{"number":"+33612345679","paused":true}'),
    ]) {
      expect(r.statusCode).toBe(503);
      expect(r.json()).toEqual(body);
    }
  });
});
