/**
 * The explorer's executor (`callscript paths`, explore.ts): each branch an effect can
 * take, one at a time. An sms is sent, or fails (FAILED). An http lookup answers 200
 * (ok), each status the step's `on:` names (an exact status, a sample of a pattern), a
 * status that only `default` takes, TIMEOUT, or NETWORK (the step's `error` branch):
 * one answer per way the flow's machine goes from the step (the machine decides, as for
 * results: src/engine/probe.ts). A lookup's method and URL keep their answer along a
 * path (what a scenario's mocks.http can say: a case mocks exactly the answers its path
 * took). Lookups answer at once: their fillers are not explored (a filler takes no branch).
 * A lookup whose saved answer holds the list a foreach reads (`in: vars.found.body.items`)
 * also answers 200 with that list empty, of one item and of two (`{ items: [{}, {}] }`):
 * the ways through the loop for zero, one and more items. A queue's poll answers ring (the
 * first agent offered), wait, timeout, empty or fails (UNAVAILABLE), one answer per way the
 * machine goes; leave and done answer at once. Its saved answer is the same at every poll
 * (the caller first in line, no time waited), so the waiting loop's states repeat and the
 * search walks each of them once.
 */
import { keysTaken } from '../engine/probe.js';
import type { EffectContext, SyncExecutor } from '../engine/effects.js';
import { DEFAULT_MAX_LOOKUPS_PER_CALL } from '../config/code.js';
import type { CompiledFlow } from '../engine/compile.js';
import type { Effect, EffectResult, HttpEffect, QueueEffect } from '../engine/outcome.js';
import type { QueueAnswer } from '../engine/queue.js';
import type { HttpAnswer } from './http-mocks.js';
import { smsHash } from './executors.js';
import { sampleFor } from './sample.js';

/** The error an sms fails with in a generated case. */
export const SMS_ERROR = 'FAILED';

/** One answer given to an effect (a queue operation's as its step's `answer:` writes it). */
export type Branch =
  | { kind: 'sms'; ok: boolean }
  | { kind: 'http'; method: string; url: string; answer: HttpAnswer }
  | { kind: 'queue'; op: string; answer: QueueBranch };

/** A queue operation's answer in a generated case: a poll's result (ring names its agent), left, done, or an error. */
export interface QueueBranch {
  result?: string;
  agent?: string;
  error?: string;
}

/** The error a queue's store fails with in a generated case (the step's error way). */
export const QUEUE_ERROR = 'UNAVAILABLE';

/** A lookup's key in a path's fixed answers: its method and URL. */
export const lookupKey = (method: string, url: string): string => `${method} ${url}`;

/** Statuses tried besides the flow's own (their ways are told apart by the machine). */
const USUAL_STATUSES = [200, 500, 404, 400, 503, 302];

/** The answers worth trying at an http or queue step, per step (they depend on the step's keys only). */
export type BranchCache = Map<string, HttpAnswer[] | QueueBranch[]>;

/** One answer per way the machine goes from the http step `state`: ok first. */
export function httpBranches(flow: CompiledFlow, state: string, cache?: BranchCache): HttpAnswer[] {
  const hit = cache?.get(state);
  if (hit) return hit;
  const meta = flow.config.states[state]?.meta;
  const statuses: number[] = [];
  if (meta?.kind === 'command')
    for (const k of meta.keys) {
      const s = k.exact ?? (k.regex !== undefined ? sampleFor(k.regex) : undefined);
      if (s !== undefined && /^[1-5][0-9][0-9]$/.test(s)) statuses.push(Number(s));
    }
  const byWay = new Map<string, HttpAnswer>();
  const add = (way: string, a: HttpAnswer) => {
    if (!byWay.has(way)) byWay.set(way, a);
  };
  for (const status of [200, ...statuses, ...USUAL_STATUSES])
    add(`result ${keysTaken(flow, state, String(status)).join(' ')}`, { status });
  const lists = loopLists(flow, state);
  if (lists.length > 0)
    for (const n of [0, 1, 2]) {
      const list = Array.from({ length: n }, () => ({}));
      // `in: vars.<save>.body`: the body is the list
      const body: Record<string, unknown> | unknown[] = lists.some((p) => p.length === 0) ? list : {};
      if (!Array.isArray(body)) for (const path of lists) put(body, path, list);
      add(`list ${n}`, { status: 200, body: body as HttpAnswer['body'] });
    }
  for (const error of ['TIMEOUT', 'NETWORK']) add(`error ${keysTaken(flow, state, '', error).join(' ')}`, { error });
  const out = [...byWay.values()];
  cache?.set(state, out);
  return out;
}

/**
 * The paths in an http step's answer body of the lists its flow's foreach steps read (`in: vars.<save>.body.a.b` gives
 * ['a', 'b']; `in: vars.<save>.body` gives []).
 */
function loopLists(flow: CompiledFlow, state: string): string[][] {
  const step = flow.model.steps[state];
  if (step?.kind !== 'command' || step.save === undefined) return [];
  const re = new RegExp(`^\\s*vars\\.${step.save}\\.body((?:\\.[A-Za-z_][A-Za-z0-9_]*)*)\\s*$`);
  const out: string[][] = [];
  for (const s of Object.values(flow.model.steps)) {
    const m = s.kind === 'loop' ? re.exec(s.in) : null;
    if (m) out.push(m[1]!.split('.').filter((x) => x !== ''));
  }
  return out;
}

/** Sets `value` at `path` in `body` (maps made on the way); an empty path is the body itself. */
function put(body: Record<string, unknown>, path: string[], value: unknown[]): void {
  if (path.length === 0) return;
  let at = body;
  for (const k of path.slice(0, -1)) {
    const next = at[k];
    at = (at[k] = next && typeof next === 'object' && !Array.isArray(next) ? next : {}) as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = value;
}

/**
 * The answers worth giving a queue operation: a poll one per way the machine goes from the step (ring the first agent
 * offered, wait, timeout, empty, the store failing: the machine decides which differ, as for results); leave and done
 * answer as a store does, at once.
 */
export function queueBranches(flow: CompiledFlow, e: QueueEffect, cache?: BranchCache): QueueBranch[] {
  if (e.op !== 'poll') return [{ result: e.op === 'leave' ? 'left' : 'done' }];
  const agent = e.params.agents[0];
  const key = `${e.step}|queue|${agent === undefined ? '' : 'ring'}`;
  const hit = cache?.get(key) as QueueBranch[] | undefined;
  if (hit) return hit;
  const byWay = new Map<string, QueueBranch>();
  const add = (way: string, a: QueueBranch) => {
    if (!byWay.has(way)) byWay.set(way, a);
  };
  // a poll's answer with no agent to ring cannot be ring (the store answers empty)
  if (agent !== undefined) add(`result ${keysTaken(flow, e.step, 'ring').join(' ')}`, { result: 'ring', agent });
  for (const r of ['wait', 'timeout', 'empty']) add(`result ${keysTaken(flow, e.step, r).join(' ')}`, { result: r });
  add(`error ${keysTaken(flow, e.step, '', QUEUE_ERROR).join(' ')}`, { error: QUEUE_ERROR });
  const out = [...byWay.values()];
  cache?.set(key, out as never);
  return out;
}

/** What a queue answer gives the machine: a poll's result and save: value (the caller first in line), or the error. */
export function queueResult(a: QueueBranch, e: QueueEffect): EffectResult {
  if (a.error !== undefined) return { ok: false, error: a.error, message: `answered ${a.error}` };
  const result = a.result!;
  if (e.op !== 'poll') return { ok: true, value: result };
  const data: QueueAnswer = {
    result,
    position: result === 'ring' || result === 'wait' ? 1 : 0,
    expected_wait: 0,
    waited: 0,
    agents: e.params.agents.length,
    free: 0,
  };
  if (a.agent !== undefined) data.agent = a.agent;
  return { ok: true, value: result, data: data as never };
}

/** What an answer gives the machine: the status as the result, { status, body } to save, or the error. */
export function answerResult(a: HttpAnswer): EffectResult {
  if (a.error !== undefined) return { ok: false, error: a.error, message: `answered ${a.error}` };
  const status = a.status ?? 200;
  return { ok: true, value: String(status), data: { status, body: a.body ?? null } };
}

/**
 * Answers the effects of one request: the `choices[k]`-th answer to the k-th effect (0, the first, by default), and
 * notes each effect met with how many answers it has.
 */
export class BranchExecutor implements SyncExecutor {
  readonly met: { effect: Effect; options: number; given: Branch }[] = [];
  private sms = 0;
  private readonly fixed: Map<string, HttpAnswer>;

  constructor(
    private readonly flow: CompiledFlow,
    private readonly choices: readonly number[],
    fixed: ReadonlyMap<string, HttpAnswer>,
    private readonly smsBefore: number,
    private readonly cache?: BranchCache,
  ) {
    this.fixed = new Map(fixed);
  }

  perform(effect: Effect, ctx: EffectContext): EffectResult {
    const pick = (n: number) => Math.min(this.choices[this.met.length] ?? 0, n - 1);
    if (effect.kind === 'sms') {
      const ok = pick(2) === 0;
      this.met.push({ effect, options: 2, given: { kind: 'sms', ok } });
      this.sms++;
      return ok ? { ok: true, value: smsHash(this.smsBefore + this.sms) } : { ok: false, error: SMS_ERROR };
    }
    if (effect.kind === 'queue') {
      const answers = queueBranches(this.flow, effect, this.cache);
      const answer = answers[pick(answers.length)]!;
      this.met.push({ effect, options: answers.length, given: { kind: 'queue', op: effect.op, answer } });
      return queueResult(answer, effect);
    }
    return this.http(effect, ctx, pick);
  }

  private http(e: HttpEffect, ctx: EffectContext, pick: (n: number) => number): EffectResult {
    // lookups answer at once here: none is waited for after a filler
    if (e.wait) return { ok: false, error: 'TIMEOUT', message: 'no lookup of this step is in progress for the call' };
    const count = ctx.memo.hn ?? 0;
    if (count >= DEFAULT_MAX_LOOKUPS_PER_CALL)
      return { ok: false, error: 'LIMIT', message: `this call has made ${count} lookups` };
    ctx.memo.hn = count + 1;
    const method = String(e.params.method);
    const url = String(e.params.url);
    const key = lookupKey(method, url);
    const known = this.fixed.get(key);
    const answers = known ? [known] : httpBranches(this.flow, e.step, this.cache);
    const answer = answers[pick(answers.length)]!;
    this.fixed.set(key, answer);
    this.met.push({ effect: e, options: answers.length, given: { kind: 'http', method, url, answer } });
    return answerResult(answer);
  }
}
