/**
 * Runs one scenario case against a compiled flow, in process: the call stepped by the
 * tools' driver (drive.ts, the engine's `advance`), no I/O, the case's clock (mocks.now,
 * steps' now:), effects answered by the case's mocks (executors.ts). Pure: the result
 * says whether the case passed and, if not, where and why.
 */
import { isSayState } from '../engine/advance.js';
import type { Effect } from '../engine/outcome.js';
import type { Settled, SyncExecutor } from '../engine/effects.js';
import type { RunHooks } from '../engine/behaviour.js';
import type { CompiledFlow } from '../engine/compile.js';
import { CallDriver, type Input, type Stepped } from './drive.js';
import { MockExecutor } from './executors.js';
import { CaseLine } from './case-line.js';
import { queueOpParams, queueReplyResult } from './queue-steps.js';
import { chooseStandIn, isMasked, replayMasker, sensitiveInput, standIns, type FirstSeen } from './masked.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import type { RtRequest } from '../protocol/rt.js';
import type { Loc } from '../flow/yaml.js';
import type { Value } from '../flow/model.js';
import type { CallCheck, Expectation, ScenarioCase, ScenarioStep } from './scenario.js';
import { MASK, Masker, sensitiveValues, type Sensitivity } from '../engine/mask.js';
import { resultProblem } from './results.js';
import { COMMANDS } from '../protocol/commands.js';
import { diffLines, full, showParams, type DiffEntry, type ShowOptions, type Scrub } from './diff.js';
import { difference, matches } from './match.js';

export { diffLines, MAX_DIFF_VALUE, type DiffEntry } from './diff.js';

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
  /**
   * Compare params in full (a recording's steps, docs/testing.md "Record and replay"): a param the step does not name
   * is a difference. Default: the step's params as a subset.
   */
  wholeParams?: boolean;
  /** Show the values of a failure whole (`--full-diff`): no cut, no window, no narrowing to the member that differs. */
  fullDiff?: boolean;
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

/** An expectation for a summary line; given the params it is compared with, those that differ are cut around it. */
export function describeExpectation(e: Expectation, opts: ShowOptions = {}, other?: Record<string, unknown>): string {
  if (e.kind === 'sms' || e.kind === 'http' || e.kind === 'queue')
    return `${e.kind} ${showParams(e.params, opts, other)}`;
  if (e.kind === 'check') return 'a check of the call (vars, step)';
  return e.params ? `${e.command} ${showParams(e.params, opts, other)}` : e.command;
}

function describeActual(a: Actual, opts: ShowOptions = {}, other?: Record<string, unknown>): string {
  return `${a.command} ${showParams(a.params, opts, other)}`;
}

/** The call as a check sees it: its vars and the flow step it is at. */
interface CallView {
  vars: Record<string, Value>;
  step: string;
}

/** The view of a reply: the call's state, or, once it ended, its summary. */
function viewOf(out: Settled): CallView | undefined {
  if (out.kind !== 'reply') return undefined;
  if (out.state) return { vars: out.state.vars, step: out.state.step };
  if (out.summary) return { vars: out.summary.vars, step: out.summary.lastStep };
  return undefined;
}

/**
 * Null when the call meets the check; else where the first difference is written, a message
 * and the differences (a sensitive var's actual value shows ***).
 */
function checkCall(
  check: CallCheck,
  view: CallView,
  sensitive: Sensitivity | undefined,
  fullDiff = false,
): { pos?: Loc; message: string; diff: DiffEntry[] } | null {
  const diff: DiffEntry[] = [];
  const wrong: string[] = [];
  let pos: Loc | undefined;
  if (check.step !== undefined && check.step !== view.step) {
    diff.push({ label: 'step', expected: check.step, actual: view.step });
    wrong.push(`the call is at flow step "${view.step}", not "${check.step}"`);
    pos = check.stepPos;
  }
  const vars: string[] = [];
  for (const [k, v] of Object.entries(check.vars ?? {})) {
    const actual = view.vars[k];
    if (matches(v, actual)) continue;
    const masked = sensitive?.names.has(k) && actual !== undefined;
    diff.push(
      masked
        ? { label: `vars.${k}`, expected: full(v), actual: `${MASK} (sensitive: not shown)`, note: true }
        : difference(`vars.${k}`, v, actual, false, fullDiff),
    );
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

/**
 * Null when `actual` meets `e`; else the differences. With `recorded`, an expected value holding `***` (a recording's
 * masked value) also matches the actual value masked by it. `whole` (recordings): the params in full, a param the
 * expectation does not name is a difference (an http lookup's headers apart: recordings leave them out).
 */
function compare(e: Expectation, a: Actual, recorded?: Masker, whole = false, fullDiff = false): DiffEntry[] | null {
  const diff: DiffEntry[] = [];
  if (e.kind === 'check') return [];
  const expCommand = e.kind === 'command' ? e.command : e.kind;
  if (expCommand !== a.command) diff.push({ label: 'command', expected: expCommand, actual: a.command });
  const params = e.params;
  if (params && expCommand === a.command) {
    for (const [k, v] of Object.entries(params)) {
      const x = a.params[k];
      if (matches(v, x, whole)) continue;
      if (recorded && JSON.stringify(v)?.includes(MASK) && matches(v, recorded.scrubValue(x), whole)) continue;
      diff.push(difference(`params.${k}`, v, x, whole, fullDiff));
    }
    if (whole)
      for (const [k, x] of Object.entries(a.params)) {
        if (x === undefined || Object.hasOwn(params, k) || (expCommand === 'http' && k === 'headers')) continue;
        diff.push({ label: `params.${k}`, expected: full(undefined), actual: full(x) });
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
    call_status: call.status,
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

/** An http effect's request as a scenario sees it: method, url, headers, and the body parsed. */
export function httpParams(p: Readonly<Record<string, unknown>>): Record<string, unknown> {
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

/** The start vars of a case: its `vars:`, then a module's `with:` params (read only when the call starts). */
export function caseVars(c: Pick<ScenarioCase, 'vars' | 'with'>): Record<string, Value> | undefined {
  const vars = c.with ? { ...c.vars, ...c.with } : c.vars;
  return Object.keys(vars).length === 0 ? undefined : (vars as Record<string, Value>);
}

/**
 * What the service reports for a step: its status (with the result or error it carries, if given), error or result
 * (default: the command's first success).
 */
function inputOf(step: ScenarioStep, command: string, result?: string): Input {
  if (step.status) {
    if (step.error !== undefined) return { status: step.status, error: step.error };
    return result !== undefined ? { status: step.status, result } : { status: step.status };
  }
  if (step.error !== undefined) return { error: step.error };
  return { result: result ?? step.result ?? defaultResult(command) };
}

/**
 * Runs one case: the call stepped by the tools' driver (drive.ts), its effects answered by
 * the case's mocks (an http step's `answer:` first), each command and effect checked
 * against the next step as it comes.
 */
export function runCase(flow: CompiledFlow, c: ScenarioCase, opts: RunOptions = {}): CaseResult {
  const max = opts.maxRequests ?? 1000;
  const whole = opts.wholeParams === true;
  const trace: string[] = [];
  const sensitive = flow.tables.sensitive;
  /** The last view of the call (vars and step), for checks when the case ends inside an effect. */
  let view: CallView | undefined;
  /**
   * Sensitive values scrubbed from the output (the trace, failures): every value of the flow's sensitive vars seen so
   * far and the inputs fed to its sensitive steps. A failure is written once the request that met it has run, so that
   * a value saved by that request (a PIN read, then sent by the lookup that failed) is known too.
   */
  const secrets = new Set<string>();
  const scrub: Scrub = (t) => (secrets.size > 0 ? new Masker(secrets).scrubText(t) : t);
  /** Stand-ins fed for masked inputs (a recording's `result: "***"`): a recorded `***` matches them. */
  const fed: string[] = [];
  const fullDiff = opts.fullDiff === true;
  const shown: ShowOptions = { scrub, whole: fullDiff };
  const describe = (a: Actual, other?: Record<string, unknown>) => describeActual(a, shown, other);
  const observe = (o: Settled) => {
    view = viewOf(o) ?? view;
    if (sensitive && view) sensitiveValues(view.vars, sensitive, secrets);
  };
  const failure = (step: number, pos: Loc, message: string, extra: Partial<CaseFailure> = {}): CaseResult => ({
    name: c.name,
    ok: false,
    trace: trace.map(scrub),
    failure: { step, pos, ...extra, message: scrub(message) },
  });
  const fail = (step: number, message: string, extra: Partial<CaseFailure> = {}): CaseResult =>
    failure(step, c.steps[step]?.pos ?? c.steps[c.steps.length - 1]?.pos ?? c.pos, message, extra);
  const lines = (diff: DiffEntry[]) => diff.flatMap((d) => diffLines(d, shown));
  /** The case has run: its own `expect:` is checked on the call as it is now. */
  const pass = (): CaseResult => {
    if (c.expect) {
      const problem = checkCall(c.expect, view ?? { vars: {}, step: '' }, sensitive, fullDiff);
      if (problem)
        return failure(c.steps.length, problem.pos ?? c.expectPos ?? c.pos, problem.message, {
          label: "the case's expect",
          diff: lines(problem.diff),
        });
    }
    return { name: c.name, ok: true, trace: trace.map(scrub) };
  };
  /** Checks the step's `vars:`/`step:` on the call as it is now; a failure, or undefined. */
  const checkStep = (index: number, step: ScenarioStep): CaseResult | undefined => {
    if (!step.check) return undefined;
    const problem = checkCall(step.check, view ?? { vars: {}, step: '' }, sensitive, fullDiff);
    return problem
      ? fail(index, problem.message, { pos: problem.pos ?? step.pos, diff: lines(problem.diff) })
      : undefined;
  };
  /** A recorded `***` matches a value masked as a recording masks it. */
  const asRecorded = (more: string[] = [], ...vars: (Record<string, unknown> | undefined)[]) =>
    fed.length > 0 || more.length > 0 || sensitive
      ? replayMasker(flow, [...fed, ...more], view?.vars, ...vars)
      : undefined;

  let i = 0; // the next scenario step
  /** After the last step: the flow goes on with mocked outcomes, unchecked, to the next command. */
  let unchecked = false;
  /**
   * The case was decided during a request's effects (a step that did not hold, or no step left): written once the
   * request has run.
   */
  let decided: (() => CaseResult) | undefined;
  // the case's queues: the memory store's lines, with the state the case gives before its call
  const line = new CaseLine();
  if (c.queues) line.apply(c.queues, c.mocks.now);
  const mocks = new MockExecutor({ sms: c.mocks.sms, http: c.mocks.http, queues: line });
  // Each effect is the next step (an sms, http or queue expectation), answered by the mocks (or the step's answer:).
  // A queue operation is a step when the next step expects one (in a recording, each one is); else the line
  // answers it, unchecked.
  const checked: SyncExecutor = {
    perform(effect, ctx) {
      // the same lookup, waited for again after its filler, is not a step of its own
      if (decided || (effect.kind === 'http' && effect.wait)) return mocks.perform(effect, ctx);
      const actual = effectActual(effect);
      trace.push(describeActual(actual));
      const quiet = effect.kind === 'queue' && !whole && c.steps[i]?.expect.kind !== 'queue';
      if (unchecked || quiet) return mocks.perform(effect, ctx);
      const step = c.steps[i];
      if (!step) {
        const passed = pass();
        decided = () => passed;
        return mocks.perform(effect, ctx);
      }
      if (step.expect.kind === 'check') {
        const at = i;
        decided = () =>
          fail(
            at,
            `this step checks the call at its next command, but the flow performed an ${effect.kind} first ` +
              `(from ${actual.from}): write the ${effect.kind} step before it`,
            { actual: describe(actual) },
          );
        return mocks.perform(effect, ctx);
      }
      const diff = compare(step.expect, actual, asRecorded(), whole, fullDiff);
      if (diff) {
        const at = i;
        decided = () => mismatch(at, step, actual, diff);
        return mocks.perform(effect, ctx);
      }
      i++;
      if (i === c.steps.length) unchecked = true;
      if (effect.kind === 'queue' && step.queueAnswer) {
        const r = queueReplyResult(step.queueAnswer, effect);
        if (!('mismatch' in r)) return r;
        const at = i - 1;
        decided = () => failure(at, step.queueAnswer!.pos, r.mismatch, { actual: describe(actual) });
        return mocks.perform(effect, ctx);
      }
      return mocks.perform(effect, ctx, step.answer);
    },
  };
  const driver = new CallDriver(flow, checked, {
    base: baseRequest(c),
    now: c.mocks.now,
    ...(caseVars(c) ? { vars: caseVars(c)! } : {}),
    ...(opts.hooks ? { hooks: opts.hooks } : {}),
  });
  if (sensitive) sensitiveValues(caseVars(c), sensitive, secrets);
  let ran = driver.start(c.call.status) as Stepped;
  for (let requests = 1; ; requests++) {
    if (requests > max) return fail(i, `more than ${max} requests: the flow does not end`);
    const settled = decided as (() => CaseResult) | undefined;
    if (settled) {
      observe(ran.outcome);
      return settled();
    }
    const out = ran.outcome;
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
    const actual = commandActual(out);
    if (out.state !== null) trace.push(describeActual(actual));
    if (unchecked || i >= c.steps.length) return pass();
    const step = c.steps[i]!;
    if (out.state === null) {
      return fail(i, `the call ended, but ${c.steps.length - i} step(s) are left`, {
        expected: describeExpectation(step.expect, shown),
        actual: 'the end of the call',
      });
    }
    const diff = compare(step.expect, actual, asRecorded([], out.state.vars), whole, fullDiff);
    if (diff) {
      // the flow hung up on an engine error (RUNTIME_MEDIA, ITERATION_LIMIT...): say which
      const error = out.state.done ? out.log?.find((l) => l.level === 'error') : undefined;
      return mismatch(i, step, actual, diff, error ? `; the flow ended on ${error.code}: ${error.msg}` : '');
    }
    const failed = checkStep(i, step);
    if (failed) return failed;
    i++;
    // `now:` on a step: the clock moves on from the request that carries its outcome; its queues change then
    if (step.now !== undefined) driver.now = step.now;
    if (step.queues) line.apply(step.queues, driver.now);
    if (out.state.done) {
      // The flow hung up: the platform ends the call with a terminal request, which runs
      // the hangup handler (its sms effects are the steps left, if any).
      if (i === c.steps.length) unchecked = true;
      ran = driver.report({ status: 'HANGUP' }) as Stepped;
      continue;
    }
    if (i === c.steps.length) {
      if (step.result === undefined && step.error === undefined && step.status === undefined) return pass();
      unchecked = true;
    }
    const command = out.reply.command;
    const md = maxDigitsSent(command, out.reply.params as Record<string, unknown>);
    // a recording's masked input (result "***" of a sensitive save:, or a sensitive value scrubbed from a result): a
    // stand-in that goes where the next step says
    const secretInput = sensitiveInput(flow, driver);
    const masked = isMasked(step.result) && !step.status && step.error === undefined;
    let result = step.result;
    if (masked) {
      const next = unchecked ? undefined : c.steps[i];
      const chosen = next
        ? chooseStandIn(
            driver,
            standIns(command, md, step.result),
            () => mocks.clone(),
            (seen, v) => compare(next.expect, seenActual(seen), asRecorded([v], seenVars(seen)), whole) === null,
          )
        : undefined;
      if (chosen !== undefined) {
        result = chosen;
        if (chosen !== step.result) fed.push(chosen);
      }
    }
    if (result !== undefined && !(masked && result !== step.result)) {
      const problem = resultProblem(command, result, md);
      if (problem) return failure(i - 1, step.resultPos ?? step.pos, `result: ${problem}`, { refused: true });
    }
    // the input a sensitive save: takes is never shown (a stand-in fed for a masked one is not secret)
    if (secretInput && result !== undefined && !masked && step.error === undefined) secrets.add(result);
    ran = driver.report(inputOf(step, command, result)) as Stepped;
  }

  function mismatch(index: number, step: ScenarioStep, actual: Actual, diff: DiffEntry[], why = ''): CaseResult {
    const exp = describeExpectation(step.expect, shown, actual.params);
    const name = step.expect.kind === 'command' ? step.expect.command : step.expect.kind;
    const from = actual.from ? ` (from ${actual.from})` : '';
    const message =
      name === actual.command
        ? `${name}: params differ${from}`
        : `expected ${name}, got ${actual.command}${from}${why}`;
    const other = step.expect.kind === 'check' ? undefined : step.expect.params;
    return fail(index, message, { expected: exp, actual: describe(actual, other), diff: lines(diff) });
  }
}

/** An effect as the runner compares it with a step (a queue operation as scenario-queues.ts names its params). */
function effectActual(effect: Effect): Actual {
  return {
    kind: 'sms',
    command: effect.kind,
    params:
      effect.kind === 'http'
        ? httpParams(effect.params)
        : effect.kind === 'queue'
          ? queueOpParams(effect)
          : { ...effect.params },
    from: `flow step "${effect.step}"`,
  };
}

/** A reply as the runner compares it with a step (a module run on its own ends with its return). */
function commandActual(out: Extract<Settled, { kind: 'reply' }>): Actual {
  const ret = out.state?.ret;
  const actual: Actual = ret
    ? { kind: 'command', command: 'return', params: { result: ret.result, values: ret.values } }
    : { kind: 'command', command: out.reply.command, params: { ...(out.reply.params as Record<string, unknown>) } };
  if (out.state)
    actual.from = isSayState(out.state.s)
      ? `the say: of a branch of flow step "${out.state.step}"`
      : `flow step "${out.state.step}"`;
  return actual;
}

/** The call's vars after a lookahead's request, when it answered. */
function seenVars(seen: FirstSeen): Record<string, unknown> | undefined {
  if ('effect' in seen || seen.outcome.kind !== 'reply') return undefined;
  return seen.outcome.state?.vars ?? seen.outcome.summary?.vars;
}

/** What a lookahead saw first, as the runner compares it. */
function seenActual(seen: FirstSeen): Actual {
  if ('effect' in seen) return effectActual(seen.effect);
  return seen.outcome.kind === 'reply'
    ? commandActual(seen.outcome)
    : { kind: 'command', command: `(${seen.outcome.kind})`, params: {} };
}
