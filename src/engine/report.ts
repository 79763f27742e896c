/**
 * The step report: what leaves the process about one request once its step is done, built
 * from the values the step returned (StepOutcome), masked once: the engine's log lines and
 * the call-ended line, the recording of the exchange (`serve --record`), and the event the
 * observers get (metrics, traces, call history: src/engine/observe.ts).
 */
import type { RtRequest, RtResponse } from '../protocol/rt.js';
import type { Value } from '../flow/model.js';
import type { AnswerKind, StepAnswer } from './answer.js';
import { replyCommand } from './advance.js';
import type { CompiledFlow } from './compile.js';
import type { EffectDone, Settled } from './effects.js';
import { MASK, Masker, secretValues, stateValues, type Sensitivity } from './mask.js';
import { maskLog, maskStepRecord, maskSummary, requestMasker, resultIsSensitive } from './mask-call.js';
import {
  callOutcomeOf,
  isTransferEnd,
  REQUEST_TEXT_BYTES,
  type EffectEvent,
  type RequestOutcome,
  type StepEvent,
} from './observe.js';
import { clipText } from './size.js';
import type { Effect, EffectResult, LogEntry } from './outcome.js';
import type { CallLogger } from './ports.js';
import type { CallState, CallSummary } from './types.js';

/** What one request's step came to: its answer, and the values the report is built from. */
export interface StepOutcome {
  answer: StepAnswer;
  /** The request stepped (a fallback's report replaced by the request it stood for). */
  req: RtRequest;
  /** The flow version that served it, the call before it (absent for a new call), and whether it started the call. */
  flow?: CompiledFlow;
  prior?: CallState;
  isNew: boolean;
  /** The vars the call started with (an outbound call's first request). */
  vars?: Record<string, Value>;
  /** The engine's answer, when the request reached the engine. */
  settled?: Settled;
  effects: readonly EffectDone[];
  /** The transitions the machine took (coverage keys), when an observer asked for them. */
  transitions: readonly string[];
  /** The call's clock for the request (epoch ms). */
  now: number;
}

/**
 * One request the engine advanced, with what it did: its effects and its reply (recordings,
 * `serve --record`). What a replay needs to step the call again as it went: the request, the
 * call's clock, the start vars of an outbound call, the environment, each effect's request and
 * answer. Sensitive values and secrets are masked (src/engine/mask-call.ts, `recordable` below).
 */
export interface StepRecord {
  request: RtRequest;
  flow: { name: string; version: string };
  /** The environment the flow was served in (version 2 `environments:`), if it has one. */
  environment?: string;
  /** Epoch ms the engine was given for this request: the call's clock. */
  now: number;
  /** The vars the call started with, given when it was placed (an outbound call's first request only). */
  vars?: Record<string, Value>;
  /**
   * The effects performed for this request, in order, with their outcomes. An http lookup's params are its
   * method, URL, headers and body as sent, with the flow's secrets replaced by ***.
   */
  effects: { effect: Effect; result: EffectResult }[];
  /** The reply answered. */
  reply: RtResponse;
  /** The flow step of the reply (the call's step after this request), when the call goes on. */
  step?: string;
  /** The call ended with this request (its state was dropped). */
  ended: boolean;
}

/** Told about each request the engine advanced (`serve --record`: src/http/recorder.ts). */
export interface CallObserver {
  exchange(ex: StepRecord): void;
}

/** How the request was handled, besides its outcome: for the observers' event. */
export interface Handling {
  /** A deadline fallback was answered in its place. */
  late: boolean;
  /** Epoch ms the request arrived, and its handling time in ms. */
  at: number;
  ms: number;
  traceId?: string;
}

/**
 * A request's masking: what of it is sensitive (absent: the flow has no sensitive values), and the masker of its texts:
 * the sensitive values of the call (its vars and its callers' frames, before and after the request) and the values of
 * the flow's secrets. Absent when there is nothing to mask.
 */
interface Masking {
  sens: Sensitivity | undefined;
  masker: Masker;
}

function maskingOf(o: StepOutcome, secret: ((name: string) => string | undefined) | undefined): Masking | undefined {
  if (o.settled?.kind !== 'reply') return undefined;
  const sens = o.flow?.tables.sensitive;
  const secrets = o.flow?.model.secrets;
  if (!sens && !secrets?.length) return undefined;
  const values = secretValues(secrets, secret);
  if (!sens) return values.size > 0 ? { sens, masker: new Masker(values) } : undefined;
  // the call after the request: its vars and frames, or, once it ended, its summary's vars
  stateValues(o.settled.state ?? undefined, sens, values);
  return { sens, masker: requestMasker(sens, o.req, o.prior, [o.settled.summary?.vars], values) };
}

/** The call's summary as it leaves the process: masked once (sensitive vars by name, then every value by value). */
function summaryOf(o: StepOutcome, m: Masking | undefined): CallSummary | undefined {
  const s = o.settled?.kind === 'reply' ? o.settled.summary : undefined;
  if (!s || !m) return s;
  const named = m.sens ? maskSummary(s, m.sens) : s;
  const vars = m.masker.scrubValue(named.vars);
  return vars === named.vars ? named : { ...named, vars };
}

export class StepReport {
  constructor(
    private readonly deps: {
      recorder?: CallObserver;
      /** Reads a declared secret's value (to mask it in what is recorded). */
      secret?: (name: string) => string | undefined;
    },
  ) {}

  /** Logs the step (the engine's lines, the call-ended line) and records it; the masking, for `event`. */
  log(o: StepOutcome, log: CallLogger): void {
    const s = o.settled;
    for (const d of o.effects) logEffect(o, d, log);
    if (s?.kind === 'replay')
      log.debug({ callid: o.req.callid, command_id: o.req.command_id }, 'retried request: previous reply sent again');
    if (s?.kind !== 'reply') return;
    const m = maskingOf(o, this.deps.secret);
    for (const entry of s.log ?? []) {
      const { level, msg, ...fields } = m ? maskLog(entry, m.masker) : entry;
      log[level === 'error' ? 'error' : level === 'warn' ? 'warn' : 'info']({ callid: o.req.callid, ...fields }, msg);
    }
    const summary = summaryOf(o, m);
    if (summary) logSummary(log, summary);
    if (this.deps.recorder && o.flow) this.deps.recorder.exchange(this.record(o, s, o.flow, m));
  }

  /** The observers' event of request `req` (`o` undefined: its work threw; `failure` is what was answered). */
  event(req: RtRequest, o: StepOutcome | undefined, h: Handling, failure?: StepAnswer): StepEvent {
    const answer = o?.answer ?? failure ?? { kind: 'failed', code: 'INTERNAL', message: '' };
    const s = o?.settled;
    const m = o && maskingOf(o, this.deps.secret);
    const reply = s?.kind === 'reply' ? s : undefined;
    const errors = reply?.log ? errorCodes(reply.log) : NONE;
    const ended = reply !== undefined && reply.state === null;
    const flow = o?.flow;
    const sens = flow?.tables.sensitive;
    const effects = o?.effects;
    const e: StepEvent = {
      callid: req.callid,
      outcome: requestOutcome(answer, s?.kind === 'replay'),
      answer: answer.kind,
      late: h.late,
      at: h.at,
      ms: h.ms,
      request: requestView(o?.req ?? req, o?.prior, sens, s?.kind === 'replay' || s?.kind === 'stale', m?.masker),
      isNew: o?.isNew === true,
      ended,
      transitions: o?.transitions ?? NONE,
      effects: effects?.length ? effects.map((d) => effectEvent(d, sens)) : NONE,
      errors,
    };
    if (flow) {
      e.flow = flow.name;
      e.version = flow.version;
    }
    if (answer.kind !== 'answered') e.code = answer.code;
    const prior = o?.prior;
    if (prior) e.from = prior.step;
    const step = reply ? (reply.state?.step ?? reply.summary?.lastStep ?? prior?.step) : undefined;
    if (step !== undefined) e.step = step;
    if (reply) {
      const params = reply.reply.params as Record<string, unknown>;
      e.reply = {
        command: reply.reply.command,
        commandId: reply.reply.command_id,
        params: m ? (m.masker.scrubValue(params) as Record<string, unknown>) : params,
      };
    }
    if (ended) {
      const transfer =
        prior !== undefined && prior.done !== true && isTransferEnd(replyCommand(prior.reply), o!.req.call_status);
      // a flow that ended on an engine error (prior.fail) ended in error, not completed
      const fail = prior?.done === true ? prior.fail : undefined;
      e.callOutcome = callOutcomeOf(prior?.done === true && fail === undefined, fail ? [fail] : errors, transfer);
    }
    const summary = o && summaryOf(o, m);
    if (summary) e.summary = summary;
    if (h.traceId !== undefined) e.traceId = h.traceId;
    return e;
  }

  private record(o: StepOutcome, s: Extract<Settled, { kind: 'reply' }>, flow: CompiledFlow, m: Masking | undefined) {
    const rec: StepRecord = {
      request: o.req,
      flow: { name: flow.name, version: flow.version },
      ...(flow.model.environment !== undefined ? { environment: flow.model.environment } : {}),
      now: o.now,
      ...(o.vars ? { vars: o.vars } : {}),
      effects: o.effects.map((d) => ({
        effect: recordable(d.effect, flow.model.secrets, this.deps.secret),
        result: d.result,
      })),
      reply: s.reply,
      ...(s.state ? { step: s.state.step } : {}),
      ended: !s.state,
    };
    return m ? maskStepRecord(rec, m.sens, o.prior, m.masker) : rec;
  }
}

/** No transitions, effects or errors (shared: never written to). */
const NONE: readonly never[] = Object.freeze([]);

/** The codes of a step's error log entries (ERROR for one without a code). */
function errorCodes(log: readonly LogEntry[]): readonly string[] {
  let codes: string[] | undefined;
  for (const l of log) if (l.level === 'error') (codes ??= []).push(l.code ?? 'ERROR');
  return codes ?? NONE;
}

/**
 * The request as observers see it: its result *** when it is a sensitive input. A new request reports the
 * command of the call's step (sensitive when that step's `save:` is); a replayed or stale one reports an
 * earlier command, whose input is known only by its value: *** when it is one of the call's sensitive values.
 * Otherwise the request's masker scrubs the result (a sensitive value typed at a step whose `save:` is not).
 */
function requestView(
  req: RtRequest,
  prior: CallState | undefined,
  sens: Sensitivity | undefined,
  earlier: boolean,
  masker: Masker | undefined,
): StepEvent['request'] {
  const r = req.command_result;
  const masked =
    sens !== undefined && r !== '' && (earlier ? stateValues(prior, sens).has(r) : resultIsSensitive(sens, prior));
  return {
    command: clipText(req.command, REQUEST_TEXT_BYTES),
    result: masked ? MASK : clipText(masker ? masker.scrubText(r) : r, REQUEST_TEXT_BYTES),
    error: clipText(req.command_error, REQUEST_TEXT_BYTES),
    callStatus: req.call_status,
    commandId: req.command_id,
  };
}

const OUTCOMES: Record<string, RequestOutcome> = {
  STALE_REQUEST: 'stale',
  NO_ROUTE: 'no_route',
  UNKNOWN_FLOW: 'no_route',
  CALL_LIMIT: 'call_limit',
  STORE_UNAVAILABLE: 'store_unavailable',
};

/** How the metrics count a request, by its answer. */
function requestOutcome(a: StepAnswer, replayed: boolean): RequestOutcome {
  if (a.kind === 'answered') return replayed ? 'replay' : 'ok';
  return OUTCOMES[a.code] ?? (a.kind === 'not_found' || a.kind === 'stale' ? 'rejected' : 'error');
}

/** Kinds a request may be answered with that the service takes as a failure (HTTP 5xx). */
export function isFailure(kind: AnswerKind): boolean {
  return kind === 'failed' || kind === 'unavailable';
}

function effectEvent(d: EffectDone, sens: Sensitivity | undefined): EffectEvent {
  const { effect: e, result: r, ms } = d;
  if (e.kind === 'queue') return queueEvent(e, r, ms);
  if ('pending' in r) return { kind: e.kind, step: e.step, outcome: 'pending', ms };
  if (r.ok) return { kind: e.kind, step: e.step, outcome: 'ok', value: sens?.steps.has(e.step) ? MASK : r.value, ms };
  return { kind: e.kind, step: e.step, outcome: r.error, ms };
}

/** A queue operation's event: its answer (ring, wait, timeout, empty; left, done) and the caller's wait so far. */
function queueEvent(e: Extract<Effect, { kind: 'queue' }>, r: EffectDone['result'], ms: number): EffectEvent {
  const queue: NonNullable<EffectEvent['queue']> = { name: e.params.queue, op: e.op };
  if (e.params.waited !== undefined) queue.waited = e.params.waited;
  const ev: EffectEvent = { kind: 'queue', step: e.step, outcome: 'ok', ms, queue };
  if ('pending' in r) ev.outcome = 'pending';
  else if (!r.ok) ev.outcome = r.error;
  else {
    ev.value = r.value;
    const waited = (r.data as { waited?: unknown } | undefined)?.waited;
    if (typeof waited === 'number') queue.waited = waited;
  }
  return ev;
}

/**
 * An effect as recordings keep it: an http lookup's method, URL, headers and body as sent, with the flow's secrets
 * masked (sensitive values are scrubbed with the rest of the record).
 */
export function recordable(
  e: Effect,
  names: readonly string[] | undefined,
  secret: ((n: string) => string | undefined) | undefined,
): Effect {
  if (e.kind !== 'http') return e;
  const m = new Masker(secretValues(names, secret));
  const hide = (s: string) => m.scrubText(s);
  const p = e.params;
  const headers = Object.fromEntries(
    Object.entries((p.headers ?? {}) as Record<string, string>).map(([k, v]) => [k, hide(v)]),
  );
  const params: Record<string, unknown> = { method: p.method, url: hide(String(p.url ?? '')), headers };
  if (typeof p.body === 'string') params.body = hide(p.body);
  return { ...e, params };
}

function logEffect(o: StepOutcome, d: EffectDone, log: CallLogger): void {
  const { effect, result } = d;
  if ('pending' in result)
    log.debug({ callid: o.req.callid, effect: 'http', step: effect.step }, 'http lookup runs on: filler answered');
  else if (result.ok) {
    const value = o.flow?.tables.sensitive?.steps.has(effect.step) ? MASK : result.value;
    log.debug({ callid: o.req.callid, effect: effect.kind, step: effect.step, value }, `${effect.kind} done`);
  }
}

function logSummary(log: CallLogger, s: CallSummary): void {
  log.info(
    {
      callid: s.callid,
      flow: s.flow,
      version: s.version,
      status: s.status,
      commands: s.commands,
      durationMs: s.durationMs,
      lastStep: s.lastStep,
      vars: s.vars,
      ...(s.error !== undefined ? { error: s.error } : {}),
    },
    'call ended',
  );
}
