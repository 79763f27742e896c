/**
 * Loads a caller script (YAML or JSON) and checks it, collecting every problem with its
 * file:line:col. Unknown keys, wrong types, impossible outcomes and malformed numbers
 * are errors: a script that loads is one the emulator can play.
 */
import { isMap } from 'yaml';
import { COMMAND_NAMES, isCommandName, type CommandName } from '../../protocol/commands.js';
import { checkDatetime, checkE164, checkFormat } from '../../protocol/formats.js';
import { mapOutcome, scalarOutcome, type Parsed } from './outcomes.js';
import { pathText, Source, type Path, type ScriptError } from './source.js';
import { expandedTooBig, linePos, yamlTooDeep } from './depth.js';
import { MAX_DEPTH } from '../json-depth.js';
import { suggest } from '../suggest.js';
import {
  ANSWERS,
  CALL_STATUSES_FIRST,
  DEFAULT_CALL,
  type Action,
  type CallSetup,
  type CallerScript,
  type Outcome,
} from './types.js';

export type LoadResult = { ok: true; script: CallerScript } | { ok: false; errors: ScriptError[] };

const TOP = ['name', 'description', 'call', 'actions', 'defaults', '$schema'];
const CALL_KEYS = [
  'from',
  'name',
  'to',
  'date',
  'cdr_field',
  'app',
  'status',
  'answer',
  'variables',
  'hangup_at',
  'max_commands',
];
const SCRIPTED = COMMAND_NAMES.filter((c) => c !== 'hangup');
const GENERIC = ['error', 'hangup', 'hangup_after'];

export function loadCallerScript(text: string, file: string): LoadResult {
  const deep = yamlTooDeep(text);
  if (deep !== undefined)
    return {
      ok: false,
      errors: [
        { file, ...linePos(text, deep), path: '', message: `values are nested deeper than ${MAX_DEPTH} levels` },
      ],
    };
  const src = new Source(text, file);
  const syntax = src.syntaxErrors();
  if (syntax.length > 0) return { ok: false, errors: syntax };
  const big = expandedTooBig(src.doc);
  if (big) return { ok: false, errors: [{ file, ...linePos(text, big.offset), path: '', message: big.message }] };
  const c = new Check(src);
  const root = src.doc.toJS({ maxAliasCount: 1000 }) as unknown;
  const script = c.script(root ?? {});
  return c.errors.length > 0 ? { ok: false, errors: c.errors } : { ok: true, script };
}

class Check {
  readonly errors: ScriptError[] = [];
  constructor(private readonly src: Source) {}

  err(path: Path, message: string, onKey = false): void {
    const p = this.src.pos(path, onKey);
    this.errors.push({ file: this.src.file, line: p.line, column: p.column, path: pathText(path), message });
  }

  private obj(path: Path, v: unknown, what: string): Record<string, unknown> | undefined {
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    this.err(path, `${what} must be a map`);
    return undefined;
  }

  private keys(path: Path, o: Record<string, unknown>, allowed: readonly string[], what: string): void {
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k))
        this.err(
          [...path, k],
          `unknown key ${k} in ${what}${suggest(k, allowed)}; the keys are ${allowed.join(', ')}`,
          true,
        );
    }
  }

  /** A string, or a number scalar taken as written. */
  private str(path: Path, v: unknown, what: string): string | undefined {
    const w = this.src.asWritten(path, v);
    if (typeof w === 'string') return w;
    this.err(path, `${what} must be a string`);
    return undefined;
  }

  script(root: unknown): CallerScript {
    const o = this.obj([], root, 'a caller script') ?? {};
    if ('flow' in o && 'cases' in o) {
      // one mistake, one message: not every key of a scenario file as an unknown key
      this.err(
        ['flow'],
        'this is a scenario file (flow: and cases:), not a caller script: run it with callscript test',
        true,
      );
      return {
        name: this.src.file || 'caller script',
        file: this.src.file,
        call: { ...DEFAULT_CALL },
        actions: [],
        defaults: {},
      };
    }
    this.keys([], o, TOP, 'the caller script');
    let name = this.src.file || 'caller script';
    if (o.name !== undefined) name = this.str(['name'], o.name, 'name') ?? name;
    if (o.description !== undefined) this.str(['description'], o.description, 'description');
    const call = o.call === undefined ? { ...DEFAULT_CALL } : this.call(o.call);
    const actions: Action[] = [];
    if (o.actions !== undefined && o.actions !== null) {
      if (!Array.isArray(o.actions))
        this.err(['actions'], 'actions must be a list, e.g.\n  - read: "1"\n  - hangup_after: record');
      else
        o.actions.forEach((a, i) => {
          const act = this.action(['actions', i], a);
          if (act) actions.push(act);
        });
    }
    const defaults: Partial<Record<CommandName, Outcome>> = {};
    if (o.defaults !== undefined && o.defaults !== null) {
      const d = this.obj(['defaults'], o.defaults, 'defaults');
      if (d) {
        for (const [k, v] of Object.entries(d)) {
          if (!isCommandName(k) || k === 'hangup') {
            this.err(['defaults', k], `${k} is not a command with an outcome${suggest(k, SCRIPTED)}`, true);
            continue;
          }
          const out = this.outcome(['defaults', k], k, v);
          if (out) defaults[k] = out;
        }
      }
    }
    return { name, file: this.src.file, call, actions, defaults };
  }

  private call(v: unknown): CallSetup {
    const call: CallSetup = { ...DEFAULT_CALL };
    const o = this.obj(['call'], v, 'call');
    if (!o) return call;
    this.keys(['call'], o, CALL_KEYS, 'call');
    const at = (k: string): Path => ['call', k];
    const phone = (k: 'from' | 'to', allowEmpty: boolean) => {
      if (o[k] === undefined) return;
      const s = this.str(at(k), o[k], `call.${k}`);
      if (s === undefined) return;
      if (s === '' && allowEmpty) call[k] = s;
      else if (checkE164(s))
        this.err(
          at(k),
          `"${s}" is not an E.164 number: ${checkE164(s)}${allowEmpty ? ' ("" for a withheld number)' : ''}`,
        );
      else call[k] = s;
    };
    phone('from', true);
    phone('to', false);
    if (o.name !== undefined) call.name = this.str(at('name'), o.name, 'call.name') ?? '';
    if (o.app !== undefined) call.app = this.str(at('app'), o.app, 'call.app') ?? '';
    if (o.date !== undefined) {
      const s = this.str(at('date'), o.date instanceof Date ? o.date.toISOString() : o.date, 'call.date');
      if (s !== undefined) {
        const bad = checkDatetime(s);
        if (bad) this.err(at('date'), `"${s}": ${bad}`);
        else call.date = s;
      }
    }
    if (o.cdr_field !== undefined) {
      const s = this.str(at('cdr_field'), o.cdr_field, 'call.cdr_field');
      const bad = s === undefined ? null : checkFormat('cdr_customer_field', s);
      if (bad) this.err(at('cdr_field'), bad);
      else if (s !== undefined) call.cdr_field = s;
    }
    if (o.status !== undefined) {
      if (!(CALL_STATUSES_FIRST as readonly unknown[]).includes(o.status))
        this.err(at('status'), `call.status is the first request's call_status: ${CALL_STATUSES_FIRST.join(' or ')}`);
      else call.status = o.status as CallSetup['status'];
    }
    if (o.answer !== undefined) {
      const a = o.answer === true ? 'ANSWER' : o.answer === false ? 'NOANSWER' : o.answer;
      if (!(ANSWERS as readonly unknown[]).includes(a))
        this.err(at('answer'), `call.answer (outbound calls) is one of ${ANSWERS.join(', ')}`);
      else call.answer = a as CallSetup['answer'];
    }
    if (o.variables !== undefined) {
      const vars = this.obj(at('variables'), o.variables, 'call.variables');
      if (vars) call.variables = JSON.stringify(vars);
    }
    if (o.hangup_at !== undefined) {
      if (typeof o.hangup_at !== 'number' || !(o.hangup_at > 0))
        this.err(at('hangup_at'), 'call.hangup_at is the seconds into the call when the caller hangs up (more than 0)');
      else call.hangup_at = o.hangup_at;
    }
    if (o.max_commands !== undefined) {
      if (
        typeof o.max_commands !== 'number' ||
        !Number.isInteger(o.max_commands) ||
        o.max_commands < 1 ||
        o.max_commands > 10000
      )
        this.err(at('max_commands'), 'call.max_commands is a whole number from 1 to 10000');
      else call.max_commands = o.max_commands;
    }
    return call;
  }

  private action(path: Path, v: unknown): Action | undefined {
    if (typeof v === 'string' && (v === 'hangup' || v === 'hang up'))
      return { kind: 'hangup', command: 'any', label: 'hangup', where: this.src.where(path) };
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      this.err(
        path,
        'an action is a map of one key: a command and its outcome (read: "1"), error, hangup or hangup_after',
      );
      return undefined;
    }
    const keys = Object.keys(v);
    if (keys.length !== 1) {
      this.err(
        path,
        `an action has exactly one key, this one has ${keys.length} (${keys.join(', ')}); write one list ` +
          `item per action`,
      );
      return undefined;
    }
    const key = keys[0]!;
    const value = (v as Record<string, unknown>)[key];
    const at = [...path, key];
    const where = this.src.where(path);
    if (key === 'error') {
      const e = this.str(at, value, 'error');
      if (e === undefined) return undefined;
      if (e === '')
        return void this.err(at, 'error is the command_error the next command fails with, e.g. MEDIA_NOT_FOUND');
      return { kind: 'error', error: e, label: `error: ${e}`, where };
    }
    if (key === 'hangup' || key === 'hangup_after') {
      const c = value === null || value === undefined ? 'any' : this.str(at, value, key);
      if (c === undefined) return undefined;
      const command = c === 'now' ? 'any' : c;
      if (command !== 'any' && (!isCommandName(command) || command === 'hangup')) {
        return void this.err(
          at,
          `${key} names the command ${key === 'hangup' ? 'during' : 'after'} which the caller hangs up, or ` +
            `any: "${c}" is not a command${suggest(c, SCRIPTED)}`,
        );
      }
      const label = `${key}: ${command}`;
      return key === 'hangup'
        ? { kind: 'hangup', command: command as CommandName | 'any', label, where }
        : { kind: 'hangup_after', command: command as CommandName | 'any', label, where };
    }
    if (!isCommandName(key) || key === 'hangup') {
      this.err(
        at,
        `${key} is not an action${suggest(key, [...SCRIPTED, ...GENERIC])}; an action is a command (read, ` +
          `play, dialout...), error, hangup or hangup_after`,
        true,
      );
      return undefined;
    }
    const outcome = this.outcome(at, key, value);
    if (!outcome) return undefined;
    const text = this.src.asWritten(at, value);
    return {
      kind: 'command',
      command: key,
      outcome,
      label: `${key}: ${typeof text === 'object' ? JSON.stringify(text) : JSON.stringify(text)}`,
      where,
    };
  }

  private outcome(path: Path, command: CommandName, v: unknown): Outcome | undefined {
    let r: Parsed;
    if (v === null || v === undefined) r = { ok: true, outcome: {} };
    else if (typeof v === 'string' || typeof v === 'number')
      r = scalarOutcome(command, String(this.src.asWritten(path, v)));
    else if (typeof v === 'boolean')
      r = command === 'dialout' ? { ok: true, outcome: { answer: v ? 1 : false } } : scalarOutcome(command, String(v));
    else if (isMap(this.src.node(path)) || (typeof v === 'object' && !Array.isArray(v))) {
      const o = v as Record<string, unknown>;
      r = mapOutcome(command, Object.keys(o), (k) => this.src.asWritten([...path, k], o[k]));
    } else r = { ok: false, message: `a ${command} outcome is a value or a map, not a list` };
    if (r.ok) return r.outcome;
    this.err(
      r.field ? [...path, r.field] : path,
      r.message,
      r.field !== undefined && r.message.includes('is not a field'),
    );
    return undefined;
  }
}
