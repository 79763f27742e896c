/**
 * Replays a recording (src/testing/record.ts) against a compiled flow, in process: the call
 * is stepped by the tools' driver (drive.ts) with the recording's clock (mocks.now, then
 * each step's now:), its start vars and its first status; its requests are rebuilt from
 * the recorded results, and its effects answered from the recording (replay's executor: a
 * MockExecutor fed each lookup step's recorded answer, in order, and mocks.sms). Each
 * command, sms and lookup the flow makes now is compared with the recorded one: a
 * command's and an sms's params in full, a lookup's method and URL, and its body when
 * recorded. Pure: no I/O, no wall clock.
 *
 * The answer is the first divergence of each case: which request of the call (1 = the
 * first request), which recorded step, what was expected and what the flow did, and the
 * flow step that did it.
 */
import type { CompiledFlow } from '../engine/compile.js';
import type { Settled, SyncExecutor } from '../engine/effects.js';
import { MASK, Masker, sensitiveValues } from '../engine/mask.js';
import type { Effect } from '../engine/outcome.js';
import type { WireValue } from '../protocol/rt.js';
import { CallDriver, type Input, type Stepped } from './drive.js';
import { MockExecutor } from './executors.js';
import { CaseLine } from './case-line.js';
import { queueOpParams, queueReplyResult } from './queue-steps.js';
import { chooseStandIn, isMasked, replayMasker, standIns, type FirstSeen } from './masked.js';
import {
  parseRecording,
  plain,
  recordedLookup,
  recordingYaml,
  type JsonValue,
  type RecordedExpect,
  type Recording,
} from './record.js';
import { baseRequest, caseVars, defaultResult, maxDigitsSent } from './runner.js';
import { parseScenario, type Expectation, type ScenarioCase, type ScenarioStep } from './scenario.js';

export type ReplayActual =
  | { command: string; params: Record<string, JsonValue> }
  | { sms: Record<string, JsonValue> }
  | { http: Record<string, JsonValue> }
  | { queue: Record<string, JsonValue> }
  /** The call ended (hangup answered and nothing more), or the engine refused the request. */
  | { end: string };

export interface Divergence {
  case: string;
  /** The request of the call whose answer differs: 1 is the first request. */
  request: number;
  /** The recorded step (0-based index in `steps`) that did not hold. */
  stepIndex: number;
  /** Its line in the recording, when replayed from text. */
  line?: number;
  /** The recorded expectation, or the end of the call when the recording has no more steps. */
  expected: RecordedExpect | { end: true };
  actual: ReplayActual;
  /** The flow step that answered (the current version's). */
  flowStep?: string;
  message: string;
}

export interface ReplayReport {
  ok: boolean;
  flow: string;
  /** The version recorded (header comment) and the one replayed. */
  recordedVersion?: string;
  version: string;
  /** One per case that diverged: its first divergence. */
  divergences: Divergence[];
}

export interface ReplayOptions {
  /** Engine logic-step limit per request. */
  maxLogicSteps?: number;
  /** The most requests one case may take (default 1000): a recording that loops the flow for ever stops there. */
  maxRequests?: number;
}

/**
 * Replays every case of a recording (its YAML text or its parsed form) against `flow`. A text that is no valid
 * scenario file throws (ScenarioFileError, with every problem at its line).
 */
export function replayRecording(
  flow: CompiledFlow,
  recording: Recording | string,
  opts: ReplayOptions = {},
): ReplayReport {
  const text = typeof recording === 'string' ? recording : recordingYaml(recording);
  const rec = typeof recording === 'string' ? parseRecording(recording) : recording;
  const scenario = parseScenario(text, 'recording');
  const divergences: Divergence[] = [];
  const env = scenario.environment;
  scenario.cases.forEach((c) => {
    if (env !== undefined && flow.model.environment !== env) {
      divergences.push({
        case: c.name,
        request: 1,
        stepIndex: 0,
        expected: { end: true },
        actual: { end: `the flow runs in environment ${flow.model.environment ?? '(none)'}` },
        message: `recorded in environment ${env}: replay it on the flow compiled in that environment`,
      });
      return;
    }
    const d = replayCase(flow, c, opts);
    if (d) {
      const line = c.steps[d.stepIndex]?.pos.line;
      divergences.push(typeof recording === 'string' && line !== undefined ? { ...d, line } : d);
    }
  });
  return {
    ok: divergences.length === 0,
    flow: flow.name,
    ...(rec.version !== undefined ? { recordedVersion: rec.version } : {}),
    version: flow.version,
    divergences,
  };
}

/** A recorded step's expectation, as a divergence shows it. */
function expectedOf(s: ScenarioStep | undefined): RecordedExpect | { end: true } {
  const e = s?.expect;
  if (!e || e.kind === 'check') return { end: true };
  if (e.kind === 'sms') return { sms: e.params as Record<string, JsonValue> };
  if (e.kind === 'http') return { http: e.params as Record<string, JsonValue> };
  if (e.kind === 'queue') return { queue: e.params as Record<string, JsonValue> };
  return { command: e.command, params: (e.params ?? {}) as Record<string, JsonValue> };
}

function effectActual(e: Effect): ReplayActual {
  if (e.kind === 'queue') return { queue: queueOpParams(e) as Record<string, JsonValue> };
  return e.kind === 'sms'
    ? { sms: plain(e.params as Record<string, WireValue>) as Record<string, JsonValue> }
    : { http: recordedLookup(e.params) };
}

function replyActual(out: Settled): ReplayActual {
  if (out.kind !== 'reply') return { end: `${out.kind}${'message' in out ? `: ${out.message}` : ''}` };
  return { command: out.reply.command, params: plain(out.reply.params) as Record<string, JsonValue> };
}

/** Whether the flow's `actual` is the recorded `e` (a recorded `***` matches a value that `masked` masks). */
function holds(e: Expectation, actual: ReplayActual, masked: Masker | undefined): boolean {
  const eq = (a: unknown, b: unknown) =>
    same(a, b) || (masked !== undefined && canonical(a).includes(MASK) && same(a, masked.scrubValue(b)));
  if (e.kind === 'sms') return 'sms' in actual && eq(e.params, actual.sms);
  if (e.kind === 'queue') return 'queue' in actual && eq(e.params, actual.queue);
  if (e.kind === 'http') {
    if (!('http' in actual)) return false;
    const p = e.params;
    return (
      eq(p.method, actual.http.method) &&
      eq(p.url, actual.http.url) &&
      (!('body' in p) || eq(p.body, actual.http.body ?? null))
    );
  }
  if (e.kind !== 'command' || !('command' in actual)) return false;
  return e.command === actual.command && eq(e.params ?? {}, actual.params);
}

/** The first divergence of one case, or undefined when the flow does as recorded. */
export function replayCase(flow: CompiledFlow, c: ScenarioCase, opts: ReplayOptions = {}): Divergence | undefined {
  const steps = c.steps.filter((s) => s.expect.kind !== 'check');
  const max = opts.maxRequests ?? 1000;
  let idx = 0;
  let n = 1;
  /** The effects of a terminal request after a step's status are not steps (the recording mocks them). */
  let quiet = false;
  let diverged: Divergence | undefined;
  /** The flow's sensitive vars as last seen: scrubbed from what a divergence shows of the flow's answer. */
  let latest: Record<string, unknown> | undefined;
  /** Stand-ins fed for masked inputs. */
  const fed: string[] = [];
  const masked = (more: string[] = [], ...vars: (Record<string, unknown> | undefined)[]) =>
    replayMasker(flow, [...fed, ...more], latest, ...vars);
  const diverge = (request: number, answered: ReplayActual, flowStep: string | undefined): Divergence => {
    const expected = expectedOf(steps[idx]);
    const sens = flow.tables.sensitive;
    const actual = sens ? new Masker([...fed, ...sensitiveValues(latest, sens)]).scrubValue(answered) : answered;
    const d: Divergence = {
      case: c.name,
      request,
      stepIndex: c.steps.indexOf(steps[idx]!) >= 0 ? c.steps.indexOf(steps[idx]!) : c.steps.length,
      expected,
      actual,
      message:
        `request ${request} (step ${idx + 1} of the recording): expected ${show(expected)}, the flow ` +
        `answered ${show(actual)}${flowStep !== undefined ? ` at step "${flowStep}"` : ''}`,
    };
    if (flowStep !== undefined) d.flowStep = flowStep;
    return d;
  };
  // the case's queues (a recording has none of its own: its queue operations are steps, answered as recorded)
  const line = new CaseLine();
  if (c.queues) line.apply(c.queues, c.mocks.now);
  const mocks = new MockExecutor({ sms: c.mocks.sms, http: c.mocks.http, queues: line });
  // replay's executor: each effect is the next recorded step, answered as recorded
  const recorded: SyncExecutor = {
    perform(effect, ctx) {
      if (diverged || quiet || (effect.kind === 'http' && effect.wait)) return mocks.perform(effect, ctx);
      const s = steps[idx];
      const actual = effectActual(effect);
      if (!s || !holds(s.expect, actual, masked())) {
        diverged = diverge(n, actual, effect.step);
        return mocks.perform(effect, ctx);
      }
      if (effect.kind === 'queue' && s.queueAnswer) {
        // a recorded answer that cannot answer this operation (a poll's to a leave) is a divergence
        const r = queueReplyResult(s.queueAnswer, effect);
        if ('mismatch' in r) {
          diverged = diverge(n, actual, effect.step);
          return mocks.perform(effect, ctx);
        }
        idx++;
        return r;
      }
      idx++;
      return mocks.perform(effect, ctx, s.answer);
    },
  };
  const driver = new CallDriver(flow, recorded, {
    base: baseRequest(c),
    now: c.mocks.now,
    unknownCall: 'restart',
    ...(caseVars(c) ? { vars: caseVars(c)! } : {}),
    ...(opts.maxLogicSteps !== undefined ? { maxLogicSteps: opts.maxLogicSteps } : {}),
  });
  quiet = c.call.status !== 'UP' && c.call.status !== 'INCOMING_CALL';
  let ran = driver.start(c.call.status) as Stepped;
  for (;;) {
    if (diverged) return diverged;
    if (quiet)
      return idx < steps.length ? diverge(n, { end: `call ended (${ran.request.call_status})` }, undefined) : undefined;
    const out = ran.outcome;
    if (out.kind !== 'reply') return diverge(n, replyActual(out), driver.state?.step);
    latest = out.state?.vars ?? out.summary?.vars ?? latest;
    const actual = replyActual(out);
    const flowStep = out.state?.step;
    const s = steps[idx];
    if (!s || !holds(s.expect, actual, masked([], out.state?.vars))) return diverge(n, actual, flowStep);
    idx++;
    if (s.now !== undefined) driver.now = s.now;
    if (s.queues) line.apply(s.queues, driver.now);
    if (!out.state) return idx < steps.length ? diverge(n + 1, { end: 'the call ended' }, flowStep) : undefined;
    if (++n > max) return diverge(n, { end: `more than ${max} requests` }, flowStep);
    if (out.reply.command === 'hangup' && s.result === undefined && s.error === undefined && s.status === undefined) {
      // The flow hung up: the service ends the call with a terminal request, which runs the
      // hangup handler; its effects are the steps left, if any.
      driver.report({ status: 'HANGUP' });
      if (diverged) return diverged;
      return idx < steps.length ? diverge(n, { end: 'the flow hung up' }, flowStep) : undefined;
    }
    const input = inputFor(flow, driver, s, () => mocks.clone(), steps[idx], masked, fed);
    // after a status the call ends: the hangup handler's effects are not steps (the recording mocks them)
    if ('status' in input) quiet = true;
    ran = driver.report(input) as Stepped;
  }
}

/**
 * What the service reported for a recorded step; a masked input is given a stand-in that goes where the next step
 * says.
 */
function inputFor(
  flow: CompiledFlow,
  driver: CallDriver,
  s: ScenarioStep,
  copy: () => SyncExecutor,
  next: ScenarioStep | undefined,
  masked: (more: string[], ...vars: (Record<string, unknown> | undefined)[]) => Masker | undefined,
  fed: string[],
): Input {
  if (s.status !== undefined) {
    // what the recorded terminal request carried (a recording's file name), as it came
    if (s.error !== undefined) return { status: s.status, error: s.error };
    return s.result !== undefined ? { status: s.status, result: s.result } : { status: s.status };
  }
  if (s.error !== undefined) return { error: s.error };
  const reply = driver.reply!;
  if (isMasked(s.result) && next) {
    const md = maxDigitsSent(reply.command, reply.params as Record<string, unknown>);
    const v = chooseStandIn(driver, standIns(reply.command, md, s.result), copy, (seen, v) =>
      holds(next.expect, seenActual(seen), masked([v], seenVars(seen))),
    );
    if (v !== undefined) {
      if (v !== s.result) fed.push(v);
      return { result: v };
    }
  }
  return { result: s.result ?? defaultResult(reply.command) };
}

function seenVars(seen: FirstSeen): Record<string, unknown> | undefined {
  if ('effect' in seen || seen.outcome.kind !== 'reply') return undefined;
  return seen.outcome.state?.vars ?? seen.outcome.summary?.vars;
}

function seenActual(seen: FirstSeen): ReplayActual {
  return 'effect' in seen ? effectActual(seen.effect) : replyActual(seen.outcome);
}

function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

function show(x: RecordedExpect | ReplayActual | { end: true }): string {
  if ('end' in x) return x.end === true ? 'the end of the call' : x.end;
  if ('sms' in x) return `sms ${JSON.stringify(x.sms)}`;
  if ('http' in x) return `http ${JSON.stringify(x.http)}`;
  if ('queue' in x) return `queue ${JSON.stringify(x.queue)}`;
  return `${x.command} ${JSON.stringify(x.params ?? {})}`;
}
