/**
 * Sensitive values at rest: with a key (sensitiveKeys, CALLSCRIPT_SENSITIVE_KEY) the stored
 * state holds `***` and one AES-256-GCM sealed field; every value Redis holds for the call is
 * searched for the PIN. Key rotation (previous keys open), a key lost (the call goes on with
 * `***`, logged), the warning for Redis without a key.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';
import type { CallStore } from '../../src/store/types.js';
import { openState, parseKey, Sealer, sealState } from '../../src/engine/seal.js';
import { sensitivityOf } from '../../src/engine/mask.js';
import type { CallState } from '../../src/engine/types.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { dropPrefix, redisMissing, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { logLines, logText } from '../helpers/log-lines.js';
import { withoutNoise } from '../helpers/noise.js';

const FIXTURES = new URL('../fixtures/sensitive', import.meta.url).pathname;
const PIN = '4821';
const KEY1 = randomBytes(32).toString('hex');
const KEY2 = randomBytes(32).toString('base64');

describe('Sealer', () => {
  it('seals and opens, bound to the callid; the first key seals, every key opens', () => {
    const old = new Sealer([parseKey(KEY1)]);
    const sealed = old.seal('{"pin":"4821"}', '42');
    expect(withoutNoise(sealed)).not.toContain('4821');
    expect(sealed).toMatch(/^[0-9a-f]{8}\.[A-Za-z0-9_-]+$/);
    expect(old.open(sealed, '42')).toBe('{"pin":"4821"}');
    expect(old.open(sealed, '43')).toBeUndefined(); // copied into another call: does not open
    const altered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(old.open(altered, '42')).toBeUndefined();
    const rotated = new Sealer([parseKey(KEY2), parseKey(KEY1)]);
    expect(rotated.open(sealed, '42')).toBe('{"pin":"4821"}');
    expect(rotated.seal('x', '1').startsWith(rotated.keyId)).toBe(true);
    expect(new Sealer([parseKey(KEY2)]).open(sealed, '42')).toBeUndefined();
    // two seals of one value differ (a random IV each)
    expect(old.seal('same', '1')).not.toBe(old.seal('same', '1'));
  });

  it('refuses keys that are not 32 bytes', () => {
    for (const bad of ['', 'secret', 'ab'.repeat(31), randomBytes(16).toString('base64'), 'zz'.repeat(32)])
      expect(() => parseKey(bad), bad).toThrow(/32 random bytes/);
    expect(() => Sealer.fromEnv({ CALLSCRIPT_SENSITIVE_KEY: KEY1, CALLSCRIPT_SENSITIVE_KEY_PREVIOUS: 'nope' })).toThrow(
      /CALLSCRIPT_SENSITIVE_KEY_PREVIOUS: a sensitive-values key is 32 random bytes/,
    );
    expect(() => parseKey(undefined as never)).toThrow(/32 random bytes/);
    expect(Sealer.fromEnv({})).toBeUndefined();
    expect(
      Sealer.fromEnv({ CALLSCRIPT_SENSITIVE_KEY: KEY1, CALLSCRIPT_SENSITIVE_KEY_PREVIOUS: ` ${KEY2} , ` })?.keyId,
    ).toBe(new Sealer([parseKey(KEY1)]).keyId);
  });

  it('sealState keeps the keys with ***, openState puts the values back', () => {
    const s = sensitivityOf({ sensitive: ['pin'], steps: {} })!;
    const sealer = new Sealer([parseKey(KEY1)]);
    const state = {
      v: 2,
      flow: 'f',
      version: 'v',
      s: 'a',
      step: 'a',
      vars: { pin: '4821', n: 1 },
      res: '4821',
      commandId: 3,
      reply: '',
      started: 0,
      commands: 3,
    } as CallState;
    const sealed = sealState(state, s, sealer, '42');
    expect(sealed.vars).toEqual({ pin: '***', n: 1 });
    expect(sealed.res).toBe('***');
    expect(withoutNoise(JSON.stringify(sealed))).not.toContain('4821');
    expect(openState(sealed, sealer, '42')).toEqual({ state });
    const lost = openState(sealed, undefined, '42');
    expect(lost.state.vars).toEqual({ pin: '***', n: 1 });
    expect(lost.problem).toMatch(/no key is configured/);
    // nothing sensitive set yet: the state itself, nothing sealed
    const plainState = { ...state, vars: { n: 1 }, res: undefined } as unknown as CallState;
    delete plainState.res;
    expect(sealState(plainState, s, sealer, '42')).toBe(plainState);
  });

  it('seals the reply last sent when its params hold a sensitive value (a conference pin_code)', () => {
    const s = sensitivityOf({ sensitive: ['pin', 'short'], steps: {} })!;
    const sealer = new Sealer([parseKey(KEY1)]);
    const reply =
      '{"command":"conference","command_id":3,"params":{"id":"room1","pin_code":"4821","n":"12"},"variables":';
    const state = {
      v: 2,
      flow: 'f',
      version: 'v',
      s: 'a',
      step: 'a',
      vars: { pin: '4821', short: '12' },
      commandId: 3,
      reply,
      started: 0,
      commands: 3,
    } as CallState;
    const sealed = sealState(state, s, sealer, '42');
    // a whole param equal to a value is masked whatever its length
    expect(sealed.reply).toBe(
      '{"command":"conference","command_id":3,"params":{"id":"room1","pin_code":"***","n":"***"},"variables":',
    );
    expect(withoutNoise(JSON.stringify(sealed))).not.toContain('4821');
    expect(openState(sealed, sealer, '42')).toEqual({ state });
    // a reply that holds none is stored as it is
    const plain = { ...state, reply: '{"command":"play","command_id":3,"params":{"media_id":"1"},"variables":' };
    expect(sealState(plain, s, sealer, '42').reply).toBe(plain.reply);
  });

  it("seals the callers' sensitive vars waiting in the frames of a call inside a module", () => {
    const s = sensitivityOf({ sensitive: ['pin', 'account'], steps: {} })!;
    const sealer = new Sealer([parseKey(KEY1)]);
    const state = {
      v: 2,
      flow: 'f',
      version: 'v',
      s: 'm:a',
      step: 'm:a',
      vars: { n: 1 },
      f: [{ s: 'verify', v: { account: '31415926', lang: 'fr-FR' } }],
      commandId: 3,
      reply: '',
      started: 0,
      commands: 3,
    } as unknown as CallState;
    const sealed = sealState(state, s, sealer, '42');
    expect(sealed.f).toEqual([{ s: 'verify', v: { account: '***', lang: 'fr-FR' } }]);
    expect(JSON.stringify(sealed)).not.toContain('31415926');
    expect(state.f![0]!.v.account).toBe('31415926'); // the state given is not changed
    expect(openState(sealed, sealer, '42')).toEqual({ state });
  });
});

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(store: CallStore, keys?: string[]): Promise<{ app: FastifyInstance; logs: string[] }> {
  const { logs, stream } = logLines();
  app = Fastify({ logger: { level: 'info', stream } });
  if (store instanceof RedisStore) {
    await store.ready();
    app.addHook('onClose', async () => store.close());
  }
  await app.register(callscript, { flowsDir: FIXTURES, store, ...(keys ? { sensitiveKeys: keys } : {}) });
  return { app, logs };
}

async function send(
  a: FastifyInstance,
  callid: string,
  over: Partial<RtFields>,
): Promise<{ command: string; command_id: number; params: Record<string, unknown> }> {
  const res = await a.inject({
    method: 'POST',
    url: '/rt/pin-line',
    headers: { 'content-type': 'application/json' },
    payload: rtBody({ callid, ...over }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return JSON.parse(res.body);
}

/** Up to the PIN typed: the reply after it (the card prompt when the PIN was read right). */
async function typePin(a: FastifyInstance, callid: string) {
  let r = await send(a, callid, {});
  r = await send(a, callid, { command: r.command, command_id: r.command_id, command_result: '314159' });
  return send(a, callid, { command: r.command, command_id: r.command_id, command_result: PIN });
}

describe('sensitive values in the memory store', () => {
  it('a bad key refuses the plugin at registration', async () => {
    app = Fastify({ logger: false });
    await expect(app.register(callscript, { flowsDir: FIXTURES, sensitiveKeys: ['short'] })).rejects.toThrow(
      'callscript plugin: sensitiveKeys: a sensitive-values key is 32 random bytes',
    );
  });

  it('are sealed when a key is given, and the call reads them back', async () => {
    const store = new MemoryStore();
    const { app: a, logs } = await server(store, [KEY1]);
    const r = await typePin(a, '501');
    expect(r.params.media_id).toContain('last four digits'); // the check step saw the real PIN
    const raw = (await store.get('501'))!;
    expect(withoutNoise(raw)).not.toContain(PIN);
    expect(JSON.parse(raw).vars).toEqual({ account: '314159', pin: '***' });
    expect(logs.join('')).toContain('SENSITIVE_SEALED');
  });

  it('are kept as they are without a key (the process holds them anyway)', async () => {
    const store = new MemoryStore();
    const { app: a, logs } = await server(store);
    await typePin(a, '502');
    expect(JSON.parse((await store.get('502'))!).vars.pin).toBe(PIN);
    expect(logs.join('')).not.toContain('SENSITIVE_NOT_SEALED'); // warned for Redis only
  });
});

describe('the request a deadline fallback replaced', () => {
  it('is noted in the store with its result sealed, and the call goes on', async () => {
    const store = new MemoryStore();
    const asides: string[] = [];
    const setAside = store.setAside.bind(store);
    store.setAside = (callid, aside, ttl) => (asides.push(aside), setAside(callid, aside, ttl));
    app = Fastify({ logger: false });
    // a slow sms: the step misses the 1 s deadline, a fallback `wait` is answered
    const sms = () => new Promise<string>((r) => setTimeout(() => r('SMS00042'), 1500));
    await app.register(callscript, {
      flowsDir: new URL('../fixtures/sensitive-sms', import.meta.url).pathname,
      store,
      deadlineMs: 1000,
      effects: { sms },
      sensitiveKeys: [KEY1],
    });
    const post = (over: Partial<RtFields>) =>
      app!
        .inject({
          method: 'POST',
          url: '/rt/pin-sms',
          headers: { 'content-type': 'application/json' },
          payload: rtBody({ callid: '701', ...over }),
        })
        .then((r) => JSON.parse(r.body) as { command: string; command_id: number; params: Record<string, unknown> });
    const read = await post({});
    const fallback = await post({ command: 'read', command_id: read.command_id, command_result: PIN });
    expect(fallback).toMatchObject({ command: 'wait', command_id: read.command_id });
    expect(asides).toHaveLength(1);
    expect(withoutNoise(asides[0]!)).not.toContain(PIN);
    const noted = JSON.parse(asides[0]!) as { command_result: string; x?: number };
    expect(noted.x).toBe(1);
    expect(new Sealer([parseKey(KEY1)]).open(noted.command_result, '701')).toBe(PIN);
    await new Promise((r) => setTimeout(r, 700)); // the late step lands
    const next = await post({ command: 'wait', command_id: read.command_id });
    expect(next.params.media_id).toContain('Right.'); // the real PIN was checked
  });
});

describe('sensitive values in Redis', () => {
  let skip: string | undefined;
  beforeAll(async () => {
    skip = await redisMissing();
  });

  /** Every value Redis holds under the prefix, as text. */
  async function dump(prefix: string): Promise<string> {
    const r = new Redis(REDIS_URL);
    try {
      const keys = await r.keys(`${prefix}*`);
      const parts: string[] = [];
      for (const k of keys) {
        const type = await r.type(k);
        if (type === 'string') parts.push((await r.get(k)) ?? '');
        else if (type === 'hash') parts.push(...Object.values(await r.hgetall(k)));
        else if (type === 'list') parts.push(JSON.stringify(await r.lrange(k, 0, -1)));
        else if (type === 'set') parts.push(JSON.stringify(await r.smembers(k)));
        else if (type === 'zset') parts.push(JSON.stringify(await r.zrange(k, 0, -1)));
      }
      return parts.join('\n');
    } finally {
      r.disconnect();
    }
  }

  it(
    'never reach Redis in clear with a key; rotation opens ' + 'old seals; a lost key gives *** and an error line',
    async (t) => {
      if (skip) return t.skip(skip);
      const prefix = testPrefix();
      try {
        const first = await server(new RedisStore(REDIS_URL, { prefix }), [KEY1]);
        const r = await typePin(first.app, '601');
        expect(r.params.media_id).toContain('last four digits');
        const stored = await dump(prefix);
        expect(stored).toContain('"pin":"***"');
        expect(withoutNoise(stored)).not.toContain(PIN);
        await first.app.close();

        // a new key, the old one kept as previous: the call goes on, the PIN still there
        const rotated = await server(new RedisStore(REDIS_URL, { prefix }), [KEY2, KEY1]);
        const r2 = await send(rotated.app, '601', {
          command: r.command,
          command_id: r.command_id,
          command_result: '1111',
        });
        expect(r2.params.media_id).toContain('Welcome back');
        expect(withoutNoise(await dump(prefix))).not.toContain(PIN);
        await rotated.app.close();

        // a second call sealed with KEY2, then a server with KEY1 alone: it cannot open them
        const again = await server(new RedisStore(REDIS_URL, { prefix }), [KEY2]);
        const r3 = await typePin(again.app, '602');
        await again.app.close();
        const lost = await server(new RedisStore(REDIS_URL, { prefix }), [KEY1]);
        await send(lost.app, '602', { command: r3.command, command_id: r3.command_id, command_result: '1111' });
        const line = lost.logs
          .map((l) => JSON.parse(l) as { code?: string; msg: string })
          .find((l) => l.code === 'SENSITIVE_UNREADABLE');
        expect(line?.msg).toMatch(/do not open with the keys configured \(sealed with key [0-9a-f]{8}\)/);
        expect(withoutNoise(logText(lost.logs))).not.toContain(PIN);
      } finally {
        await dropPrefix(prefix);
      }
    },
  );

  it('are stored in clear without a key, and the server warns at startup', async (t) => {
    if (skip) return t.skip(skip);
    const prefix = testPrefix();
    try {
      const { logs } = await server(new RedisStore(REDIS_URL, { prefix }));
      const warn = logs
        .map((l) => JSON.parse(l) as { code?: string; msg: string; flows?: string[] })
        .find((l) => l.code === 'SENSITIVE_NOT_SEALED');
      expect(warn?.flows).toEqual(['pin-line']);
      expect(warn?.msg).toContain('set CALLSCRIPT_SENSITIVE_KEY');
    } finally {
      await dropPrefix(prefix);
    }
  });
});
