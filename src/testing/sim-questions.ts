/**
 * The simulator's questions and how a typed line answers them (`callscript simulate`,
 * docs/simulate.md): a read's keys, a numbered menu of a command's results, an opaque
 * result's text, an sms's outcome, an http lookup's answer (one choice per way its step
 * goes, or a status typed with a JSON body).
 */
import type { CompiledFlow } from '../engine/compile.js';
import { LOOKUP_ERRORS, MAX_BODY_DEPTH } from '../engine/http-wait.js';
import { nestedDeeper } from '../protocol/json-depth.js';
import type { Effect, EffectResult } from '../engine/outcome.js';
import type { Value } from '../flow/model.js';
import { COMMANDS, type CommandName } from '../protocol/commands.js';
import type { WireValue } from '../protocol/rt.js';
import { answerResult, httpBranches } from './branch-executor.js';
import { closest } from '../flow/check-context.js';
import { printable } from '../terminal/printable.js';

/** What the person on the line (or the far end, or the SMS service, or the bank's API) does. */
export type Answer =
  | { kind: 'result'; result: string }
  | { kind: 'error'; error: string }
  /**
   * The caller hangs up during the command (terminal status HANGUP), the request carrying `result` when given (the
   * service keeps what was recorded: the file name of a `record` the caller hung up during).
   */
  | { kind: 'hangup'; result?: string }
  /** A dialout is answered: the legs are bridged and the call ends when one side hangs up. */
  | { kind: 'bridged' }
  | { kind: 'sms'; result: EffectResult }
  /** How an http lookup went (without --mocks): its status and body, or its error. */
  | { kind: 'http'; result: EffectResult }
  /** What a queue's store answered a poll (`agent`: the one rung). */
  | { kind: 'queue'; result: EffectResult; agent?: string };

export interface Option {
  key: string;
  label: string;
  answer: Answer;
}

export type Question =
  /** A read: the keys pressed. */
  | { kind: 'keys'; command: 'read'; maxDigits: number }
  /** A command whose result is one of a few: a numbered menu. */
  | { kind: 'menu'; command: CommandName; options: Option[] }
  /** A command with an opaque result (a file name, a hash): free text, Enter for `suggested`. */
  | { kind: 'text'; command: CommandName; suggested: string }
  /** An sms step: sent, or how it failed. */
  | { kind: 'sms'; options: Option[] }
  /** An http lookup: the statuses the step names, a timeout, an error; or a status typed with a JSON body. */
  | { kind: 'http'; options: Option[] }
  /** A queue step's poll: ring which agent, wait, timeout, empty, the store failing (sim-queue.ts). */
  | { kind: 'queue'; queue: string; waited: number; options: Option[] };

/**
 * The question of an http lookup: one choice per way the step can go (ok, the statuses it names, timeout, error); and,
 * on a step with a filler, "still running": the lookup outlasts the request's deadline, the filler plays, and the same
 * question comes back at the next request.
 */
export function httpQuestion(flow: CompiledFlow, e: Effect): Question {
  const options = httpBranches(flow, e.step).map((a, i): Option => ({
    key: String(i + 1),
    label:
      a.error !== undefined
        ? a.error === 'TIMEOUT'
          ? 'timeout'
          : `error ${a.error}`
        : `${a.status}${a.status === 200 ? ' (ok)' : ''}`,
    answer: { kind: 'http', result: answerResult(a) },
  }));
  if (e.kind === 'http' && e.filler)
    options.push({
      key: String(options.length + 1),
      label: 'still running (the filler plays)',
      answer: { kind: 'http', result: { pending: true } },
    });
  return { kind: 'http', options };
}

const SMS_ERRORS = ['REJECTED', 'TIMEOUT', 'NETWORK', 'FAILED'];

export function smsOptions(): Option[] {
  return [
    { key: '1', label: 'sent', answer: { kind: 'sms', result: { ok: true, value: 'SMS00001' } } },
    ...SMS_ERRORS.map((e, i): Option => ({
      key: String(i + 2),
      label: `fails: ${e}`,
      answer: { kind: 'sms', result: { ok: false, error: e } },
    })),
  ];
}

const RESULT_LABELS: Record<string, string> = {
  play: '0 played|1 failed',
  play_record: '0 played|1 failed',
  play_wav_data: '0 played|1 failed',
  play_talk_detect: '0 no talk|TALK',
};

export function questionFor(
  command: CommandName,
  params: Record<string, WireValue>,
  callid: string,
  n: number,
): Question {
  const spec = COMMANDS[command].results;
  if (command === 'read')
    return { kind: 'keys', command, maxDigits: typeof params.max_digits === 'number' ? params.max_digits : 1 };
  if (command === 'dialout') {
    return {
      kind: 'menu',
      command,
      options: [
        { key: '1', label: 'answer (bridged: call ends)', answer: { kind: 'bridged' } },
        { key: '2', label: 'NOANSWER', answer: { kind: 'result', result: 'NOANSWER' } },
      ],
    };
  }
  if (spec.kind === 'enum') {
    const labels = RESULT_LABELS[command]?.split('|');
    return {
      kind: 'menu',
      command,
      options: spec.values.map((v, i) => ({
        key: String(i + 1),
        label: labels?.[i] ?? v,
        answer: { kind: 'result', result: v },
      })),
    };
  }
  if (spec.kind === 'none')
    return { kind: 'menu', command, options: [{ key: '1', label: 'done', answer: { kind: 'result', result: '' } }] };
  const suggested = command === 'record' ? `rec-${callid}-${n}.wav` : `REC${String(n).padStart(5, '0')}`;
  return { kind: 'text', command, suggested };
}

/** The most characters of a JSON body typed at an http question. */
const MAX_TYPED_BODY = 65536;

/**
 * An http question's answer: a choice's key (Enter: the first); a status typed, with a JSON body after it
 * (`200 {"amount": 12}`); `t` a timeout; `e [KIND]` an error (default NETWORK).
 */
function parseHttpLine(q: Extract<Question, { kind: 'http' }>, s: string): Parsed {
  const o = q.options.find((x) => x.key === s) ?? (s === '' ? q.options[0] : undefined);
  if (o) return { kind: 'answer', answer: o.answer, text: o.label };
  const invalid = (why: string): Parsed => ({
    kind: 'invalid',
    message:
      `${why}choose ${q.options.map((x) => x.key).join(', ')}, or type a status and a JSON body ` +
      `(200 {"amount": 12}), t (timeout), e [KIND] (an error), v (vars)`,
  });
  if (s === 't')
    return {
      kind: 'answer',
      answer: { kind: 'http', result: { ok: false, error: 'TIMEOUT', message: 'answered timeout' } },
      text: 'timeout',
    };
  const e = /^e(?:\s+(\S+))?$/.exec(s);
  if (e) {
    // the error kinds a scenario's mocks.http takes (and a lookup on a server can end with)
    const error = (e[1] ?? 'NETWORK').toUpperCase();
    if (!(LOOKUP_ERRORS as readonly string[]).includes(error)) {
      const near = closest(error, LOOKUP_ERRORS);
      return {
        kind: 'invalid',
        message:
          `"${e[1]!.slice(0, 40)}" is not an error of a lookup${near ? ` (did you mean ${near}?)` : ''}: ` +
          `e ${LOOKUP_ERRORS.join(', e ')}; e alone is NETWORK`,
      };
    }
    return {
      kind: 'answer',
      answer: { kind: 'http', result: { ok: false, error, message: `answered ${error}` } },
      text: `error ${error}`,
    };
  }
  const m = /^([0-9]+)(?:\s+([\s\S]*))?$/.exec(s);
  if (!m) return invalid('');
  const status = Number(m[1]);
  if (status < 100 || status > 599) return invalid(`a status is 100..599, not ${m[1]!.slice(0, 12)}: `);
  let body: Value = null;
  if (m[2] !== undefined) {
    if (m[2].length > MAX_TYPED_BODY) return invalid(`a body is at most ${MAX_TYPED_BODY} characters: `);
    try {
      body = JSON.parse(m[2]) as Value;
    } catch {
      return invalid('the body is not JSON: ');
    }
    // as a server takes a lookup's answer (TOO_DEEP), before it is written back or walked
    if (nestedDeeper(body, MAX_BODY_DEPTH))
      return invalid(`the body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep: `);
  }
  return {
    kind: 'answer',
    answer: { kind: 'http', result: answerResult({ status, body }) },
    text: m[2] !== undefined ? `${status} ${JSON.stringify(body)}` : String(status),
  };
}

/** The caller hangs up during the command `q` asks about: a recording made so far is kept (its file name sent). */
function hangupDuring(q: Question): Parsed {
  if (q.kind === 'text' && q.command === 'record')
    return {
      kind: 'answer',
      answer: { kind: 'hangup', result: q.suggested },
      text: `hang up (the recording ${q.suggested} is kept)`,
    };
  return { kind: 'answer', answer: { kind: 'hangup' }, text: 'hang up' };
}

/** Reading a typed line: an answer, a request to print the vars, or why the line is not one. */
export type Parsed =
  { kind: 'answer'; answer: Answer; text: string } | { kind: 'vars' } | { kind: 'invalid'; message: string };

export function parseLine(q: Question, line: string): Parsed {
  const s = line.trim();
  if (s === 'v') return { kind: 'vars' };
  if (q.kind === 'http') return parseHttpLine(q, s);
  if (q.kind !== 'sms' && q.kind !== 'queue') {
    if (s === 'h') return hangupDuring(q);
    const e = /^e(?:\s+([A-Za-z0-9_]+))?$/.exec(s);
    if (e) {
      const error = e[1] ?? 'COMMAND_FAILED';
      return { kind: 'answer', answer: { kind: 'error', error }, text: `command_error ${error}` };
    }
  }
  switch (q.kind) {
    case 'keys': {
      if (!/^[0-9*#]*$/.test(s))
        return {
          kind: 'invalid',
          message: 'type the keys (0-9, *, #) then Enter; Enter alone is TIMEOUT; h hang up, e fail, v vars',
        };
      let keys = s.includes('#') ? s.slice(0, s.indexOf('#')) : s;
      if (keys.length > q.maxDigits) keys = keys.slice(0, q.maxDigits);
      const result = keys === '' ? 'TIMEOUT' : keys;
      const ignored = keys !== s ? ` (typed ${s})` : '';
      return { kind: 'answer', answer: { kind: 'result', result }, text: `${result}${ignored}` };
    }
    case 'text': {
      const result = s === '' ? q.suggested : s;
      return { kind: 'answer', answer: { kind: 'result', result }, text: result };
    }
    case 'menu':
    case 'sms':
    case 'queue': {
      const o = q.options.find((x) => x.key === s) ?? (s === '' ? q.options[0] : undefined);
      if (o) return { kind: 'answer', answer: o.answer, text: o.label };
      const keys = q.options.map((x) => x.key).join(', ');
      return {
        kind: 'invalid',
        message: `choose ${keys}${q.kind === 'menu' ? ', h (hang up), e [CODE] (fail)' : ''} or v (vars)`,
      };
    }
  }
}

/** The prompt line of a question, escaped (its choices may name what a flow or a lookup gave). */
export function promptText(q: Question): string {
  return printable(promptLine(q));
}

function promptLine(q: Question): string {
  switch (q.kind) {
    case 'keys':
      return `keys (max ${q.maxDigits}; Enter alone = TIMEOUT, # ends; h hang up, e fail, v vars)`;
    case 'text':
      return `${q.command} result (Enter = ${q.suggested}; h hang up, e fail, v vars)`;
    case 'menu':
      return (
        `${q.command}: ${q.options.map((o) => `${o.key}) ${o.label}`).join('  ')}  h) hang up  e) fail  v) ` +
        `vars (Enter = 1)`
      );
    case 'sms':
      return `sms: ${q.options.map((o) => `${o.key}) ${o.label}`).join('  ')}  v) vars (Enter = 1)`;
    case 'http':
      return (
        `http: ${q.options.map((o) => `${o.key}) ${o.label}`).join('  ')}  or a status and JSON body ` +
        `(200 {"amount": 12})  t) timeout  e) error  v) vars (Enter = 1)`
      );
    case 'queue':
      return (
        `queue ${q.queue} (waited ${q.waited} s): ${q.options.map((o) => `${o.key}) ${o.label}`).join('  ')}  ` +
        'v) vars (Enter = 1)'
      );
  }
}
