/**
 * The tools' executors of effects (src/engine/effects.ts): what answers an sms or an http
 * lookup when a tool drives the call step (src/testing/drive.ts) instead of the server.
 *
 * MockExecutor answers from mocks: a scenario's `mocks.sms` and `mocks.http`, or an http
 * step's own `answer:` (recordings), or the routes of `simulate --mocks` (the format of
 * `callscript mock-http`); queue operations on the case's line (case-line.ts, the memory
 * store's queues at the case's clock). An http lookup plays out as on a server with the default
 * deadline: each request waits up to TOOL_BUDGET_MS for it; a longer delay on a step with a
 * filler is `pending` (the filler plays), and the lookup goes on at the next request (its
 * `<step>@wait` state), found through the call's EffectMemo (`lk`: the lookup's id) as the
 * server finds it. A call starts DEFAULT_MAX_LOOKUPS_PER_CALL lookups at most, as on a server.
 *
 * The explorer's executor (`paths`) is in branch-executor.ts, the simulator's in
 * sim-executor.ts; replay answers with a MockExecutor fed the recorded answers.
 */
import { DEFAULT_MAX_LOOKUPS_PER_CALL } from '../config/code.js';
import { effectResult, LOOKUP_SLACK_MS } from '../engine/http-wait.js';
import type { EffectContext, SyncExecutor } from '../engine/effects.js';
import type { Effect, EffectResult, HttpEffect, SmsEffect } from '../engine/outcome.js';
import { CaseLine } from './case-line.js';
import {
  AnsweredLookup,
  answerOf,
  findMock,
  findRoute,
  MockedLookup,
  type HttpAnswer,
  type HttpMock,
  type MockAnswer,
  type ToolLookup,
} from './http-mocks.js';

/** What a request of a tool waits for a lookup: the default deadline (4 s) less the engine's margin (250 ms). */
export const TOOL_BUDGET_MS = 3750;

/** The default SMS hash of the n-th sms (1-based) of a call: SMS00001, SMS00002... */
export function smsHash(n: number): string {
  return `SMS${String(n).padStart(5, '0')}`;
}

/** The timeout of an http effect's request (ms): its timeout_ms, default 5 s. */
function lookupTimeout(e: HttpEffect): number {
  return Number(e.params.timeout_ms) || 5000;
}

export interface MockOptions {
  /** The sms outcomes, in order; past the list each succeeds with SMS0000n (counted over the call). */
  sms?: readonly EffectResult[];
  /** The http mocks (a scenario's mocks.http, or mock-http routes). */
  http?: readonly HttpMock[];
  /**
   * `scenario` (default): mocks.http, first match by method and URL; none: NETWORK. `routes`: the mock-http routes
   * format (a url starting with / matches the path and query); none: 404, as `callscript mock-http` answers.
   */
  match?: 'scenario' | 'routes';
  /** Lookups one call may start (default 20, as on a server): past it, LIMIT. */
  maxLookups?: number;
  /** What a request may wait for a lookup (default TOOL_BUDGET_MS). */
  budgetMs?: number;
  /** The case's queues (case-line.ts: the memory store's lines, the case's state); absent: UNAVAILABLE. */
  queues?: CaseLine;
}

/** Answers effects from mocks (scenarios, recordings, simulate --mocks). */
export class MockExecutor implements SyncExecutor {
  private smsUsed = 0;
  private started = 0;
  private readonly lookups = new Map<string, ToolLookup>();
  /** The lookups each entry has answered (its `answers:` are given in turn). */
  private readonly answered = new Map<HttpMock, number>();

  constructor(readonly o: MockOptions = {}) {}

  /**
   * A copy with the same progress (sms used, lookups running): a trial run leaves this one as it is. Its queues are
   * lines of its own, empty (a trial's queue operations must not change the case's; what a trial looks at is the
   * first operation or command it meets, not a queue's answer).
   */
  clone(): MockExecutor {
    const c = new MockExecutor(this.o.queues ? { ...this.o, queues: new CaseLine() } : this.o);
    c.smsUsed = this.smsUsed;
    c.started = this.started;
    for (const [k, l] of this.lookups) c.lookups.set(k, l.clone());
    for (const [m, n] of this.answered) c.answered.set(m, n);
    return c;
  }

  /** The answer of the mock a lookup's method, URL, body and headers match, if any (the next of its answers). */
  private mockFor(e: HttpEffect): MockAnswer | undefined {
    const method = String(e.params.method);
    const url = String(e.params.url);
    const list = this.o.http ?? [];
    const req = { body: e.params.body, headers: e.params.headers as Record<string, unknown> | undefined };
    const m = this.o.match === 'routes' ? findRoute(list, method, url, req) : findMock(list, method, url, req);
    if (!m) return undefined;
    const n = this.answered.get(m) ?? 0;
    this.answered.set(m, n + 1);
    return answerOf(m, n);
  }

  /** `answer`: what a scenario step answers this lookup (it starts one), instead of the mocks. */
  perform(effect: Effect, ctx: EffectContext, answer?: HttpAnswer): EffectResult {
    if (effect.kind === 'queue')
      return this.o.queues
        ? this.o.queues.perform(effect, ctx.now)
        : { ok: false, error: 'UNAVAILABLE', message: 'no queues here' };
    return effect.kind === 'sms' ? this.sms(effect) : this.http(effect, ctx, answer);
  }

  private sms(_e: SmsEffect): EffectResult {
    const m = this.o.sms?.[this.smsUsed];
    this.smsUsed++;
    return m ?? { ok: true, value: smsHash(this.smsUsed) };
  }

  private http(e: HttpEffect, ctx: EffectContext, answer: HttpAnswer | undefined): EffectResult {
    const budget = this.o.budgetMs ?? TOOL_BUDGET_MS;
    const memo = ctx.memo;
    if (e.wait) {
      // the lookup an earlier request started (its filler's result brought this one)
      const lk = memo.lk;
      const running = lk && lk.step === e.step ? this.lookups.get(lk.id) : undefined;
      if (!lk || !running)
        return { ok: false, error: 'TIMEOUT', message: 'no lookup of this step is in progress for the call' };
      const o = running.next(budget, e.filler);
      if (o === 'pending') return { pending: true };
      this.lookups.delete(lk.id);
      delete memo.lk;
      return effectResult(o);
    }
    const count = memo.hn ?? 0;
    const max = this.o.maxLookups ?? DEFAULT_MAX_LOOKUPS_PER_CALL;
    if (count >= max)
      return {
        ok: false,
        error: 'LIMIT',
        message: `this call has made ${count} lookups, the most http.max_lookups_per_call allows`,
      };
    memo.hn = count + 1;
    const timeout = lookupTimeout(e);
    const lookup: ToolLookup = answer
      ? new AnsweredLookup(answer)
      : new MockedLookup(this.mockFor(e), timeout, this.o.match === 'routes' ? 'not-found' : 'network');
    const o = lookup.next(budget, e.filler);
    if (o !== 'pending') return effectResult(o);
    const id = `${e.step}#${++this.started}`;
    this.lookups.set(id, lookup);
    memo.lk = { id, step: e.step, started: ctx.now, until: ctx.now + timeout + LOOKUP_SLACK_MS };
    return { pending: true };
  }
}
