/**
 * Command builders, made once per step when a flow compiles: each parameter becomes a
 * constant (no template: computed and checked once) or a small function that renders its
 * templates and checks the rendered value with src/protocol/formats.ts and the catalogue's
 * bounds. A step whose params are all constant gets one frozen params object per visit
 * number (escalating media lists), so the hot path builds nothing.
 *
 * Wire decisions (shared with the emulator):
 * - media params are JSON strings: `"0"` (none), `"1234"` (a library id), `"TTS|voice|text"`;
 * - `hangup_callid.callid` is a bigint (a bare JSON integer, digit for digit);
 * - params the flow did not give are omitted; params are written in catalogue order.
 */
import type { ParamSpec } from '../protocol/commands.js';
import { ACTION_SPECS } from '../flow/actions.js';
import { checkE164, checkFormat, checkRtMedia } from '../protocol/formats.js';
import { isTemplate, render, type Scope } from '../flow/expr.js';
import { EvaluationLimit } from '../flow/budget.js';
import type { CommandCall, MediaParam, MediaSpec, Value } from '../flow/model.js';
import type { WireValue } from '../protocol/rt.js';
import { frozenParams } from './serialize.js';
import { clipText } from './size.js';

export type GetScope = () => Scope;

/** Thrown by a builder when a value cannot be sent; the engine takes the step's error branch. */
export class ParamFailure extends Error {
  constructor(
    readonly param: string,
    readonly reason: string,
    readonly code: 'RUNTIME_PARAM' | 'RUNTIME_TEMPLATE' | 'RUNTIME_EXPRESSION' | 'RUNTIME_MEDIA',
  ) {
    super(`${param}: ${reason}`);
  }
}

export type Params = Readonly<Record<string, WireValue>>;

export interface CommandBuilder {
  /** The params for visit n (1-based; escalating media pick min(n, length)). Throws ParamFailure. */
  build(scope: GetScope, n: number): Params;
  /** True when no param holds a template: `build` never reads the scope and never throws. */
  readonly constant: boolean;
}

type Part = { c: true; v: WireValue } | { c: false; f: (scope: GetScope, n: number) => WireValue };

/**
 * The prompt table of a flow with languages (version 2): each prompt's parts per language,
 * made once. A `{ prompt: name }` media picks the call's language (`call.language`), then
 * the entry for the visit like any escalating list.
 */
export interface PromptTable {
  parts(name: string, language: string): Part[] | undefined;
  fallback: string;
}

export function promptTable(prompts: Record<string, Record<string, MediaParam>>, fallback: string): PromptTable {
  const made = new Map<string, Part[]>();
  return {
    fallback,
    parts(name, language) {
      const key = `${language}\u0000${name}`;
      let p = made.get(key);
      if (!p) {
        const media = Object.prototype.hasOwnProperty.call(prompts, name) ? prompts[name]![language] : undefined;
        if (!media) return undefined;
        p = media.map((m) => mediaPart('media_id', m));
        made.set(key, p);
      }
      return p;
    },
  };
}

const fail = (param: string, reason: string): never => {
  throw new ParamFailure(param, reason, 'RUNTIME_PARAM');
};

function renderIn(param: string, source: string, scope: GetScope): string {
  try {
    return render(source, scope());
  } catch (err) {
    if (err instanceof EvaluationLimit) throw err;
    throw new ParamFailure(param, err instanceof Error ? err.message.split('\n')[0]! : String(err), 'RUNTIME_TEMPLATE');
  }
}

/** A part from a value checker: constant when the source has no template. */
function part(param: string, value: Value, check: (param: string, v: Value) => WireValue, templated: boolean): Part {
  if (!templated) {
    try {
      return { c: true, v: check(param, value) };
    } catch (err) {
      // Invalid constant (the checker should have refused it): fail at run time, every time.
      const e = err as ParamFailure;
      return {
        c: false,
        f: () => {
          throw e;
        },
      };
    }
  }
  return { c: false, f: (scope) => check(param, renderDeep(param, value, scope)) };
}

function hasTemplate(v: Value): boolean {
  if (typeof v === 'string') return isTemplate(v);
  if (Array.isArray(v)) return v.some(hasTemplate);
  if (v && typeof v === 'object') return Object.values(v).some(hasTemplate);
  return false;
}

/** Renders every string inside a value. */
export function renderDeep(param: string, v: Value, scope: GetScope): Value {
  if (typeof v === 'string') return renderIn(param, v, scope);
  if (Array.isArray(v)) return v.map((x) => renderDeep(param, x, scope));
  if (v && typeof v === 'object') {
    const o: Record<string, Value> = {};
    for (const [k, x] of Object.entries(v)) o[k] = renderDeep(param, x, scope);
    return o;
  }
  return v;
}

function toInt(param: string, v: Value, min: number, max: number): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\s*[+-]?[0-9]+\s*$/.test(v)) n = Number(v.trim());
  else return fail(param, `${JSON.stringify(v)} is not an integer`);
  if (!Number.isInteger(n)) return fail(param, `${n} is not an integer`);
  if (n < min || n > max) return fail(param, `${n} is out of bounds ${min}..${max}`);
  return n;
}

function toBool(param: string, v: Value): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return fail(param, `${JSON.stringify(v)} is not a boolean`);
}

function toCallid(param: string, v: Value): bigint {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) return fail(param, 'a callid above 2^53 must be written as a string');
    return BigInt(v);
  }
  const s = typeof v === 'string' ? v.trim() : '';
  const why = checkFormat('callid', s);
  if (why) return fail(param, why);
  return BigInt(s);
}

function toStringParam(param: string, spec: Extract<ParamSpec, { type: 'string' }>, v: Value): WireValue {
  if (spec.format === 'callid') return toCallid(param, v);
  if (typeof v !== 'string' && typeof v !== 'number') return fail(param, `${JSON.stringify(v)} is not a string`);
  const s = String(v);
  if (spec.enum && !spec.enum.includes(s)) return fail(param, `"${s}" is not one of ${spec.enum.join(', ')}`);
  if (spec.format) {
    const why = checkFormat(spec.format, s);
    if (why) return fail(param, why);
  }
  return s;
}

function toTargets(param: string, v: Value): WireValue {
  if (!Array.isArray(v) || v.length === 0) return fail(param, 'targets is a non-empty list of { number, timeout }');
  return v.map((t, i) => {
    if (!t || typeof t !== 'object' || Array.isArray(t)) return fail(param, `target ${i + 1} is not a map`);
    const number = typeof t.number === 'string' ? t.number.trim() : '';
    const why = checkE164(number);
    if (why) return fail(`${param}[${i}].number`, `"${number}": ${why}`);
    const out: Record<string, WireValue> = { number };
    if (t.timeout !== undefined && t.timeout !== null) out.timeout = toInt(`${param}[${i}].timeout`, t.timeout, 5, 300);
    return out;
  });
}

function toMediaString(param: string, v: Value): string {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
  const why = checkRtMedia(s);
  if (why) return fail(param, `"${s}": ${why}`);
  return s;
}

function checkerFor(spec: ParamSpec | undefined): (param: string, v: Value) => WireValue {
  if (!spec) return (_p, v) => v as WireValue;
  switch (spec.type) {
    case 'int':
      return (p, v) => toInt(p, v, spec.min, spec.max);
    case 'bool':
      return toBool;
    case 'string':
      return (p, v) => toStringParam(p, spec, v);
    case 'targets':
      return toTargets;
    case 'media':
      return toMediaString;
  }
}

/** One media choice as a part. */
export function mediaPart(param: string, m: MediaSpec, prompts?: PromptTable): Part {
  switch (m.kind) {
    case 'prompt':
      return {
        c: false,
        f: (scope, n) => {
          if (!prompts) return fail(param, `the prompt ${m.name} has no table`);
          const lang = scope().call.language;
          const parts =
            prompts.parts(m.name, typeof lang === 'string' ? lang : prompts.fallback) ??
            prompts.parts(m.name, prompts.fallback);
          if (!parts || parts.length === 0) return fail(param, `the prompt ${m.name} has no text in ${String(lang)}`);
          const p = parts[Math.min(Math.max(n, 1), parts.length) - 1]!;
          return p.c ? p.v : p.f(scope, n);
        },
      };
    case 'none':
      return { c: true, v: '0' };
    case 'id':
      return part(param, m.id, toMediaString, false);
    case 'tts': {
      const prefix = `TTS|${m.voice}|`;
      if (!isTemplate(m.text)) return part(param, prefix + m.text, toMediaString, false);
      return { c: false, f: (scope) => toMediaString(param, prefix + renderIn(param, m.text, scope)) };
    }
    case 'raw':
      if (!isTemplate(m.value)) return part(param, m.value, toMediaString, false);
      return { c: false, f: (scope) => rawMedia(param, m.value, renderIn(param, m.value, scope)) };
  }
}

/**
 * What a media written as one `{{ }}` alone (a media computed at run time) rendered: a media id or TTS|voice|text.
 * Text is no media: RUNTIME_MEDIA says so (the flow meant it spoken: `{ say: "{{ vars.x }}" }`).
 */
function rawMedia(param: string, source: string, rendered: string): string {
  const s = rendered.trim();
  if (checkRtMedia(s) === null) return s;
  if (s !== '' && !s.startsWith('TTS|'))
    throw new ParamFailure(
      param,
      `${param} is ${clipText(source, 80)} alone, a media computed at run time (a media id or TTS|voice|text), ` +
        `and it rendered text, ${JSON.stringify(clipText(s, 80))}`,
      'RUNTIME_MEDIA',
    );
  return toMediaString(param, s);
}

interface Slot {
  name: string;
  /** One part, or one per escalation entry (media lists). */
  parts: Part[];
}

function fromSlots(slots: Slot[]): CommandBuilder {
  const levels = Math.max(1, ...slots.map((s) => s.parts.length));
  const constant = slots.every((s) => s.parts.every((p) => p.c));
  const pick = (s: Slot, n: number): Part => s.parts[Math.min(n, s.parts.length) - 1]!;
  if (constant) {
    const table: Params[] = [];
    for (let n = 1; n <= levels; n++) {
      const o: Record<string, WireValue> = {};
      for (const s of slots) o[s.name] = (pick(s, n) as { v: WireValue }).v;
      table.push(frozenParams(o));
    }
    return { constant, build: (_scope, n) => table[Math.min(Math.max(n, 1), levels) - 1]! };
  }
  return {
    constant,
    build(scope, n) {
      const o: Record<string, WireValue> = {};
      for (const s of slots) {
        const p = pick(s, Math.max(n, 1));
        o[s.name] = p.c ? p.v : p.f(scope, n);
      }
      return o;
    },
  };
}

/** The builder of a command step. */
export function commandBuilder(call: CommandCall, prompts?: PromptTable): CommandBuilder {
  const specs = ACTION_SPECS[call.name].params;
  const names = [...Object.keys(specs), ...Object.keys(call.params), ...Object.keys(call.media)];
  const seen = new Set<string>();
  const slots: Slot[] = [];
  for (const name of names) {
    if (seen.has(name)) continue;
    seen.add(name);
    const media = call.media[name];
    if (media && media.length > 0) {
      slots.push({ name, parts: media.map((m) => mediaPart(name, m, prompts)) });
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(call.params, name)) continue;
    const value = call.params[name]!;
    slots.push({ name, parts: [part(name, value, checkerFor(specs[name]), hasTemplate(value))] });
  }
  return fromSlots(slots);
}

/** The builder of a `play` of a media list (a branch's `say:`). */
export function playBuilder(media: MediaParam, prompts?: PromptTable): CommandBuilder {
  return fromSlots([{ name: 'media_id', parts: media.map((m) => mediaPart('media_id', m, prompts)) }]);
}

/** A `set` literal: constant when it holds no template. */
export function literalValue(v: Value): { c: true; v: Value } | { c: false; f: (scope: GetScope) => Value } {
  if (!hasTemplate(v)) return { c: true, v };
  return { c: false, f: (scope) => renderDeep('set', v, scope) };
}
