/**
 * The server's executor of effects (src/engine/effects.ts): SMS through the SMS API
 * (src/http/effects.ts), http lookups through Lookups (src/engine/http-wait.ts: waiting
 * across requests and instances, bounded per call), each within the time left before the
 * reply's deadline; queue operations on the store's lines (src/engine/queue-run.ts).
 */
import type { EffectContext, Executor } from '../engine/effects.js';
import type { Lookups } from '../engine/http-wait.js';
import type { Effect, EffectResult } from '../engine/outcome.js';
import { performEffect, type Effects } from './effects.js';
import { performQueue } from '../engine/queue-run.js';
import type { QueueLines } from '../store/queues.js';

export function liveExecutor(effects: Effects, lookups: Lookups | undefined, queues?: QueueLines): Executor {
  return {
    async perform(effect: Effect, ctx: EffectContext): Promise<EffectResult> {
      if (effect.kind === 'queue') return performQueue(queues, effect, ctx.now);
      if (effect.kind !== 'http') return performEffect(effects, effect, ctx.budgetMs());
      if (!lookups) return { ok: false, error: 'UNAVAILABLE', message: 'http lookups are not enabled here' };
      const memo = ctx.memo;
      const r = await lookups.perform(effect, memo.lk, memo.hn ?? 0, ctx.budgetMs());
      if (r.started) memo.hn = (memo.hn ?? 0) + 1;
      // the lookup still running after this request (its filler plays), if any
      if (r.lk) memo.lk = r.lk;
      else delete memo.lk;
      return r.result;
    },
  };
}
