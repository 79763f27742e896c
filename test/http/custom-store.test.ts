/**
 * A store of one's own, declaring no capabilities and without the history methods, whose
 * methods read ES private fields: health, webhooks and the admin API call its methods on it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { webhookSignature } from '../../src/http/webhook-signature.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { CallStore } from '../../src/store/types.js';

/** Delegates to a MemoryStore held in a private field: calling a method with another `this` throws. */
class PrivateStore {
  #inner = new MemoryStore();
  pings = 0;
  load(c: string, k?: boolean) {
    return this.#inner.load(c, k);
  }
  commit(c: string, r: number | undefined, v: string, t: number) {
    return this.#inner.commit(c, r, v, t);
  }
  setAside(c: string, a: string, t: number) {
    return this.#inner.setAside(c, a, t);
  }
  get(c: string) {
    return this.#inner.get(c);
  }
  set(c: string, v: string, t: number) {
    return this.#inner.set(c, v, t);
  }
  delete(c: string) {
    return this.#inner.delete(c);
  }
  size() {
    return this.#inner.size();
  }
  async ping() {
    this.#inner.toString();
    this.pings++;
  }
  close() {
    return this.#inner.close();
  }
  smsSent(...a: Parameters<MemoryStore['smsSent']>) {
    return this.#inner.smsSent(...a);
  }
  smsReport(...a: Parameters<MemoryStore['smsReport']>) {
    return this.#inner.smsReport(...a);
  }
  smsStatus(h: string) {
    return this.#inner.smsStatus(h);
  }
  claimEvent(e: string, t: number) {
    return this.#inner.claimEvent(e, t);
  }
  releaseEvent(e: string) {
    return this.#inner.releaseEvent(e);
  }
}

const SECRET = 'a-secret-of-32-chars-0123456789ab';

it("a store of one's own with private fields and no history: health, webhooks and the admin API work", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-store-'));
  writeFileSync(join(dir, 'hello.yaml'), 'version: 1\nname: hello\nstart: hi\nsteps:\n  hi: { hangup: {} }\n');
  const store = new PrivateStore();
  const app = Fastify({ logger: false });
  await app.register(callscript, {
    flowsDir: dir,
    store: store as unknown as CallStore,
    webhooks: { secret: SECRET },
    admin: { login: 'ops', password: 'pw' },
  });
  const health = await app.inject({ url: '/health' });
  expect(health.statusCode).toBe(200);
  expect(store.pings).toBeGreaterThan(0);
  const body = JSON.stringify({
    event_id: 'e1',
    event_at: new Date().toISOString(),
    hook_hash: 'H',
    try: 0,
    type: 'sms.mt.status_update',
    data: { hash: 'ABCD1234', status: 'SENT', status_error: '' },
  });
  const hook = await app.inject({
    method: 'POST',
    url: '/webhooks/callr',
    headers: { 'content-type': 'application/json', 'x-callr-hmacsignature': webhookSignature(body, SECRET) },
    payload: body,
  });
  expect(hook.statusCode).toBe(200);
  // the admin API's store: the history methods it lacks answer nothing, its own run on it
  const auth = `Basic ${Buffer.from('ops:pw').toString('base64')}`;
  const calls = await app.inject({ url: '/admin/calls?status=finished', headers: { authorization: auth } });
  expect(calls.statusCode).toBe(200);
  expect(calls.json()).toMatchObject({ calls: [] });
  const one = await app.inject({ url: '/admin/calls/123', headers: { authorization: auth } });
  expect(one.statusCode).toBe(404);
  await app.close();
});
