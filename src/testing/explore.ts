/**
 * The search behind `callscript paths`: a breadth-first walk over real calls of the flow,
 * stepped by the engine's own `advance` on the compiled xstate machine (the one runtime:
 * nothing here decides where a call goes). From each call state it feeds every result
 * that leads somewhere different (one per branch key the machine takes, plus the values
 * the flow's text suggests), an error where the step has an error branch, and the
 * caller hanging up where the flow has a hangup handler; sms effects succeed, or fail one
 * at a time. The engine's run hooks report each transition taken: the first (so
 * shortest) way to each is kept, as the requests that lead there.
 *
 * Requests are built exactly as the scenario runner builds them (`baseRequest`,
 * `caseEngine`), so a path found here is a case the runner replays step for step.
 */
import { advance, replyCommand, type Outcome } from '../engine/advance.js';
import type { CompiledFlow } from '../engine/compile.js';
import { keysTaken } from '../engine/probe.js';
import type { CallState } from '../engine/types.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { EV_ERROR } from '../flow/machine-config.js';
import type { RtRequest } from '../protocol/rt.js';
import { isPossibleResult } from './results.js';
import { baseRequest, caseEngine, defaultResult, maxDigitsSent, startEngine } from './runner.js';
import { sampleFor } from './sample.js';
import { clockOf, DEFAULT_CALL, type ScenarioCase } from './scenario.js';
import type { Start } from './starts.js';

export type Input = { result: string } | { error: string } | { status: 'HANGUP' };

/** One request of a path. */
export interface Hop {
  /** The command the request reports on (absent: the call's first request). */
  command?: string;
  /** What the service reported; absent with a command: its terminal request after the flow's own hangup. */
  input?: Input;
  /** The sms effects run during the request, in order: true when it succeeded. */
  sms: boolean[];
  /** The command the request was answered with (absent: the call is over). */
  reply?: string;
  /** The reply was the flow's own hangup. */
  done?: boolean;
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
  sms: number;
}

export const ERROR_CODE = 'FAILED';

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
  else if (set.kind === 'digits') raw.push(...set.also, ...'0123456789*'.split(''), '00', '000', '0000');
  else raw.push(defaultResult(command));
  const md = maxDigitsSent(command, node.params);
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
  if (flow.model.handlers.hangup !== undefined) inputs.push({ status: 'HANGUP' });
  return inputs;
}

const signature = (s: CallState) =>
  `${s.s}|${s.done ? 1 : 0}|${JSON.stringify(s.c ?? null)}|${s.k ?? 1}|${s.res ?? ''}|${s.err ?? ''}|` +
  JSON.stringify(s.vars);

/** Runs one request; sms effects succeed but the `failAt`-th (0-based) of this request. */
function request(
  flow: CompiledFlow,
  prior: CallState | undefined,
  req: RtRequest,
  c: Pick<ScenarioCase, 'mocks' | 'vars'>,
  smsBefore: number,
  failAt: number,
) {
  const keys: string[] = [];
  const engine = caseEngine(c, { took: (k) => keys.push(k) });
  let out: Outcome = advance(flow, prior, req, prior ? engine : startEngine(c, engine));
  const sms: boolean[] = [];
  while (out.kind === 'effect') {
    const ok = sms.length !== failAt;
    sms.push(ok);
    out = out.resume(
      ok
        ? { ok: true, value: `SMS${String(smsBefore + sms.length).padStart(5, '0')}` }
        : { ok: false, error: ERROR_CODE },
    );
  }
  return { out, sms, keys };
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
  for (const start of [{ call: {}, vars: {} }, ...starts]) {
    if (left.size === 0 || states >= max || !more()) break;
    tried++;
    const call = { ...DEFAULT_CALL, variables: {}, ...start.call };
    const c = { call, vars: start.vars, mocks: { sms: [], now: clockOf(call), http: [] } };
    const base = baseRequest(c);
    const seen = new Set<string>();
    const queue: Node[] = [];
    const visit = (
      parent: Node | undefined,
      input: Input | undefined,
      prior: CallState | undefined,
      req: RtRequest,
      smsBefore: number,
    ) => {
      for (let failAt = -1, n = 0; failAt < n && more(); failAt++) {
        requests++;
        const r = request(flow, prior, req, c, smsBefore, failAt);
        n = r.sms.length;
        const out = r.out;
        const ok = out.kind === 'reply' && !out.log?.some((l) => l.code === 'ENGINE_INTERNAL');
        const hop: Hop = { ...(parent ? { command: parent.hop.reply } : {}), ...(input ? { input } : {}), sms: r.sms };
        if (ok && out.state) {
          hop.reply = out.reply.command;
          if (out.state.done) hop.done = true;
        }
        for (const k of r.keys) {
          if (!left.has(k) || !ok) continue;
          left.delete(k);
          found.set(k, { start, hops: [...pathOf(parent), hop] });
        }
        if (!ok || !out.state) continue;
        const sig = signature(out.state);
        if (seen.has(sig)) continue;
        seen.add(sig);
        queue.push({
          state: out.state,
          params: { ...(out.reply.params as Record<string, unknown>) },
          hop,
          parent,
          sms: smsBefore + r.sms.length,
        });
      }
    };
    visit(undefined, undefined, undefined, base, 0);
    while (queue.length > 0 && left.size > 0 && states < max && more()) {
      const node = queue.shift()!;
      states++;
      const next = (extra: Partial<RtRequest>): RtRequest => ({
        ...base,
        command: node.hop.reply!,
        command_id: node.state.commandId,
        ...extra,
      });
      for (const input of inputsAt(flow, node, values, cache)) {
        if (input === undefined) visit(node, undefined, node.state, next({ call_status: 'HANGUP' }), node.sms);
        else if ('status' in input) visit(node, input, node.state, next({ call_status: input.status }), node.sms);
        else if ('error' in input) visit(node, input, node.state, next({ command_error: input.error }), node.sms);
        else visit(node, input, node.state, next({ command_result: input.result }), node.sms);
      }
    }
  }
  return { found, states, starts: tried, ...(outOfTime ? { outOfTime: maxMs } : {}) };
}
