/**
 * Test helpers for the engine: flow models built by hand (until every test goes through
 * the checker), requests with defaults, and a call driver that chains requests.
 */
import { advance, replyCommand, type EngineOptions, type Outcome } from '../../src/engine/advance.js';
import type { Effect, EffectResult } from '../../src/engine/outcome.js';
import type { EffectContext, Executor } from '../../src/engine/effects.js';
import type { FlowVersions } from '../../src/engine/ports.js';
import type { StepAnswer } from '../../src/engine/answer.js';
import { ANSWER_STATUS } from '../../src/http/rt-route.js';
import type { CallState } from '../../src/engine/types.js';
import { compileFlow, type CompiledFlow } from '../../src/engine/compile.js';
import type {
  Branch,
  Branches,
  CommandCall,
  FlowModel,
  Handlers,
  MediaParam,
  MediaSpec,
  Pos,
  ResultPattern,
  Step,
  Value,
} from '../../src/flow/model.js';
import type { CommandName } from '../../src/protocol/commands.js';
import type { RtRequest } from '../../src/protocol/rt.js';

export const POS: Pos = { file: 'test.yaml', line: 1, column: 1 };
export const VOICE = 'TTS_EN-GB_SERENA';

export type MediaIn = string | number | MediaSpec;
export type BranchIn = string | { goto?: string; retry?: number; then?: string; say?: MediaIn | MediaIn[] };

export function media(m: MediaIn | MediaIn[]): MediaParam {
  const list = Array.isArray(m) ? m : [m];
  return list.map((x): MediaSpec => {
    if (typeof x === 'number') return x === 0 ? { kind: 'none' } : { kind: 'id', id: x };
    if (typeof x === 'string') {
      if (x.startsWith('TTS|') || /^\{\{.*\}\}$/.test(x)) return { kind: 'raw', value: x };
      return { kind: 'tts', voice: VOICE, text: x };
    }
    return x;
  });
}

export function branch(b: BranchIn): Branch {
  if (typeof b === 'string') return { goto: b, pos: POS };
  const out: Branch = { pos: POS };
  if (b.goto !== undefined) out.goto = b.goto;
  if (b.retry !== undefined) out.retry = b.retry;
  if (b.then !== undefined) out.then = b.then;
  if (b.say !== undefined) out.say = media(b.say);
  return out;
}

/** `/re/` and Asterisk `_1XX.` patterns to anchored regex sources. */
export function patternRegex(source: string): string {
  if (source.startsWith('/') && source.endsWith('/')) return source.slice(1, -1);
  let re = '^';
  for (const ch of source.slice(1)) {
    if (ch === 'X') re += '[0-9]';
    else if (ch === 'Z') re += '[1-9]';
    else if (ch === 'N') re += '[2-9]';
    else if (ch === '.') re += '[0-9*#]+';
    else re += ch.replace(/[*#]/, '\\$&');
  }
  return re + '$';
}

export function branches(on: Record<string, BranchIn> = {}): Branches {
  const out: Branches = { exact: {}, patterns: [] };
  for (const [k, b] of Object.entries(on)) {
    if (k === 'default') out.default = branch(b);
    else if (k === 'error') out.error = branch(b);
    else if ((k.startsWith('/') && k.length > 1) || k.startsWith('_'))
      out.patterns.push({ source: k, regex: patternRegex(k), branch: branch(b) });
    else out.exact[k] = branch(b);
  }
  return out;
}

const MEDIA_PARAMS = new Set([
  'media_id',
  'welcome',
  'pin_prompt',
  'pin_error',
  'pin_valid',
  'waiting',
  'user_join',
  'user_leave',
  'auto_leave_announce',
  'whisper',
  'announce',
]);

export interface CmdOpts {
  on?: Record<string, BranchIn>;
  next?: string;
  save?: string;
  handlers?: false;
}

/** A command step: params whose name is a media param go to `media` (a list escalates). */
export function cmd(
  name: CommandName,
  params: Record<string, Value | MediaIn[]> = {},
  o: CmdOpts = {},
): Omit<Extract<Step, { kind: 'command' }>, 'id'> {
  const call: CommandCall = { name, params: {}, media: {} };
  for (const [k, v] of Object.entries(params)) {
    if (MEDIA_PARAMS.has(k)) call.media[k] = media(v as MediaIn | MediaIn[]);
    else call.params[k] = v as Value;
  }
  const on = branches(o.on);
  if (o.next !== undefined) on.default = branch(o.next);
  const step: Omit<Extract<Step, { kind: 'command' }>, 'id'> = {
    kind: 'command',
    pos: POS,
    command: call,
    on,
    inheritHandlers: o.handlers !== false,
  };
  if (o.save !== undefined) step.save = o.save;
  return step;
}

export const say = (text: MediaIn | MediaIn[], next?: string, o: CmdOpts = {}) =>
  cmd('play', { media_id: Array.isArray(text) ? text : [text] }, next === undefined ? o : { ...o, next });
export const hangup = () => cmd('hangup');

export function set(
  assign: Record<string, Value | { expr: string }>,
  next?: string,
): Omit<Extract<Step, { kind: 'set' }>, 'id'> {
  const s: Omit<Extract<Step, { kind: 'set' }>, 'id'> = {
    kind: 'set',
    pos: POS,
    assign: Object.entries(assign).map(([name, v]) => ({
      name,
      pos: POS,
      value:
        v && typeof v === 'object' && !Array.isArray(v) && 'expr' in v && typeof v.expr === 'string'
          ? { kind: 'expr' as const, expr: v.expr }
          : { kind: 'literal' as const, value: v as Value },
    })),
  };
  if (next !== undefined) s.next = next;
  return s;
}

export function sw(cases: [string, string][], def?: string): Omit<Extract<Step, { kind: 'switch' }>, 'id'> {
  const s: Omit<Extract<Step, { kind: 'switch' }>, 'id'> = {
    kind: 'switch',
    pos: POS,
    cases: cases.map(([when, goto]) => ({ when, goto, pos: POS })),
  };
  if (def !== undefined) s.default = def;
  return s;
}

export interface FlowIn {
  name?: string;
  start?: string;
  vars?: Record<string, Value>;
  handlers?: { hangup?: string; error?: BranchIn; on?: Partial<Record<CommandName, Record<string, BranchIn>>> };
  steps: Record<string, Omit<Step, 'id'>>;
}

export function model(f: FlowIn): FlowModel {
  const handlers: Handlers = { on: {} };
  if (f.handlers?.hangup) handlers.hangup = f.handlers.hangup;
  if (f.handlers?.error) handlers.error = branch(f.handlers.error);
  for (const [c, on] of Object.entries(f.handlers?.on ?? {})) {
    const b = branches(on);
    handlers.on[c as CommandName] = { exact: b.exact, patterns: b.patterns as ResultPattern[] };
  }
  const steps: Record<string, Step> = {};
  for (const [id, s] of Object.entries(f.steps)) steps[id] = { ...s, id } as Step;
  return {
    version: 1,
    name: f.name ?? 'test',
    file: 'test.yaml',
    start: f.start ?? Object.keys(f.steps)[0]!,
    voice: VOICE,
    vars: f.vars ?? {},
    handlers,
    steps,
  };
}

export function flow(f: FlowIn): CompiledFlow {
  const m = model(f);
  return compileFlow(
    m,
    JSON.stringify(f, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  );
}

export function req(p: Partial<RtRequest> = {}): RtRequest {
  return {
    app: 'APP1',
    callid: '1234567',
    request_hash: null,
    cli_name: 'Alice',
    cli_number: '+33612345678',
    date_started: '2024-05-01 10:00:00',
    number: '+33180000000',
    command: '',
    command_id: 0,
    command_result: '',
    command_error: '',
    call_status: 'UP',
    cdr_field: '',
    variables: {},
    variablesRaw: '{}',
    ...p,
  };
}

export const OPTS: EngineOptions = { now: 1_000_000, unknownCall: 'restart' };

/** Drives one call: each step answers the outstanding command. */
export class Call {
  state: CallState | undefined;
  last: Outcome | undefined;
  now = OPTS.now;
  constructor(
    readonly flow: CompiledFlow,
    readonly opts: EngineOptions = OPTS,
    readonly base: Partial<RtRequest> = {},
  ) {}

  /** The first request; returns the reply JSON. */
  start(p: Partial<RtRequest> = {}): string {
    return this.send(req({ ...this.base, ...p }));
  }

  /** The result of the outstanding command; returns the reply JSON. */
  result(result: string, p: Partial<RtRequest> = {}): string {
    return this.send(this.next({ command_result: result, ...p }));
  }

  error(error: string, p: Partial<RtRequest> = {}): string {
    return this.send(this.next({ command_error: error, ...p }));
  }

  next(p: Partial<RtRequest> = {}): RtRequest {
    const s = this.state;
    if (!s) throw new Error('no call state');
    const cmd = replyCommand(s.reply);
    return req({ ...this.base, command: cmd, command_id: s.commandId, ...p });
  }

  /** How the call's effects (sms steps) turn out; every one sent is recorded in `effects`. */
  effectResult: (e: Effect) => EffectResult = () => ({ ok: true, value: 'SMS00001' });
  effects: Effect[] = [];

  send(r: RtRequest): string {
    this.now += 1000;
    let out = advance(this.flow, this.state, r, { ...this.opts, now: this.now });
    while (out.kind === 'effect') {
      this.effects.push(out.effect);
      out = out.resume(this.effectResult(out.effect));
    }
    this.last = out;
    if (out.kind === 'reply') {
      this.state = out.state ?? undefined;
      return out.replyJson;
    }
    if (out.kind === 'replay') return out.replyJson;
    throw new Error(`unexpected outcome ${out.kind}: ${JSON.stringify(out)}`);
  }
}

/** The expected reply JSON. */
export function reply(command: string, id: number, params: Record<string, unknown> = {}, variables = '{}'): string {
  return `{"command":"${command}","command_id":${id},"params":${JSON.stringify(params)},"variables":${variables}}`;
}

export const tts = (text: string, voice = VOICE) => `TTS|${voice}|${text}`;

/** Hello, a one-digit menu (1: bye, anything else: the menu again), bye, hang up. */
export function menu(): CompiledFlow {
  return flow({
    steps: {
      hello: say('Hello.', 'ask'),
      ask: cmd('read', { media_id: ['Press 1.'], max_digits: 1 }, { on: { '1': 'bye', default: 'ask' } }),
      bye: say('Bye.', 'end'),
      end: hangup(),
    },
  });
}

/** An executor that sends each SMS with `send` (given the time left) and has no http lookups (UNAVAILABLE). */
export function smsExecutor(send: (budgetMs: number) => Promise<EffectResult> | EffectResult): Executor {
  return {
    perform: async (effect: Effect, ctx: EffectContext) =>
      effect.kind === 'sms'
        ? send(ctx.budgetMs())
        : { ok: false, error: 'UNAVAILABLE', message: 'http lookups are not enabled here' },
  };
}

/** An answer of the call step as text: its body, or "<status> <code>" with the status the HTTP stage answers. */
export function answerText(a: StepAnswer): string {
  return a.kind === 'answered' ? a.body : `${ANSWER_STATUS[a.kind]} ${a.code}`;
}

/** The flow versions of a call handler serving `f` alone (src/engine/ports.ts FlowVersions). */
export function versionsOf(f: CompiledFlow): FlowVersions {
  return {
    get: (n, v) => (n === f.name && v === f.version ? f : undefined),
    pick: (n) => (n === f.name ? f : undefined),
  };
}
