/**
 * A request finding its call claimed by another instance (src/engine/call.ts: a step with
 * an SMS commits a claim first) waits for that instance's commit, or takes the call over
 * when the claim expires. Two CallHandlers on one store stand for two instances; a claim
 * written straight into the store stands for one left by an instance that died.
 *
 * Found by test/faults/claim-takeover.test.ts: the wait counted against the 50
 * compare-and-set attempts (20 ms each), so after 1 s the request failed 500 INTERNAL, and
 * a step that took a call over had no time left for its SMS (TIMEOUT).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CallHandler } from '../../src/engine/call.js';
import { type StepAnswer as Answer } from '../../src/engine/answer.js';
import { type CallLogger } from '../../src/engine/ports.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import { MemoryStore } from '../../src/store/memory.js';
import { liveExecutor } from '../../src/http/live-executor.js';
import { answerText, req, versionsOf } from './helpers.js';
import { yamlFlow } from './yaml.js';

const CONFIRM = readFileSync(new URL('../fixtures/sms-flows/confirm.yaml', import.meta.url), 'utf8');
const warnings: string[] = [];
const log: CallLogger = {
  info() {},
  warn: (o) => void warnings.push((o as { code: string }).code),
  error() {},
  debug() {},
};

/** An instance: its own handler on the shared store, sending SMS with `sms` (through the real budget rule). */
function instance(
  f: CompiledFlow,
  store: MemoryStore,
  sms: (budgetMs: number) => Promise<string>,
  deadlineMs: number,
): CallHandler {
  // the live executor: its SMS within the time left, through the real budget rule
  const executor = liveExecutor({ sms: (_msg, budget) => sms(budget) }, undefined);
  return new CallHandler(
    {
      versions: versionsOf(f),
      store,
      live: { set() {}, end() {}, purge: () => 0, started() {}, error() {}, size: 0 },
      release() {},
      executor,
    },
    { deadlineMs, callTtlMs: 60_000, unknownCall: 'reject', routes: { apps: {}, numbers: {} } },
  );
}

const body = answerText;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What an instance that died in its SMS step leaves: the claim alone (a new call), valid until `until`. */
/** The service reporting its fallback `wait` done, again while the answer is another fallback (the step still runs). */
async function reportWait(h: CallHandler, callid: string): Promise<Answer> {
  for (let i = 0; ; i++) {
    const a = await h.handle(req({ callid, command: 'wait', command_id: 0 }), 'confirm', log);
    if (i === 10 || !body(a).includes('"command":"wait","command_id":0')) return a;
  }
}
const deadClaim = (store: MemoryStore, callid: string, until: number) =>
  store.commit(callid, undefined, JSON.stringify({ v: 2, claim: { req: '0::UP', until } }), 60_000);

describe('a call claimed by another instance', () => {
  it(
    'a copy waits for a live instance whose SMS takes more ' + 'than a second, and answers its reply (not 500)',
    async () => {
      const f = await yamlFlow(CONFIRM);
      const store = new MemoryStore();
      let sentByB = 0;
      const a = instance(f, store, () => sleep(1500).then(() => 'SMSA'), 4000);
      const b = instance(f, store, async () => `SMSB${++sentByB}`, 4000);
      const first = a.handle(req({ callid: '61' }), 'confirm', log);
      await sleep(50);
      const copy = await b.handle(req({ callid: '61' }), 'confirm', log);
      expect(body(copy)).toContain(
        '"command":"play","command_id":1,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Sent SMSA."}',
      );
      expect(body(await first)).toBe(body(copy));
      expect(sentByB).toBe(0);
      a.close();
      b.close();
    },
  );

  it(
    'an expired claim (its instance died) is taken over: the SMS is sent with the time a claim allows, the ' +
      'fallback report gets the reply',
    async () => {
      const f = await yamlFlow(CONFIRM);
      const store = new MemoryStore();
      const budgets: number[] = [];
      const b = instance(f, store, async (budget) => (budgets.push(budget), 'SMSB'), 500);
      // the claim expires after this request's deadline (500 ms) but within the 1 s the attempts used to allow
      await deadClaim(store, '62', Date.now() + 900);
      const first = await b.handle(req({ callid: '62' }), 'confirm', log);
      expect(first).toMatchObject({ kind: 'answered', late: true });
      expect(body(first)).toContain('"command":"wait","command_id":0');
      // the service runs the wait and reports it: it stands for the first request
      const report = await reportWait(b, '62');
      expect(body(report)).toContain(
        '"command":"play","command_id":1,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Sent SMSB."}',
      );
      expect(budgets).toHaveLength(1);
      expect(budgets[0]).toBeGreaterThan(0);
      expect(warnings).toContain('CLAIM_EXPIRED');
      b.close();
    },
  );

  it(
    "a claim said to last an hour (another instance's clock) is taken over once this request has waited as " +
      'long as a claim may last',
    async () => {
      const f = await yamlFlow(CONFIRM);
      const store = new MemoryStore();
      const b = instance(f, store, async () => 'SMSB', 500);
      await deadClaim(store, '63', Date.now() + 3_600_000);
      expect(body(await b.handle(req({ callid: '63' }), 'confirm', log))).toContain('"command":"wait","command_id":0');
      // waited 500 ms + the claim's slack (1 s), then took over; the report waits behind that step
      const report = await reportWait(b, '63');
      expect(body(report)).toContain(
        '"command":"play","command_id":1,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Sent SMSB."}',
      );
      b.close();
    },
  );
});
