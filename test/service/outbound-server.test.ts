/**
 * Outbound calls placed by the server, end to end over real HTTP: callscript's server (with
 * the reminder flow and an admin API) places calls through the emulator's calls.realtime; the
 * emulator calls the app's URL back (the server), and the call's vars reach the flow. Then
 * GET /admin/outbound/:id follows each call; hostile bodies and failing services get their
 * clear errors; a first request that comes before calls.realtime's answer still gets its vars;
 * with Redis, a call placed by one instance starts on another with its vars.
 */
import { createServer as httpServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/service/jsonrpc.js';
import { RedisStore } from '../../src/store/redis.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';
import { rtBody } from '../helpers/rt.js';
import {
  admin,
  fakeService,
  freePort,
  registerCaller,
  silentServer,
  startEmulator,
  startServer,
  type Emu,
  type Served,
} from './helpers.js';

let emu: Emu;
let srv: Served;
let appHash: string;

/** Reads GET /admin/outbound/:id until the call is finished (10 s at most). */
async function finished(base: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const v = await admin(base, 'GET', `/admin/outbound/${id}`);
    expect(v.status).toBe(200);
    if (v.body.status === 'finished') return v.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`call ${id} did not finish`);
}

beforeAll(async () => {
  emu = await startEmulator();
  srv = await startServer({ service: { url: emu.base, login: 'emulator', password: 'emulator' } });
  const client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
  appHash = (await client.apps.create('reminder', { url: `${srv.base}/rt/reminder` })).hash;
});
afterAll(async () => {
  await srv.close();
  await emu.close();
});

describe('POST /admin/calls: the vars reach the flow', () => {
  it(
    'places the call, answers 201 {id, app, number, placedAt}; the flow starts with the declared vars; the ' +
      'outcome comes from the call history',
    async () => {
      const t0 = Date.now();
      const r = await admin(srv.base, 'POST', '/admin/calls', {
        app: appHash,
        number: '+33612345678',
        vars: { patient: 'Ms Jones', appointment: '2026-12-01T09:15:00', bogus: 'x' },
        cdr_field: 'ext4417',
      });
      expect(r.status).toBe(201);
      expect(Object.keys(r.body)).toEqual(['id', 'app', 'number', 'placedAt']);
      expect(r.body).toMatchObject({
        id: expect.stringMatching(/^[A-Z0-9]{8}$/),
        app: appHash,
        number: '+33612345678',
      });
      expect(Date.parse(r.body.placedAt)).toBeGreaterThanOrEqual(t0 - 1000);
      const view = await finished(srv.base, r.body.id);
      expect(view).toEqual({
        id: r.body.id,
        app: appHash,
        number: '+33612345678',
        placedAt: r.body.placedAt,
        callid: expect.stringMatching(/^[0-9]+$/),
        status: 'finished',
        outcome: 'completed',
        lastStep: 'end',
        durationMs: expect.any(Number),
        callStatus: 'HANGUP',
      });
      // the call history: the vars given (the undeclared one dropped), and the commands they made
      const call = await admin(srv.base, 'GET', `/admin/calls/${view.callid}`);
      expect(call.body.vars).toMatchObject({
        patient: 'Ms Jones',
        appointment: '2026-12-01T09:15:00',
        dentist: 'Doctor Patel',
        outcome: 'message_left',
      });
      expect(call.body.vars).not.toHaveProperty('bogus');
      const sent = (call.body.path as { reply: { command: string; params: Record<string, unknown> } | null }[])
        .map((p) => p.reply)
        .filter((x) => x !== null);
      expect(sent.map((s) => s!.command)).toEqual([
        'wait',
        'send_dtmf',
        'wait',
        'play_talk_detect',
        'wait_for_silence',
        'play',
        'hangup',
        'hangup',
      ]);
      expect(sent[1]!.params).toEqual({ digits: '4417#' });
      expect(String(sent[3]!.params.media_id)).toBe(
        'TTS|TTS_EN-GB_SERENA|Hello, this is Riverside Dental Practice calling for Ms Jones.',
      );
      expect(String(sent[5]!.params.media_id)).toContain('on Tuesday 1 December at 9:15 AM');
      const logs = srv.logs();
      expect(logs.find((l) => l.code === 'OUTBOUND_VARS_DROPPED')).toMatchObject({
        level: 40,
        id: r.body.id,
        flow: 'reminder',
        dropped: ['bogus'],
      });
      expect(logs.find((l) => l.code === 'OUTBOUND_PLACED' && l.id === r.body.id)).toMatchObject({
        level: 30,
        app: appHash,
        number: '+33612345678',
        vars: ['patient', 'appointment', 'bogus'],
      });
    },
  );

  it(
    "a person answers and confirms: the flow's own outcome " + 'is in its vars; the call is live before it ends',
    async () => {
      await registerCaller(emu.base, '+33611111111', {
        name: 'confirms',
        actions: [{ play_talk_detect: 'TALK' }, { read: 1 }],
      });
      const r = await admin(srv.base, 'POST', '/admin/calls', {
        app: appHash,
        number: '+33611111111',
        vars: { patient: 'Mr Brown' },
      });
      expect(r.status).toBe(201);
      const view = await finished(srv.base, r.body.id);
      expect(view).toMatchObject({ status: 'finished', outcome: 'completed', lastStep: 'end', callStatus: 'HANGUP' });
      const call = await admin(srv.base, 'GET', `/admin/calls/${view.callid}`);
      expect(call.body.vars).toMatchObject({ patient: 'Mr Brown', outcome: 'confirmed', answered: '1' });
    },
  );

  it(
    'a number that does not answer: finished, abandoned, NOANSWER, with its callid; the hangup handler ran with ' +
      'the vars the call was placed with (not reached), and the call ended line says so',
    async () => {
      await registerCaller(emu.base, '+33622222222', { name: 'away', call: { answer: 'NOANSWER' } });
      const r = await admin(srv.base, 'POST', '/admin/calls', {
        app: appHash,
        number: '+33622222222',
        vars: { patient: 'Mr Brown', appointment: '2026-12-02T14:00:00' },
      });
      const view = await finished(srv.base, r.body.id);
      expect(view).toMatchObject({
        status: 'finished',
        outcome: 'abandoned',
        callStatus: 'NOANSWER',
        lastStep: null,
        callid: expect.stringMatching(/^[0-9]+$/),
      });
      const call = await admin(srv.base, 'GET', `/admin/calls/${view.callid}`);
      expect(call.body.vars).toEqual({
        patient: 'Mr Brown',
        dentist: 'Doctor Patel',
        appointment: '2026-12-02T14:00:00',
        practice: 'Riverside Dental Practice',
        reception: '+442079460321',
        outcome: 'not_reached',
        reason: 'noanswer',
        follow_up: 'call Mr Brown again about 02/12 14:00',
      });
      const ended = srv.logs().filter((l) => l.msg === 'call ended' && l.callid === view.callid);
      expect(ended).toEqual([
        expect.objectContaining({ status: 'NOANSWER', commands: 0, lastStep: '', vars: call.body.vars }),
      ]);
    },
  );
});

describe('GET /admin/outbound/:id', () => {
  it('unknown ids, and ids that are no ids, are 404 OUTBOUND_NOT_FOUND', async () => {
    for (const id of ['ZZZZZZZZ', '-placing', '..%2F..%2Fadmin', 'x'.repeat(90)]) {
      const r = await admin(srv.base, 'GET', `/admin/outbound/${id}`);
      expect(r.status, id).toBe(404);
      expect(r.body.error.code).toBe('OUTBOUND_NOT_FOUND');
    }
  });

  it('a call the service never connects stays placed, its callid null', async () => {
    const fake = await fakeService((_req, body) => ({
      body: JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: 'NEVER001' }),
    }));
    const s = await startServer({ service: { url: fake.url, login: 'a', password: 'b' } });
    try {
      const r = await admin(s.base, 'POST', '/admin/calls', {
        app: 'A1B2C3D4',
        number: '+33612345678',
        cli: '+33123456789',
        cdr_field: 'camp7',
      });
      expect(r.status).toBe(201);
      expect(r.body.id).toBe('NEVER001');
      expect(JSON.parse(fake.requests[0]!.body).params).toEqual([
        'A1B2C3D4',
        { number: '+33612345678', timeout: 30 },
        { cdr_field: 'camp7', cli: '+33123456789' },
      ]);
      const v = await admin(s.base, 'GET', '/admin/outbound/NEVER001');
      expect(v.body).toEqual({
        id: 'NEVER001',
        app: 'A1B2C3D4',
        number: '+33612345678',
        placedAt: r.body.placedAt,
        callid: null,
        status: 'placed',
      });
    } finally {
      await s.close();
      await fake.close();
    }
  });

  it('with the call history off, a finished call says so with no outcome', async () => {
    const s = await startServer({
      history: false,
      service: { url: emu.base, login: 'emulator', password: 'emulator' },
    });
    try {
      const client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
      const app = await client.apps.create('reminder, no history', { url: `${s.base}/rt/reminder` });
      const r = await admin(s.base, 'POST', '/admin/calls', { app: app.hash, number: '+33633333333' });
      const v = await finished(s.base, r.body.id);
      expect(v).toMatchObject({
        status: 'finished',
        outcome: null,
        lastStep: null,
        durationMs: null,
        callStatus: null,
        callid: expect.any(String),
      });
    } finally {
      await s.close();
    }
  });
});

describe('POST /admin/calls refuses what it should, clearly', () => {
  const post = (body: unknown, base = srv.base) => admin(base, 'POST', '/admin/calls', body);

  it('bad bodies: 400 BAD_ADMIN_BODY naming the field; nothing placed', async () => {
    const emuAuth = { headers: { authorization: 'Basic ' + Buffer.from('emulator:emulator').toString('base64') } };
    const before = (await fetch(`${emu.base}/emulator/calls`, emuAuth).then((r) => r.json())) as unknown[];
    const cases: [unknown, string][] = [
      [{ app: appHash, number: '0612345678' }, 'number "0612345678" is not E.164: '],
      [
        { app: appHash, number: '+33612345678', vars: { a: { b: { c: 1 } } } },
        'vars.a is an object: vars are flat, each a string, a number or a boolean',
      ],
      [
        { app: appHash, number: '+33612345678', vars: { a: 'x'.repeat(5000) } },
        'vars.a is 5000 characters long, at most 1024',
      ],
      [
        {
          app: appHash,
          number: '+33612345678',
          vars: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`v${i}`, i])),
        },
        'vars: 100 variables, at most 64',
      ],
      [{ app: appHash, number: '+33612345678', vars: ['a'] }, 'vars must be an object'],
      [{ app: appHash }, 'number: the number to call'],
      [{ number: '+33612345678' }, 'app: the hash of a REALTIME10 application'],
      [{ app: appHash, number: '+33612345678', extra: 1 }, 'unknown field "extra"'],
      ['[1,2]', 'the body must be a JSON object'],
      ['{"app": ', 'the body is not valid JSON'],
    ];
    for (const [body, msg] of cases) {
      const r = await post(body);
      expect(r.status, msg).toBe(400);
      expect(r.body.error.code).toBe('BAD_ADMIN_BODY');
      expect(r.body.error.message).toContain(msg);
    }
    const after = (await fetch(`${emu.base}/emulator/calls`, emuAuth).then((r) => r.json())) as unknown[];
    expect(after.length).toBe(before.length);
  });

  it('admin credentials and a JSON body are required', async () => {
    const noAuth = await fetch(`${srv.base}/admin/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ app: appHash, number: '+33612345678' }),
    });
    expect(noAuth.status).toBe(401);
    const text = await fetch(`${srv.base}/admin/calls`, {
      method: 'POST',
      headers: {
        authorization: 'Basic ' + Buffer.from('boss:s3 cret:x').toString('base64'),
        'content-type': 'text/plain',
      },
      body: 'app=x',
    });
    expect(text.status).toBe(415);
  });

  it("an unknown application: 502 SERVICE_ERROR with the service's code", async () => {
    const r = await post({ app: 'ZZZZZZZZ', number: '+33612345678' });
    expect(r).toEqual({
      status: 502,
      body: {
        error: {
          code: 'SERVICE_ERROR',
          message: 'the service refused the call: calls.realtime: no application with hash ZZZZZZZZ (code 20)',
          serviceCode: 20,
        },
      },
    });
  });

  it('no account on the server: 503 SERVICE_UNCONFIGURED; a wrong one: 502 SERVICE_ERROR code 22', async () => {
    const none = await startServer();
    const wrong = await startServer({ service: { url: emu.base, login: 'emulator', password: 'nope' } });
    try {
      const a = await post({ app: appHash, number: '+33612345678' }, none.base);
      expect(a.status).toBe(503);
      expect(a.body.error.code).toBe('SERVICE_UNCONFIGURED');
      const b = await post({ app: appHash, number: '+33612345678' }, wrong.base);
      expect(b).toEqual({
        status: 502,
        body: {
          error: {
            code: 'SERVICE_ERROR',
            message:
              "the service refused the server's account (code 22, authentication failed): check account: in " +
              'callscript.yaml or CALLSCRIPT_ACCOUNT where the server runs',
            serviceCode: 22,
          },
        },
      });
    } finally {
      await none.close();
      await wrong.close();
    }
  });

  it(
    "a service that never answers: 504 SERVICE_TIMEOUT within the client's timeout; nothing listening: 502 " +
      'SERVICE_UNREACHABLE',
    async () => {
      const silent = await silentServer();
      const port = await freePort();
      const slow = await startServer({ service: { url: silent.url, login: 'a', password: 'b', timeoutMs: 300 } });
      const gone = await startServer({ service: { url: `http://127.0.0.1:${port}`, login: 'a', password: 'b' } });
      try {
        const t0 = Date.now();
        const a = await post({ app: appHash, number: '+33612345678' }, slow.base);
        expect(Date.now() - t0).toBeLessThan(5000);
        expect(a).toEqual({
          status: 504,
          body: {
            error: {
              code: 'SERVICE_TIMEOUT',
              message:
                `calls.realtime: no answer from ${silent.url}/json-rpc/v1.1/ within 300 ms: the call may or may ` +
                `not have been placed`,
            },
          },
        });
        const b = await post({ app: appHash, number: '+33612345678' }, gone.base);
        expect(b.status).toBe(502);
        expect(b.body.error).toEqual({
          code: 'SERVICE_UNREACHABLE',
          message:
            `calls.realtime: cannot reach http://127.0.0.1:${port}/json-rpc/v1.1/: connection refused ` +
            `(ECONNREFUSED) (the service at http://127.0.0.1:${port}/json-rpc/v1.1/): no call was placed`,
        });
      } finally {
        await slow.close();
        await gone.close();
        await silent.close();
      }
    },
  );

  it(
    'calls.realtime sent and its answer lost or unusable: 502 SERVICE_OUTCOME_UNKNOWN (the call may have been ' +
      'placed), never SERVICE_UNREACHABLE',
    async () => {
      // a service that reads the request, then cuts the connection without answering
      const cut = httpServer((req) => {
        req.resume();
        req.on('end', () => req.socket.destroy());
      });
      await new Promise<void>((r) => cut.listen(0, '127.0.0.1', r));
      const cutUrl = `http://127.0.0.1:${(cut.address() as { port: number }).port}`;
      const answers: Record<string, { status?: number; type?: string; body: (id: number) => string }> = {
        'an HTTP 500': { status: 500, type: 'text/html', body: () => '<h1>Internal error</h1>' },
        'a body that is not JSON': { body: () => 'OK' },
        'a result that is not a string': { body: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: 12345 }) },
        'an id that is no request_hash': { body: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: 'a/b c' }) },
      };
      const fakes = await Promise.all(
        Object.values(answers).map((a) =>
          fakeService((_r, body) => ({
            ...(a.status ? { status: a.status } : {}),
            ...(a.type ? { type: a.type } : {}),
            body: a.body((JSON.parse(body) as { id: number }).id),
          })),
        ),
      );
      const urls = [cutUrl, ...fakes.map((f) => f.url)];
      const servers = await Promise.all(
        urls.map((url) => startServer({ service: { url, login: 'a', password: 'b' } })),
      );
      try {
        for (const [i, s] of servers.entries()) {
          const r = await post({ app: appHash, number: '+33612345678', vars: { patient: 'Ms Jones' } }, s.base);
          const what = ['a connection cut', ...Object.keys(answers)][i]!;
          expect(r.status, what).toBe(502);
          expect(r.body.error.code, what).toBe('SERVICE_OUTCOME_UNKNOWN');
          expect(r.body.error.message, what).toMatch(
            new RegExp(
              `^calls\\.realtime: .* \\(the service at ${urls[i]}/json-rpc/v1\\.1/\\): the call may or may not ` +
                `have been placed; it is not tried again$`,
            ),
          );
        }
        // each service got the request once: nothing was tried again
        for (const f of fakes) expect(f.requests).toHaveLength(1);
        const result = (await post({ app: appHash, number: '+33612345678' }, servers[3]!.base)).body.error.message;
        expect(result).toContain('the result 12345 is not a call id (1 to 64 letters and digits)');
      } finally {
        await Promise.all(servers.map((s) => s.close()));
        await Promise.all(fakes.map((f) => f.close()));
        await new Promise<void>((r) => cut.close(() => r()));
      }
    },
  );
});

describe('the first request before calls.realtime has answered', () => {
  it('waits for the placement in progress and starts with the vars', async () => {
    // a service that sends the call's first request to the server, then answers calls.realtime 300 ms later
    let firstRequest: Promise<Response> | undefined;
    const target: { base?: string } = {};
    const svc = httpServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const id = (JSON.parse(body) as { id: number }).id;
        firstRequest = fetch(`${target.base}/rt/reminder`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: rtBody({ callid: '777000111', request_hash: 'RACE0001', number: '+33612345678' }),
        });
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json-rpc; charset=utf-8' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, result: 'RACE0001' }));
        }, 300);
      });
    });
    await new Promise<void>((r) => svc.listen(0, '127.0.0.1', r));
    const s = await startServer({
      service: { url: `http://127.0.0.1:${(svc.address() as { port: number }).port}`, login: 'a', password: 'b' },
    });
    target.base = s.base;
    try {
      const r = await admin(s.base, 'POST', '/admin/calls', {
        app: 'A1B2C3D4',
        number: '+33612345678',
        vars: { patient: 'Dr Early' },
      });
      expect(r.status).toBe(201);
      const first = await firstRequest!;
      expect(first.status).toBe(200);
      const reply = (await first.json()) as { command: string };
      expect(reply.command).toBe('play_talk_detect');
      const live = await admin(s.base, 'GET', '/admin/calls/777000111');
      expect(live.body).toMatchObject({ status: 'live', vars: { patient: 'Dr Early' } });
      const v = await admin(s.base, 'GET', '/admin/outbound/RACE0001');
      expect(v.body).toMatchObject({ status: 'live', callid: '777000111', step: 'opening' });
    } finally {
      await s.close();
      await new Promise<void>((r) => svc.close(() => r()));
    }
  });

  it(
    'a call placed by another tool (a request_hash the server never placed, or no id at all) starts with the ' +
      "flow's own vars",
    async () => {
      for (const [callid, hash] of [
        ['777000222', 'OTHER001'],
        ['777000223', '-placing'],
        ['777000224', 'x'.repeat(5000)],
      ] as const) {
        const r = await fetch(`${srv.base}/rt/reminder`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: rtBody({ callid, request_hash: hash }),
        });
        expect(r.status).toBe(200);
        const live = await admin(srv.base, 'GET', `/admin/calls/${callid}`);
        expect(live.body.vars).toMatchObject({ patient: 'Mr Smith' });
      }
    },
  );
});

const missing = await redisMissing();
describe.skipIf(!!missing)('two instances on one Redis', () => {
  const prefix = testPrefix();
  afterAll(async () => {
    await dropPrefix(prefix);
  });

  it('a call placed through one instance starts on the other with its vars, and either follows it', async () => {
    const storeA = new RedisStore(REDIS_URL, { prefix });
    const storeB = new RedisStore(REDIS_URL, { prefix });
    await storeA.ready();
    await storeB.ready();
    const a = await startServer({ store: storeA, service: { url: emu.base, login: 'emulator', password: 'emulator' } });
    const b = await startServer({ store: storeB });
    try {
      const client = new ServiceClient({ url: emu.base, login: 'emulator', password: 'emulator' });
      const app = await client.apps.create('reminder on B', { url: `${b.base}/rt/reminder` });
      const r = await admin(a.base, 'POST', '/admin/calls', {
        app: app.hash,
        number: '+33644444444',
        vars: { patient: 'Mrs Redis' },
      });
      expect(r.status).toBe(201);
      const view = await finished(a.base, r.body.id);
      expect(view).toMatchObject({ status: 'finished', outcome: 'completed' });
      expect((await admin(b.base, 'GET', `/admin/outbound/${r.body.id}`)).body).toEqual(view);
      const call = await admin(a.base, 'GET', `/admin/calls/${view.callid}`);
      expect(call.body.vars).toMatchObject({ patient: 'Mrs Redis' });
    } finally {
      await a.close();
      await b.close();
      await storeA.close();
      await storeB.close();
    }
  });
});
