/**
 * Masked inputs in recordings. A recording never holds a sensitive value
 * (docs/security.md): the result of a step whose `save:` is sensitive is written
 * `result: "***"`, and the values it became show `***` in later params (an http body, a
 * URL). To replay such a call, the tools feed a stand-in for the masked input: the first
 * of a few results the command can return (`***` itself first, then TIMEOUT, then keys:
 * `00000000`, `11111111`... for a read) with which the flow does next what the recording
 * says it did (one request of lookahead, run on copies: nothing of the call changes). A
 * recorded value holding `***` then matches the actual value with the call's sensitive
 * values masked the same way.
 */
import { isSayState } from '../engine/advance.js';
import type { EffectDone, Settled, SyncExecutor } from '../engine/effects.js';
import { MASK, Masker, sensitiveValues } from '../engine/mask.js';
import type { CompiledFlow } from '../engine/compile.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import type { CallDriver } from './drive.js';
import { isPossibleResult } from './results.js';

/** The most stand-ins tried for one masked input (each one request of lookahead). */
export const MAX_STAND_INS = 32;

/** The call's outstanding command was sent by a step whose `save:` is sensitive: its result is masked in recordings. */
export function sensitiveInput(flow: CompiledFlow, driver: Pick<CallDriver, 'state'>): boolean {
  const s = driver.state;
  return !!s && !isSayState(s.s) && flow.tables.sensitive?.steps.has(s.step) === true;
}

/**
 * A recorded result that was masked: `***` (the input of a step whose `save:` is sensitive), or a result holding `***`
 * (a sensitive value typed at another step is scrubbed by value).
 */
export function isMasked(result: string | undefined): result is string {
  return result !== undefined && result.includes(MASK);
}

/** What a masked result of `command` may have been, most likely first: the recorded one, then `***`, then others. */
export function standIns(command: string, maxDigits: number | undefined, recorded: string = MASK): string[] {
  const out = [recorded, MASK];
  if (isAction(command)) {
    const set = ACTION_SPECS[command].results;
    if (set.kind === 'digits') {
      const n = maxDigits ?? 1;
      out.push(...set.also);
      for (const d of '0123456789') out.push(d.repeat(n));
      for (let k = n - 1; k >= 1; k--) out.push('0'.repeat(k));
    } else if (set.kind === 'enum') out.push(...set.values);
  }
  return [...new Set(out)].filter((v) => isPossibleResult(command, v, maxDigits)).slice(0, MAX_STAND_INS);
}

/** What a request's run shows first: its first effect (a lookup waited for again is not one), or its answer. */
export type FirstSeen = { effect: EffectDone['effect'] } | { outcome: Settled };

export function firstSeen(ran: { outcome: Settled; effects: EffectDone[] }): FirstSeen {
  const e = ran.effects.find((d) => !(d.effect.kind === 'http' && d.effect.wait));
  return e ? { effect: e.effect } : { outcome: ran.outcome };
}

/**
 * The stand-in to feed for a masked result: the first candidate with which `accept` holds of what the flow does next
 * (tried with copies of the executor); undefined when none does (the masked value is fed as written).
 */
export function chooseStandIn(
  driver: CallDriver,
  candidates: readonly string[],
  copy: () => SyncExecutor,
  accept: (seen: FirstSeen, fed: string) => boolean,
): string | undefined {
  for (const v of candidates) {
    const ran = driver.trial({ result: v }, copy());
    if (ran.outcome.kind === 'reply' && accept(firstSeen(ran), v)) return v;
  }
  return undefined;
}

/**
 * A masker of the values a replay must not tell from `***`: the stand-ins fed and the call's sensitive vars (prior and
 * current), so that a recorded `***` matches the actual value.
 */
export function replayMasker(
  flow: CompiledFlow,
  fed: Iterable<string>,
  ...vars: (Record<string, unknown> | undefined)[]
): Masker | undefined {
  const values = new Set(fed);
  for (const v of vars) sensitiveValues(v, flow.tables.sensitive, values);
  return values.size > 0 ? new Masker(values) : undefined;
}
