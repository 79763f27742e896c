/**
 * The flow simulator's core (`callscript simulate`, docs/simulate.md): one call stepped by
 * the tools' driver (drive.ts: the engine's `advance`, as the server steps a call), with
 * the person on the line played by whoever answers the session's questions (a terminal,
 * piped lines, or a caller script). Its effects are the simulator's executor's
 * (sim-executor.ts): http lookups from mock routes, or asked; sms asked. Pure: no I/O and
 * no wall clock (the call's clock is `now`, 1 s more per request); the session is fed
 * answers and returns display events.
 */
import { MASK, Masker, maskVars, sensitiveValues } from '../engine/mask.js';
import { isSayState } from '../engine/advance.js';
import type { Settled } from '../engine/effects.js';
import type { Effect, EffectResult } from '../engine/outcome.js';
import type { CompiledFlow } from '../engine/compile.js';
import type { Value } from '../flow/model.js';
import { COMMANDS, type CallStatus, type CommandName } from '../protocol/commands.js';
import type { RtRequest, RtResponse, WireValue } from '../protocol/rt.js';
import { httpQuestion, parseLine, questionFor, smsOptions, type Answer, type Question } from './sim-questions.js';
import { queueOutcome, queueQuestion, waitOption } from './sim-queue.js';
import { CallDriver, type Asked, type Input, type Stepped } from './drive.js';
import type { HttpMock } from './http-mocks.js';
import { clockOf, DEFAULT_CALL } from './scenario.js';

export {
  httpQuestion,
  parseLine,
  promptText,
  type Answer,
  type Option,
  type Parsed,
  type Question,
} from './sim-questions.js';
import { SimExecutor } from './sim-executor.js';
export { ScriptedCaller } from './sim-caller.js';
export { clockText, render, varsText, type RenderOptions } from './sim-render.js';

export type SimEvent =
  /** The call starts: its flow, numbers and clock (epoch ms of its first request). */
  | { kind: 'start'; flow: string; from: string; to: string; now: number }
  | {
      kind: 'command';
      n: number;
      step: string;
      say: boolean;
      command: CommandName;
      /** As sent (a caller script simulates the command with them); `hears` and `details` are what is shown. */
      params: Record<string, WireValue>;
      hears: string[];
      details: string[];
    }
  | { kind: 'sms'; step: string; to: string; body: string }
  /** An http lookup the flow makes (`wait`: the one its filler played for, waited for again). */
  | { kind: 'http'; step: string; method: string; url: string; body?: string; wait?: boolean }
  /** A queue step's operation: a poll (the agents it offers, the caller's wait so far), leave or done. */
  | { kind: 'queue'; step: string; queue: string; op: string; agents?: string[]; waited?: number }
  | { kind: 'vars'; vars: Record<string, Value> }
  | { kind: 'question'; question: Question }
  | { kind: 'answered'; text: string; by?: string }
  | { kind: 'note'; text: string }
  | { kind: 'end'; status: string; why: string; path: PathEntry[]; vars: Record<string, Value> };

export interface PathEntry {
  step: string;
  /** The command, or "sms", "http". */
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
  /**
   * The call's clock at its first request (epoch ms; default `date`, read as UTC, else DEFAULT_NOW, the default of
   * scenarios and `paths`); each later request is 1 s after the one before. Calendars, templates and conditions read
   * it.
   */
  now?: number;
  /** The first request's variables, as JSON text. */
  variables?: string;
  cdrField?: string;
  /** The first request's call_status; a terminal one is a call never answered (only the hangup handler runs). */
  status?: CallStatus;
  /** Hang up after this many commands (a flow that loops); default 500. */
  maxCommands?: number;
  /** The vars an outbound call starts with (typed as the flow declares them: startVars); the call is outbound. */
  vars?: Record<string, Value>;
  /** A module run on its own: its params (`--with`), as a scenario's `with:` gives them. */
  params?: Record<string, Value>;
  /** Mock routes answering http lookups (the format of `callscript mock-http`); absent: each lookup is asked. */
  routes?: readonly HttpMock[];
  /** Where the routes come from (shown beside their answers). */
  routesName?: string;
}

/**
 * The clock of a call given none: a scenario's default `call.date_started` (2026-11-22 10:00:00 UTC, a Sunday), the
 * one default of `callscript test`, `paths` and `simulate`.
 */
export const DEFAULT_NOW = clockOf(DEFAULT_CALL);
/** The request_hash of a simulated outbound call (one given --vars). */
export const SIMULATED_OUTBOUND = 'SIMULATED';

type Pending = { kind: 'command'; reply: RtResponse; step: string; say: boolean } | { kind: 'effect'; effect: Effect };

export class SimSession {
  private readonly driver: CallDriver;
  private readonly exec: SimExecutor;
  private pending: Pending | undefined;
  private ending: { status: string; why: string } | undefined;
  private commands = 0;
  private readonly maxCommands: number;
  private readonly pathEntries: PathEntry[] = [];
  private lastVars: Record<string, Value> = {};
  /** Sensitive values met (sensitive vars, inputs of sensitive steps): never shown. */
  private readonly secretValues = new Set<string>();
  /** Effects of the current request already shown (an asked request runs again from its start). */
  private shown = 0;
  /** When the caller joined each queue step's line (the call's clock, ms): its wait so far is the polls'. */
  private readonly joined = new Map<string, number>();
  private over = false;
  /** The question waiting for an answer, if any. */
  question: Question | undefined;

  constructor(
    readonly flow: CompiledFlow,
    readonly opts: SimOptions = {},
  ) {
    // the call's clock: --now, else the date it started (a caller script's call.date), else the tools' default
    const now = opts.now ?? (opts.date !== undefined ? clockOf({ date_started: opts.date }) : DEFAULT_NOW);
    this.maxCommands = opts.maxCommands ?? 500;
    const vars = opts.variables ?? '{}';
    const base: RtRequest = {
      app: 'SIMULATOR',
      callid: opts.callid ?? '1000001',
      request_hash: opts.vars ? SIMULATED_OUTBOUND : null,
      cli_name: opts.name ?? '',
      cli_number: opts.from ?? '+447700900123',
      date_started: opts.date ?? new Date(now).toISOString().slice(0, 19).replace('T', ' '),
      number: opts.to ?? '+442079460000',
      command: '',
      command_id: 0,
      command_result: '',
      command_error: '',
      call_status: 'UP',
      cdr_field: opts.cdrField ?? '',
      variables: JSON.parse(vars) as Record<string, unknown>,
      variablesRaw: vars,
    };
    this.exec = new SimExecutor(opts.routes);
    const startVars = { ...opts.vars, ...opts.params };
    this.driver = new CallDriver(flow, this.exec, {
      base,
      now,
      unknownCall: 'restart',
      ...(Object.keys(startVars).length > 0 ? { vars: startVars } : {}),
    });
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

  /** The call's clock for its next request (epoch ms). */
  get now(): number {
    return this.driver.now;
  }

  /** The first request: runs the flow to its first question (or its end). */
  start(): SimEvent[] {
    const base = this.driver.setup.base;
    const ev: SimEvent[] = [
      { kind: 'start', flow: this.flow.name, from: base.cli_number, to: base.number, now: this.driver.now },
    ];
    this.lastVars = {
      ...(this.flow.tables.initialVars as Record<string, Value>),
      ...(this.opts.vars ?? {}),
      ...(this.opts.params ?? {}),
    };
    this.seen(this.lastVars);
    const status = this.opts.status ?? 'UP';
    if (status !== 'UP' && status !== 'INCOMING_CALL')
      this.ending = { status, why: `the call was never answered (${status}): only the hangup handler ran` };
    this.run(this.driver.start(status), ev);
    return ev;
  }

  /** The answer to the current question. */
  answer(a: Answer): SimEvent[] {
    const p = this.pending;
    if (!p || this.over) throw new Error('no question is waiting for an answer');
    const ev: SimEvent[] = [];
    this.pending = undefined;
    this.question = undefined;
    if (p.kind === 'effect') {
      if (a.kind !== p.effect.kind) throw new Error(`an ${p.effect.kind} step takes an ${p.effect.kind} answer`);
      this.record({ step: p.effect.step, command: p.effect.kind, outcome: this.outcomeText(p.effect, a.result) });
      // out of the line: a later visit of the step joins it again
      if (
        a.kind === 'queue' &&
        !('pending' in a.result) &&
        (!a.result.ok || !['ring', 'wait'].includes(a.result.value))
      )
        this.joined.delete(p.effect.step);
      this.exec.give(a.result);
      this.run(this.driver.again(), ev);
      return ev;
    }
    const { reply } = p;
    const entry: PathEntry = { step: p.step, command: reply.command, ...(p.say ? { say: true } : {}) };
    let input: Input;
    switch (a.kind) {
      case 'result': {
        // the input a sensitive save: takes is shown masked, and never after
        const secret = !p.say && this.flow.tables.sensitive?.steps.has(p.step) === true;
        if (secret && a.result !== '') this.secretValues.add(a.result);
        entry.outcome = a.result === '' ? '(done)' : secret ? MASK : a.result;
        input = { result: a.result };
        break;
      }
      case 'error':
        entry.outcome = `error ${a.error}`;
        input = { error: a.error };
        break;
      case 'hangup':
        // the terminal request carries what the command made (a recording's file name), if anything
        entry.outcome = a.result !== undefined ? `caller hung up (result ${a.result})` : 'caller hung up';
        input = a.result !== undefined ? { status: 'HANGUP', result: a.result } : { status: 'HANGUP' };
        this.ending = { status: 'HANGUP', why: `the caller hung up during ${reply.command}` };
        break;
      case 'bridged':
        entry.outcome = 'answered (bridged)';
        input = { status: 'HANGUP' };
        this.ending = {
          status: 'HANGUP',
          why: 'the dialout was answered and bridged; the call ended when one side hung up',
        };
        break;
      default:
        throw new Error(`an ${a.kind} answer for a command`);
    }
    this.record(entry);
    this.next(input, ev);
    return ev;
  }

  /** The caller hangs up now, whatever is waiting (end of input); an effect waiting takes its first choice. */
  hangUp(): SimEvent[] {
    if (this.over) return [];
    const q = this.question;
    if (this.pending?.kind === 'effect' && q && (q.kind === 'sms' || q.kind === 'http' || q.kind === 'queue')) {
      // a queue's poll: the caller waits (then hangs up during the hold: abandoned)
      const ev = this.answer(q.kind === 'queue' ? waitOption(q).answer : q.options[0]!.answer);
      return this.over ? ev : [...ev, ...this.hangUp()];
    }
    // as `h` typed: during a record, the recording is kept
    const typed = q ? parseLine(q, 'h') : undefined;
    return this.answer(typed?.kind === 'answer' ? typed.answer : { kind: 'hangup' });
  }

  private record(e: PathEntry): void {
    this.pathEntries.push(e);
  }

  /** Seconds the caller has waited in the line of queue step `step` (joined at its first poll, now if not yet). */
  private waited(step: string): number {
    const now = this.driver.now;
    if (!this.joined.has(step)) this.joined.set(step, now);
    return Math.floor((now - this.joined.get(step)!) / 1000);
  }

  private next(input: Input, ev: SimEvent[]): void {
    this.driver.now += REQUEST_GAP_MS;
    this.run(this.driver.report(input), ev);
  }

  /** Values of sensitive vars are remembered, to be masked wherever they show. */
  private seen(vars: Record<string, unknown> | undefined): void {
    sensitiveValues(vars, this.flow.tables.sensitive, this.secretValues);
  }

  private masker(): Masker | undefined {
    return this.secretValues.size > 0 ? new Masker(this.secretValues) : undefined;
  }

  private outcomeText(effect: Effect, r: EffectResult): string {
    if ('pending' in r) return 'still running: the filler plays';
    if (effect.kind === 'queue') return queueOutcome(r);
    if (!r.ok) return `failed ${r.error}`;
    if (effect.kind === 'http') return r.value;
    return `sent ${this.flow.tables.sensitive?.steps.has(effect.step) ? MASK : r.value}`;
  }

  /** The body of a lookup's answer, briefly (sensitive values masked). */
  private bodyText(r: EffectResult): string {
    if (!('ok' in r) || !r.ok) return '';
    const body = (r.data as { body?: unknown } | undefined)?.body;
    if (body === undefined || body === null) return '';
    const m = this.masker();
    let t = JSON.stringify(m ? m.scrubValue(body) : body);
    if (t.length > 120) t = `${t.slice(0, 117)}...`;
    return ` ${t}`;
  }

  /** Shows an effect the flow makes (the url and body of a lookup masked of sensitive values). */
  private showEffect(e: Effect, ev: SimEvent[]): void {
    const m = this.masker();
    const hide = (t: string) => (m ? m.scrubText(t) : t);
    if (e.kind === 'sms') {
      ev.push({
        kind: 'sms',
        step: e.step,
        to: hide(String(e.params.to ?? '')),
        body: hide(String(e.params.body ?? '')),
      });
      return;
    }
    if (e.kind === 'queue') {
      const poll = e.op === 'poll';
      ev.push({
        kind: 'queue',
        step: e.step,
        queue: e.params.queue,
        op: e.op,
        ...(poll ? { agents: e.params.agents, waited: this.waited(e.step) } : {}),
      });
      return;
    }
    const body = typeof e.params.body === 'string' ? hide(e.params.body) : undefined;
    ev.push({
      kind: 'http',
      step: e.step,
      method: String(e.params.method),
      url: hide(String(e.params.url)),
      ...(body !== undefined ? { body } : {}),
      ...(e.wait ? { wait: true } : {}),
    });
  }

  private run(s: Stepped | Asked, ev: SimEvent[]): void {
    if (s.kind === 'stepped' && s.outcome.kind === 'reply') this.seen(s.outcome.state?.vars ?? s.outcome.summary?.vars);
    // the effects answered without asking (mock routes): shown once, with their answer
    for (let k = this.shown; k < s.effects.length; k++) {
      const done = s.effects[k]!;
      const by = this.exec.by(k);
      if (by === 'asked') continue; // shown with its question, recorded with its answer
      this.showEffect(done.effect, ev);
      const text = this.outcomeText(done.effect, done.result);
      ev.push({
        kind: 'answered',
        text: `${text}${done.effect.kind === 'http' ? this.bodyText(done.result) : ''}`,
        by: by === 'routes' ? (this.opts.routesName ?? 'mock routes') : by,
      });
      // a queue's leave or done: the caller is out of the line
      if (done.effect.kind === 'queue') this.joined.delete(done.effect.step);
      this.record({ step: done.effect.step, command: done.effect.kind, outcome: text });
    }
    if (s.kind === 'asked') {
      this.shown = s.effects.length + 1;
      this.showEffect(s.effect, ev);
      this.pending = { kind: 'effect', effect: s.effect };
      const e = s.effect;
      this.ask(
        e.kind === 'sms'
          ? { kind: 'sms', options: smsOptions() }
          : e.kind === 'queue'
            ? queueQuestion(e, this.waited(e.step))
            : httpQuestion(this.flow, e),
        ev,
      );
      return;
    }
    this.shown = 0;
    this.handle(s.outcome, ev);
  }

  private handle(out: Settled, ev: SimEvent[]): void {
    if (out.kind !== 'reply') {
      // Never happens with requests built here; end rather than loop.
      this.finish('HANGUP', `the engine answered ${out.kind}`, ev);
      return;
    }
    // sensitive values (the flow's `sensitive:`) never shown: vars masked, log lines scrubbed
    const sens = this.flow.tables.sensitive;
    const masker = sens ? this.masker() : undefined;
    for (const l of out.log ?? [])
      if (l.level !== 'debug')
        ev.push({
          kind: 'note',
          text:
            `${l.level}${l.code ? ` ${l.code}` : ''}: ${masker ? masker.scrubText(l.msg) : l.msg}` +
            (typeof l.hint === 'string' ? ` (${l.hint})` : ''),
        });
    const reply = out.reply;
    if (out.state === null) {
      if (out.summary) this.lastVars = out.summary.vars;
      const end = this.ending ?? { status: 'HANGUP', why: 'the engine ended the call' };
      this.finish(end.status, end.why, ev);
      return;
    }
    this.lastVars = out.state.vars;
    if (this.ending) {
      // A reply to a terminal request: the call is over.
      this.finish(this.ending.status, this.ending.why, ev);
      return;
    }
    const say = isSayState(out.state.s);
    this.commands++;
    // what is shown of the command has the sensitive values scrubbed (a conference's pin_code); `params` is as sent
    const shown = masker ? masker.scrubValue(reply.params) : reply.params;
    ev.push({
      kind: 'command',
      n: this.commands,
      step: out.state.step,
      say,
      command: reply.command,
      params: reply.params,
      hears: hears(reply.command, shown),
      details: details(reply.command, shown),
    });
    ev.push({ kind: 'vars', vars: maskVars(out.state.vars, sens) as Record<string, Value> });
    if (reply.command === 'hangup') {
      const ret = out.state.ret;
      // a module run on its own ends the call with its return
      this.record({
        step: out.state.step,
        command: ret ? 'return' : 'hangup',
        ...(ret ? { outcome: ret.result } : {}),
      });
      this.ending = { status: 'HANGUP', why: ret ? `the module returned ${ret.result}` : 'the flow hung up' };
      this.next({ status: 'HANGUP' }, ev);
      return;
    }
    this.pending = { kind: 'command', reply, step: out.state.step, say };
    if (this.commands > this.maxCommands) {
      ev.push({ kind: 'note', text: `${this.maxCommands} commands: hanging up (a flow that loops?)` });
      ev.push(...this.answer({ kind: 'hangup' }));
      return;
    }
    this.ask(questionFor(reply.command, reply.params, this.driver.setup.base.callid, this.commands), ev);
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

/** The simulated time between two requests of the call (the clock moves on as the call goes). */
export const REQUEST_GAP_MS = 1000;

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
