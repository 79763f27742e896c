/**
 * A request finding its call claimed by another instance (src/engine/call.ts: a step with
 * an SMS commits a claim first) waits for that instance's commit, or takes the call over
 * when the claim expires. Two CallHandlers on one store stand for two instances; a claim
 * written straight into the store stands for one left by an instance that died.
 *
 * Found by test/faults/claim-takeover.test.ts: the wait counted against the 50
 * compare-and-set attempts (20 ms each), so after 1 s the request failed 500 INTERNAL.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CallHandler, type Answer, type CallDeps, type CallLogger } from '../../src/engine/call.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { MemoryStore } from '../../src/store/memory.js';
import { performEffect } from '../../src/http/effects.js';
import { req } from './helpers.js';
import { yamlFlow } from './yaml.js';

const CONFIRM = readFileSync(new URL('../fixtures/sms-flows/confirm.yaml', import.meta.url), 'utf8');
const log: CallLogger = { info() {}, warn() {}, error() {}, debug() {} };

/** An instance: its own handler on the shared store, sending SMS with `sms` (through the real budget rule). */
function instance(f: CompiledFlow, store: MemoryStore, sms: (budgetMs: number) => Promise<string>, deadlineMs: number): CallHandler {
  const perform: CallDeps['perform'] = (e, budget) => performEffect({ sms: () => sms(budget) }, e, budget);
  return new CallHandler(
    {
      versions: { get: (n, v) => (n === f.name && v === f.version ? f : undefined), pick: (n) => (n === f.name ? f : undefined) },
      store,
      live: { set() {}, end() {}, purge: () => 0, started() {}, error() {}, size: 0 },
      release() {},
      perform,
    },
    { deadlineMs, callTtlMs: 60_000, unknownCall: 'reject', routes: { apps: {}, numbers: {} } },
  );
}

const body = (a: Answer) => (a.status === 200 ? a.body : `${a.status} ${a.code}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a call claimed by another instance', () => {
  it('a copy waits for a live instance whose SMS takes more than a second, and answers its reply (not 500)', async () => {
    const f = await yamlFlow(CONFIRM);
    const store = new MemoryStore();
    let sentByB = 0;
    const a = instance(f, store, () => sleep(1500).then(() => 'SMSA'), 4000);
    const b = instance(f, store, async () => `SMSB${++sentByB}`, 4000);
    const first = a.handle(req({ callid: '61' }), 'confirm', log);
    await sleep(50);
    const copy = await b.handle(req({ callid: '61' }), 'confirm', log);
    expect(body(copy)).toContain('"command":"play","command_id":1,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Sent SMSA."}');
    expect(body(await first)).toBe(body(copy));
    expect(sentByB).toBe(0);
    a.close();
    b.close();
  });
});
