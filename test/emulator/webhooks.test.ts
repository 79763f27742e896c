/**
 * The emulator's webhooks: webhooks.subscribe / get_list / unsubscribe over JSON-RPC, the
 * events it POSTs (sms.mt.status_update at each status change of an SMS sent, sms.mo for an
 * SMS received), their body, headers and signature, per-SMS endpoints, retries with the try
 * counter, subscriptions given at start (--webhook), and kept with --data.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { emulator } from '../../src/cli/emulator.js';
import type { Emulator } from '../../src/emulator/server.js';
import { fakeServer, startEmulator, type Answer, type Running, type SeenRequest } from './helpers.js';

const FAST = { deliveryDelaysMs: [0, 40, 80, 120] as const };
const RETRY = { tries: 3, delaysMs: [30, 60], timeoutMs: 2000 };
const SECRET = 'wh-secret-0123';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const sign = (body: string, secret = SECRET, algo = 'sha256') => createHmac(algo, secret).update(body).digest('base64');

async function waitFor<T>(what: string, get: () => T | undefined | false, ms = 8000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!().catch(() => undefined);
});

async function receiver(answer: (r: SeenRequest, n: number) => Answer = () => ({ body: { ok: true } })) {
  const s = await fakeServer(answer);
  cleanup.push(() => s.close());
  return { ...s, url: s.url.replace(/\/rt$/, '/webhooks/callr') };
}

async function emu(opts: Parameters<typeof startEmulator>[0] = {}): Promise<Running> {
  const e = await startEmulator({ sms: FAST, webhookRetry: RETRY, ...opts });
  cleanup.push(() => e.close());
  return e;
}

const send = async (e: Running, to = '+447911000111', options: unknown = null) => {
  const r = await e.rpc('sms.send', ['Acme', to, 'Your message was received.', options]);
  expect(r.error).toBeUndefined();
  return r.result as string;
};

describe('webhooks.subscribe, get_list, unsubscribe', () => {
  it('subscribes with the options the service takes; the secret is never shown', async () => {
    const e = await emu();
    const r = await e.rpc('webhooks.subscribe', [
      'sms.mt.status_update',
      'http://127.0.0.1:3000/webhooks/callr',
      { format: 'JSON', hmac_secret: SECRET, hmac_algo: 'SHA256' },
    ]);
    expect(r.result).toMatchObject({
      type: 'sms.mt.status_update',
      endpoint: 'http://127.0.0.1:3000/webhooks/callr',
      options: { format: 'JSON', hmac_algo: 'SHA256', signed: true },
    });
    expect(r.result.hash).toMatch(/^[A-Z0-9]{8}$/);
    expect(JSON.stringify(r.result)).not.toContain(SECRET);
    const plain = await e.rpc('webhooks.subscribe', ['sms.mo', 'https://example.com/hook']);
    expect(plain.result.options).toEqual({ format: 'JSON', hmac_algo: 'SHA256', signed: false });
    const list = await e.rpc('webhooks.get_list', []);
    expect(list.result.map((h: { hash: string }) => h.hash)).toEqual([r.result.hash, plain.result.hash]);
    expect(JSON.stringify(list.result)).not.toContain(SECRET);
    expect((await e.rpc('webhooks.unsubscribe', [plain.result.hash])).result).toBe(true);
    expect((await e.rpc('webhooks.unsubscribe', [plain.result.hash])).error).toMatchObject({
      code: 20,
      message: `no webhook subscription with hash ${plain.result.hash}`,
    });
    expect((await e.rpc('webhooks.get_list', [])).result).toHaveLength(1);
  });

  it('refuses what it cannot do, naming the param', async () => {
    const e = await emu();
    const cases: [unknown[], RegExp][] = [
      [
        ['call.outbound.end', 'http://a.example/x'],
        /params\[0\] \(type\): "call.outbound.end" is not emulated; the emulator sends sms.mt.status_update and sms.mo/,
      ],
      [[42, 'http://a.example/x'], /params\[0\] \(type\) must be a string/],
      [['sms.mo', 'ftp://a.example/x'], /params\[1\] \(endpoint\) must be the http:\/\/ or https:\/\/ URL/],
      [['sms.mo', 'http://a.example/x', { format: 'XML' }], /params\[2\]\.format must be "JSON"/],
      [
        ['sms.mo', 'http://a.example/x', { hmac_algo: 'MD5' }],
        /params\[2\]\.hmac_algo must be one of SHA256, SHA1, SHA512/,
      ],
      [['sms.mo', 'http://a.example/x', { hmac_secret: '' }], /params\[2\]\.hmac_secret is empty/],
      [['sms.mo', 'http://a.example/x', { secret: 'x' }], /params\[2\]\.secret is not an option/],
      [['sms.mo', 'http://a.example/x', []], /params\[2\] \(options\) must be an object/],
      [['sms.mo'], /webhooks.subscribe takes 2 to 3 params \[type, endpoint, options\], got 1/],
    ];
    for (const [params, message] of cases) {
      const r = await e.rpc('webhooks.subscribe', params);
      expect(r.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(r.error.message).toMatch(message);
    }
    expect((await e.rpc('webhooks.unsubscribe', ['nope'])).error.code).toBe(-32602);
    expect((await e.rpc('webhooks.get_list', [])).result).toEqual([]);
  });
});

describe('sms.mt.status_update', () => {
  it('each status change of an SMS sent is POSTed, signed: body, headers, signature of the raw body', async () => {
    const hook = await receiver();
    const e = await emu();
    const sub = (await e.rpc('webhooks.subscribe', ['sms.mt.status_update', hook.url, { hmac_secret: SECRET }])).result;
    const hash = await send(e);
    await waitFor('4 reports', () => hook.seen.length >= 4);
    await new Promise((r) => setTimeout(r, 150)); // and no more
    expect(hook.seen).toHaveLength(4);
    expect(hook.seen.map((s) => s.json.data.status)).toEqual(['PENDING', 'SENT', 'REMOTE_QUEUED', 'RECEIVED']);
    const ids = new Set<string>();
    for (const s of hook.seen) {
      expect(Object.keys(s.json)).toEqual(['event_id', 'event_at', 'hook_hash', 'try', 'type', 'data']);
      expect(s.json).toMatchObject({
        hook_hash: sub.hash,
        try: 0,
        type: 'sms.mt.status_update',
        data: { hash, type: 'OUT', from: 'Acme', to: '+447911000111' },
      });
      expect(s.json.event_id).toMatch(UUID);
      expect(s.json.event_at).toMatch(ISO_MS);
      ids.add(s.json.event_id);
      expect(s.headers['content-type']).toBe('application/json');
      expect(s.headers['x-callr-eventid']).toBe(s.json.event_id);
      expect(s.headers['x-callr-hmacsignature']).toBe(sign(s.body));
      expect(s.headers.expect).toBeUndefined();
    }
    expect(ids.size).toBe(4);
    // data is the SMS object as of that change: its history up to it
    expect(hook.seen[3]!.json.data.status_history.map((h: { new_status: string }) => h.new_status)).toEqual([
      'PENDING',
      'SENT',
      'REMOTE_QUEUED',
      'RECEIVED',
    ]);
    expect(hook.seen[1]!.json.data.status_history.map((h: { new_status: string }) => h.new_status)).toEqual([
      'PENDING',
      'SENT',
    ]);
    // the emulator's log of attempts
    const log = (await e.req('/emulator/webhooks/deliveries')).json;
    expect(
      log.map((d: { outcome: string; try: number; http_status: number }) => [d.outcome, d.try, d.http_status]),
    ).toEqual(Array(4).fill(['delivered', 0, 200]));
  });

  it('statuses that come at the same time are reported each with its own status, in order', async () => {
    const hook = await receiver();
    const e = await emu({ sms: { deliveryDelaysMs: [0, 0, 0, 0] } });
    await e.rpc('webhooks.subscribe', ['sms.mt.status_update', hook.url]);
    await send(e);
    await waitFor('4 reports', () => hook.seen.length >= 4);
    expect(hook.seen.map((s) => s.json.data.status).sort()).toEqual(['PENDING', 'RECEIVED', 'REMOTE_QUEUED', 'SENT']);
    // unsigned: no secret
    expect(hook.seen.every((s) => s.headers['x-callr-hmacsignature'] === undefined)).toBe(true);
  });

  it('a status set by the control API is reported at once; the steps it replaced are not', async () => {
    const hook = await receiver();
    const e = await emu({ sms: { deliveryDelaysMs: [0, 200, 400, 600] } });
    await e.rpc('webhooks.subscribe', ['sms.mt.status_update', hook.url, { hmac_secret: SECRET }]);
    const hash = await send(e);
    await waitFor('PENDING', () => hook.seen.length >= 1);
    await e.req(`/emulator/sms/${hash}/status`, { body: { status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER' } });
    await waitFor('FAILED', () => hook.seen.length >= 2);
    await new Promise((r) => setTimeout(r, 700));
    expect(hook.seen.map((s) => [s.json.data.status, s.json.data.status_error])).toEqual([
      ['PENDING', ''],
      ['FAILED', 'UNKNOWN_SUBSCRIBER'],
    ]);
  });

  it(
    'options.webhook.endpoint of an SMS gets its reports instead of the subscriptions, signed with their ' +
      'secret; alone, unsigned',
    async () => {
      const hook = await receiver();
      const own = await receiver();
      const e = await emu();
      await send(e, '+447911000111', { webhook: { endpoint: own.url } });
      await waitFor('4 reports to the SMS endpoint', () => own.seen.length >= 4);
      expect(own.seen.every((s) => s.json.hook_hash === '' && s.headers['x-callr-hmacsignature'] === undefined)).toBe(
        true,
      );
      const sub = (await e.rpc('webhooks.subscribe', ['sms.mt.status_update', hook.url, { hmac_secret: SECRET }]))
        .result;
      await send(e, '+447911000222', { webhook: { endpoint: own.url } });
      await waitFor('4 more', () => own.seen.length >= 8);
      await new Promise((r) => setTimeout(r, 150));
      expect(hook.seen).toEqual([]);
      for (const s of own.seen.slice(4)) {
        expect(s.json.hook_hash).toBe(sub.hash);
        expect(s.headers['x-callr-hmacsignature']).toBe(sign(s.body));
      }
    },
  );

  it('an SMS sent with no subscription is not followed; an unsubscribed receiver gets nothing more', async () => {
    const hook = await receiver();
    const e = await emu({ sms: { deliveryDelaysMs: [0, 100, 200, 300] } });
    await send(e);
    const sub = (await e.rpc('webhooks.subscribe', ['sms.mt.status_update', hook.url])).result;
    await new Promise((r) => setTimeout(r, 350));
    expect(hook.seen).toEqual([]);
    await send(e);
    await waitFor('PENDING', () => hook.seen.length >= 1);
    await e.rpc('webhooks.unsubscribe', [sub.hash]);
    await new Promise((r) => setTimeout(r, 350));
    expect(hook.seen).toHaveLength(1);
  });

  it('an SMS API failure sends nothing (no SMS was created)', async () => {
    const hook = await receiver();
    const e = await emu();
    await e.rpc('webhooks.subscribe', ['sms.mt.status_update', hook.url]);
    await e.req('/emulator/sms-failures/+447911000999', { method: 'PUT', body: {} });
    expect((await e.rpc('sms.send', ['Acme', '+447911000999', 'x', null])).error.code).toBe(11);
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.seen).toEqual([]);
  });
});

describe('sms.mo', () => {
  it('an SMS received (POST /emulator/sms/inbound) goes to the sms.mo subscriptions only', async () => {
    const mo = await receiver();
    const status = await receiver();
    const e = await emu();
    const sub = (await e.rpc('webhooks.subscribe', ['sms.mo', mo.url, { hmac_secret: SECRET, hmac_algo: 'SHA512' }]))
      .result;
    await e.rpc('webhooks.subscribe', ['sms.mt.status_update', status.url]);
    const r = await e.req('/emulator/sms/inbound', {
      body: { from: '+447911000111', to: '+442079460555', body: 'STOP' },
    });
    await waitFor('sms.mo', () => mo.seen.length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(mo.seen).toHaveLength(1);
    expect(status.seen).toEqual([]);
    const s = mo.seen[0]!;
    expect(s.json).toMatchObject({
      hook_hash: sub.hash,
      try: 0,
      type: 'sms.mo',
      data: {
        hash: r.json.hash,
        type: 'IN',
        from: '+447911000111',
        to: '+442079460555',
        text: 'STOP',
        status: 'RECEIVED',
      },
    });
    expect(s.headers['x-callr-hmacsignature']).toBe(sign(s.body, SECRET, 'sha512'));
  });
});

describe('retries', () => {
  it(
    'a failing receiver gets the same event again, try ' + 'counting up, each body signed anew; then delivered',
    async () => {
      const hook = await receiver((_r, n) => (n <= 2 ? { status: 503, body: 'busy' } : { body: {} }));
      const e = await emu();
      await e.rpc('webhooks.subscribe', ['sms.mo', hook.url, { hmac_secret: SECRET }]);
      await e.req('/emulator/sms/inbound', { body: { from: '+447911000111', to: '+442079460555', body: 'hello' } });
      await waitFor('3 attempts', () => hook.seen.length >= 3);
      const [a, b, c] = hook.seen;
      expect([a, b, c].map((s) => s!.json.try)).toEqual([0, 1, 2]);
      expect(new Set([a, b, c].map((s) => s!.json.event_id)).size).toBe(1);
      expect(new Set([a, b, c].map((s) => s!.headers['x-callr-hmacsignature'])).size).toBe(3);
      for (const s of [a, b, c]) expect(s!.headers['x-callr-hmacsignature']).toBe(sign(s!.body));
      const deliveries = (await e.req(`/emulator/webhooks/deliveries?event_id=${a!.json.event_id}`)).json;
      expect(
        deliveries.map((d: { try: number; outcome: string; http_status: number }) => [d.try, d.outcome, d.http_status]),
      ).toEqual([
        [0, 'retry', 503],
        [1, 'retry', 503],
        [2, 'delivered', 200],
      ]);
    },
  );

  it('bounded: after `tries` attempts the event is dropped (failed); a 4xx refusal is not tried again', async () => {
    const down = await receiver(() => ({ status: 500, body: 'down' }));
    const refusing = await receiver(() => ({ status: 401, body: '{"error":{"code":"WEBHOOK_SIGNATURE"}}' }));
    const e = await emu();
    await e.rpc('webhooks.subscribe', ['sms.mo', down.url]);
    await e.rpc('webhooks.subscribe', ['sms.mo', refusing.url]);
    await e.req('/emulator/sms/inbound', { body: { from: '+447911000111', to: '+442079460555', body: 'hello' } });
    await waitFor('3 attempts', () => down.seen.length >= 3);
    await new Promise((r) => setTimeout(r, 200));
    expect(down.seen.map((s) => s.json.try)).toEqual([0, 1, 2]);
    expect(refusing.seen.map((s) => s.json.try)).toEqual([0]);
    const outcomes = (await e.req('/emulator/webhooks/deliveries')).json.map(
      (d: { endpoint: string; outcome: string }) => [d.endpoint === down.url ? 'down' : 'refusing', d.outcome],
    );
    expect(outcomes.filter((o: string[]) => o[0] === 'down').map((o: string[]) => o[1])).toEqual([
      'retry',
      'retry',
      'failed',
    ]);
    expect(outcomes.filter((o: string[]) => o[0] === 'refusing').map((o: string[]) => o[1])).toEqual(['refused']);
  });

  it('an unreachable receiver: network errors are tried again, then failed, with the reason', async () => {
    const gone = await receiver();
    await gone.close();
    const e = await emu();
    await e.rpc('webhooks.subscribe', ['sms.mo', gone.url]);
    await e.req('/emulator/sms/inbound', { body: { from: '+447911000111', to: '+442079460555', body: 'hello' } });
    const got = await (async () => {
      const until = Date.now() + 5000;
      for (;;) {
        const d = (await e.req('/emulator/webhooks/deliveries')).json;
        if (d.length >= 3 || Date.now() > until) return d;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    expect(got.map((d: { outcome: string; http_status: unknown }) => [d.outcome, d.http_status])).toEqual([
      ['retry', null],
      ['retry', null],
      ['failed', null],
    ]);
    expect(got[0].error).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('closing the emulator drops the retries waiting', async () => {
    const down = await receiver(() => ({ status: 503, body: '' }));
    const e = await startEmulator({ sms: FAST, webhookRetry: { tries: 5, delaysMs: [60_000], timeoutMs: 1000 } });
    await e.rpc('webhooks.subscribe', ['sms.mo', down.url]);
    await e.req('/emulator/sms/inbound', { body: { from: '+447911000111', to: '+442079460555', body: 'hello' } });
    await waitFor('1 attempt', () => down.seen.length >= 1);
    await waitFor('retry waiting', () => e.emu.ctx.webhooks.sender.pending === 1);
    const t0 = Date.now();
    await e.close();
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(e.emu.ctx.webhooks.sender.pending).toBe(0);
  });
});

describe('subscriptions given at start', () => {
  it(
    'createEmulator({webhooks}) subscribes the receiver to both types; listed, not unsubscribable, kept by a ' +
      'reset',
    async () => {
      const hook = await receiver();
      const e = await emu({ webhooks: [{ endpoint: hook.url, secret: SECRET }] });
      const list = (await e.rpc('webhooks.get_list', [])).result;
      expect(
        list.map((h: { type: string; configured: boolean; options: { signed: boolean } }) => [
          h.type,
          h.configured,
          h.options.signed,
        ]),
      ).toEqual([
        ['sms.mt.status_update', true, true],
        ['sms.mo', true, true],
      ]);
      expect((await e.rpc('webhooks.unsubscribe', [list[0].hash])).error.message).toMatch(
        /was given at start \(--webhook\)/,
      );
      await e.req('/emulator/reset', { method: 'POST' });
      expect((await e.rpc('webhooks.get_list', [])).result).toHaveLength(2);
      await send(e);
      await e.req('/emulator/sms/inbound', { body: { from: '+447911000111', to: '+442079460555', body: 'hi' } });
      await waitFor('5 events', () => hook.seen.length >= 5);
      expect(hook.seen.map((s) => s.json.type).sort()).toEqual(['sms.mo', ...Array(4).fill('sms.mt.status_update')]);
      for (const s of hook.seen) expect(s.headers['x-callr-hmacsignature']).toBe(sign(s.body));
    },
  );

  it('a bad receiver or secret stops the start', async () => {
    await expect(startEmulator({ webhooks: [{ endpoint: 'not a url' }] })).rejects.toThrow(
      /not an http:\/\/ or https:\/\/ URL/,
    );
    await expect(startEmulator({ webhooks: [{ endpoint: 'http://a.example/', secret: '' }] })).rejects.toThrow(
      /secret is empty/,
    );
  });

  it('subscriptions of webhooks.subscribe are kept with --data, across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-hooks-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const dataFile = join(dir, 'data.json');
    const a = await startEmulator({ dataFile });
    const sub = (await a.rpc('webhooks.subscribe', ['sms.mo', 'http://127.0.0.1:9/x', { hmac_secret: SECRET }])).result;
    await a.close();
    const b = await startEmulator({ dataFile });
    expect((await b.rpc('webhooks.get_list', [])).result).toEqual([sub]);
    expect(b.emu.ctx.store.hooks.get(sub.hash)?.options.hmac_secret).toBe(SECRET);
    await b.rpc('webhooks.unsubscribe', [sub.hash]);
    await b.close();
    const c = await startEmulator({ dataFile });
    expect((await c.rpc('webhooks.get_list', [])).result).toEqual([]);
    await c.close();
  });
});

describe('callscript emulator --webhook --webhook-secret', () => {
  class Capture extends Writable {
    text = '';
    override _write(chunk: Buffer, _enc: string, done: () => void) {
      this.text += chunk.toString();
      done();
    }
  }
  const started: Emulator[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });
  const run = async (flags: Parameters<typeof emulator>[0], env: NodeJS.ProcessEnv = {}) => {
    const out = new Capture();
    const err = new Capture();
    const r = await emulator({ port: '0', logLevel: 'silent', ...flags }, { LOG_FORMAT: 'json', ...env }, out, err);
    if (typeof r !== 'number') {
      started.push(r);
      process.removeAllListeners('SIGINT');
      process.removeAllListeners('SIGTERM');
    }
    return { r, out: out.text, err: err.text };
  };

  it('subscribes the URL to both types, signed; the banner says so', async () => {
    const { r, out } = await run({ webhook: 'http://127.0.0.1:3000/webhooks/callr', webhookSecret: SECRET });
    expect(typeof r).not.toBe('number');
    expect(out).toContain(
      'webhooks       sms.mt.status_update and sms.mo to http://127.0.0.1:3000/webhooks/callr, signed ' +
        '(X-CALLR-HmacSignature, HMAC-SHA256)',
    );
    expect((r as Emulator).ctx.webhooks.hooks().map((h) => [h.type, h.options.hmac_secret])).toEqual([
      ['sms.mt.status_update', SECRET],
      ['sms.mo', SECRET],
    ]);
  });

  it('from the environment too; unsigned without a secret', async () => {
    const { r, out } = await run({}, { EMULATOR_WEBHOOK: 'http://127.0.0.1:3000/webhooks/callr' });
    expect(out).toContain('unsigned (no --webhook-secret)');
    expect((r as Emulator).ctx.webhooks.hooks()).toHaveLength(2);
  });

  it('usage errors: exit 2 with a message', async () => {
    expect(await run({ webhookSecret: SECRET })).toMatchObject({
      r: 2,
      err: expect.stringContaining('give the URL too'),
    });
    expect(await run({ webhook: 'localhost:3000' })).toMatchObject({
      r: 2,
      err: expect.stringContaining('--webhook must be an http:// or https:// URL'),
    });
    expect(await run({ webhook: 'http://127.0.0.1:3000/', webhookSecret: 'x'.repeat(300) })).toMatchObject({
      r: 2,
      err: expect.stringContaining('--webhook-secret is 300 characters long'),
    });
  });
});
