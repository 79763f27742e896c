/**
 * The search behind `callscript paths`: a breadth-first walk over real calls of the flow,
 * stepped by the engine's own `advance` on the compiled xstate machine (the one runtime:
 * nothing here decides where a call goes). From each call state it feeds every result
 * that leads somewhere different (one per branch key the machine takes, plus the values
 * the flow's text suggests), an error where the step has an error branch, and the
 * caller hanging up where the flow has a hangup handler; effects take each branch they
 * can, one at a time (branch-executor.ts: an sms sent or failed; an http lookup ok, each
 * status the step names, timeout, error; a queue's poll ring, wait, timeout, empty, error).
 * A queue step's waiting loop repeats call states (the poll's saved answer is the same at each
 * poll), which the search walks once each, as any loop. The engine's run hooks report each transition
 * taken: the first (so shortest) way to each is kept, as the requests that lead there.
 *
 * Requests are stepped and built by the tools' driver (drive.ts: `stepRequest`,
 * `requestFor`), as the scenario runner steps them, so a path found here is a case the
 * runner replays step for step.
 */
import { replyCommand } from '../engine/advance.js';
import type { CompiledFlow } from '../engine/compile.js';
import type { EffectMemo } from '../engine/effects.js';
import type { Value } from '../flow/model.js';
import type { CallStatus } from '../protocol/commands.js';
import { keysTaken } from '../engine/probe.js';
import type { CallState } from '../engine/types.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { EV_CALL_END, EV_ERROR } from '../flow/machine-config.js';
import { queuePart } from '../flow/machine-queue.js';
import { BranchExecutor, lookupKey, SMS_ERROR, type Branch, type BranchCache } from './branch-executor.js';
import { engineOf, requestFor, stepRequest, type CallSetup, type Input } from './drive.js';
import type { HttpAnswer } from './http-mocks.js';
import { isPossibleResult } from './results.js';
import { baseRequest, defaultResult, maxDigitsSent } from './runner.js';
import { sampleFor } from './sample.js';
import { clockOf, DEFAULT_CALL } from './scenario.js';
import type { Start } from './starts.js';

export type { Input } from './drive.js';

/** One request of a path. */
export interface Hop {
  /** The command the request reports on (absent: the call's first request). */
  command?: string;
  /** What the service reported; absent with a command: its terminal request after the flow's own hangup. */
  input?: Input;
  /** The effects run during the request, in order, with the answer each was given. */
  effects: Branch[];
  /** The command the request was answered with (absent: the call is over). */
  reply?: string;
  /** The reply was the flow's own hangup. */
  done?: boolean;
  /** A module run on its own returned this result (its reply ends the call). */
  ret?: string;
  /** The flow step whose command the request reports on. */
  from?: string;
}

export interface Found {
  start: Start;
  hops: Hop[];
}

export interface Explored {
  /** The shortest path found to each transition wanted. */
  found: Map<string, Found>;
  /** Call states walked. */
  states: number;
  /** Starts tried (the default one included). */
  starts: number;
  /**
   * Set when the search stopped at its time limit (ExploreOptions.maxMs), not at its state or request limit or for want
   * of more.
   */
  outOfTime?: number;
}

interface Node {
  state: CallState;
  params: Record<string, unknown>;
  hop: Hop;
  parent?: Node;
  /** The sms sent so far (their default hashes count on). */
  sms: number;
  /** The call's effect memory after the request. */
  memo: EffectMemo;
  /** The answer of each lookup (method and URL) along the path: a later lookup of the same gets the same. */
  http: ReadonlyMap<string, HttpAnswer>;
}

export const ERROR_CODE = SMS_ERROR;

/**
 * The values to try as results at a command state (one per way the machine goes, plus the flow's values when the step
 * saves the result).
 */
function resultsAt(flow: CompiledFlow, node: Node, values: string[]): string[] {
  const meta = flow.config.states[node.state.s]?.meta;
  const command = replyCommand(node.state.reply);
  if (!meta || meta.kind === 'say') return [defaultResult(command)];
  if (meta.kind !== 'command' || !isAction(command)) return [];
  const set = ACTION_SPECS[command].results;
  const raw: string[] = [];
  for (const k of meta.keys) {
    if (k.exact !== undefined) raw.push(k.exact);
    else if (k.regex !== undefined) {
      const s = sampleFor(k.regex);
      if (s !== undefined) raw.push(s);
    }
  }
  if (set.kind === 'enum') raw.push(...set.values);
  else if (set.kind === 'none') raw.push('');
  const md = maxDigitsSent(command, node.params);
  if (set.kind === 'digits') {
    raw.push(...set.also, ...'0123456789*'.split(''), '00', '000', '0000');
    // as many keys as the read takes (an account number, a PIN checked by the step's valid:)
    if (md !== undefined && md > 4) for (const d of '0123456789') raw.push(d.repeat(md));
  } else if (set.kind !== 'enum' && set.kind !== 'none') raw.push(defaultResult(command));
  const step = flow.model.steps[meta.step];
  const saves = step?.kind === 'command' && step.save !== undefined;
  const byWay = new Map<string, string>();
  const out: string[] = [];
  for (const v of new Set(raw)) {
    if (!isPossibleResult(command, v, md)) continue;
    const way = keysTaken(flow, node.state.s, v).join(' ');
    if (!byWay.has(way)) {
      byWay.set(way, v);
      out.push(v);
    }
  }
  if (saves) for (const v of values) if (!out.includes(v) && isPossibleResult(command, v, md)) out.push(v);
  return out;
}

/**
 * The results to try, per state and max_digits (the machine's guards on results read no vars: the same at every visit).
 */
type ResultCache = Map<string, string[]>;

function inputsAt(flow: CompiledFlow, node: Node, values: string[], cache: ResultCache): (Input | undefined)[] {
  if (node.state.done) return [undefined];
  const at = `${node.state.s}|${maxDigitsSent(replyCommand(node.state.reply), node.params) ?? ''}`;
  let results = cache.get(at);
  if (!results) cache.set(at, (results = resultsAt(flow, node, values)));
  const inputs: (Input | undefined)[] = results.map((result) => ({ result }));
  const sc = flow.config.states[node.state.s];
  if (sc?.meta.kind === 'command' && (sc.on?.[EV_ERROR]?.length ?? 0) > 0) inputs.push({ error: ERROR_CODE });
  if (queuePart(node.state.s).part !== '') {
    // a queue step's hold, announcement or ring: the call ending there leaves the line (abandoned) or ends the
    // bridged call (bridged), with or without a hangup handler
    inputs.push({ status: 'HANGUP' });
  } else if (flow.model.handlers.hangup !== undefined) {
    inputs.push({ status: 'HANGUP' });
    // a step that saves its result keeps one the caller's hangup carries (a recording's file name) for the handler
    const command = replyCommand(node.state.reply);
    if (sc?.on?.[EV_CALL_END]) inputs.push({ status: 'HANGUP', result: defaultResult(command) });
  }
  return inputs;
}

const signature = (s: CallState, http: ReadonlyMap<string, HttpAnswer>) =>
  `${s.s}|${s.done ? 1 : 0}|${JSON.stringify(s.c ?? null)}|${s.k ?? 1}|${s.res ?? ''}|${s.err ?? ''}|` +
  (s.l ? `${JSON.stringify(s.l)}|` : '') +
  JSON.stringify(s.vars) +
  (http.size > 0 ? `|${JSON.stringify([...http])}` : '');

/** Runs one request from `from` (absent: the call's first), its k-th effect given its `choices[k]`-th answer. */
function request(
  flow: CompiledFlow,
  setup: CallSetup,
  from: Node | undefined,
  input: Input | undefined,
  choices: readonly number[],
  cache: BranchCache,
) {
  const keys: string[] = [];
  const exec = new BranchExecutor(flow, choices, from?.http ?? new Map(), from?.sms ?? 0, cache);
  const memo: EffectMemo = { ...(from?.memo ?? {}) };
  const last = from ? { command: from.hop.reply!, command_id: from.state.commandId } : undefined;
  const engine = { ...engineOf(setup, setup.now, false), hooks: { took: (k: string) => void keys.push(k) } };
  // the call's first request has its start's status (a terminal one: a call never answered)
  const req = requestFor(setup.base, last, input, from ? 'UP' : (setup.base.call_status as CallStatus));
  const ran = stepRequest(flow, from?.state, req, engine, exec, memo);
  const http = new Map(from?.http ?? []);
  for (const m of exec.met)
    if (m.given.kind === 'http') http.set(lookupKey(m.given.method, m.given.url), m.given.answer);
  return { out: ran.outcome, met: exec.met, keys, memo, http };
}

function pathOf(n: Node | undefined): Hop[] {
  const hops: Hop[] = [];
  for (; n; n = n.parent) hops.unshift(n.hop);
  return hops;
}

export interface ExploreOptions {
  /** Call states to walk at most, over all starts (default 20,000). */
  maxStates?: number;
  /** Requests to run at most, over all starts (default 200,000): bounds a flow with very many keys. */
  maxRequests?: number;
  /**
   * Milliseconds the search may take (default 60,000): bounds a flow whose every request
   * spends its evaluation budget (200,000 requests of 50 ms would take hours).
   */
  maxMs?: number;
  /** The clock (tests). */
  now?: () => number;
  /** A module's params (`with:`), given to every call it starts. */
  params?: Record<string, Value>;
}

/** The default of ExploreOptions.maxMs. */
export const EXPLORE_MAX_MS = 60_000;

/**
 * Looks for the shortest way to each of `want`, from the default start then from each of `starts` while some are left.
 */
export function explore(
  flow: CompiledFlow,
  want: Iterable<string>,
  starts: Start[],
  values: string[],
  opts: ExploreOptions = {},
): Explored {
  const left = new Set(want);
  const found = new Map<string, Found>();
  const max = opts.maxStates ?? 20000;
  const maxRequests = opts.maxRequests ?? 200000;
  const maxMs = opts.maxMs ?? EXPLORE_MAX_MS;
  const now = opts.now ?? Date.now;
  const startedAt = now();
  let outOfTime = false;
  // Checked before each request: the one running when the time is up finishes (bounded by the budget).
  const more = () => requests < maxRequests && !(outOfTime ||= now() - startedAt >= maxMs);
  const cache: ResultCache = new Map();
  let states = 0;
  let requests = 0;
  let tried = 0;
  const branches: BranchCache = new Map();
  for (const start of [{ call: {}, vars: {} }, ...starts]) {
    if (left.size === 0 || states >= max || !more()) break;
    tried++;
    const call = { ...DEFAULT_CALL, variables: {}, ...start.call };
    const vars = { ...(start.vars as Record<string, Value>), ...opts.params };
    const setup: CallSetup = {
      base: baseRequest({ call }),
      now: clockOf(call),
      ...(Object.keys(vars).length > 0 ? { vars } : {}),
    };
    const seen = new Set<string>();
    const queue: Node[] = [];
    const visit = (parent: Node | undefined, input: Input | undefined) => {
      /** Each effect's answers one at a time, the others given their first: one run per branch. */
      const runs: number[][] = [[]];
      for (let r = 0; r < runs.length && more(); r++) {
        requests++;
        const choices = runs[r]!;
        // no input after the flow's own hangup: the terminal request that ends the call
        const got = request(
          flow,
          setup,
          parent,
          input ?? (parent ? { status: 'HANGUP' } : undefined),
          choices,
          branches,
        );
        if (r === 0)
          got.met.forEach((m, k) => {
            for (let j = 1; j < m.options; j++) runs.push([...new Array<number>(k).fill(0), j]);
          });
        const out = got.out;
        const ok = out.kind === 'reply' && !out.log?.some((l) => l.code === 'ENGINE_INTERNAL');
        const hop: Hop = {
          ...(parent ? { command: parent.hop.reply, from: parent.state.step } : {}),
          ...(input ? { input } : {}),
          effects: got.met.map((m) => m.given),
        };
        if (ok && out.state) {
          hop.reply = out.reply.command;
          if (out.state.done) hop.done = true;
          if (out.state.ret) hop.ret = out.state.ret.result;
        }
        for (const k of got.keys) {
          if (!left.has(k) || !ok) continue;
          left.delete(k);
          found.set(k, { start, hops: [...pathOf(parent), hop] });
        }
        if (!ok || !out.state) continue;
        const sig = signature(out.state, got.http);
        if (seen.has(sig)) continue;
        seen.add(sig);
        queue.push({
          state: out.state,
          params: { ...(out.reply.params as Record<string, unknown>) },
          hop,
          ...(parent ? { parent } : {}),
          sms: (parent?.sms ?? 0) + got.met.filter((m) => m.effect.kind === 'sms').length,
          memo: got.memo,
          http: got.http,
        });
      }
    };
    visit(undefined, undefined);
    while (queue.length > 0 && left.size > 0 && states < max && more()) {
      const node = queue.shift()!;
      states++;
      for (const input of inputsAt(flow, node, values, cache)) visit(node, input);
    }
  }
  return { found, states, starts: tried, ...(outOfTime ? { outOfTime: maxMs } : {}) };
}
