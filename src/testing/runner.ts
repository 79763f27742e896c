/**
 * Runs one scenario case against a compiled flow, in process, with `advance`: no I/O,
 * no clock (mocks.now), sms effects resumed with the mocked outcomes. Pure: the result
 * says whether the case passed and, if not, where and why.
 */
import { findMock, MockedLookup } from './http-mocks.js';
import { effectResult } from '../engine/http-wait.js';
import { advance, isSayState, type EngineOptions, type Outcome } from '../engine/advance.js';
import type { EffectResult } from '../engine/outcome.js';
import type { RunHooks } from '../engine/behaviour.js';
import type { CallState } from '../engine/types.js';
import type { CompiledFlow } from '../engine/compile.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import type { RtRequest } from '../protocol/rt.js';
import type { Loc } from '../flow/yaml.js';
import type { Value } from '../flow/model.js';
import type { CallCheck, Expectation, Plain, ScenarioCase, ScenarioStep } from './scenario.js';
import { MASK, Masker, sensitiveValues, type Sensitivity } from '../engine/mask.js';
import { resultProblem } from './results.js';
import { COMMANDS } from '../protocol/commands.js';

export interface CaseFailure {
  /** 0-based index of the step that failed (steps.length: after the last step). */
  step: number;
  /** Printed instead of `step <n>` (the case's own `expect:`). */
  label?: string;
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
  if (e.kind === 'sms' || e.kind === 'http') return `${e.kind} ${showParams(e.params)}`;
  if (e.kind === 'check') return 'a check of the call (vars, step)';
  return e.params ? `${e.command} ${showParams(e.params)}` : e.command;
}

function describeActual(a: Actual): string {
  return `${a.command} ${showParams(a.params)}`;
}

/** Scalars match by their text ("1" matches 1); lists and maps match deeply, maps as subsets. */
function matches(expected: Plain, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') {
    if (actual === null || typeof actual !== 'object')
      return expected === null
        ? actual === null || actual === undefined
        : actual !== undefined && String(expected) === String(actual);
    return false;
  }
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(e, actual[i]))
    );
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const a = actual as Record<string, unknown>;
  return Object.entries(expected).every(([k, v]) => matches(v, a[k]));
}

/** The call as a check sees it: its vars and the flow step it is at. */
interface CallView {
  vars: Record<string, Value>;
  step: string;
}

/** The view of a reply: the call's state, or, once it ended, its summary. */
function viewOf(out: Outcome): CallView | undefined {
  if (out.kind !== 'reply') return undefined;
  if (out.state) return { vars: out.state.vars, step: out.state.step };
  if (out.summary) return { vars: out.summary.vars, step: out.summary.lastStep };
  return undefined;
}

/**
 * Null when the call meets the check; else where the first difference is written, a message
 * and the diff lines (`- expected`, `+ actual`; a sensitive var's actual value shows ***).
 */
function checkCall(
  check: CallCheck,
  view: CallView,
  sensitive: Sensitivity | undefined,
): { pos?: Loc; message: string; diff: string[] } | null {
  const diff: string[] = [];
  const wrong: string[] = [];
  let pos: Loc | undefined;
  if (check.step !== undefined && check.step !== view.step) {
    diff.push(`- step: ${check.step}`, `+ step: ${view.step}`);
    wrong.push(`the call is at flow step "${view.step}", not "${check.step}"`);
    pos = check.stepPos;
  }
  const vars: string[] = [];
  for (const [k, v] of Object.entries(check.vars ?? {})) {
    const actual = view.vars[k];
    if (matches(v, actual)) continue;
    const masked = sensitive?.names.has(k) && actual !== undefined;
    diff.push(`- vars.${k}: ${show(v)}`, `+ vars.${k}: ${masked ? `${MASK} (sensitive: not shown)` : show(actual)}`);
    vars.push(k);
  }
  if (vars.length > 0) {
    wrong.push(
      `${vars.map((k) => `vars.${k}`).join(', ')} ${vars.length === 1 ? 'differs' : 'differ'} (at flow step ` +
        `"${view.step}")`,
    );
    pos ??= check.varsPos;
  }
  if (wrong.length === 0) return null;
  return { ...(pos ? { pos } : {}), message: wrong.join('; '), diff };
}

/** Null when `actual` meets `e`; else the diff lines. */
function compare(e: Expectation, a: Actual): string[] | null {
  const diff: string[] = [];
  if (e.kind === 'check') return [];
  const expCommand = e.kind === 'command' ? e.command : e.kind;
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

/** What a request of the case waits for a lookup: the default deadline less the engine's margin. */
const LOOKUP_BUDGET_MS = 3750;

function lookupResult(lookup: MockedLookup | undefined, filler: boolean): EffectResult {
  if (!lookup) return { ok: false, error: 'TIMEOUT', message: 'no lookup in progress' };
  const o = lookup.next(LOOKUP_BUDGET_MS, filler);
  return o === 'pending' ? { pending: true } : effectResult(o);
}

/** An http effect's request as a scenario sees it: method, url, headers, and the body parsed. */
function httpParams(p: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { method: p.method, url: p.url, headers: p.headers };
  if (typeof p.body === 'string') {
    try {
      out.body = JSON.parse(p.body);
    } catch {
      out.body = p.body;
    }
  }
  return out;
}

/** Runs one case. */
export function runCase(flow: CompiledFlow, c: ScenarioCase, opts: RunOptions = {}): CaseResult {
  const max = opts.maxRequests ?? 1000;
  const trace: string[] = [];
  const base = baseRequest(c);
  let engine = caseEngine(c, opts.hooks);
  let smsCount = 0;
  let lookup: MockedLookup | undefined;
  const smsOutcome = (): EffectResult => {
    const m = c.mocks.sms[smsCount];
    smsCount++;
    return m ?? { ok: true, value: `SMS${String(smsCount).padStart(5, '0')}` };
  };
  const fail = (step: number, message: string, extra: Partial<CaseFailure> = {}): CaseResult => {
    const pos = c.steps[step]?.pos ?? c.steps[c.steps.length - 1]?.pos ?? c.pos;
    return { name: c.name, ok: false, trace, failure: { step, pos, message, ...extra } };
  };
  const sensitive = flow.tables.sensitive;
  /** The last view of the call (vars and step), for checks when the case ends inside an effect. */
  let view: CallView | undefined;
  /** Sensitive values scrubbed from the output (the trace, failures): the flow's sensitive vars as last seen. */
  let masker: Masker | undefined;
  const describe = (a: Actual) => (masker ? masker.scrubText(describeActual(a)) : describeActual(a));
  const observe = (o: Outcome) => {
    view = viewOf(o) ?? view;
    if (sensitive && view) masker = new Masker(sensitiveValues(view.vars, sensitive));
  };
  /** The case has run: its own `expect:` is checked on the call as it is now. */
  const pass = (): CaseResult => {
    if (c.expect) {
      const problem = checkCall(c.expect, view ?? { vars: {}, step: '' }, sensitive);
      if (problem)
        return {
          name: c.name,
          ok: false,
          trace,
          failure: {
            step: c.steps.length,
            label: "the case's expect",
            pos: problem.pos ?? c.expectPos ?? c.pos,
            message: problem.message,
            diff: problem.diff,
          },
        };
    }
    return { name: c.name, ok: true, trace };
  };
  /** Checks the step's `vars:`/`step:` on the call as it is now; a failure, or undefined. */
  const checkStep = (index: number, step: ScenarioStep): CaseResult | undefined => {
    if (!step.check) return undefined;
    const problem = checkCall(step.check, view ?? { vars: {}, step: '' }, sensitive);
    return problem ? fail(index, problem.message, { pos: problem.pos ?? step.pos, diff: problem.diff }) : undefined;
  };

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
      const effect = out.effect;
      if (effect.kind === 'http' && effect.wait) {
        // the same lookup, waited for again after its filler: not a step of its own
        out = out.resume(lookupResult(lookup, effect.filler));
        continue;
      }
      const actual: Actual = {
        kind: 'sms',
        command: effect.kind,
        params: effect.kind === 'http' ? httpParams(effect.params) : { ...effect.params },
        from: `flow step "${effect.step}"`,
      };
      trace.push(describeActual(actual));
      if (!unchecked) {
        const step = c.steps[i];
        if (!step) return pass();
        if (step.expect.kind === 'check')
          return fail(
            i,
            `this step checks the call at its next command, but the flow performed an sms first ` +
              `(from ${actual.from}): write the sms step before it`,
            { actual: describe(actual) },
          );
        const diff = compare(step.expect, actual);
        if (diff) return mismatch(i, step, actual, diff);
        i++;
        if (i === c.steps.length) unchecked = true;
      }
      if (effect.kind === 'http') {
        lookup = new MockedLookup(
          findMock(c.mocks.http, String(effect.params.method), String(effect.params.url)),
          Number(effect.params.timeout_ms) || 5000,
        );
        out = out.resume(lookupResult(lookup, effect.filler));
      } else out = out.resume(smsOutcome());
    }
    if (out.kind !== 'reply') {
      const what =
        out.kind === 'replay'
          ? 'a replayed reply'
          : out.kind === 'stale'
            ? `stale (${out.message})`
            : `rejected (${out.code}: ${out.message})`;
      return fail(i, `the engine answered ${what}`);
    }
    const internal = out.log?.find((l) => l.code === 'ENGINE_INTERNAL');
    if (internal) return fail(i, `engine error: ${internal.msg}`);
    observe(out);
    // steps that only check the call (vars, step): checked on the call as it is now, at this command
    while (!unchecked && i < c.steps.length && c.steps[i]!.expect.kind === 'check') {
      const failed = checkStep(i, c.steps[i]!);
      if (failed) return failed;
      i++;
    }
    const ret = out.state?.ret;
    // a module run on its own ends with its return: that is what the scenario sees
    const actual: Actual = ret
      ? { kind: 'command', command: 'return', params: { result: ret.result, values: ret.values } }
      : { kind: 'command', command: out.reply.command, params: { ...(out.reply.params as Record<string, unknown>) } };
    if (out.state)
      actual.from = isSayState(out.state.s)
        ? `the say: of a branch of flow step "${out.state.step}"`
        : `flow step "${out.state.step}"`;
    if (out.state !== null) trace.push(describe(actual));
    if (unchecked || i >= c.steps.length) return pass();
    const step = c.steps[i]!;
    if (out.state === null) {
      return fail(i, `the call ended, but ${c.steps.length - i} step(s) are left`, {
        expected: describeExpectation(step.expect),
        actual: 'the end of the call',
      });
    }
    const diff = compare(step.expect, actual);
    if (diff) return mismatch(i, step, actual, diff);
    const failed = checkStep(i, step);
    if (failed) return failed;
    i++;
    // `now:` on a step: the clock moves on from the request that carries its outcome
    if (step.now !== undefined) engine = { ...engine, now: step.now };
    if (out.state.done) {
      // The flow hung up: the platform ends the call with a terminal request, which runs
      // the hangup handler (its sms effects are the steps left, if any).
      if (i === c.steps.length) unchecked = true;
      state = out.state;
      out = advance(
        flow,
        state,
        { ...base, command: out.reply.command, command_id: out.reply.command_id, call_status: 'HANGUP' },
        engine,
      );
      continue;
    }
    if (i === c.steps.length) {
      if (step.result === undefined && step.error === undefined && step.status === undefined) return pass();
      unchecked = true;
    }
    state = out.state!;
    const next: RtRequest = { ...base, command: out.reply.command, command_id: out.reply.command_id };
    if (step.result !== undefined) {
      const problem = resultProblem(
        out.reply.command,
        step.result,
        maxDigitsSent(out.reply.command, out.reply.params as Record<string, unknown>),
      );
      if (problem)
        return {
          name: c.name,
          ok: false,
          trace,
          failure: { step: i - 1, pos: step.resultPos ?? step.pos, message: `result: ${problem}`, refused: true },
        };
    }
    if (step.status) next.call_status = step.status;
    else if (step.error !== undefined) next.command_error = step.error;
    else next.command_result = step.result ?? defaultResult(out.reply.command);
    out = advance(flow, state, next, engine);
  }

  function mismatch(index: number, step: ScenarioStep, actual: Actual, diff: string[]): CaseResult {
    const exp = describeExpectation(step.expect);
    const name = step.expect.kind === 'command' ? step.expect.command : step.expect.kind;
    const from = actual.from ? ` (from ${actual.from})` : '';
    const message =
      name === actual.command ? `${name}: params differ${from}` : `expected ${name}, got ${actual.command}${from}`;
    return fail(index, message, {
      expected: exp,
      actual: describe(actual),
      diff: masker ? diff.map((d) => masker!.scrubText(d)) : diff,
    });
  }
}
