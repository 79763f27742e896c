/**
 * The simulator's executor (`callscript simulate`): http lookups answered from mock routes
 * (`--mocks routes.yaml`, the format of `callscript mock-http`, delays and fillers
 * included) when given, else asked; sms asked (sent, or how it failed); a queue's poll asked
 * (sim-queue.ts), its leave and done answered at once. Asking is done the
 * driver's way (drive.ts, AskingExecutor): the run is dropped, the question put to the
 * person, and the same request run again with the answer. The answers given during a
 * request are journaled with the call's effect memory after each, so that the run again
 * gives every effect before the asked one the very same answer.
 */
import type { EffectContext, EffectMemo } from '../engine/effects.js';
import { DEFAULT_MAX_LOOKUPS_PER_CALL } from '../config/code.js';
import type { Effect, EffectResult } from '../engine/outcome.js';
import type { AskingExecutor } from './drive.js';
import { MockExecutor } from './executors.js';
import type { HttpMock } from './http-mocks.js';

/**
 * Who answered an effect: the mock routes, the person (or caller script), the per-call lookup limit, or the simulator
 * itself (a queue's leave and done, answered as a store answers them).
 */
export type AnsweredBy = 'routes' | 'asked' | 'limit' | 'built-in';

interface Entry {
  result: EffectResult;
  memo: EffectMemo;
  by: AnsweredBy;
}

const copy = (m: EffectMemo): EffectMemo => ({
  ...(m.lk ? { lk: { ...m.lk } } : {}),
  ...(m.hn !== undefined ? { hn: m.hn } : {}),
});

export class SimExecutor implements AskingExecutor {
  asking: Effect | undefined;
  private journal: Entry[] = [];
  private at = 0;
  private given: EffectResult | undefined;
  private readonly routes: MockExecutor | undefined;

  constructor(routes?: readonly HttpMock[]) {
    this.routes = routes ? new MockExecutor({ http: routes, match: 'routes' }) : undefined;
  }

  begin(again: boolean): void {
    this.at = 0;
    this.asking = undefined;
    if (!again) {
      this.journal = [];
      this.given = undefined;
    }
  }

  /** The answer to the effect asked about: given to it when the request runs again. */
  give(result: EffectResult): void {
    this.given = result;
  }

  /** Who answered the k-th effect of the current request. */
  by(k: number): AnsweredBy | undefined {
    return this.journal[k]?.by;
  }

  perform(effect: Effect, ctx: EffectContext): EffectResult {
    // the run is dropped once an effect is asked about: what follows it does not matter
    if (this.asking) return { ok: false, error: 'UNANSWERED' };
    const memo = ctx.memo;
    const j = this.journal[this.at];
    if (j) {
      // the same request again: the same answer, and the memory as it was after it
      this.at++;
      delete memo.lk;
      delete memo.hn;
      Object.assign(memo, copy(j.memo));
      return j.result;
    }
    let result: EffectResult;
    let by: AnsweredBy = 'asked';
    const http = effect.kind === 'http' && !effect.wait;
    if (http && (memo.hn ?? 0) >= DEFAULT_MAX_LOOKUPS_PER_CALL) {
      result = { ok: false, error: 'LIMIT', message: `this call has made ${memo.hn} lookups` };
      by = 'limit';
    } else if (this.given) {
      result = this.given;
      this.given = undefined;
      if (http) memo.hn = (memo.hn ?? 0) + 1;
    } else if (effect.kind === 'http' && this.routes) {
      result = this.routes.perform(effect, ctx);
      by = 'routes';
    } else if (effect.kind === 'queue' && effect.op !== 'poll') {
      // out of the line: a store answers at once
      result = { ok: true, value: effect.op === 'leave' ? 'left' : 'done' };
      by = 'built-in';
    } else {
      this.asking = effect;
      return { ok: false, error: 'UNANSWERED' };
    }
    this.journal.push({ result, memo: copy(memo), by });
    this.at++;
    return result;
  }
}
