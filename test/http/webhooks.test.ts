/**
 * POST /webhooks/callr through the plugin (fastify.inject): signed events recorded, every
 * refusal with its code (missing header, bad signature, the signature of another body,
 * wrong content type, oversized body, bad JSON, not an event), a replayed event recorded
 * once, a store failure answered 503 and handled on the retry, other types ignored,
 * sms.mo logged without its text and counted, the delivery status shown in the call's
 * detail (live and finished), the route off without a secret; on Redis, two instances share
 * the event ids.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import type { CallscriptPluginOptions } from '../../src/http/options.js';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';
import { StoreUnavailable } from '../../src/store/types.js';
import { hooked } from '../helpers/store.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { REDIS_URL, dropPrefix, redisMissing, testPrefix } from '../helpers/redis.js';

const FLOWS = new URL('../fixtures/sms-flows', import.meta.url).pathname;
const SECRET = 'test-webhook-secret-0123456789';
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const HASH = '8242D945';
const CLOCK = () => Date.parse('2026-11-23T10:00:06.000Z');

const sign = (body: string | Buffer, secret = SECRET) => createHmac('sha256', secret).update(body).digest('base64');

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** The plugin with the confirm flow (an sms step whose SMS gets hash 8242D945), its log lines kept. */
async function server(opts: Partial<CallscriptPluginOptions> = {}) {
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const store = opts.store ?? new MemoryStore();
  const app = Fastify({ logger: { level: 'debug', stream } });
  // the events below are of 2026-11-23 10:00:0x: the route's clock is a few seconds later
  const webhooks =
    'webhooks' in opts ? opts.webhooks && { now: CLOCK, ...opts.webhooks } : { secret: SECRET, now: CLOCK };
  await app.register(callscript, {
    flowsDir: FLOWS,
    admin: { login: 'boss', password: 's3cret' },
    effects: { sms: async () => HASH },
    ...opts,
    webhooks,
    store,
  });
  apps.push(app);
  return { app, logs, store };
}

function event(over: Record<string, unknown> = {}, data: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event_id: randomUUID(),
    event_at: '2026-11-23T10:00:01.000Z',
    hook_hash: 'HOOK0001',
    try: 0,
    type: 'sms.mt.status_update',
    data: { hash: HASH, status: 'SENT', status_error: '', ...data },
    ...over,
  });
}

const post = (
  a: FastifyInstance,
  body: string | Buffer,
  headers: Record<string, string | undefined> = {},
  url = '/webhooks/callr',
) => {
  const h: Record<string, string> = { 'content-type': 'application/json', 'x-callr-hmacsignature': sign(body) };
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) delete h[k];
    else h[k] = v;
  }
  return a.inject({ method: 'POST', url, headers: h, payload: body });
};
const get = async (a: FastifyInstance, url: string) => {
  const r = await a.inject({ method: 'GET', url, headers: { authorization: ADMIN } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};
const rt = async (a: FastifyInstance, over: Partial<RtFields>) => {
  const r = await a.inject({
    method: 'POST',
    url: '/rt/confirm',
    headers: { 'content-type': 'application/json' },
    payload: rtBody(over),
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};
const statuses = async (store: MemoryStore | RedisStore, hash = HASH) =>
  ((await store.smsStatus(hash))?.reports ?? []).map((r) => JSON.parse(r).status as string).sort();

describe('POST /webhooks/callr', () => {
  it('a signed delivery report is recorded for its SMS: 200 {"status":"ok"}', async () => {
    const { app, store } = await server();
    const body = event();
    const r = await post(app, body);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toEqual({ status: 'ok' });
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const stored = await (store as MemoryStore).smsStatus(HASH);
    expect(stored?.sent).toBeUndefined(); // no call of ours sent it (yet): the report is kept anyway
    expect(stored?.reports.map((x) => JSON.parse(x))).toEqual([
      { status: 'SENT', error: '', at: Date.parse('2026-11-23T10:00:01.000Z'), event: JSON.parse(body).event_id },
    ]);
  });

  it('refusals, each with its code, and nothing recorded', async () => {
    const { app, store, logs } = await server({ webhooks: { secret: SECRET, bodyLimit: 4096 } });
    const body = event();
    const cases: [string, Promise<{ statusCode: number; json(): any }>, number, string, RegExp][] = [
      [
        'missing header',
        post(app, body, { 'x-callr-hmacsignature': undefined }),
        401,
        'WEBHOOK_SIGNATURE',
        /X-CALLR-HmacSignature header is missing/,
      ],
      [
        'bad signature',
        post(app, body, { 'x-callr-hmacsignature': 'not-a-signature' }),
        401,
        'WEBHOOK_SIGNATURE',
        /does not match the body/,
      ],
      [
        'wrong secret',
        post(app, body, { 'x-callr-hmacsignature': sign(body, 'another-secret-0123456789') }),
        401,
        'WEBHOOK_SIGNATURE',
        /does not match/,
      ],
      [
        'signature of another body',
        post(app, body, { 'x-callr-hmacsignature': sign(event()) }),
        401,
        'WEBHOOK_SIGNATURE',
        /does not match/,
      ],
      [
        'the same event written again',
        post(app, JSON.stringify(JSON.parse(body), null, 2), { 'x-callr-hmacsignature': sign(body) }),
        401,
        'WEBHOOK_SIGNATURE',
        /does not match/,
      ],
      [
        'wrong content type',
        post(app, body, { 'content-type': 'text/plain' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        /Content-Type: application\/json \(got text\/plain\)/,
      ],
      [
        'form body',
        post(app, 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        /got application\/x-www-form-urlencoded/,
      ],
      ['no content type', post(app, body, { 'content-type': undefined }), 415, 'UNSUPPORTED_MEDIA_TYPE', /got none/],
      [
        'oversized',
        post(app, event({}, { text: 'x'.repeat(5000) })),
        413,
        'BODY_TOO_LARGE',
        /larger than 4096 bytes \(webhooks.body_limit\)/,
      ],
      ['compressed', post(app, body, { 'content-encoding': 'gzip' }), 415, 'UNSUPPORTED_ENCODING', /Content-Encoding/],
      ['bad JSON', post(app, '{"event_id": '), 400, 'BAD_JSON', /not valid JSON/],
      ['not an object', post(app, '[1,2]'), 400, 'WEBHOOK_BAD_EVENT', /JSON object/],
      ['no event_id', post(app, event({ event_id: undefined })), 400, 'WEBHOOK_BAD_EVENT', /event_id must be/],
      ['event_id with braces', post(app, event({ event_id: 'a}b' })), 400, 'WEBHOOK_BAD_EVENT', /event_id must be/],
      [
        'header id differs',
        post(app, body, { 'x-callr-eventid': 'other' }),
        400,
        'WEBHOOK_BAD_EVENT',
        /X-CALLR-EventId header is not the event_id/,
      ],
      [
        'no event_at',
        post(app, event({ event_at: 'yesterday' })),
        400,
        'WEBHOOK_BAD_EVENT',
        /event_at must be an ISO 8601 time/,
      ],
      ['try not a counter', post(app, event({ try: -1 })), 400, 'WEBHOOK_BAD_EVENT', /try must be the retry counter/],
      ['data not an object', post(app, event({ data: 'x' })), 400, 'WEBHOOK_BAD_EVENT', /data must be an object/],
      [
        'status update without a hash',
        post(app, event({}, { hash: 'nope' })),
        400,
        'WEBHOOK_BAD_EVENT',
        /SMS object with a hash/,
      ],
      [
        'status update with a strange status',
        post(app, event({}, { status: 'sent; DROP' })),
        400,
        'WEBHOOK_BAD_EVENT',
        /and a status/,
      ],
    ];
    for (const [what, p, status, code, message] of cases) {
      const r = await p;
      expect(r.statusCode, what).toBe(status);
      expect(r.json().error.code, what).toBe(code);
      expect(r.json().error.message, what).toMatch(message);
    }
    expect(await (store as MemoryStore).smsStatus(HASH)).toBeUndefined();
    // refused signatures are logged, at most one line per 10 s, with their number
    const refused = logs.filter((l) => l.code === 'WEBHOOK_SIGNATURE');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.msg).toMatch(/is the secret the hmac_secret given to webhooks.subscribe/);
    // the counts
    const counts = (await get(app, '/admin/webhooks')).events;
    expect(counts).toEqual([
      { type: 'sms.mt.status_update', result: 'bad_event', count: 2 },
      { type: 'unknown', result: 'bad_event', count: 7 },
      { type: 'unknown', result: 'bad_json', count: 1 },
      { type: 'unknown', result: 'bad_signature', count: 5 },
      { type: 'unknown', result: 'too_large', count: 1 },
      { type: 'unknown', result: 'unsupported_type', count: 3 },
    ]);
  });

  it('a body over the default cap (256 KiB) is refused while it is read; other methods 405', async () => {
    const { app } = await server();
    const big = event({}, { text: 'x'.repeat(300 * 1024) });
    const r = await post(app, big);
    expect(r.statusCode).toBe(413);
    expect(r.json().error.message).toMatch(/larger than 262144 bytes/);
    const g = await app.inject({ method: 'GET', url: '/webhooks/callr' });
    expect(g.statusCode).toBe(405);
    expect(g.headers.allow).toBe('POST');
    expect(g.json().error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('a replayed event (the service retries: same event_id, try 1, signed anew) is recorded once', async () => {
    const { app, store, logs } = await server();
    const first = event();
    const again = JSON.stringify({ ...JSON.parse(first), try: 1 });
    expect((await post(app, first)).json()).toEqual({ status: 'ok' });
    const r = await post(app, again, { 'x-callr-eventid': JSON.parse(first).event_id });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'duplicate' });
    expect((await post(app, first)).json()).toEqual({ status: 'duplicate' });
    expect((await (store as MemoryStore).smsStatus(HASH))!.reports).toHaveLength(1);
    expect(logs.filter((l) => l.code === 'WEBHOOK_DUPLICATE').map((l) => l.try)).toEqual([1, 0]);
    expect((await get(app, '/admin/webhooks')).events).toEqual([
      { type: 'sms.mt.status_update', result: 'duplicate', count: 2 },
      { type: 'sms.mt.status_update', result: 'ok', count: 1 },
    ]);
  });

  it('an event dated outside webhooks.tolerance_ms (2001, 2099, 5 min 1 ms away) is refused, not claimed', async () => {
    const { app, store, logs } = await server();
    const id = randomUUID();
    const refusedAt = async (at: string) => {
      const r = await post(app, event({ event_id: id, event_at: at }));
      expect(r.statusCode, at).toBe(400);
      return r.json().error;
    };
    // the clock is 2026-11-23T10:00:06.000Z
    expect(await refusedAt('2001-01-01T00:00:00.000Z')).toEqual({
      code: 'WEBHOOK_EVENT_TIME',
      message:
        "event_at 2001-01-01T00:00:00.000Z is 817120806 s before this server's clock, more than " +
        'webhooks.tolerance_ms (300000 ms) allows',
    });
    expect(await refusedAt('2099-12-31T23:59:59.000Z')).toEqual({
      code: 'WEBHOOK_EVENT_TIME',
      message:
        "event_at 2099-12-31T23:59:59.000Z is 2307016793 s after this server's clock, more than " +
        'webhooks.tolerance_ms (300000 ms) allows',
    });
    expect((await refusedAt('2026-11-23T09:55:05.999Z')).message).toMatch(/is 300 s before/);
    expect((await refusedAt('2026-11-23T10:05:06.001Z')).message).toMatch(/is 300 s after/);
    expect(await (store as MemoryStore).smsStatus(HASH)).toBeUndefined();
    // the id was not claimed: the same event dated within the tolerance (either way) is recorded
    expect((await post(app, event({ event_id: id, event_at: '2026-11-23T09:55:06.000Z' }))).json()).toEqual({
      status: 'ok',
    });
    expect((await post(app, event({ event_at: '2026-11-23T10:05:06.000Z' }))).json()).toEqual({ status: 'ok' });
    expect(logs.filter((l) => l.code === 'WEBHOOK_EVENT_TIME').map((l) => l.refused)).toEqual([1]);
    expect((await get(app, '/admin/webhooks')).events).toEqual([
      { type: 'sms.mt.status_update', result: 'bad_time', count: 4 },
      { type: 'sms.mt.status_update', result: 'ok', count: 2 },
    ]);
  });

  it('webhooks.tolerance_ms sets the window; a replay past the id memory is refused by its date', async () => {
    const t = { now: Date.parse('2026-11-23T10:00:06.000Z') };
    const { app } = await server({ webhooks: { secret: SECRET, toleranceMs: 3_600_000, now: () => t.now } });
    const body = event({ event_at: '2026-11-23T09:30:00.000Z' });
    expect((await post(app, body)).json()).toEqual({ status: 'ok' });
    // 48 h and 1 s later the event id is forgotten (a restart with the memory store forgets it at once)
    t.now += 48 * 3_600_000 + 1000;
    const r = await post(app, body);
    expect([r.statusCode, r.json().error.code]).toEqual([400, 'WEBHOOK_EVENT_TIME']);
    await expect(server({ webhooks: { secret: SECRET, toleranceMs: 48 * 3_600_000 + 1 } })).rejects.toThrow(
      'webhooks.toleranceMs must be an integer from 1000 to 172800000, got 172800001',
    );
  });

  it('a store failure is answered 503 and the claim given back: the retry is recorded', async () => {
    class Flaky extends MemoryStore {
      failures = 1;
      override async smsReport(...a: Parameters<MemoryStore['smsReport']>) {
        if (this.failures-- > 0) throw new StoreUnavailable('Redis: connection lost');
        return super.smsReport(...a);
      }
    }
    const store = new Flaky();
    const { app, logs } = await server({ store });
    const body = event();
    const r = await post(app, body);
    expect(r.statusCode).toBe(503);
    expect(r.json().error.code).toBe('STORE_UNAVAILABLE');
    expect(logs.find((l) => l.code === 'STORE_UNAVAILABLE')?.msg).toMatch(/not recorded: the store failed/);
    const retry = JSON.stringify({ ...JSON.parse(body), try: 1 });
    expect((await post(app, retry)).json()).toEqual({ status: 'ok' });
    expect(await statuses(store)).toEqual(['SENT']);
  });

  it('an event of another type is acknowledged and ignored', async () => {
    const { app } = await server();
    const r = await post(app, event({ type: 'call.outbound.end', data: { callid: 1 } }));
    expect(r.json()).toEqual({ status: 'ignored' });
    expect((await get(app, '/admin/webhooks')).events).toEqual([{ type: 'other', result: 'ignored', count: 1 }]);
  });

  it('sms.mo: logged with sender, recipient and length, never the text; counted', async () => {
    const { app, logs } = await server();
    const secret = 'Meet me at 7, code 4711 é';
    const body = event(
      { type: 'sms.mo' },
      {
        hash: 'ABCD1234',
        type: 'IN',
        from: '+447911000111',
        to: '+442079460555',
        text: secret,
        parts: 1,
        encoding: 'UNICODE',
        status: 'RECEIVED',
      },
    );
    expect((await post(app, body)).json()).toEqual({ status: 'ok' });
    const line = logs.find((l) => l.code === 'WEBHOOK_SMS_MO');
    expect(line).toMatchObject({
      level: 30,
      hash: 'ABCD1234',
      from: '+447911000111',
      to: '+442079460555',
      chars: [...secret].length,
      parts: 1,
      encoding: 'UNICODE',
      event_id: JSON.parse(body).event_id,
    });
    expect(line!.msg).toBe(
      `inbound SMS ABCD1234 from +447911000111 to +442079460555 (${[...secret].length} characters; the text ` +
        `is not logged)`,
    );
    expect(JSON.stringify(logs)).not.toContain('4711');
    expect((await get(app, '/admin/webhooks')).events).toEqual([{ type: 'sms.mo', result: 'ok', count: 1 }]);
    // and in the Prometheus metrics
    await post(app, body, { 'x-callr-hmacsignature': 'forged' });
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
      .split('\n')
      .filter((l) => l.startsWith('callscript_webhooks_total'));
    expect(metrics).toEqual([
      'callscript_webhooks_total{type="sms.mo",result="ok"} 1',
      'callscript_webhooks_total{type="unknown",result="bad_signature"} 1',
    ]);
  });

  it(
    'the delivery status of the SMS a call sent: in its detail while live, then finished; out-of-order reports ' +
      'sorted by their time',
    async () => {
      const { app } = await server();
      await rt(app, { callid: '4242' });
      const at = (s: number) => `2026-11-23T10:00:0${s}.000Z`;
      // reports arrive out of order
      for (const [status, s] of [
        ['PENDING', 1],
        ['RECEIVED', 4],
        ['SENT', 2],
        ['REMOTE_QUEUED', 3],
      ] as const) {
        expect((await post(app, event({ event_at: at(s) }, { status }))).statusCode).toBe(200);
      }
      const live = await vi.waitFor(async () => {
        const d = await get(app, '/admin/calls/4242');
        if (d.sms.length === 0) throw new Error('no sms yet');
        return d;
      });
      expect(live.status).toBe('live');
      const created = live.path[0].at;
      expect(live.sms).toEqual([
        {
          hash: HASH,
          step: 'confirm',
          status: 'RECEIVED',
          updatedAt: at(4),
          history: [
            { status: 'CREATED', at: new Date(created).toISOString() },
            { status: 'PENDING', at: at(1) },
            { status: 'SENT', at: at(2) },
            { status: 'REMOTE_QUEUED', at: at(3) },
            { status: 'RECEIVED', at: at(4) },
          ],
        },
      ]);
      await rt(app, { callid: '4242', command: 'play', command_id: 1, command_result: '0' });
      await rt(app, { callid: '4242', command: 'hangup', command_id: 2, call_status: 'HANGUP' });
      const done = await vi.waitFor(async () => {
        const d = await get(app, '/admin/calls/4242');
        if (d.status !== 'finished') throw new Error('not finished yet');
        return d;
      });
      expect(done.sms).toEqual(live.sms);
      // a failure reported later: the status and its error
      await post(app, event({ event_at: at(5) }, { status: 'FAILED', status_error: 'UNKNOWN_SUBSCRIBER' }));
      const failed = (await get(app, '/admin/calls/4242')).sms[0];
      expect(failed).toMatchObject({ status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER', updatedAt: at(5) });
      expect(failed.history.at(-1)).toEqual({ status: 'FAILED', at: at(5), error: 'UNKNOWN_SUBSCRIBER' });
    },
  );

  it('an SMS with no report yet is CREATED; the note of who sent it names the call and step', async () => {
    const { app, store } = await server();
    await rt(app, { callid: '77' });
    const d = await vi.waitFor(async () => {
      const x = await get(app, '/admin/calls/77');
      if (x.sms.length === 0) throw new Error('no sms yet');
      return x;
    });
    expect(d.sms).toEqual([
      {
        hash: HASH,
        step: 'confirm',
        status: 'CREATED',
        updatedAt: expect.any(String),
        history: [{ status: 'CREATED', at: d.sms[0].updatedAt }],
      },
    ]);
    await vi.waitFor(async () =>
      expect(JSON.parse((await (store as MemoryStore).smsStatus(HASH))!.sent!)).toMatchObject({
        callid: '77',
        step: 'confirm',
      }),
    );
  });
});

describe('the route off', () => {
  it('without a secret the route does not exist (404), with a warning when webhooks were configured', async () => {
    const { app, logs } = await server({ webhooks: { path: '/hooks/sms' } });
    expect((await post(app, event(), {}, '/hooks/sms')).statusCode).toBe(404);
    expect((await post(app, event())).statusCode).toBe(404);
    expect(logs.find((l) => l.code === 'WEBHOOKS_OFF')?.msg).toMatch(
      /no secret \(webhooks.secret or CALLSCRIPT_WEBHOOK_SECRET\): \/hooks\/sms is off/,
    );
    expect(await get(app, '/admin/webhooks')).toEqual({ on: false, path: null, events: [] });
    const quiet = await server({ webhooks: undefined });
    expect((await post(quiet.app, event())).statusCode).toBe(404);
    expect(quiet.logs.some((l) => typeof l.code === 'string' && (l.code as string).startsWith('WEBHOOK'))).toBe(false);
  });

  it('a store without delivery status methods: off, with a warning', async () => {
    const { app, logs } = await server({ store: hooked(new MemoryStore(), {}) });
    expect((await post(app, event())).statusCode).toBe(404);
    expect(logs.some((l) => l.code === 'WEBHOOKS_UNSUPPORTED')).toBe(true);
  });

  it('bad options fail the registration', async () => {
    await expect(server({ webhooks: { secret: 'short' } })).rejects.toThrow(
      /webhooks.secret must be 16 to 256 characters/,
    );
    await expect(server({ webhooks: { secret: SECRET, path: '/rt/hooks' } })).rejects.toThrow(
      /is taken by another route/,
    );
    await expect(server({ webhooks: { secret: SECRET, path: 'hooks' } })).rejects.toThrow(
      /webhooks.path must be a path/,
    );
    await expect(server({ webhooks: { secret: SECRET, bodyLimit: 10 } })).rejects.toThrow(
      /bodyLimit must be an integer from 1024/,
    );
  });

  it('rotation: the previous secrets are accepted too, others still refused', async () => {
    const OLD = 'the-old-webhook-secret-0001';
    const { app } = await server({ webhooks: { secret: SECRET, previousSecrets: [OLD] } });
    const a = event();
    const b = event();
    expect((await post(app, a)).json()).toEqual({ status: 'ok' });
    expect((await post(app, b, { 'x-callr-hmacsignature': sign(b, OLD) })).json()).toEqual({ status: 'ok' });
    const c = event();
    expect((await post(app, c, { 'x-callr-hmacsignature': sign(c, 'yet-another-secret-0000') })).statusCode).toBe(401);
    await expect(server({ webhooks: { secret: SECRET, previousSecrets: ['short'] } })).rejects.toThrow(
      /each previous webhook secret must be 16 to 256 characters/,
    );
  });

  it('another path', async () => {
    const { app } = await server({ webhooks: { secret: SECRET, path: '/hooks/callr-sms' } });
    expect((await post(app, event(), {}, '/hooks/callr-sms')).json()).toEqual({ status: 'ok' });
    expect((await get(app, '/admin/webhooks')).path).toBe('/hooks/callr-sms');
  });
});

const missing = await redisMissing();
describe.skipIf(!!missing)(`on Redis${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const p of prefixes) await dropPrefix(p);
  });

  it('two instances on one Redis: an event delivered to both is recorded once; either shows the status', async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const stores = [new RedisStore(REDIS_URL, { prefix }), new RedisStore(REDIS_URL, { prefix })];
    await Promise.all(stores.map((s) => s.ready()));
    const [a, b] = [await server({ store: stores[0] }), await server({ store: stores[1] })];
    apps.push(...[a.app, b.app]);
    await rt(a.app, { callid: '9001' });
    const body = event({ event_at: '2026-11-23T10:00:04.000Z' }, { status: 'RECEIVED' });
    const answers = await Promise.all([post(a.app, body), post(b.app, body)]);
    expect(answers.map((r) => r.json().status).sort()).toEqual(['duplicate', 'ok']);
    expect(await statuses(stores[0]!)).toEqual(['RECEIVED']);
    const d = await vi.waitFor(async () => {
      const x = await get(b.app, '/admin/calls/9001');
      if (x.sms.length === 0) throw new Error('no sms yet');
      return x;
    });
    expect(d.sms[0]).toMatchObject({
      hash: HASH,
      step: 'confirm',
      status: 'RECEIVED',
      updatedAt: '2026-11-23T10:00:04.000Z',
    });
    expect(JSON.parse((await stores[1]!.smsStatus(HASH))!.sent!)).toMatchObject({ callid: '9001', step: 'confirm' });
    for (const s of stores) await s.close();
  });
});
