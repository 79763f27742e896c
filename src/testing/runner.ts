/**
 * Runs one scenario case against a compiled flow, in process, with `advance`: no I/O,
 * no clock (mocks.now), sms effects resumed with the mocked outcomes. Pure: the result
 * says whether the case passed and, if not, where and why.
 */
import { advance, isSayState, type EngineOptions, type Outcome } from '../engine/advance.js';
import type { EffectResult } from '../engine/outcome.js';
import type { RunHooks } from '../engine/behaviour.js';
import type { CallState } from '../engine/types.js';
import type { CompiledFlow } from '../engine/compile.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import type { RtRequest } from '../protocol/rt.js';
import type { Loc } from '../flow/yaml.js';
import type { Value } from '../flow/model.js';
import type { Expectation, Plain, ScenarioCase, ScenarioStep } from './scenario.js';
import { resultProblem } from './results.js';
import { COMMANDS } from '../protocol/commands.js';

export interface CaseFailure {
  /** 0-based index of the step that failed (steps.length: after the last step). */
  step: number;
  pos: Loc;
  message: string;
  /** The expected and actual command, one line each, and the lines of their difference. */
  expected?: string;
  actual?: string;
  diff?: string[];
  /**
   * The step's result can never come from the command the flow sent (a read's actual
   * max_digits): not a failure of the flow but of the scenario file, reported at `pos`
   * (the result) as a file error.
   */
  refused?: boolean;
}

export interface CaseResult {
  name: string;
  ok: boolean;
  failure?: CaseFailure;
  /** The commands and effects the flow issued, in order (for --verbose and debugging). */
  trace: string[];
}

export interface RunOptions {
  /** The most requests in one case before giving up (a flow looping on default results). */
  maxRequests?: number;
  /** Observers of the engine's runs (coverage). */
  hooks?: RunHooks;
}

/** The result sent for a step that gives none: the command's first success result. */
export function defaultResult(command: string): string {
  if (!isAction(command)) return '';
  const r = ACTION_SPECS[command].results;
  switch (r.kind) {
    case 'enum':
      return r.values[0] ?? '';
    case 'digits':
      return '1';
    case 'any':
      return `${command}-result`;
    case 'none':
      return '';
  }
}

interface Actual {
  kind: 'command' | 'sms';
  command: string;
  params: Record<string, unknown>;
  /** Which flow step sent it, for the failure message. */
  from?: string;
}

const MAX_VALUE = 60;

function show(v: unknown): string {
  if (v === undefined) return '(absent)';
  // A bigint (hangup_callid's callid) goes out as a bare integer: shown digit for digit.
  if (typeof v === 'bigint') return v.toString();
  let s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
  if (s.length > MAX_VALUE) s = s.slice(0, MAX_VALUE - 4) + '...' + s.slice(-1);
  return s;
}

function showParams(p: Record<string, unknown>): string {
  const parts = Object.entries(p).map(([k, v]) => `${k}: ${show(v)}`);
  return parts.length === 0 ? '{}' : `{ ${parts.join(', ')} }`;
}

export function describeExpectation(e: Expectation): string {
  if (e.kind === 'sms') return `sms ${showParams(e.params)}`;
  return e.params ? `${e.command} ${showParams(e.params)}` : e.command;
}

function describeActual(a: Actual): string {
  return `${a.command} ${showParams(a.params)}`;
}

/** Scalars match by their text ("1" matches 1); lists and maps match deeply, maps as subsets. */
function matches(expected: Plain, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') {
    if (actual === null || typeof actual !== 'object') return expected === null ? actual === null || actual === undefined : actual !== undefined && String(expected) === String(actual);
    return false;
  }
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(e, actual[i]));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const a = actual as Record<string, unknown>;
  return Object.entries(expected).every(([k, v]) => matches(v, a[k]));
}

/** Null when `actual` meets `e`; else the diff lines. */
function compare(e: Expectation, a: Actual): string[] | null {
  const diff: string[] = [];
  const expCommand = e.kind === 'sms' ? 'sms' : e.command;
  if (expCommand !== a.command) diff.push(`- command: ${expCommand}`, `+ command: ${a.command}`);
  const params = e.kind === 'sms' ? e.params : e.params;
  if (params && expCommand === a.command) {
    for (const [k, v] of Object.entries(params)) {
      if (!matches(v, a.params[k])) diff.push(`- params.${k}: ${show(v)}`, `+ params.${k}: ${show(a.params[k])}`);
    }
  }
  return diff.length === 0 ? null : diff;
}

/** The request fields of a case's call (every request of the case starts from them). */
export function baseRequest(c: Pick<ScenarioCase, 'call'>): RtRequest {
  const call = c.call;
  return {
    app: call.app,
    callid: call.callid,
    request_hash: call.request_hash,
    cli_name: call.caller_name,
    cli_number: call.caller,
    date_started: call.date_started,
    number: call.called,
    command: '',
    command_id: 0,
    command_result: '',
    command_error: '',
    call_status: 'UP',
    cdr_field: call.cdr_field,
    variables: call.variables as RtRequest['variables'],
    variablesRaw: JSON.stringify(call.variables),
  };
}

/** The max_digits of a read as sent (the service's default when absent); undefined for other commands. */
export function maxDigitsSent(command: string, params: Record<string, unknown>): number | undefined {
  if (command !== 'read') return undefined;
  const spec = COMMANDS.read.params.max_digits;
  const v = Number(params.max_digits ?? (spec?.type === 'int' ? spec.default : 1));
  return Number.isInteger(v) && v >= 1 ? v : undefined;
}

/** The engine options of a case's requests. */
export function caseEngine(c: Pick<ScenarioCase, 'mocks'>, hooks?: RunHooks): EngineOptions {
  return { now: c.mocks.now, unknownCall: 'reject', ...(hooks ? { hooks } : {}) };
}

/** The engine options of a case's first request: its `vars:` override the flow's (read only when the call starts). */
export function startEngine(c: Pick<ScenarioCase, 'vars' | 'with'>, engine: EngineOptions): EngineOptions {
  // a module's params are its variables once entered: `with:` gives them (after the case's vars:)
  const vars = c.with ? { ...c.vars, ...c.with } : c.vars;
  return Object.keys(vars).length === 0 ? engine : { ...engine, vars: vars as Record<string, Value> };
}

/** Runs one case. */
export function runCase(flow: CompiledFlow, c: ScenarioCase, opts: RunOptions = {}): CaseResult {
  const max = opts.maxRequests ?? 1000;
  const trace: string[] = [];
  const base = baseRequest(c);
  const engine = caseEngine(c, opts.hooks);
  let smsCount = 0;
  const smsOutcome = (): EffectResult => {
    const m = c.mocks.sms[smsCount];
    smsCount++;
    return m ?? { ok: true, value: `SMS${String(smsCount).padStart(5, '0')}` };
  };
  const fail = (step: number, message: string, extra: Partial<CaseFailure> = {}): CaseResult => {
    const pos = c.steps[step]?.pos ?? c.steps[c.steps.length - 1]?.pos ?? c.pos;
    return { name: c.name, ok: false, trace, failure: { step, pos, message, ...extra } };
  };
  const pass = (): CaseResult => ({ name: c.name, ok: true, trace });

  let i = 0; // the next scenario step
  /** After the last step: the flow goes on with mocked outcomes, unchecked, to the next command. */
  let unchecked = false;
  let state: CallState | undefined;
  // The case's `vars:` override the flow's initial vars (read only when the call starts).
  let out: Outcome = advance(flow, undefined, base, startEngine(c, engine));
  for (let requests = 1; ; requests++) {
    if (requests > max) return fail(i, `more than ${max} requests: the flow does not end`);
    // Effects first: each is the next step (an sms expectation), resumed with its mock.
    while (out.kind === 'effect') {
      const actual: Actual = { kind: 'sms', command: out.effect.kind, params: { ...out.effect.params }, from: `flow step "${out.effect.step}"` };
      trace.push(describeActual(actual));
      if (!unchecked) {
        const step = c.steps[i];
        if (!step) return pass();
        const diff = compare(step.expect, actual);
        if (diff) return mismatch(i, step, actual, diff);
        i++;
        if (i === c.steps.length) unchecked = true;
      }
      out = out.resume(smsOutcome());
    }
    if (out.kind !== 'reply') {
      const what = out.kind === 'replay' ? 'a replayed reply' : out.kind === 'stale' ? `stale (${out.message})` : `rejected (${out.code}: ${out.message})`;
      return fail(i, `the engine answered ${what}`);
    }
    const internal = out.log?.find((l) => l.code === 'ENGINE_INTERNAL');
    if (internal) return fail(i, `engine error: ${internal.msg}`);
    const ret = out.state?.ret;
    // a module run on its own ends with its return: that is what the scenario sees
    const actual: Actual = ret ? { kind: 'command', command: 'return', params: { result: ret.result, values: ret.values } } : { kind: 'command', command: out.reply.command, params: { ...(out.reply.params as Record<string, unknown>) } };
    if (out.state) actual.from = isSayState(out.state.s) ? `the say: of a branch of flow step "${out.state.step}"` : `flow step "${out.state.step}"`;
    if (out.state !== null) trace.push(describeActual(actual));
    if (unchecked || i >= c.steps.length) return pass();
    const step = c.steps[i]!;
    if (out.state === null) {
      return fail(i, `the call ended, but ${c.steps.length - i} step(s) are left`, { expected: describeExpectation(step.expect), actual: 'the end of the call' });
    }
    const diff = compare(step.expect, actual);
    if (diff) return mismatch(i, step, actual, diff);
    i++;
    if (out.state.done) {
      // The flow hung up: the platform ends the call with a terminal request, which runs
      // the hangup handler (its sms effects are the steps left, if any).
      if (i === c.steps.length) unchecked = true;
      state = out.state;
      out = advance(flow, state, { ...base, command: out.reply.command, command_id: out.reply.command_id, call_status: 'HANGUP' }, engine);
      continue;
    }
    if (i === c.steps.length) {
      if (step.result === undefined && step.error === undefined && step.status === undefined) return pass();
      unchecked = true;
    }
    state = out.state!;
    const next: RtRequest = { ...base, command: out.reply.command, command_id: out.reply.command_id };
    if (step.result !== undefined) {
      const problem = resultProblem(out.reply.command, step.result, maxDigitsSent(out.reply.command, out.reply.params as Record<string, unknown>));
      if (problem) return { name: c.name, ok: false, trace, failure: { step: i - 1, pos: step.resultPos ?? step.pos, message: `result: ${problem}`, refused: true } };
    }
    if (step.status) next.call_status = step.status;
    else if (step.error !== undefined) next.command_error = step.error;
    else next.command_result = step.result ?? defaultResult(out.reply.command);
    out = advance(flow, state, next, engine);
  }

  function mismatch(index: number, step: ScenarioStep, actual: Actual, diff: string[]): CaseResult {
    const exp = describeExpectation(step.expect);
    const name = step.expect.kind === 'sms' ? 'sms' : step.expect.command;
    const from = actual.from ? ` (from ${actual.from})` : '';
    const message = name === actual.command ? `${name}: params differ${from}` : `expected ${name}, got ${actual.command}${from}`;
    return fail(index, message, { expected: exp, actual: describeActual(actual), diff });
  }
}
