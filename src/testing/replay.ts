/**
 * Replays a recording (src/testing/record.ts) against a compiled flow, in process, with
 * `advance`: the call's requests are rebuilt from the recorded results, and each command
 * (and sms effect) the flow answers now is compared with the recorded one, params in
 * full. Pure: no I/O, no clock (the case's mocks.now).
 *
 * The answer is the first divergence of each case: which request of the call (1 = the
 * first request), which recorded step, what was expected and what the flow answered, and
 * the flow step that answered it.
 */
import { Masker, sensitiveValues } from '../engine/mask.js';
import { LineCounter, parseDocument, isMap, isSeq } from 'yaml';
import { advance } from '../engine/advance.js';
import type { EffectResult } from '../engine/outcome.js';
import type { CallState } from '../engine/types.js';
import type { CompiledFlow } from '../engine/compile.js';
import { TERMINAL_STATUSES, type CallStatus } from '../protocol/commands.js';
import type { RtRequest, WireValue } from '../protocol/rt.js';
import {
  parseRecording,
  plain,
  type JsonValue,
  type RecordedCase,
  type RecordedExpect,
  type Recording,
} from './record.js';

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

export type ReplayActual =
  | { command: string; params: Record<string, JsonValue> }
  | { sms: Record<string, JsonValue> }
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
}

/** Replays every case of a recording (its YAML text or its parsed form) against `flow`. */
export function replayRecording(
  flow: CompiledFlow,
  recording: Recording | string,
  opts: ReplayOptions = {},
): ReplayReport {
  const text = typeof recording === 'string' ? recording : undefined;
  const rec = typeof recording === 'string' ? parseRecording(recording) : recording;
  const lines = text !== undefined ? stepLines(text) : undefined;
  const divergences: Divergence[] = [];
  rec.cases.forEach((c, i) => {
    const d = replayCase(flow, c, opts);
    if (d) {
      const line = lines?.[i]?.[d.stepIndex];
      divergences.push(line !== undefined ? { ...d, line } : d);
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

/** The first divergence of one case, or undefined when the flow answers as recorded. */
export function replayCase(flow: CompiledFlow, c: RecordedCase, opts: ReplayOptions = {}): Divergence | undefined {
  const steps = c.steps ?? [];
  const call = c.call;
  const variables = call.variables ?? {};
  const base: RtRequest = {
    app: call.app ?? 'APP00001',
    callid: String(call.callid ?? '1000'),
    request_hash: call.request_hash ?? null,
    cli_name: call.caller_name ?? '',
    cli_number: call.caller ?? '+33612345678',
    date_started: call.date_started ?? '2026-11-22 10:00:00',
    number: call.called ?? '+33123456789',
    command: '',
    command_id: 0,
    command_result: '',
    command_error: '',
    call_status: 'UP' as CallStatus,
    cdr_field: call.cdr_field ?? '',
    variables,
    variablesRaw: JSON.stringify(variables),
  };
  const now = c.mocks?.now !== undefined ? Date.parse(c.mocks.now) : Date.parse('2026-11-22T10:00:00Z');
  const mocks = c.mocks?.sms ?? [];
  let smsUsed = 0;
  const mockSms = (): EffectResult => {
    const m = mocks[smsUsed++];
    return m === undefined
      ? { ok: true, value: `SMS${String(smsUsed).padStart(5, '0')}` }
      : 'hash' in m
        ? { ok: true, value: m.hash }
        : { ok: false, error: m.error };
  };
  let state: CallState | undefined;
  let req = base;
  let idx = 0;
  /** The flow's sensitive vars as last seen: scrubbed from what a divergence shows of the flow's answer. */
  let latest: Record<string, unknown> | undefined;
  const diverge = (request: number, answered: ReplayActual, flowStep: string | undefined): Divergence => {
    const expected = steps[idx]?.expect ?? { end: true as const };
    const sens = flow.tables.sensitive;
    const actual = sens ? new Masker(sensitiveValues(latest, sens)).scrubValue(answered) : answered;
    const d: Divergence = {
      case: c.name,
      request,
      stepIndex: idx,
      expected,
      actual,
      message:
        `request ${request} (step ${idx + 1} of the recording): expected ${show(expected)}, the flow ` +
        `answered ${show(actual)}${flowStep !== undefined ? ` at step "${flowStep}"` : ''}`,
    };
    if (flowStep !== undefined) d.flowStep = flowStep;
    return d;
  };
  for (let n = 1; ; n++) {
    const terminal = TERMINAL.has(req.call_status);
    let out = advance(flow, state, req, {
      now,
      unknownCall: 'restart',
      ...(opts.maxLogicSteps !== undefined ? { maxLogicSteps: opts.maxLogicSteps } : {}),
    });
    latest = state?.vars ?? latest;
    while (out.kind === 'effect') {
      const params = plain(out.effect.params as Record<string, WireValue>) as Record<string, JsonValue>;
      if (!terminal) {
        const exp = steps[idx]?.expect;
        if (!exp || !('sms' in exp) || !same(exp.sms, params)) return diverge(n, { sms: params }, out.effect.step);
        idx++;
      }
      out = out.resume(mockSms());
    }
    if (terminal)
      return idx < steps.length ? diverge(n, { end: `call ended (${req.call_status})` }, undefined) : undefined;
    if (out.kind !== 'reply')
      return diverge(n, { end: `${out.kind}${'message' in out ? `: ${out.message}` : ''}` }, state?.step);
    latest = out.state?.vars ?? out.summary?.vars ?? latest;
    const actual = { command: out.reply.command, params: plain(out.reply.params) as Record<string, JsonValue> };
    const flowStep = out.state?.step;
    const s = steps[idx];
    if (
      !s ||
      !('command' in s.expect) ||
      s.expect.command !== actual.command ||
      !same(s.expect.params ?? {}, actual.params)
    )
      return diverge(n, actual, flowStep);
    idx++;
    state = out.state ?? undefined;
    const reported = s.status ?? s.error ?? s.result;
    if (!state) return idx < steps.length ? diverge(n + 1, { end: 'the call ended' }, flowStep) : undefined;
    if (actual.command === 'hangup' && reported === undefined) {
      // The flow hung up: the service ends the call with a terminal request, which runs the
      // hangup handler; its sms effects are the steps left, if any.
      state = out.state ?? undefined;
      n++;
      let end = advance(
        flow,
        state,
        { ...base, command: 'hangup', command_id: out.reply.command_id, call_status: 'HANGUP' },
        { now, unknownCall: 'restart' },
      );
      while (end.kind === 'effect') {
        const params = plain(end.effect.params as Record<string, WireValue>) as Record<string, JsonValue>;
        const exp = steps[idx]?.expect;
        if (!exp || !('sms' in exp) || !same(exp.sms, params)) return diverge(n, { sms: params }, end.effect.step);
        idx++;
        end = end.resume(mockSms());
      }
      return idx < steps.length ? diverge(n, { end: 'the flow hung up' }, flowStep) : undefined;
    }
    req = {
      ...base,
      command: actual.command,
      command_id: out.reply.command_id,
      command_result: s.result ?? (s.error !== undefined || s.status !== undefined ? '' : '0'),
      command_error: s.error ?? '',
      call_status: (s.status ?? 'UP') as CallStatus,
    };
  }
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
  return `${x.command} ${JSON.stringify(x.params ?? {})}`;
}

/** The 1-based line of each step, per case. */
function stepLines(text: string): (number | undefined)[][] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const cases = doc.get('cases', true);
  if (!isSeq(cases)) return [];
  return cases.items.map((c) => {
    if (!isMap(c)) return [];
    const steps = c.get('steps', true);
    if (!isSeq(steps)) return [];
    return steps.items.map((s) => {
      const r = (s as { range?: [number, number, number] }).range;
      return r ? lc.linePos(r[0]).line : undefined;
    });
  });
}
