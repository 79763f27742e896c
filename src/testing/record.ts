/**
 * Recordings: a served call's exchange written as an ordinary scenario file (docs/testing.md),
 * so `callscript test` replays it. Pure: the exchange in, the scenario (object and YAML text)
 * out; src/http/recorder.ts collects the exchanges and writes the files.
 *
 * A recording holds what a replay needs: every command with its FULL params as answered,
 * and what the service then reported for it (result, error, or a terminal status), with the
 * clock of that request when it moved on (`now:`); sms effects are steps too, their outcomes
 * the case's `mocks.sms`, in order; http lookups are steps with their method, URL and body
 * as sent (secrets and sensitive values masked) and their `answer:` (fillers included); queue
 * operations are steps with the store's answer (`answer: { result: wait, position: 2, ... }`); the
 * environment, an outbound call's start vars (`vars:`), the first request's clock
 * (`mocks.now`) and, for a call never answered, its status (`call.status`, no steps). The
 * header comment names the flow, its version hash and the date; each step's comment names
 * the flow step that answered it.
 */
import { parseDocument, stringify } from 'yaml';
import { type StepRecord } from '../engine/report.js';
import { TERMINAL_STATUSES } from '../protocol/commands.js';
import type { WireValue } from '../protocol/rt.js';
import type { EffectResult } from '../engine/outcome.js';
import { LOOKUP_ERRORS } from '../engine/http-wait.js';
import { queueOpParams } from './queue-steps.js';

/** One request the engine advanced, with its effects and its reply (src/engine/call.ts). */
export type Exchange = StepRecord;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

export interface RecordedCall {
  caller: string;
  caller_name: string;
  called: string;
  app: string;
  cdr_field: string;
  request_hash: string | null;
  date_started: string;
  variables: Record<string, unknown>;
  callid: string;
  /** The first request's call_status when not UP (INCOMING_CALL; a terminal one: a call never answered). */
  status?: string;
}

export type RecordedExpect =
  | { command: string; params: Record<string, JsonValue> }
  | { sms: Record<string, JsonValue> }
  /** An http lookup: its method, URL and (JSON) body as sent, secrets and sensitive values masked. */
  | { http: Record<string, JsonValue> }
  /** A queue step's operation: its op, queue name and params (scenario-queues.ts). */
  | { queue: Record<string, JsonValue> };

/** What a recorded lookup answered (an http step's `answer:`). */
export interface RecordedAnswer {
  status?: number;
  body?: JsonValue;
  error?: string;
  /** The fillers played before it (the lookup ran past that many request deadlines). */
  fillers?: number;
}

export interface RecordedStep {
  expect: RecordedExpect;
  result?: string;
  error?: string;
  status?: string;
  /** The clock of the request that reported this step's outcome, when it moved on (ISO). */
  now?: string;
  /** A lookup's answer. */
  answer?: RecordedAnswer;
  /** A queue operation's answer (written as `answer:` too: `{ result: wait, position: 2, ... }`, `{ error }`). */
  queueAnswer?: Record<string, JsonValue>;
  /** The flow step that answered (written as a comment; not part of the format). */
  at?: string;
  /** A note written after the step's comment (not part of the format). */
  note?: string;
}

export interface RecordedCase {
  name: string;
  call: RecordedCall;
  /** The vars an outbound call started with (masked as recorded). */
  vars?: Record<string, JsonValue>;
  mocks: {
    sms?: ({ hash: string } | { error: string })[];
    /** Lookups made where no step may be written (the hangup handler after a terminal status). */
    http?: Record<string, JsonValue>[];
    now: string;
  };
  steps: RecordedStep[];
}

export interface Recording {
  flow: string;
  /** The environment the flow was served in (version 2 environments:). */
  environment?: string;
  /** The flow version the call ran (from the header comment). */
  version?: string;
  /** When it was recorded, ISO (from the header comment). */
  recorded?: string;
  cases: RecordedCase[];
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** A wire value as plain YAML/JSON data: a bigint beyond 2^53 becomes its digits as a string. */
export function plain(v: WireValue): JsonValue {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** A lookup's request as a recording holds it: method, URL, and the body (parsed when it is JSON). */
export function recordedLookup(params: Readonly<Record<string, unknown>>): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = { method: String(params.method), url: String(params.url) };
  if (typeof params.body === 'string') {
    try {
      out.body = JSON.parse(params.body) as JsonValue;
    } catch {
      out.body = params.body;
    }
  }
  return out;
}

/** A lookup's result as an answer; undefined when pending or masked (a sensitive save: keeps no status). */
function answerOf(result: EffectResult): RecordedAnswer | undefined {
  if ('pending' in result) return undefined;
  if (!result.ok) return { error: result.error };
  const data = result.data as { status?: unknown; body?: unknown } | undefined;
  const status = typeof data?.status === 'number' ? data.status : Number(result.value);
  if (!Number.isInteger(status) || status < 100 || status > 599) return undefined;
  const body = data?.body;
  return body === undefined || body === null ? { status } : { status, body: body as JsonValue };
}

const iso = (t: number) => new Date(t).toISOString();

/** A queue operation's result as a step's answer: its result and a poll's fields (the save: value), or its error. */
function queueAnswerOf(r: Exclude<EffectResult, { pending: true }>): Record<string, JsonValue> {
  if (!r.ok) return { error: r.error };
  const out: Record<string, JsonValue> = { result: r.value };
  const data = r.data;
  if (data && typeof data === 'object' && !Array.isArray(data))
    for (const k of ['agent', 'position', 'waited', 'expected_wait', 'agents', 'free'])
      if (data[k] !== undefined) out[k] = data[k] as JsonValue;
  return out;
}

/** The scenario case of one call's exchanges (first request first). */
export function buildRecording(exchanges: readonly Exchange[], date: Date = new Date()): Recording {
  if (exchanges.length === 0) throw new Error('buildRecording: no exchange');
  const first = exchanges[0]!;
  const r = first.request;
  const steps: RecordedStep[] = [];
  const sms: ({ hash: string } | { error: string })[] = [];
  const http: Record<string, JsonValue>[] = [];
  let pending: RecordedStep | undefined; // the last command step, waiting for what happened to it
  let lastCommand: RecordedStep | undefined; // the last command step (the flow's hangup included)
  let lookup: RecordedStep | undefined; // a lookup still running while its filler plays
  let hungUp = false; // the flow's last reply was its own hangup
  let clock = first.now;
  for (const ex of exchanges) {
    const q = ex.request;
    const statusStep = TERMINAL.has(q.call_status) && pending !== undefined;
    if (pending) {
      // a terminal request carries the interrupted command's result or error, if any: kept beside its status
      const terminal = TERMINAL.has(q.call_status);
      if (terminal) pending.status = q.call_status;
      if (q.command_error !== '') pending.error = q.command_error;
      else if (!terminal || q.command_result !== '') pending.result = q.command_result;
    }
    // the clock moves on from the request that carries the outcome of the last command
    if (ex !== first && ex.now !== clock && lastCommand) {
      lastCommand.now = iso(ex.now);
      clock = ex.now;
    }
    // After a step's terminal status no later step is allowed: the hangup handler's effects are
    // only mocks then. After the flow's own hangup, they are steps (as the runner checks them).
    const asSteps = !statusStep && (!TERMINAL.has(q.call_status) || hungUp);
    for (const { effect, result } of ex.effects) {
      if (effect.kind === 'sms') {
        sms.push(
          'pending' in result ? { error: 'PENDING' } : result.ok ? { hash: result.value } : { error: result.error },
        );
        if (asSteps)
          steps.push({
            expect: { sms: plain(effect.params as Record<string, WireValue>) as Record<string, JsonValue> },
            at: effect.step,
          });
        continue;
      }
      if (effect.kind === 'queue') {
        // a step with its answer, as the store gave it; after a terminal status the case's line answers it (leave)
        if (asSteps && !('pending' in result))
          steps.push({
            expect: { queue: plain(queueOpParams(effect) as Record<string, WireValue>) as Record<string, JsonValue> },
            queueAnswer: queueAnswerOf(result),
            at: effect.step,
          });
        continue;
      }
      const answer = answerOf(result);
      if (effect.wait) {
        // the lookup a filler played for: its answer, or another filler
        if (!lookup) continue;
        if ('pending' in result) lookup.answer = { ...lookup.answer, fillers: (lookup.answer?.fillers ?? 0) + 1 };
        else if (answer) lookup.answer = { ...answer, ...lookup.answer };
        else lookup.note = 'its answer is sensitive: not recorded';
        if (!('pending' in result)) lookup = undefined;
        continue;
      }
      const request = recordedLookup(effect.params);
      if (!asSteps) {
        // mocks.http answers at once with a status or an error of LOOKUP_ERRORS; the engine's own (LIMIT,
        // INVALID_PARAM) come again from the replay's engine, an UNAVAILABLE has no entry (NETWORK)
        if (answer && (answer.error === undefined || (LOOKUP_ERRORS as readonly string[]).includes(answer.error)))
          http.push({ ...request, ...(answer as Record<string, JsonValue>) });
        continue;
      }
      const step: RecordedStep = { expect: { http: request }, at: effect.step };
      if ('pending' in result) {
        step.answer = { fillers: 1 };
        lookup = step;
      } else if (answer) step.answer = answer;
      else step.note = 'its answer is sensitive: not recorded';
      steps.push(step);
    }
    if (TERMINAL.has(q.call_status) || ex.ended) break;
    const step: RecordedStep = {
      expect: { command: ex.reply.command, params: plain(ex.reply.params) as Record<string, JsonValue> },
    };
    if (ex.step !== undefined) step.at = ex.step;
    steps.push(step);
    lastCommand = step;
    hungUp = ex.reply.command === 'hangup';
    pending = hungUp ? undefined : step;
  }
  const call: RecordedCall = {
    caller: r.cli_number,
    caller_name: r.cli_name,
    called: r.number,
    app: r.app,
    cdr_field: r.cdr_field,
    request_hash: r.request_hash,
    date_started: r.date_started,
    variables: r.variables,
    callid: r.callid,
  };
  if (r.call_status !== 'UP') call.status = r.call_status;
  const c: RecordedCase = {
    name: `recorded call ${r.callid}`,
    call,
    ...(first.vars && Object.keys(first.vars).length > 0 ? { vars: first.vars as Record<string, JsonValue> } : {}),
    mocks: {
      ...(sms.length > 0 ? { sms } : {}),
      ...(http.length > 0 ? { http } : {}),
      now: iso(first.now),
    },
    steps,
  };
  return {
    flow: first.flow.name,
    ...(first.environment !== undefined ? { environment: first.environment } : {}),
    version: first.flow.version,
    recorded: date.toISOString(),
    cases: [c],
  };
}

/** The file name of a recording: `<flow>-<callid>.test.yaml`. */
export function recordingFileName(flow: string, callid: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');
  return `${safe(flow)}-${safe(callid)}.test.yaml`;
}

/** The scenario file's text: header comment, then the scenario; each step's flow step as a comment. */
export function recordingYaml(rec: Recording): string {
  const doc = parseDocument(
    stringify(
      {
        flow: rec.flow,
        ...(rec.environment !== undefined ? { environment: rec.environment } : {}),
        cases: rec.cases.map(({ steps, ...c }) => ({
          ...c,
          steps: steps.map(({ at: _at, note: _n, queueAnswer, ...s }) =>
            queueAnswer ? { ...s, answer: queueAnswer } : s,
          ),
        })),
      },
      { lineWidth: 0 },
    ),
  );
  doc.commentBefore =
    ` Recorded by callscript serve --record: flow ${rec.flow}, ` +
    `version ${rec.version ?? 'unknown'}, ${rec.recorded ?? new Date().toISOString()}\n A scenario file ` +
    `(docs/testing.md): \`callscript test\` replays it against the current flow.`;
  // Step comments: which flow step answered each command.
  const cases = doc.get('cases', true) as {
    items: { get(k: string, keep: true): { items: { commentBefore?: string | null }[] } }[];
  };
  rec.cases.forEach((c, i) => {
    const seq = cases.items[i]!.get('steps', true);
    c.steps.forEach((s, j) => {
      if (s.at !== undefined) seq.items[j]!.commentBefore = ` step ${s.at}${s.note ? ` (${s.note})` : ''}`;
    });
  });
  return doc.toString({ lineWidth: 0 });
}

const HEADER = /^#\s*Recorded by callscript serve --record: flow (\S+), version (\S+), (\S+)/m;

/** Reads a recording (or any scenario file): its cases, and the version and date of its header comment. */
export function parseRecording(text: string): Recording {
  const data = parseDocument(text).toJS() as { flow?: unknown; cases?: unknown };
  if (!data || typeof data.flow !== 'string' || !Array.isArray(data.cases))
    throw new Error('not a scenario file: it needs `flow` and `cases`');
  const m = HEADER.exec(text);
  const env = (data as { environment?: unknown }).environment;
  return {
    flow: data.flow,
    ...(typeof env === 'string' ? { environment: env } : {}),
    ...(m ? { version: m[2], recorded: m[3] } : {}),
    cases: data.cases as RecordedCase[],
  };
}
