/**
 * Recordings: a served call's exchange written as an ordinary scenario file (docs/testing.md),
 * so `callscript test` replays it. Pure: the exchange in, the scenario (object and YAML text)
 * out; src/http/recorder.ts collects the exchanges and writes the files.
 *
 * Every step of a recording carries the command with its FULL params as answered, and what
 * the service then reported for it (result, error, or a terminal status); sms effects are
 * steps too, and their outcomes are the case's `mocks.sms`, in order. The header comment
 * names the flow, its version hash and the date; each step's comment names the flow step
 * that answered it.
 */
import { parseDocument, stringify } from 'yaml';
import { type StepRecord } from '../engine/report.js';
import { TERMINAL_STATUSES } from '../protocol/commands.js';
import type { WireValue } from '../protocol/rt.js';

/** One request the engine advanced, with what it did: its effects and its reply. */
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
}

export type RecordedExpect =
  { command: string; params: Record<string, JsonValue> } | { sms: Record<string, JsonValue> };

export interface RecordedStep {
  expect: RecordedExpect;
  result?: string;
  error?: string;
  status?: string;
  /** The flow step that answered (written as a comment; not part of the format). */
  at?: string;
}

export interface RecordedCase {
  name: string;
  call: RecordedCall;
  mocks: { sms?: ({ hash: string } | { error: string })[]; now: string };
  steps: RecordedStep[];
}

export interface Recording {
  flow: string;
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

/** The scenario case of one call's exchanges (first request first). */
export function buildRecording(exchanges: readonly Exchange[], date: Date = new Date()): Recording {
  if (exchanges.length === 0) throw new Error('buildRecording: no exchange');
  const first = exchanges[0]!;
  const r = first.request;
  const steps: RecordedStep[] = [];
  const sms: ({ hash: string } | { error: string })[] = [];
  let pending: RecordedStep | undefined; // the last command step, waiting for what happened to it
  let hungUp = false; // the flow's last reply was its own hangup
  for (const ex of exchanges) {
    const q = ex.request;
    const statusStep = TERMINAL.has(q.call_status) && pending !== undefined;
    if (pending) {
      if (TERMINAL.has(q.call_status)) pending.status = q.call_status;
      else if (q.command_error !== '') pending.error = q.command_error;
      else pending.result = q.command_result;
    }
    for (const { effect, result } of ex.effects) {
      if (effect.kind !== 'sms') continue;
      sms.push(
        'pending' in result ? { error: 'PENDING' } : result.ok ? { hash: result.value } : { error: result.error },
      );
      // After a step's terminal status no later step is allowed: the hangup handler's effects are
      // only mocks then. After the flow's own hangup, they are steps (as the runner checks them).
      if (!statusStep && (!TERMINAL.has(q.call_status) || hungUp))
        steps.push({
          expect: { sms: plain(effect.params as Record<string, WireValue>) as Record<string, JsonValue> },
          at: effect.step,
        });
    }
    if (TERMINAL.has(q.call_status) || ex.ended) break;
    const step: RecordedStep = {
      expect: { command: ex.reply.command, params: plain(ex.reply.params) as Record<string, JsonValue> },
    };
    if (ex.step !== undefined) step.at = ex.step;
    steps.push(step);
    hungUp = ex.reply.command === 'hangup';
    pending = hungUp ? undefined : step;
  }
  const c: RecordedCase = {
    name: `recorded call ${r.callid}`,
    call: {
      caller: r.cli_number,
      caller_name: r.cli_name,
      called: r.number,
      app: r.app,
      cdr_field: r.cdr_field,
      request_hash: r.request_hash,
      date_started: r.date_started,
      variables: r.variables,
      callid: r.callid,
    },
    mocks: { ...(sms.length > 0 ? { sms } : {}), now: new Date(first.now).toISOString() },
    steps,
  };
  return { flow: first.flow.name, version: first.flow.version, recorded: date.toISOString(), cases: [c] };
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
        cases: rec.cases.map(({ steps, ...c }) => ({ ...c, steps: steps.map(({ at: _at, ...s }) => s) })),
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
      if (s.at !== undefined) seq.items[j]!.commentBefore = ` step ${s.at}`;
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
  return { flow: data.flow, ...(m ? { version: m[2], recorded: m[3] } : {}), cases: data.cases as RecordedCase[] };
}
