/**
 * http steps (version 2) over the real-time route: whole calls through fastify.inject
 * against a local HTTP server; the filler path over two requests; two app instances on
 * one store; the SSRF policy and hostile servers (huge, silent, trickling).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { MemoryStore } from '../../src/store/memory.js';
import { isPrivateAddress, hostAllowed, httpRunner } from '../../src/http/lookup-client.js';
import type { HttpRunner } from '../../src/engine/http-wait.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/http-lookups', import.meta.url).pathname;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** The bank: routes by path; records what it got. */
const got: { method: string; url: string; auth?: string; body: string }[] = [];
let delayMs = 0;
let base = '';
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    got.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
    const path = req.url!.split('?')[0]!;
    if (path.startsWith('/never')) return; // never answers
    if (path === '/huge/v1/balance') {
      // 100 MB, streamed
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let n = 0;
      const more = () => {
        while (n < 100) {
          n++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('error', () => undefined);
      return more();
    }
    if (path === '/slow/v1/balance') {
      // slowloris: one byte every 100 ms, for ever
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(t));
      return;
    }
    const deep = /^\/deep(\d+)(obj)?\/v1\//.exec(path);
    if (deep) {
      // an answer nested `levels` deep: [[[...]]] or {"a":{"a":...}}
      const levels = Number(deep[1]);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        deep[2] ? `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}` : '['.repeat(levels) + ']'.repeat(levels),
      );
    }
    if (path === '/redirect/v1/balance') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (path === '/flaky/v1/check') {
      const n = got.filter((g) => g.url.startsWith('/flaky')).length;
      res.writeHead(n < 3 ? 503 : 200, { 'content-type': 'application/json' });
      return res.end(n < 3 ? '{"error":"busy"}' : '{"name":"Ada"}');
    }
    setTimeout(() => {
      if (path === '/v1/balance' && req.url!.includes('account=12')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ amount: 42.5 }));
      } else if (path === '/v1/check') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ name: 'Ada', body: JSON.parse(body) }));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"no such account"}');
      }
    }, delayMs);
  });
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
afterEach(() => {
  got.length = 0;
  delayMs = 0;
});

interface AppOpts {
  deadlineMs?: number;
  allowPrivate?: boolean;
  store?: MemoryStore;
  runner?: HttpRunner;
  allowHosts?: string[];
  maxBodyBytes?: number;
}

async function app(o: AppOpts = {}) {
  const a = await buildServer({
    flowsDir: FLOWS,
    logLevel: false,
    deadlineMs: o.deadlineMs ?? 4000,
    ...(o.store ? { store: o.store } : {}),
    http: {
      allowPrivate: o.allowPrivate ?? true,
      secret: (n) => (n === 'BANK_TOKEN' ? 's3cr3t' : undefined),
      ...(o.runner ? { runner: o.runner } : {}),
      ...(o.allowHosts ? { allowHosts: o.allowHosts } : {}),
      ...(o.maxBodyBytes ? { maxBodyBytes: o.maxBodyBytes } : {}),
    },
  });
  apps.push(a);
  return a;
}

function post(a: FastifyInstance, flow: string, api: string, over: Record<string, unknown> = {}) {
  return a
    .inject({
      method: 'POST',
      url: `/rt/${flow}`,
      headers: { 'content-type': 'application/json' },
      payload: rtBody({ variables: { api }, ...over }),
    })
    .then((r) => r.json() as { command: string; command_id: number; params: Record<string, unknown> });
}

const say = (text: string) => ({ media_id: `TTS|TTS_EN-GB_SERENA|${text}` });

describe('the http step over the real-time route', () => {
  it('looks up with the secret in a header and the query, saves { status, body } and branches on ok', async () => {
    const store = new MemoryStore();
    const a = await app({ store });
    const r = await post(a, 'lookup', base);
    expect(r).toMatchObject({ command: 'play', command_id: 1, params: say('Your balance is 42.5.') });
    expect(got).toEqual([{ method: 'GET', url: '/v1/balance?account=12', auth: 'Bearer s3cr3t', body: '' }]);
    // the secret is nowhere in the stored state
    expect(JSON.stringify(await store.get('4242'))).not.toContain('s3cr3t');
    const again = await post(a, 'lookup', base);
    expect(again.params).toEqual(r.params);
    expect(got).toHaveLength(1);
  });

  it('branches on an exact status code', async () => {
    const a = await app();
    const r = await post(a, 'lookup', `${base}/missing`);
    expect(r.params).toEqual(say('Unknown account.'));
  });

  it('posts a templated JSON body', async () => {
    const a = await app();
    const r = await post(a, 'quick', base);
    expect(r.params).toEqual(say('Found Ada.'));
    expect(JSON.parse(got[0]!.body)).toEqual({ caller: '+33612345678', tags: ['a', '+33123456789'] });
    expect(got[0]!.method).toBe('POST');
  });

  it('retries 5xx with backoff within timeout_ms', async () => {
    const a = await app();
    const r = await post(a, 'quick', `${base}/flaky`);
    expect(r.params).toEqual(say('Found Ada.'));
    expect(got.filter((g) => g.url.startsWith('/flaky'))).toHaveLength(3);
  });

  it('does not follow redirects: a 302 is a status (default branch)', async () => {
    const a = await app();
    const r = await post(a, 'lookup', `${base}/redirect`);
    expect(r.params).toEqual(say('Failed .'));
  });
});

describe('deadline-aware waiting', () => {
  it('answers the filler when the lookup is late, and takes its result on the next request', async () => {
    delayMs = 1200;
    const a = await app({ deadlineMs: 700 });
    const t0 = Date.now();
    const r1 = await post(a, 'lookup', base);
    expect(Date.now() - t0).toBeLessThan(700);
    expect(r1).toMatchObject({ command: 'play', command_id: 1, params: say('One moment please.') });
    // the filler played: still not done, the second filler (wait 2)
    const r2 = await post(a, 'lookup', base, { command: 'play', command_id: 1, command_result: '0' });
    expect(r2).toMatchObject({ command: 'wait', command_id: 2, params: { wait: 2 } });
    await new Promise((r) => setTimeout(r, 300));
    const r3 = await post(a, 'lookup', base, { command: 'wait', command_id: 2, command_result: '0' });
    expect(r3).toMatchObject({ command: 'play', command_id: 3, params: say('Your balance is 42.5.') });
    expect(got).toHaveLength(1);
    // the lookup is timed once, when its result is taken: its whole run (the bank takes 1.2 s), not the waits of each
    // request
    const text = (await a.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('callscript_effect_duration_seconds_count{kind="http"} 1\n');
    expect(
      Number(/^callscript_effect_duration_seconds_sum\{kind="http"\} (\S+)$/m.exec(text)?.[1]),
    ).toBeGreaterThanOrEqual(1.2);
    expect(text).toContain('callscript_effects_total{kind="http",outcome="pending"} 2\n');
    expect(text).toContain('callscript_effects_total{kind="http",outcome="ok"} 1\n');
  });

  it('takes timeout once timeout_ms is over', async () => {
    const a = await app({ deadlineMs: 600 });
    const r1 = await post(a, 'short', `${base}/never`);
    expect(r1.command).toBe('play');
    let r = r1;
    for (let i = 0; i < 10 && r.params.media_id !== say('Too slow.').media_id; i++) {
      r = await post(a, 'short', `${base}/never`, {
        command: r.command,
        command_id: r.command_id,
        command_result: '0',
      });
    }
    expect(r.params).toEqual(say('Too slow.'));
  }, 10_000);

  it(
    'without a filler, bounds the lookup by the deadline: a ' + 'server that never answers is a timeout in time',
    async () => {
      const a = await app({ deadlineMs: 800 });
      const t0 = Date.now();
      const r = await post(a, 'quick', `${base}/never`);
      expect(Date.now() - t0).toBeLessThan(800);
      expect(r.params).toEqual(say('Too slow.'));
    },
  );

  it('another instance on the same store takes the result of the first one', async () => {
    delayMs = 900;
    const store = new MemoryStore();
    const a = await app({ deadlineMs: 500, store });
    const b = await app({ deadlineMs: 1500, store });
    const r1 = await post(a, 'lookup', base);
    expect(r1.params).toEqual(say('One moment please.'));
    const r2 = await post(b, 'lookup', base, { command: 'play', command_id: 1, command_result: '0' });
    expect(r2).toMatchObject({ command: 'play', command_id: 2, params: say('Your balance is 42.5.') });
    expect(got).toHaveLength(1);
    await store.close();
  });

  it('an instance that died mid-lookup leaves the call a timeout, not stuck', async () => {
    const store = new MemoryStore();
    const dead: HttpRunner = () => new Promise(() => undefined); // never publishes
    const a = await app({ deadlineMs: 400, store, runner: dead });
    const b = await app({ deadlineMs: 400, store });
    let r = await post(a, 'short', base);
    expect(r.params).toEqual(say('One moment please.'));
    const t0 = Date.now();
    for (let i = 0; i < 20 && r.params.media_id !== say('Too slow.').media_id; i++) {
      r = await post(b, 'short', base, { command: r.command, command_id: r.command_id, command_result: '0' });
    }
    expect(r.params).toEqual(say('Too slow.'));
    // timeout_ms 2000 + 1 s slack at most
    expect(Date.now() - t0).toBeLessThan(3500);
    await store.close();
  }, 10_000);
});

describe('hostile lookups', () => {
  it('refuses 127.0.0.1 unless allow_private', async () => {
    const a = await app({ allowPrivate: false });
    expect((await post(a, 'lookup', base)).params).toEqual(say('Failed REFUSED.'));
    expect(got).toHaveLength(0);
  });

  it('refuses the cloud metadata address 169.254.169.254', async () => {
    const a = await app({ allowPrivate: false });
    const t0 = Date.now();
    expect((await post(a, 'lookup', 'http://169.254.169.254/latest/meta-data')).params).toEqual(say('Failed REFUSED.'));
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('refuses a name that resolves to a private address (checked on the resolved address)', async () => {
    const a = await app({ allowPrivate: false });
    const port = new URL(base).port;
    expect((await post(a, 'lookup', `http://localhost:${port}`)).params).toEqual(say('Failed REFUSED.'));
    expect(got).toHaveLength(0);
  });

  it('refuses IPv4-mapped IPv6 forms of private addresses', async () => {
    const a = await app({ allowPrivate: false });
    const port = new URL(base).port;
    expect((await post(a, 'lookup', `http://[::ffff:127.0.0.1]:${port}`)).params).toEqual(say('Failed REFUSED.'));
    expect(got).toHaveLength(0);
  });

  it('refuses hosts outside allow_hosts', async () => {
    const a = await app({ allowHosts: ['api.bank.example'] });
    expect((await post(a, 'lookup', base)).params).toEqual(say('Failed REFUSED.'));
  });

  it('cuts a 100 MB response off at the body cap', async () => {
    const a = await app();
    const before = process.memoryUsage().rss;
    const t0 = Date.now();
    expect((await post(a, 'lookup', `${base}/huge`)).params).toEqual(say('Failed TOO_LARGE.'));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(process.memoryUsage().rss - before).toBeLessThan(50 * 1024 * 1024);
  });

  it('a slowloris body ends in timeout at timeout_ms (with fillers meanwhile)', async () => {
    const a = await app({ deadlineMs: 1000 });
    let r = await post(a, 'short', `${base}/slow`);
    for (let i = 0; i < 10 && r.params.media_id !== say('Too slow.').media_id; i++) {
      r = await post(a, 'short', `${base}/slow`, { command: r.command, command_id: r.command_id, command_result: '0' });
    }
    expect(r.params).toEqual(say('Too slow.'));
  }, 10_000);
});

describe('a deeply nested answer', () => {
  const TOO_DEEP = say('Failed TOO_DEEP.');

  it('4,500 levels: the error way with TOO_DEEP, and the call goes on from its state', async () => {
    const store = new MemoryStore();
    const a = await app({ store });
    const r = await post(a, 'lookup', `${base}/deep4500`);
    expect(r).toMatchObject({ command: 'play', command_id: 1, params: TOO_DEEP });
    expect(await store.get('4242')).toBeDefined();
    // the same request again: the stored reply, no second lookup
    expect(await post(a, 'lookup', `${base}/deep4500`)).toEqual(r);
    expect(got).toHaveLength(1);
    const next = await post(a, 'lookup', `${base}/deep4500`, { command: 'play', command_id: 1, command_result: '0' });
    expect(next).toMatchObject({ command: 'hangup', command_id: 2 });
  });

  it('100,000 levels of objects (a body cap of 1 MiB): TOO_DEEP', async () => {
    const a = await app({ maxBodyBytes: 1 << 20 });
    expect((await post(a, 'quick', `${base}/deep100000obj`)).params).toEqual(TOO_DEEP);
    expect((await post(a, 'quick', `${base}/deep100000`, { callid: '4343' })).params).toEqual(TOO_DEEP);
  });

  it('the client refuses deep text before parsing it (1 MiB of brackets is half a second of JSON.parse)', async () => {
    const run = httpRunner({ allowPrivate: true, maxBodyBytes: 1 << 20 });
    expect(await run({ url: `${base}/deep500000/v1/x` }, Date.now() + 5000)).toEqual({
      ok: false,
      error: 'TOO_DEEP',
      message: "the 200 response's body nests arrays and objects more than 64 levels deep",
    });
  });

  it('64 levels are taken, 65 are not', async () => {
    const a = await app();
    expect((await post(a, 'quick', `${base}/deep64obj`)).params).toEqual(say('Found .'));
    expect((await post(a, 'quick', `${base}/deep65obj`, { callid: '4343' })).params).toEqual(TOO_DEEP);
  });

  it('after the filler, published for the next request: TOO_DEEP there, here or on another instance', async () => {
    let answer: (o: Awaited<ReturnType<HttpRunner>>) => void = () => undefined;
    const runner: HttpRunner = () => new Promise((resolve) => (answer = resolve));
    const store = new MemoryStore();
    const a = await app({ deadlineMs: 400, store, runner });
    const b = await app({ deadlineMs: 1500, store });
    const r1 = await post(a, 'lookup', base);
    expect(r1).toMatchObject({ command: 'play', command_id: 1, params: say('One moment please.') });
    let body: unknown = [];
    for (let i = 1; i < 4500; i++) body = [body];
    answer({ ok: true, status: 200, body: body as never });
    const next = { command: 'play', command_id: 1, command_result: '0' };
    // the instance that ran it published its outcome: the other one reads it
    expect(await post(b, 'lookup', base, next)).toMatchObject({ command: 'play', command_id: 2, params: TOO_DEEP });
    // the same request on the first instance: the stored reply
    expect(await post(a, 'lookup', base, next)).toMatchObject({ command: 'play', command_id: 2, params: TOO_DEEP });
    await store.close();
  });
});

describe('the SSRF policy', () => {
  it('knows private, loopback, link-local, unique-local and mapped addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '::',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPrivateAddress(a), a).toBe(false);
  });
  it('matches allow_hosts exactly or by *.suffix', () => {
    expect(hostAllowed('api.bank.example', ['api.bank.example'])).toBe(true);
    expect(hostAllowed('x.bank.example', ['*.bank.example'])).toBe(true);
    expect(hostAllowed('bank.example', ['*.bank.example'])).toBe(false);
    expect(hostAllowed('evilbank.example', ['*.bank.example'])).toBe(false);
    expect(hostAllowed('anything', [])).toBe(true);
  });
});

describe('callscript mock-http', () => {
  it('serves the routes file, and a flow runs against it', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { mockHttp } = await import('../../src/cli/mock-http.js');
    const dir = mkdtempSync(`${tmpdir()}/mock-http-`);
    writeFileSync(
      `${dir}/routes.yaml`,
      'routes:\n  - { method: GET, url: "/v1/balance?account=12", status: 200, body: { amount: 99 } }\n  - { ' +
        'url: "/v1/*", status: 404 }\n',
    );
    let out = '';
    const s = await mockHttp({ routes: `${dir}/routes.yaml`, port: '0' }, {
      write: (t: string) => (out += t),
    } as never);
    if (typeof s === 'number') throw new Error('mock-http failed');
    try {
      expect(out).toMatch(/2 routes from .*routes\.yaml at http:\/\/127\.0\.0\.1:\d+/);
      const a = await app();
      expect((await post(a, 'lookup', s.url)).params).toEqual(say('Your balance is 99.'));
      expect((await post(a, 'lookup', `${s.url}/v1`, { callid: '4343' })).params).toEqual(say('Unknown account.'));
      expect(s.seen.map((r) => r.url)).toEqual(['/v1/balance?account=12', '/v1/v1/balance?account=12']);
    } finally {
      await s.close();
    }
  });

  it('serves TOO_DEEP and TOO_LARGE as a lookup client meets them, and the flow takes its error way', async () => {
    const { parseRoutes, startMockHttp } = await import('../../src/testing/mock-http.js');
    const { routes, problems } = parseRoutes(
      'routes:\n  - { url: "/deep/*", error: TOO_DEEP }\n  - { url: "/large/*", error: TOO_LARGE }\n',
      'routes.yaml',
    );
    expect(problems).toEqual([]);
    const s = await startMockHttp(routes, 0);
    try {
      // the largest body cap a server may be given (http.max_body_bytes: 1 MiB) is still too small
      const run = httpRunner({ allowPrivate: true, maxBodyBytes: 1 << 20 });
      expect(await run({ url: `${s.url}/deep/v1/x` }, Date.now() + 5000)).toEqual({
        ok: false,
        error: 'TOO_DEEP',
        message: "the 200 response's body nests arrays and objects more than 64 levels deep",
      });
      expect(await run({ url: `${s.url}/large/v1/x` }, Date.now() + 5000)).toEqual({
        ok: false,
        error: 'TOO_LARGE',
        message: 'the response declares 1048577 bytes, over http.max_body_bytes (1048576)',
      });
      const a = await app();
      expect((await post(a, 'quick', `${s.url}/deep`)).params).toEqual(say('Failed TOO_DEEP.'));
      expect((await post(a, 'quick', `${s.url}/large`, { callid: '4343' })).params).toEqual(say('Failed TOO_LARGE.'));
    } finally {
      await s.close();
    }
  });

  it('refuses a bad routes file with positions', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { mockHttp } = await import('../../src/cli/mock-http.js');
    const dir = mkdtempSync(`${tmpdir()}/mock-http-`);
    writeFileSync(`${dir}/routes.yaml`, 'routes:\n  - { url: "/x", delay: 5 }\n');
    let err = '';
    const r = await mockHttp(
      { routes: `${dir}/routes.yaml`, port: '0' },
      { write: () => true } as never,
      { write: (t: string) => (err += t) } as never,
    );
    expect(r).toBe(2);
    expect(err).toMatch(/routes\.yaml:2:18: unknown key "delay" in a routes entry/);
  });
});
