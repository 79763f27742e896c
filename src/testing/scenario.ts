/**
 * Scenario files (`*.test.yaml`, docs/testing.md "Scenario files"): their types and a loader
 * that validates them by hand over the positioned YAML tree of src/flow/yaml.ts, so that
 * every problem is reported at its file:line:col.
 */
import { loadYaml, type Loc, type YMap, type YNode } from '../flow/yaml.js';
import type { EffectResult } from '../engine/outcome.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { closest } from '../flow/check-context.js';
import { resultProblem } from './results.js';
import { LIVE_STATUSES, TERMINAL_STATUSES, type CallStatus } from '../protocol/commands.js';

/** The call_status values a case's first request may have (call.status). */
export const CALL_STATUSES: readonly CallStatus[] = [...LIVE_STATUSES, ...TERMINAL_STATUSES];

/** The case's call is never answered: its first request is terminal. */
export function isTerminalCall(call: Pick<CallFields, 'status'>): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(call.status);
}

/** One problem of a scenario file (1-based line and column). */
export interface ScenarioError {
  file: string;
  line: number;
  column: number;
  message: string;
}

export class ScenarioFileError extends Error {
  constructor(readonly errors: ScenarioError[]) {
    super(errors.map(formatScenarioError).join('\n'));
  }
}

export function formatScenarioError(e: ScenarioError): string {
  return `${e.file}:${e.line}:${e.column}: ${e.message}`;
}

export type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

export const TERMINAL_STEP_STATUSES = ['HANGUP', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'] as const;
export type StepStatus = (typeof TERMINAL_STEP_STATUSES)[number];

/** The call's fields (RT.Request), with the defaults of docs/testing.md. */
export interface CallFields {
  caller: string;
  caller_name: string;
  called: string;
  app: string;
  cdr_field: string;
  request_hash: string | null;
  date_started: string;
  variables: Record<string, Plain>;
  callid: string;
  /**
   * The call_status of the first request: UP (default) or INCOMING_CALL; a terminal one (NOANSWER, BUSY...) is a call
   * never answered (a recorded outbound call): it ends at once, and the case may have no steps.
   */
  status: CallStatus;
}

export const DEFAULT_CALL: Readonly<CallFields> = {
  caller: '+33612345678',
  caller_name: '',
  called: '+33123456789',
  app: 'APP00001',
  cdr_field: '',
  request_hash: null,
  date_started: '2026-11-22 10:00:00',
  variables: {},
  callid: '1000',
  status: 'UP',
};

export type Expectation =
  | { kind: 'command'; command: string; params?: Record<string, Plain> }
  | { kind: 'sms'; params: Record<string, Plain> }
  /** Only a check of the call as it stands (`expect: { vars: {...} }`, `expect: { step: x }`): no command consumed. */
  | { kind: 'check' }
  /** An http step's lookup (version 2): its method, url, headers, body as sent (answered from mocks.http). */
  | { kind: 'http'; params: Record<string, Plain> }
  /** A queue step's operation (version 2): its op, queue name and params (answered by the case's line or answer:). */
  | { kind: 'queue'; params: Record<string, Plain> };

/**
 * What a step (beside its command, or alone) or a case (`expect:` at the case's level: at its
 * end) checks of the call: its vars (a subset) and the flow step it is at.
 */
export interface CallCheck {
  vars?: Record<string, Plain>;
  /** Where `vars:` is written. */
  varsPos?: Loc;
  step?: string;
  stepPos?: Loc;
}

export interface ScenarioStep {
  pos: Loc;
  expect: Expectation;
  /** `vars:` and `step:` of the expect: checked when the command is sent (or, alone, at the next command). */
  check?: CallCheck;
  result?: string;
  /** Where `result:` is written (the runner refuses there a result the command cannot return). */
  resultPos?: Loc;
  error?: string;
  /** The call ended during the command (a terminal request), carrying `result` or `error` when given. */
  status?: StepStatus;
  /**
   * The engine's clock from the request that carries this step's outcome on (epoch ms): time passing during a call
   * (calendars).
   */
  now?: number;
  nowPos?: Loc;
  /** An http step's answer to its lookup (recordings), instead of mocks.http. */
  answer?: HttpAnswer;
  /** A queue step's answer (recordings, paths), instead of the case's line. */
  queueAnswer?: QueueReply;
  /** What changes in the case's queues before the request that carries this step's outcome (docs/testing.md). */
  queues?: QueueChange[];
}

export interface Mocks {
  /** The sms effects' outcomes in order; past the list, success with SMS0000n. */
  sms: EffectResult[];
  /** Epoch ms of the engine's clock. */
  now: number;
  /** What http steps' lookups answer (src/testing/http-mocks.ts); none matching: NETWORK. */
  http: HttpMock[];
}

export interface ScenarioCase {
  name: string;
  pos: Loc;
  call: CallFields;
  /** Overrides of the flow's initial vars for this case (a mock of flow constants); {} when none. */
  vars: Record<string, Plain>;
  /** A module's params for this case (a scenario of a module, version 2), and where each is written; absent: none. */
  with?: Record<string, Plain>;
  withPos?: Record<string, Loc>;
  mocks: Mocks;
  steps: ScenarioStep[];
  /** The case's own `expect: { vars, step }`: checked once the case has run (at the call's end or where it stops). */
  expect?: CallCheck;
  expectPos?: Loc;
  /** The case's queues before the call (callers ahead, agents busy or paused). */
  queues?: QueueChange[];
}

export interface Scenario {
  file: string;
  /** A flow name, or a path to a flow file (resolved against the scenario's directory). */
  flow: string;
  flowPos: Loc;
  /**
   * The environment of the flow's environments: (version 2) the cases run in; absent: the one the flows were loaded in.
   */
  environment?: string;
  environmentPos?: Loc;
  cases: ScenarioCase[];
  /**
   * The file is a recording (its leading comments hold the `# Recorded by callscript serve --record` header): its
   * steps' params are compared in full, and its clock may step back (the servers' times as read).
   */
  recorded?: boolean;
}

const RECORDED = /^#\s*Recorded by callscript serve --record\b/;

/** Whether a scenario file's text is a recording: the header among the comments before its first key. */
export function isRecording(text: string): boolean {
  for (const line of text.split('\n', 50)) {
    const t = line.trim();
    if (RECORDED.test(t)) return true;
    if (t !== '' && !t.startsWith('#')) return false;
  }
  return false;
}

class Collector {
  errors: ScenarioError[] = [];
  constructor(readonly file: string) {}
  at(node: { pos: Loc } | Loc, message: string): void {
    const pos = 'pos' in node ? node.pos : node;
    this.errors.push({ file: this.file, line: pos.line, column: pos.col, message });
  }
}

export function plain(n: YNode): Plain {
  switch (n.kind) {
    case 'scalar':
      return n.value;
    case 'seq':
      return n.items.map(plain);
    case 'map': {
      const o: Record<string, Plain> = {};
      for (const e of n.entries) o[e.key] = plain(e.value);
      return o;
    }
  }
}

/** A scalar as a string: as written for numbers (so `result: 0` is "0"). */
function scalarText(n: YNode): string | undefined {
  if (n.kind !== 'scalar' || n.value === null) return undefined;
  if (typeof n.value === 'string') return n.value;
  return n.quoted ? String(n.value) : n.source;
}

import { parseHttpAnswer, parseHttpMocks, TOOL_FILE_DEPTH, type HttpAnswer, type HttpMock } from './http-mocks.js';
import { meantKey } from './suggest-key.js';
import { checkCaseQueues, parseQueueChanges, type QueueChange } from './scenario-queues.js';
import { checkQueueParams, parseQueueAnswer, type QueueReply } from './queue-steps.js';

/** The effects a step may expect: they run inside a request and take no result, error, status or now:. */
const EFFECT_KINDS: readonly string[] = ['sms', 'http', 'queue'];
const isEffectKind = (k: string | undefined): k is 'sms' | 'http' | 'queue' =>
  k !== undefined && EFFECT_KINDS.includes(k);

function describe(n: YNode): string {
  if (n.kind === 'map') return 'a map';
  if (n.kind === 'seq') return 'a list';
  return n.value === null
    ? 'null'
    : typeof n.value === 'string'
      ? 'a string'
      : `${n.type === 'bool' ? 'a boolean' : 'a number'}`;
}

/** What checkKeys may say of an unknown key besides the nearest allowed one. */
interface KeyHints {
  /** Sections whose keys are written beside them by mistake (caller: in a case instead of under call:). */
  under?: readonly { key: string; keys: readonly string[] }[];
  /** Words of other tools (or shortenings) for an allowed key: `response` -> `result` in a step. */
  synonyms?: Readonly<Record<string, string>>;
  /** What a key meant does, said after the did-you-mean (`now`: the clock of the request...). */
  notes?: Readonly<Record<string, string>>;
}

/**
 * Reports unknown keys, with the nearest allowed key when one is close (in spelling, as a shortening, or as a word of
 * another tool); returns the allowed keys some unknown key was taken for.
 */
function checkKeys(
  c: Collector,
  m: YMap,
  allowed: readonly string[],
  where: string,
  hints: KeyHints = {},
): Set<string> {
  const meant = new Set<string>();
  for (const e of m.entries) {
    if (allowed.includes(e.key)) continue;
    // a key of a section written beside it (caller: in a case instead of under call:)
    const sections = hints.under ?? [];
    const exact = sections.find((u) => u.keys.includes(e.key));
    const section = exact ?? sections.find((u) => closest(e.key, u.keys) !== undefined);
    if (section) {
      const belongs = exact ? e.key : closest(e.key, section.keys)!;
      const note = hints.notes?.[`${section.key}.${belongs}`];
      meant.add(section.key);
      c.at(
        e.keyNode,
        `unknown key "${e.key}" in ${where}: ${belongs === e.key ? '' : `did you mean "${belongs}"? `}it ` +
          `goes under ${section.key}: (${section.key}: { ${belongs}: ... })${note ? `; ${note}` : ''}`,
      );
      continue;
    }
    const near = meantKey(e.key, allowed, hints.synonyms);
    if (near !== undefined) meant.add(near);
    // a typo needs no note; a word of another tool (response for result) is told what the key does here
    const note = near !== undefined && closest(e.key, allowed) === undefined ? hints.notes?.[near] : undefined;
    c.at(
      e.keyNode,
      `unknown key "${e.key}" in ${where}${near !== undefined ? `: did you mean "${near}"?` : ''}` +
        `${note ? ` (${note})` : ''} (allowed: ${allowed.join(', ')})`,
    );
  }
  return meant;
}

/** ` (did you mean "play"?)` for a misspelt command name, else ''. */
function commandHint(name: string): string {
  const near = closest(name, Object.keys(ACTION_SPECS));
  return near !== undefined ? ` (did you mean "${near}"?)` : '';
}

function get(m: YMap, key: string): YNode | undefined {
  return m.entries.find((e) => e.key === key)?.value;
}

function str(c: Collector, n: YNode | undefined, what: string): string | undefined {
  if (!n) return undefined;
  const s = scalarText(n);
  if (s === undefined) c.at(n, `${what} must be a string, not ${describe(n)}`);
  return s;
}

function paramsOf(c: Collector, n: YNode, what: string): Record<string, Plain> | undefined {
  if (n.kind !== 'map') {
    c.at(n, `${what} must be a map of params, not ${describe(n)}`);
    return undefined;
  }
  return plain(n) as Record<string, Plain>;
}

/** `vars:` and `step:` of an expect map (undefined when it has neither). */
function parseCheck(c: Collector, n: YMap): CallCheck | undefined {
  const v = get(n, 'vars');
  const s = get(n, 'step');
  if (!v && !s) return undefined;
  const check: CallCheck = {};
  if (v) {
    if (v.kind === 'map') {
      check.vars = plain(v) as Record<string, Plain>;
      check.varsPos = v.pos;
    } else c.at(v, `expect.vars must be a map of variables and their expected values, not ${describe(v)}`);
  }
  if (s) {
    const id = str(c, s, 'expect.step');
    if (id !== undefined) {
      check.step = id;
      check.stepPos = s.pos;
    }
  }
  return check;
}

const CHECK_KEYS = ['vars', 'step'] as const;

function parseExpect(c: Collector, n: YNode): Expectation | undefined {
  if (n.kind === 'scalar') {
    const name = scalarText(n);
    if (name === undefined || !isAction(name)) {
      c.at(n, `expect: "${name ?? String(n.value)}" is not a command name${commandHint(name ?? String(n.value))}`);
      return undefined;
    }
    return isEffectKind(name) ? { kind: name, params: {} } : { kind: 'command', command: name };
  }
  if (n.kind !== 'map') {
    c.at(n, 'expect must be a command name, { command, params } or { sms: params }');
    return undefined;
  }
  const ret = get(n, 'return');
  if (ret) return parseReturnExpect(c, n, ret);
  for (const effect of ['sms', 'http', 'queue'] as const) {
    const e = get(n, effect);
    if (!e) continue;
    checkKeys(c, n, [effect], 'expect');
    if (e.kind === 'scalar' && e.value === null) return { kind: effect, params: {} };
    const params = paramsOf(c, e, `expect.${effect}`);
    if (effect === 'queue' && e.kind === 'map') checkQueueParams(e, (at, msg) => c.at(at, msg));
    return params ? { kind: effect, params } : undefined;
  }
  const named = n.entries.find((e) => isAction(e.key));
  if (named && !get(n, 'command')) {
    // { play: {...} }: the command written as the key, one mistake, one message
    c.at(
      named.keyNode,
      `expect: write \`expect: ${named.key}\`, or \`expect: { command: ${named.key}, params: { ... } }\` to ` +
        `check its params (a command is not a key of expect)`,
    );
    return undefined;
  }
  const meant = checkKeys(c, n, ['command', 'params', ...CHECK_KEYS], 'expect');
  const cmd = get(n, 'command');
  if (!cmd) {
    // `expect: { vars: ... }` / `{ step: ... }` alone: a check of the call, no command
    if (CHECK_KEYS.some((k) => get(n, k) || meant.has(k))) {
      const p = get(n, 'params');
      if (p) c.at(p, 'expect.params needs `command:` (the command whose params they are)');
      return { kind: 'check' };
    }
    if (!meant.has('command')) c.at(n, 'expect needs `command:` (or `sms:`, `vars:`, `step:`)');
    return undefined;
  }
  const name = str(c, cmd, 'expect.command');
  if (name === undefined) return undefined;
  if (!isAction(name)) {
    c.at(cmd, `expect.command: "${name}" is not a command name${commandHint(name)}`);
    return undefined;
  }
  const p = get(n, 'params');
  if (isEffectKind(name)) {
    if (!p) return { kind: name, params: {} };
    const params = paramsOf(c, p, 'expect.params');
    if (name === 'queue' && p.kind === 'map') checkQueueParams(p, (at, msg) => c.at(at, msg));
    return params ? { kind: name, params } : undefined;
  }
  if (!p) return { kind: 'command', command: name };
  const params = paramsOf(c, p, 'expect.params');
  return params ? { kind: 'command', command: name, params } : undefined;
}

/** The max_digits an expectation names (a read's), when it names one. */
function expectedMaxDigits(e: Expectation): number | undefined {
  const v = e.kind === 'command' ? e.params?.max_digits : undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : undefined;
  return n !== undefined && n >= 1 ? n : undefined;
}

function parseStep(c: Collector, n: YNode): ScenarioStep | undefined {
  if (n.kind !== 'map') {
    c.at(n, `a step must be a map with \`expect:\`, not ${describe(n)}`);
    return undefined;
  }
  const ex = get(n, 'expect');
  const effect = ex !== undefined ? effectOf(ex) : undefined;
  // http and queue steps take an answer:, a command a result:
  const answer = effect === 'http' || effect === 'queue' ? 'answer' : 'result';
  const meant = checkKeys(c, n, ['expect', 'result', 'error', 'status', 'now', 'answer', 'queues'], 'a step', {
    synonyms: {
      response: answer,
      reply: answer,
      input: 'result',
      digits: 'result',
      dtmf: 'result',
      delay: effect === 'http' ? 'answer' : 'now',
    },
    notes: {
      now: "the clock of the request that reports this step's outcome: an ISO 8601 time, or epoch ms",
      answer:
        effect === 'queue'
          ? "the operation's answer, { result: wait, position: 2 } or { error: UNAVAILABLE }"
          : "the lookup's answer, { status, body } or { error }; a slow one: fillers: n, or delay_ms in mocks.http",
      result: 'the outcome of the command the flow receives: digits, TIMEOUT...',
    },
  });
  const e = get(n, 'expect');
  if (!e) {
    // a misspelt expect: is one mistake, reported once
    if (!meant.has('expect')) c.at(n, 'a step needs `expect:`');
    return undefined;
  }
  const expect = parseExpect(c, e);
  const step: ScenarioStep = { pos: n.pos, expect: expect ?? { kind: 'command', command: 'play' } };
  const check = e.kind === 'map' && !get(e, 'sms') ? parseCheck(c, e) : undefined;
  if (check) step.check = check;
  const given = ['result', 'error', 'status'].filter((k) => get(n, k) !== undefined);
  // a terminal status may carry the interrupted command's result or error (a recording's file name): not both
  if (get(n, 'result') && get(n, 'error'))
    c.at(get(n, 'error')!, 'a step has a result or an error, not both (either may come with a status)');
  const r = get(n, 'result');
  if (r) {
    const s = str(c, r, 'result');
    if (s !== undefined) {
      step.result = s;
      step.resultPos = r.pos;
      const problem =
        expect?.kind === 'command' ? resultProblem(expect.command, s, expectedMaxDigits(expect)) : undefined;
      if (problem) c.at(r, `result: ${problem}`);
    }
  }
  const er = get(n, 'error');
  if (er) {
    const s = str(c, er, 'error');
    if (s !== undefined) {
      if (s === '') c.at(er, 'error must not be empty');
      else step.error = s;
    }
  }
  const st = get(n, 'status');
  if (st) {
    const s = str(c, st, 'status');
    if (s !== undefined) {
      if ((TERMINAL_STEP_STATUSES as readonly string[]).includes(s)) step.status = s as StepStatus;
      else c.at(st, `status: "${s}" is not one of ${TERMINAL_STEP_STATUSES.join(', ')}`);
    }
  }
  if (expect?.kind === 'check' && given.length > 0) {
    c.at(
      get(n, given[0]!)!,
      `a step that only checks vars or step sends nothing: \`${given[0]}:\` belongs to the step of the ` +
        `command it answers`,
    );
  }
  const now = get(n, 'now');
  if (now) {
    const kind = expect?.kind;
    if (isEffectKind(kind) || kind === 'check')
      c.at(
        now,
        `\`now:\` moves the clock on from the request that reports a command's outcome; ` +
          (kind === 'check'
            ? 'a step that only checks vars or step sends nothing'
            : `${kind === 'queue' ? 'a' : 'an'} ${kind} step has none (it runs inside a request)`) +
          `: write it on the step of the command whose outcome comes at that time`,
      );
    else {
      const t = clockValue(c, now, 'now');
      if (t !== undefined) {
        step.now = t;
        step.nowPos = now.pos;
      }
    }
  }
  if (isEffectKind(expect?.kind) && given.length > 0) {
    c.at(
      get(n, given[0]!)!,
      expect.kind === 'http'
        ? `an http step takes its outcome from mocks.http or its answer:, not \`${given[0]}:\``
        : expect.kind === 'queue'
          ? `a queue step takes its outcome from the case's queues or its answer:, not \`${given[0]}:\``
          : `an ${expect.kind} step takes its outcome from mocks.${expect.kind}, not \`${given[0]}:\``,
    );
  }
  const an = get(n, 'answer');
  if (an) {
    if (expect && expect.kind !== 'http' && expect.kind !== 'queue')
      c.at(
        an,
        '`answer:` answers the lookup of an http step (expect: http) or a queue operation (expect: queue); other ' +
          'steps take result:, error: or status:',
      );
    else if (expect?.kind === 'queue') {
      const op = expect.params.op;
      const a = parseQueueAnswer(an, typeof op === 'string' ? op : undefined, (at, msg) => c.at(at, msg));
      if (a) step.queueAnswer = a;
    } else {
      const a = parseHttpAnswer(an, (at, msg) => c.at(at, msg));
      if (a) step.answer = a;
    }
  }
  const qn = get(n, 'queues');
  if (qn) {
    const kind = expect?.kind;
    if (isEffectKind(kind) || kind === 'check')
      c.at(
        qn,
        "`queues:` changes the case's queues before the request that reports a command's outcome; " +
          (kind === 'check'
            ? 'a step that only checks vars or step sends nothing'
            : `${kind === 'queue' ? 'a' : 'an'} ${kind} step has none (it runs inside a request)`) +
          ': write it on the step of the command during which they change',
      );
    else step.queues = parseQueueChanges(qn, 'step', (at, msg) => c.at(at, msg));
  }
  return expect ? step : undefined;
}

/** The effect a step's `expect:` names (`expect: queue`, `{ queue: {...} }`, `{ command: queue }`), if any. */
function effectOf(ex: YNode): 'sms' | 'http' | 'queue' | undefined {
  if (ex.kind === 'scalar') return isEffectKind(String(ex.value)) ? (String(ex.value) as 'sms') : undefined;
  if (ex.kind !== 'map') return undefined;
  const cmd = get(ex, 'command');
  if (cmd?.kind === 'scalar' && isEffectKind(String(cmd.value))) return String(cmd.value) as 'sms';
  return (['sms', 'http', 'queue'] as const).find((k) => get(ex, k) !== undefined);
}

/** The call's fields; `bad` notes a status that is not one (its case then needs no second message for its steps). */
function parseCall(c: Collector, n: YNode | undefined, bad: { status?: boolean } = {}): CallFields {
  const call: CallFields = { ...DEFAULT_CALL, variables: {} };
  if (!n) return call;
  if (n.kind !== 'map') {
    c.at(n, `call must be a map, not ${describe(n)}`);
    return call;
  }
  const keys = Object.keys(DEFAULT_CALL) as (keyof CallFields)[];
  checkKeys(c, n, keys, 'call');
  for (const e of n.entries) {
    if (e.key === 'variables') {
      if (e.value.kind !== 'map') c.at(e.value, `call.variables must be a map, not ${describe(e.value)}`);
      else call.variables = plain(e.value) as Record<string, Plain>;
    } else if (e.key === 'request_hash') {
      if (e.value.kind === 'scalar' && e.value.value === null) call.request_hash = null;
      else {
        const s = str(c, e.value, 'call.request_hash');
        if (s !== undefined) call.request_hash = s;
      }
    } else if ((keys as string[]).includes(e.key)) {
      const s = str(c, e.value, `call.${e.key}`);
      if (s === undefined) continue;
      if (e.key === 'callid' && !/^[0-9]{1,20}$/.test(s)) c.at(e.value, 'call.callid must be digits');
      else if (e.key === 'status' && !(CALL_STATUSES as readonly string[]).includes(s)) {
        c.at(e.value, `call.status: "${s}" is not one of ${CALL_STATUSES.join(', ')}`);
        bad.status = true;
      } else if (e.key === 'date_started' && !/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(s))
        c.at(e.value, 'call.date_started must be "YYYY-MM-DD HH:MM:SS"');
      else (call as unknown as Record<string, string>)[e.key] = s;
    }
  }
  return call;
}

const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');

/** The engine's clock of a case with no `mocks.now`: `call.date_started` read as UTC. */
export function clockOf(call: Pick<CallFields, 'date_started'>): number {
  return Date.parse(call.date_started.replace(' ', 'T') + 'Z');
}

/** A clock value: ISO 8601 or epoch ms. */
function clockValue(c: Collector, n: YNode, what: string): number | undefined {
  const s = str(c, n, what);
  if (s === undefined) return undefined;
  const t = /^\d+$/.test(s) ? Number(s) : Date.parse(s);
  if (Number.isNaN(t)) {
    c.at(n, `${what}: "${s}" is not a date (ISO 8601, e.g. 2026-11-22T10:00:00Z) nor epoch ms`);
    return undefined;
  }
  return t;
}

function parseMocks(c: Collector, n: YNode | undefined, call: CallFields): Mocks {
  const mocks: Mocks = { sms: [], now: clockOf(call), http: [] };
  if (!n) return mocks;
  if (n.kind !== 'map') {
    c.at(n, `mocks must be a map, not ${describe(n)}`);
    return mocks;
  }
  checkKeys(c, n, ['sms', 'now', 'http'], 'mocks');
  const http = get(n, 'http');
  if (http) mocks.http = parseHttpMocks(http, (at, msg) => c.at(at, msg));
  const now = get(n, 'now');
  if (now) {
    const t = clockValue(c, now, 'mocks.now');
    if (t !== undefined) mocks.now = t;
  }
  const sms = get(n, 'sms');
  if (sms) {
    if (sms.kind !== 'seq') c.at(sms, `mocks.sms must be a list of { hash } or { error }, not ${describe(sms)}`);
    else {
      for (const item of sms.items) {
        if (item.kind !== 'map') {
          c.at(item, 'an sms outcome is { hash: SMS... } or { error: KIND, message? }');
          continue;
        }
        checkKeys(c, item, ['hash', 'error', 'message'], 'an sms outcome');
        const hash = get(item, 'hash');
        const error = get(item, 'error');
        if ((hash === undefined) === (error === undefined)) {
          c.at(item, 'an sms outcome has either `hash:` or `error:`');
          continue;
        }
        if (hash) {
          const h = str(c, hash, 'hash');
          if (h !== undefined) mocks.sms.push({ ok: true, value: h });
        } else {
          const k = str(c, error!, 'error');
          const m = get(item, 'message');
          const msg = m ? str(c, m, 'message') : undefined;
          if (k !== undefined)
            mocks.sms.push(msg === undefined ? { ok: false, error: k } : { ok: false, error: k, message: msg });
        }
      }
    }
  }
  return mocks;
}

function parseCase(
  c: Collector,
  n: YNode,
  index: number,
  names: Map<string, Loc>,
  recorded = false,
): ScenarioCase | undefined {
  if (n.kind !== 'map') {
    c.at(n, `a case must be a map with name and steps, not ${describe(n)}`);
    return undefined;
  }
  checkKeys(c, n, ['name', 'call', 'vars', 'with', 'mocks', 'steps', 'expect', 'queues'], 'a case', {
    under: [
      { key: 'call', keys: Object.keys(DEFAULT_CALL) },
      { key: 'mocks', keys: ['now', 'sms', 'http'] },
    ],
    synonyms: { params: 'with', args: 'with', variables: 'vars', title: 'name', queue: 'queues', lines: 'queues' },
    notes: {
      'mocks.now': "it is the clock of the call's first request, and a step's now: moves it on later",
      with: "a module's params",
    },
  });
  const nameNode = get(n, 'name');
  let name = `case ${index + 1}`;
  if (!nameNode) c.at(n, 'a case needs `name:`');
  else {
    const s = str(c, nameNode, 'name');
    if (s !== undefined) {
      name = s;
      const seen = names.get(s);
      if (seen) c.at(nameNode, `case name "${s}" is already used at line ${seen.line}`);
      else names.set(s, nameNode.pos);
    }
  }
  const bad: { status?: boolean } = {};
  const call = parseCall(c, get(n, 'call'), bad);
  let vars: Record<string, Plain> = {};
  const vn = get(n, 'vars');
  if (vn) {
    if (vn.kind === 'map') vars = plain(vn) as Record<string, Plain>;
    else if (!(vn.kind === 'scalar' && vn.value === null))
      c.at(vn, `vars must be a map of flow vars, not ${describe(vn)}`);
  }
  const wn = get(n, 'with');
  let withParams: Record<string, Plain> | undefined;
  let withPos: Record<string, Loc> | undefined;
  if (wn) {
    if (wn.kind === 'map') {
      withParams = plain(wn) as Record<string, Plain>;
      withPos = Object.fromEntries(wn.entries.map((e) => [e.key, e.keyNode.pos]));
    } else if (!(wn.kind === 'scalar' && wn.value === null))
      c.at(wn, `with must be a map of the module's params, not ${describe(wn)}`);
  }
  const mocks = parseMocks(c, get(n, 'mocks'), call);
  const report = (at: { pos: Loc } | Loc, msg: string) => c.at(at, msg);
  const qn = get(n, 'queues');
  const queues = qn ? parseQueueChanges(qn, 'case', report) : undefined;
  const steps: ScenarioStep[] = [];
  const sn = get(n, 'steps');
  if (!sn) c.at(n, 'a case needs `steps:`');
  else if (sn.kind !== 'seq') c.at(sn, `steps must be a list, not ${describe(sn)}`);
  else {
    // a call never answered (call.status NOANSWER, BUSY...) has nothing to step through
    if (sn.items.length === 0 && !isTerminalCall(call) && !bad.status)
      c.at(sn, 'steps must not be empty (only a call never answered, call: { status: NOANSWER }, has none)');
    let ended: string | undefined;
    // a call never answered: only its hangup handler runs (its sms and http effects, checks of the call)
    const unanswered = isTerminalCall(call) && !bad.status;
    for (const item of sn.items) {
      const s = parseStep(c, item);
      if (!s) continue;
      const effect = isEffectKind(s.expect.kind) || s.expect.kind === 'check';
      if (unanswered && !effect)
        c.at(
          item,
          `a call never answered (call.status ${call.status}) sends no command: its steps are the sms and http ` +
            'effects of the hangup handler, and checks of vars or step',
        );
      else if (ended !== undefined && !effect) {
        c.at(
          item,
          `no step can follow ${ended} (only sms, http and queue effects of the hangup handler, and checks of vars ` +
            'or step)',
        );
      }
      if (s.status) ended = `the status ${s.status} at line ${s.pos.line}`;
      else if (s.expect.kind === 'command' && s.expect.command === 'hangup' && ended === undefined)
        ended = `the hangup at line ${s.pos.line}`;
      else if (s.expect.kind === 'command' && s.expect.command === 'return' && ended === undefined)
        ended = `the return at line ${s.pos.line}`;
      steps.push(s);
    }
  }
  // time runs forward: a step's now: earlier than the clock it follows is a mistake (a recording keeps the times the
  // servers read, which may step back between instances)
  if (!recorded) {
    let clock = mocks.now;
    const mn = get(n, 'mocks');
    let from = mn?.kind === 'map' && get(mn, 'now') ? 'mocks.now' : 'call.date_started';
    for (const s of steps) {
      if (s.now === undefined) continue;
      if (s.now < clock)
        c.at(
          s.nowPos ?? s.pos,
          `now: ${iso(s.now)} is earlier than the clock it follows (${iso(clock)}, ${from}): time only moves ` +
            `forward during a call`,
        );
      else {
        clock = s.now;
        from = `the now: at line ${s.nowPos?.line ?? s.pos.line}`;
      }
    }
  }
  const out: ScenarioCase = { name, pos: n.pos, call, vars, mocks, steps };
  if (queues) out.queues = queues;
  // the queues as the case goes: its own, then each step's, in order
  checkCaseQueues([queues ?? [], ...steps.map((s) => s.queues ?? [])], report);
  const en = get(n, 'expect');
  if (en) {
    if (en.kind !== 'map')
      c.at(en, `a case's expect is { vars: {...}, step: ... } (checked at the end of the case), not ${describe(en)}`);
    else {
      checkKeys(c, en, CHECK_KEYS, "a case's expect");
      const check = parseCheck(c, en);
      if (check) {
        out.expect = check;
        out.expectPos = en.pos;
      } else if (en.entries.length === 0) c.at(en, "a case's expect needs `vars:` or `step:`");
    }
  }
  if (withParams) out.with = withParams;
  if (withPos) out.withPos = withPos;
  return out;
}

/** Parses a scenario file's text; throws ScenarioFileError with every problem. */
export function parseScenario(text: string, file: string): Scenario {
  const c = new Collector(file);
  const { root, diagnostics } = loadYaml(text, file, undefined, TOOL_FILE_DEPTH);
  for (const d of diagnostics)
    if (d.severity === 'error') c.errors.push({ file, line: d.line, column: d.column, message: d.message });
  if (c.errors.length > 0) throw new ScenarioFileError(c.errors);
  if (!root || root.kind !== 'map') {
    c.at(root ?? { line: 1, col: 1 }, 'a scenario file is a map with `flow:` and `cases:`');
    throw new ScenarioFileError(c.errors);
  }
  checkKeys(c, root, ['flow', 'environment', 'cases'], 'the scenario file');
  const recorded = isRecording(text);
  const envNode = get(root, 'environment');
  const environment = envNode ? str(c, envNode, 'environment') : undefined;
  const flowNode = get(root, 'flow');
  let flow = '';
  if (!flowNode) c.at(root, 'a scenario file needs `flow:` (a flow name or a path to a flow file)');
  else flow = str(c, flowNode, 'flow') ?? '';
  const cases: ScenarioCase[] = [];
  const cn = get(root, 'cases');
  if (!cn) c.at(root, 'a scenario file needs `cases:`');
  else if (cn.kind !== 'seq') c.at(cn, `cases must be a list, not ${describe(cn)}`);
  else {
    const names = new Map<string, Loc>();
    cn.items.forEach((item, i) => {
      const k = parseCase(c, item, i, names, recorded);
      if (k) cases.push(k);
    });
  }
  if (c.errors.length > 0) throw new ScenarioFileError(c.errors);
  const out: Scenario = { file, flow, flowPos: flowNode?.pos ?? { line: 1, col: 1 }, cases };
  if (recorded) out.recorded = true;
  if (environment !== undefined && envNode) {
    out.environment = environment;
    out.environmentPos = envNode.pos;
  }
  return out;
}

/**
 * `expect: { return: verified, values: { holder: Ann } }`: a module run on its own (the
 * scenario's flow is a module) returns this result, with at least these values.
 */
function parseReturnExpect(c: Collector, n: YMap, ret: YNode): Expectation | undefined {
  checkKeys(c, n, ['return', 'values'], 'expect');
  const result = str(c, ret, 'expect.return');
  if (result === undefined) return undefined;
  const params: Record<string, Plain> = { result };
  const v = get(n, 'values');
  if (v) {
    const values = paramsOf(c, v, 'expect.values');
    if (!values) return undefined;
    params.values = values;
  }
  return { kind: 'command', command: 'return', params };
}
