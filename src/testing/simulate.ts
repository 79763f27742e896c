/**
 * The flow simulator's core (`callscript simulate`, docs/simulate.md): one call driven
 * through the engine's `advance`, with the person on the line played by whoever answers
 * the session's questions (a terminal, piped lines, or a caller script). Pure: no I/O and
 * no clock; the session is fed answers and returns display events.
 */
import { MASK, Masker, maskVars, sensitiveValues } from '../engine/mask.js';
import { advance, isSayState } from '../engine/advance.js';
import type { EffectResult, Outcome, SmsEffect } from '../engine/outcome.js';
import type { CallState } from '../engine/types.js';
import type { CompiledFlow } from '../engine/compile.js';
import type { Value } from '../flow/model.js';
import { COMMANDS, type CallStatus, type CommandName } from '../protocol/commands.js';
import type { RtRequest, RtResponse, WireValue } from '../protocol/rt.js';
import { CallerActor } from '../emulator/caller/actor.js';
import type { CallerScript } from '../emulator/caller/types.js';
import { simulate as simulateCommand, type CallMedia } from '../emulator/driver/simulate.js';
import { Ids } from '../emulator/ids.js';

/** What the person on the line (or the far end, or the SMS service) does. */
export type Answer =
  | { kind: 'result'; result: string }
  | { kind: 'error'; error: string }
  /** The caller hangs up during the command (terminal status HANGUP). */
  | { kind: 'hangup' }
  /** A dialout is answered: the legs are bridged and the call ends when one side hangs up. */
  | { kind: 'bridged' }
  | { kind: 'sms'; result: EffectResult };

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
  | { kind: 'sms'; options: Option[] };

export type SimEvent =
  | { kind: 'start'; flow: string; from: string; to: string }
  | {
      kind: 'command';
      n: number;
      step: string;
      say: boolean;
      command: CommandName;
      params: Record<string, WireValue>;
      hears: string[];
      details: string[];
    }
  | { kind: 'sms'; step: string; to: string; body: string }
  | { kind: 'vars'; vars: Record<string, Value> }
  | { kind: 'question'; question: Question }
  | { kind: 'answered'; text: string; by?: string }
  | { kind: 'note'; text: string }
  | { kind: 'end'; status: string; why: string; path: PathEntry[]; vars: Record<string, Value> };

export interface PathEntry {
  step: string;
  /** The command, or "sms". */
  command: string;
  /** A branch's `say:` before a transition (played for `step`'s branch). */
  say?: boolean;
  /** What came of it: the result, error, hangup... (absent for the flow's hangup). */
  outcome?: string;
}

export interface SimOptions {
  from?: string;
  to?: string;
  name?: string;
  date?: string;
  callid?: string;
  /** Epoch ms of the first request (default: 2026-01-05 10:00:00 UTC, a Monday morning). */
  now?: number;
  /** The first request's variables, as JSON text. */
  variables?: string;
  cdrField?: string;
  status?: 'UP' | 'INCOMING_CALL';
  /** Hang up after this many commands (a flow that loops); default 500. */
  maxCommands?: number;
}

const SMS_ERRORS = ['REJECTED', 'TIMEOUT', 'NETWORK', 'FAILED'];
const DEFAULT_NOW = Date.UTC(2026, 0, 5, 10, 0, 0);

type Pending =
  | { kind: 'command'; reply: RtResponse; step: string; say: boolean }
  | { kind: 'sms'; effect: SmsEffect; resume: (r: EffectResult) => Outcome };

export class SimSession {
  private state: CallState | undefined;
  private now: number;
  private readonly base: Omit<RtRequest, 'command' | 'command_id' | 'command_result' | 'command_error' | 'call_status'>;
  private pending: Pending | undefined;
  private ending: { status: string; why: string } | undefined;
  private commands = 0;
  private readonly maxCommands: number;
  private readonly pathEntries: PathEntry[] = [];
  private lastVars: Record<string, Value> = {};
  private over = false;
  /** The question waiting for an answer, if any. */
  question: Question | undefined;

  constructor(
    readonly flow: CompiledFlow,
    readonly opts: SimOptions = {},
  ) {
    this.now = opts.now ?? DEFAULT_NOW;
    this.maxCommands = opts.maxCommands ?? 500;
    const vars = opts.variables ?? '{}';
    this.base = {
      app: 'SIMULATOR',
      callid: opts.callid ?? '1000001',
      request_hash: null,
      cli_name: opts.name ?? '',
      cli_number: opts.from ?? '+447700900123',
      date_started: opts.date ?? new Date(this.now).toISOString().slice(0, 19).replace('T', ' '),
      number: opts.to ?? '+442079460000',
      cdr_field: opts.cdrField ?? '',
      variables: JSON.parse(vars) as Record<string, unknown>,
      variablesRaw: vars,
    };
  }

  get ended(): boolean {
    return this.over;
  }

  /** The call's vars as last seen, sensitive ones masked (what `v` prints). */
  get vars(): Record<string, Value> {
    return maskVars(this.lastVars, this.flow.tables.sensitive) as Record<string, Value>;
  }

  get path(): readonly PathEntry[] {
    return this.pathEntries;
  }

  /** The first request: runs the flow to its first question (or its end). */
  start(): SimEvent[] {
    const ev: SimEvent[] = [{ kind: 'start', flow: this.flow.name, from: this.base.cli_number, to: this.base.number }];
    this.lastVars = { ...(this.flow.tables.initialVars as Record<string, Value>) };
    this.send(
      { command: '', command_id: 0, command_result: '', command_error: '', call_status: this.opts.status ?? 'UP' },
      ev,
    );
    return ev;
  }

  /** The answer to the current question. */
  answer(a: Answer): SimEvent[] {
    const p = this.pending;
    if (!p || this.over) throw new Error('no question is waiting for an answer');
    const ev: SimEvent[] = [];
    this.pending = undefined;
    this.question = undefined;
    if (p.kind === 'sms') {
      if (a.kind !== 'sms') throw new Error('an sms step takes an sms answer');
      this.record({
        step: p.effect.step,
        command: 'sms',
        outcome:
          'pending' in a.result
            ? 'pending'
            : a.result.ok
              ? `sent ${this.flow.tables.sensitive?.steps.has(p.effect.step) ? MASK : a.result.value}`
              : `failed ${a.result.error}`,
      });
      this.handle(p.resume(a.result), ev);
      return ev;
    }
    const { reply } = p;
    const entry: PathEntry = { step: p.step, command: reply.command, ...(p.say ? { say: true } : {}) };
    const next = {
      command: reply.command,
      command_id: reply.command_id,
      command_result: '',
      command_error: '',
      call_status: 'UP' as CallStatus,
    };
    switch (a.kind) {
      case 'result':
        // the input a sensitive save: takes is shown masked
        entry.outcome =
          a.result === '' ? '(done)' : !p.say && this.flow.tables.sensitive?.steps.has(p.step) ? MASK : a.result;
        next.command_result = a.result;
        break;
      case 'error':
        entry.outcome = `error ${a.error}`;
        next.command_error = a.error;
        break;
      case 'hangup':
        entry.outcome = 'caller hung up';
        next.call_status = 'HANGUP';
        this.ending = { status: 'HANGUP', why: `the caller hung up during ${reply.command}` };
        break;
      case 'bridged':
        entry.outcome = 'answered (bridged)';
        next.call_status = 'HANGUP';
        this.ending = {
          status: 'HANGUP',
          why: 'the dialout was answered and bridged; the call ended when one side hung up',
        };
        break;
      case 'sms':
        throw new Error('an sms answer for a command');
    }
    this.record(entry);
    this.send(next, ev);
    return ev;
  }

  /** The caller hangs up now, whatever is waiting (end of input). */
  hangUp(): SimEvent[] {
    if (this.over) return [];
    if (this.pending?.kind === 'sms') {
      const ev = this.answer({ kind: 'sms', result: { ok: true, value: 'SMS00001' } });
      return this.over ? ev : [...ev, ...this.hangUp()];
    }
    return this.answer({ kind: 'hangup' });
  }

  private record(e: PathEntry): void {
    this.pathEntries.push(e);
  }

  private send(
    fields: Pick<RtRequest, 'command' | 'command_id' | 'command_result' | 'command_error' | 'call_status'>,
    ev: SimEvent[],
  ): void {
    this.now += 1000;
    const req: RtRequest = { ...this.base, ...fields };
    this.handle(advance(this.flow, this.state, req, { now: this.now, unknownCall: 'restart' }), ev);
  }

  private handle(out: Outcome, ev: SimEvent[]): void {
    switch (out.kind) {
      case 'effect': {
        const e = out.effect;
        if (e.kind === 'http') {
          // the simulator makes no network calls: a lookup fails (scenario files mock them)
          this.record({
            step: e.step,
            command: 'http',
            outcome: 'failed UNAVAILABLE (the simulator makes no lookups)',
          });
          this.handle(out.resume({ ok: false, error: 'UNAVAILABLE', message: 'the simulator makes no lookups' }), ev);
          return;
        }
        ev.push({ kind: 'sms', step: e.step, to: String(e.params.to ?? ''), body: String(e.params.body ?? '') });
        this.pending = { kind: 'sms', effect: e, resume: out.resume };
        this.ask({ kind: 'sms', options: smsOptions() }, ev);
        return;
      }
      case 'replay':
      case 'stale':
      case 'rejected':
        // Never happens with requests built here; end rather than loop.
        this.finish('HANGUP', `the engine answered ${out.kind}`, ev);
        return;
      case 'reply':
        break;
    }
    // sensitive values (the flow's `sensitive:`) never shown: vars masked, log lines scrubbed
    const sens = this.flow.tables.sensitive;
    const masker =
      sens && out.kind === 'reply'
        ? new Masker(sensitiveValues(out.state?.vars ?? out.summary?.vars, sens, sensitiveValues(this.lastVars, sens)))
        : undefined;
    for (const l of out.log ?? [])
      if (l.level !== 'debug')
        ev.push({
          kind: 'note',
          text: `${l.level}${l.code ? ` ${l.code}` : ''}: ${masker ? masker.scrubText(l.msg) : l.msg}`,
        });
    const reply = out.reply;
    if (out.state === null) {
      this.state = undefined;
      if (out.summary) this.lastVars = out.summary.vars;
      const end = this.ending ?? { status: 'HANGUP', why: 'the engine ended the call' };
      this.finish(end.status, end.why, ev);
      return;
    }
    const prevDone = this.state?.done;
    this.state = out.state;
    this.lastVars = out.state.vars;
    if (this.ending || prevDone) {
      // A reply to a terminal request or after the flow's hangup: the call is over.
      this.finish(this.ending?.status ?? 'HANGUP', this.ending?.why ?? 'the flow hung up', ev);
      return;
    }
    const say = isSayState(out.state.s);
    this.commands++;
    ev.push({
      kind: 'command',
      n: this.commands,
      step: out.state.step,
      say,
      command: reply.command,
      params: reply.params,
      hears: hears(reply.command, reply.params),
      details: details(reply.command, reply.params),
    });
    ev.push({ kind: 'vars', vars: maskVars(out.state.vars, sens) as Record<string, Value> });
    if (reply.command === 'hangup') {
      this.record({ step: out.state.step, command: 'hangup' });
      this.ending = { status: 'HANGUP', why: 'the flow hung up' };
      this.send(
        {
          command: 'hangup',
          command_id: reply.command_id,
          command_result: '',
          command_error: '',
          call_status: 'HANGUP',
        },
        ev,
      );
      return;
    }
    this.pending = { kind: 'command', reply, step: out.state.step, say };
    if (this.commands > this.maxCommands) {
      ev.push({ kind: 'note', text: `${this.maxCommands} commands: hanging up (a flow that loops?)` });
      ev.push(...this.answer({ kind: 'hangup' }));
      return;
    }
    this.ask(questionFor(reply.command, reply.params, this.base.callid, this.commands), ev);
  }

  private ask(q: Question, ev: SimEvent[]): void {
    this.question = q;
    ev.push({ kind: 'question', question: q });
  }

  private finish(status: string, why: string, ev: SimEvent[]): void {
    this.over = true;
    this.pending = undefined;
    this.question = undefined;
    ev.push({
      kind: 'end',
      status,
      why,
      path: [...this.pathEntries],
      vars: maskVars(this.lastVars, this.flow.tables.sensitive) as Record<string, Value>,
    });
  }
}

function smsOptions(): Option[] {
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

function questionFor(command: CommandName, params: Record<string, WireValue>, callid: string, n: number): Question {
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

/** What the caller hears from a command's params. */
export function hears(command: CommandName, params: Record<string, WireValue>): string[] {
  const out: string[] = [];
  const spec = COMMANDS[command].params;
  for (const [k, v] of Object.entries(params)) {
    if (spec[k]?.type === 'media') {
      const m = mediaText(v);
      if (m !== undefined) out.push(k === 'media_id' ? m : `${k}: ${m}`);
    }
  }
  if (command === 'play_record') out.push(`recording ${String(params.media_file)}`);
  if (command === 'play_wav_data') out.push(`WAV audio (${String(params.audio_data ?? '').length} base64 characters)`);
  return out;
}

function mediaText(v: WireValue): string | undefined {
  if (Array.isArray(v))
    return v
      .map(mediaText)
      .filter((x) => x !== undefined)
      .join(' + ');
  if (v === 0 || v === '0' || v === null || v === '') return undefined;
  if (typeof v === 'string' && v.startsWith('TTS|')) {
    const [, voice, ...text] = v.split('|');
    return `"${text.join('|')}" (${voice})`;
  }
  return `media ${String(v)}`;
}

/** The command's other params, briefly. */
function details(command: CommandName, params: Record<string, WireValue>): string[] {
  const spec = COMMANDS[command].params;
  const out: string[] = [];
  if (command === 'dialout' && Array.isArray(params.targets)) {
    const target = (t: WireValue) =>
      t && typeof t === 'object' && !Array.isArray(t)
        ? `${String(t.number)}${t.timeout !== undefined ? ` (${String(t.timeout)} s)` : ''}`
        : String(t);
    out.push(`targets: ${params.targets.map(target).join(', ')}`);
  }
  const rest = Object.entries(params).filter(
    ([k]) => spec[k]?.type !== 'media' && k !== 'targets' && k !== 'audio_data' && k !== 'media_file',
  );
  if (rest.length > 0)
    out.push(rest.map(([k, v]) => `${k}=${typeof v === 'bigint' ? v.toString() : JSON.stringify(v)}`).join(' '));
  return out;
}

/** Reading a typed line: an answer, a request to print the vars, or why the line is not one. */
export type Parsed =
  { kind: 'answer'; answer: Answer; text: string } | { kind: 'vars' } | { kind: 'invalid'; message: string };

export function parseLine(q: Question, line: string): Parsed {
  const s = line.trim();
  if (s === 'v') return { kind: 'vars' };
  if (q.kind !== 'sms') {
    if (s === 'h') return { kind: 'answer', answer: { kind: 'hangup' }, text: 'hang up' };
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
    case 'sms': {
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

/** The caller of a caller script (the emulator's format), as answers to the questions. */
export class ScriptedCaller {
  private readonly actor: CallerActor;
  private readonly media: CallMedia;
  private lastParams: Record<string, WireValue> = {};
  constructor(readonly script: CallerScript) {
    this.actor = new CallerActor(script);
    this.media = { callid: '1000001', ids: new Ids('callscript'), recordings: new Map() };
  }

  /** Session options from the script's `call`. */
  options(): SimOptions {
    const c = this.script.call;
    const o: SimOptions = {
      from: c.from,
      to: c.to,
      name: c.name,
      variables: c.variables,
      cdrField: c.cdr_field,
      status: c.status,
    };
    if (c.date) o.date = c.date;
    if (c.max_commands) o.maxCommands = c.max_commands;
    return o;
  }

  /** Remember the params of each command event (the outcome depends on them). */
  saw(e: SimEvent): void {
    if (e.kind === 'command') this.lastParams = e.params;
  }

  /** The answer to `q`, with where it comes from. */
  answer(q: Question): { answer: Answer; text: string; by: string } {
    if (q.kind === 'sms')
      return { answer: { kind: 'sms', result: { ok: true, value: 'SMS00001' } }, text: 'sent', by: 'built-in' };
    const d = this.actor.next(q.command);
    if (d.hangup) return { answer: { kind: 'hangup' }, text: 'hang up', by: d.source };
    const r = simulateCommand(q.command, this.lastParams as Record<string, unknown>, d.outcome, this.media);
    this.actor.completed();
    if (r.error) return { answer: { kind: 'error', error: r.error }, text: `command_error ${r.error}`, by: d.source };
    if (r.bridged) return { answer: { kind: 'bridged' }, text: 'answer (bridged: call ends)', by: d.source };
    return { answer: { kind: 'result', result: r.result }, text: r.result === '' ? 'done' : r.result, by: d.source };
  }

  unused(): string[] {
    return this.actor.unused();
  }
}

export interface RenderOptions {
  color?: boolean;
}

const paint = (on: boolean | undefined, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

export function varsText(vars: Record<string, Value>): string {
  const parts = Object.entries(vars).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return parts.length > 0 ? parts.join(' ') : '(none)';
}

/** The prompt line of a question. */
export function promptText(q: Question): string {
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
  }
}

/** One event as lines of text (each ending with a newline); questions render nothing (see promptText). */
export function render(e: SimEvent, o: RenderOptions = {}): string {
  const c = o.color;
  switch (e.kind) {
    case 'start':
      return paint(c, '1', `call to flow ${e.flow} from ${e.from || '(withheld)'} to ${e.to}`) + '\n';
    case 'command': {
      const head = `#${e.n} ${e.say ? `${e.step} (branch say)` : e.step}: ${e.command}`;
      const lines = [paint(c, '1;36', head)];
      for (const h of e.hears) {
        // media_id is what the caller hears; other media params (welcome, whisper...) are named.
        const named = /^([a-z_]+): (.*)$/s.exec(h);
        lines.push(named ? `  ${named[1]}: ${paint(c, '32', named[2]!)}` : `  hears: ${paint(c, '32', h)}`);
      }
      for (const d of e.details) lines.push(`  ${d}`);
      return lines.join('\n') + '\n';
    }
    case 'sms':
      return paint(c, '1;36', `${e.step}: sms to ${e.to}`) + `\n  text: ${paint(c, '32', JSON.stringify(e.body))}\n`;
    case 'vars':
      return paint(c, '2', `  vars: ${varsText(e.vars)}`) + '\n';
    case 'question':
      return '';
    case 'answered':
      return `  -> ${e.text}${e.by ? paint(c, '2', ` (${e.by})`) : ''}\n`;
    case 'note':
      return paint(c, '33', `  ${e.text}`) + '\n';
    case 'end': {
      const lines = [paint(c, '1', `call ended: ${e.status} (${e.why})`), 'path:'];
      e.path.forEach((p, i) =>
        lines.push(
          `  ${i + 1}. ${p.step}${p.say ? ' (branch say)' : ''}: ${p.command}` +
            (p.outcome !== undefined ? ` -> ${p.outcome}` : ''),
        ),
      );
      lines.push(`vars: ${varsText(e.vars)}`);
      return lines.join('\n') + '\n';
    }
  }
}
