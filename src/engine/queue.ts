/**
 * The engine's side of a `queue` step (version 2; its states: src/flow/machine-queue.ts): what each of its states
 * builds (the store operation as an effect, a hold chunk, an announcement, the dialout to the agent claimed), what a
 * poll's answer changes in the call's context, and when an announcement is due. The line itself is the store's
 * (src/store/queues.ts), reached through the driver's executor like any effect.
 *
 * What the call keeps (`Ctx.q`, stored with the call): the agent claimed (`a`), the announcement slot last played
 * (`t`: floor(waited / every)), the hold chunk last played (`i`). What a flow reads is its `save:` variable: the
 * poll's answer as `{ result, position, expected_wait, waited, agents, free, agent }` (seconds).
 */
import { evaluate } from '../flow/expr.js';
import type { MediaParam, QueueSpec, Value } from '../flow/model.js';
import { checkE164 } from '../protocol/formats.js';
import { fillerBuilder } from './http-params.js';
import { literalValue, ParamFailure, playBuilder, type GetScope, type Params, type PromptTable } from './params.js';

/** What a call keeps between the requests of a queue step. */
export interface QueueMemo {
  /** The agent claimed for this caller (the dialout of `<q>@ring`). */
  a?: string;
  /** The announcement slot last played: floor(waited / every); absent: none yet. */
  t?: number;
  /** The hold chunk last played (0-based); absent: none yet. */
  i?: number;
  /** Seconds the caller had waited at the last answer (what leave and done report: metrics). */
  w?: number;
}

/** The most agents a poll offers (the store's bound too: src/store/queues.ts QUEUE_LIMITS.maxAgents). */
export const MAX_QUEUE_AGENTS = 1000;

/** The effect's params: what the executor needs to reach the store (src/engine/outcome.ts QueueEffect). */
export interface QueueParams {
  queue: string;
  op: 'poll' | 'leave' | 'done';
  /** poll: the numbers offered, rendered and checked. */
  agents: string[];
  strategy: QueueSpec['strategy'];
  /** Seconds. */
  ring_time: number;
  wrap_up: number;
  max_wait: number;
  handle_time: number;
  max_talk: number;
  /** leave, done: seconds the caller had waited at its last poll (done: when the agent who answered was claimed). */
  waited?: number;
}

export interface QueueTable {
  spec: QueueSpec;
  /** The effect's params for `op` (poll renders the agents: throws ParamFailure); `waited` for leave and done. */
  params(scope: GetScope, op: QueueParams['op'], waited?: number): QueueParams;
  /** The hold chunk `i` (0-based, looped). */
  hold(scope: GetScope, i: number): { command: 'play' | 'wait'; params: Params };
  /** The announcement (throws ParamFailure). */
  announce(scope: GetScope): Params;
  /** The dialout to `agent`. */
  ring(scope: GetScope, agent: string): { params: Params; warning?: string };
}

export function queueTable(spec: QueueSpec, prompts: PromptTable | undefined): QueueTable {
  const hold = fillerBuilder(spec.hold, prompts);
  const announce = spec.announce ? playBuilder(spec.announce.media, prompts) : undefined;
  const whisper = spec.whisper ? playBuilder(spec.whisper as MediaParam, prompts) : undefined;
  const cli = spec.cli !== undefined ? literalValue(spec.cli) : undefined;
  const items = spec.agents.kind === 'list' ? spec.agents.items.map((a) => literalValue(a)) : undefined;
  const base = {
    queue: spec.name,
    strategy: spec.strategy,
    ring_time: spec.ring_time,
    wrap_up: spec.wrap_up,
    max_wait: spec.max_wait,
    handle_time: spec.handle_time,
    max_talk: spec.max_talk,
  };
  const agentsOf = (scope: GetScope): string[] => {
    let raw: Value[];
    if (items) raw = items.map((it) => (it.c ? it.v : it.f(scope)));
    else {
      const v = evaluate((spec.agents as { expr: string }).expr, scope());
      if (!Array.isArray(v))
        throw new ParamFailure('agents', `the expression gives ${typeName(v)}, not a list of numbers`, 'RUNTIME_PARAM');
      raw = v;
    }
    const out: string[] = [];
    const seen = new Set<string>();
    for (const x of raw) {
      if (out.length >= MAX_QUEUE_AGENTS) break;
      if (typeof x !== 'string')
        throw new ParamFailure('agents', `an agent is ${typeName(x)}, not a number in a string`, 'RUNTIME_PARAM');
      const bad = checkE164(x);
      if (bad !== null) throw new ParamFailure('agents', `agent "${x.slice(0, 40)}": ${bad}`, 'RUNTIME_PARAM');
      if (!seen.has(x)) {
        seen.add(x);
        out.push(x);
      }
    }
    return out;
  };
  return {
    spec,
    params(scope, op, waited) {
      if (op === 'poll') return { ...base, op, agents: agentsOf(scope) };
      return waited !== undefined ? { ...base, op, agents: [], waited } : { ...base, op, agents: [] };
    },
    hold(scope, i) {
      return hold(scope, (i % spec.hold.length) + 1) as { command: 'play' | 'wait'; params: Params };
    },
    announce(scope) {
      if (!announce) throw new ParamFailure('announce', 'the step has no announcement', 'RUNTIME_PARAM');
      return announce.build(scope, 1);
    },
    ring(scope, agent) {
      const p: Record<string, Params[string]> = { targets: [{ number: agent, timeout: spec.ring_time }] };
      let warning: string | undefined;
      try {
        if (cli) {
          const c = cli.c ? cli.v : cli.f(scope);
          if (typeof c === 'string' && (c === 'BLOCKED' || checkE164(c) === null)) p.cli = c;
          else warning = `cli "${String(c).slice(0, 40)}" is not an E.164 number or BLOCKED: not sent`;
        }
        if (whisper) p.whisper = whisper.build(scope, 1).media_id!;
      } catch (err) {
        warning = `${err instanceof Error ? err.message : String(err)}: not sent`;
      }
      return warning ? { params: p, warning } : { params: p };
    },
  };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'a map' : `a ${typeof v}`;
}

/** The `save:` value of a poll's answer, and what it changes in the call's memo. */
export interface QueueAnswer {
  result: string;
  position: number;
  expected_wait: number;
  waited: number;
  agents: number;
  free: number;
  agent?: string;
}

/** An announcement is due: the caller waits (`wait`) and a new slot of `every` seconds has begun. */
export function announceDue(spec: QueueSpec, memo: QueueMemo | undefined, result: string, data: unknown): boolean {
  if (result !== 'wait' || !spec.announce) return false;
  const waited = typeof (data as QueueAnswer | undefined)?.waited === 'number' ? (data as QueueAnswer).waited : 0;
  return Math.floor(waited / spec.announce.every) > (memo?.t ?? -1);
}

/** The memo after a poll's answer took the way `on` (ring, announce, hold). */
export function queueMemo(
  spec: QueueSpec,
  memo: QueueMemo | undefined,
  on: 'ring' | 'announce' | 'hold',
  data: unknown,
): QueueMemo {
  const m: QueueMemo = { ...memo };
  const d = data as Partial<QueueAnswer> | undefined;
  if (typeof d?.waited === 'number') m.w = d.waited;
  if (on === 'ring') {
    if (typeof d?.agent === 'string') m.a = d.agent;
  } else if (on === 'announce') {
    const waited = typeof d?.waited === 'number' ? d.waited : 0;
    m.t = Math.floor(waited / (spec.announce?.every ?? 60));
  } else m.i = (m.i ?? -1) + 1;
  return m;
}
