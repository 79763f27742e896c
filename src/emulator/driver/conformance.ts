/**
 * Conformance of one reply of the customer server: HTTP 200 within the time limit, a
 * JSON RT.Response (command, command_id, params, variables), a command of the catalogue
 * (src/protocol/commands.ts) with known params of the right types, within their bounds
 * and formats, and the params without which the command cannot run. Older parameter
 * spellings (`seconds`, `digit`, `timeout_ms`) are accepted and reported.
 */
import { isLosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import {
  COMMAND_NAMES,
  COMMANDS,
  REQUIRED_COMMAND_PARAMS,
  isCommandName,
  type CommandName,
  type ParamSpec,
} from '../../protocol/commands.js';
import { checkCallid, checkFormat, checkRtMedia } from '../../protocol/formats.js';
import { suggest } from '../suggest.js';
import { MAX_REPLY_BYTES, type PostResult } from './wire.js';
import { jsonTooDeep, MAX_DEPTH } from '../json-depth.js';

export interface Finding {
  code: string;
  field: string;
  message: string;
}

export interface Reply {
  command: CommandName;
  /** Decimal digits. */
  commandId: string;
  /** Standard names, plain values (ints as numbers; a callid as its digits). */
  params: Record<string, unknown>;
  /** As sent (older spellings kept), plain JSON. */
  shown: Record<string, unknown>;
  /** e.g. "seconds (older spelling of wait)". */
  spellings: string[];
  /** Raw JSON text of the variables object, echoed on the next request. */
  variables: string;
}

export type Checked =
  | { ok: true; reply: Reply; warnings: Finding[] }
  | {
      ok: false;
      violations: Finding[];
      warnings: Finding[];
      command?: string;
      commandId?: string;
      shown?: Record<string, unknown>;
    };

/** Params a command cannot run without (the reference does not say; our decision). */
export const REQUIRED = REQUIRED_COMMAND_PARAMS;

/** Older spellings: old name -> standard name, the old spec, and how to convert. */
export const OLD_SPELLINGS: Partial<
  Record<CommandName, Record<string, { standard: string; spec: ParamSpec; scale?: number }>>
> = {
  wait: { seconds: { standard: 'wait', spec: { type: 'int', min: 1, max: 30, doc: 'seconds' } } },
  send_dtmf: { digit: { standard: 'digits', spec: { type: 'string', format: 'dtmf_digits', doc: 'digits' } } },
  wait_for_silence: {
    timeout_ms: { standard: 'timeout', spec: { type: 'int', min: 0, max: 300000, doc: 'ms' }, scale: 1 / 1000 },
  },
};

const TOP_FIELDS = ['command', 'command_id', 'params', 'variables'];
const INT = /^-?(0|[1-9][0-9]*)$/;

export function checkReply(post: PostResult, limitMs: number): Checked {
  const warnings: Finding[] = [];
  if (post.kind === 'timeout')
    return bad([
      {
        code: 'LATE_REPLY',
        field: 'time',
        message: `no reply within ${limitMs} ms (the service waits at most ${limitMs} ms)`,
      },
    ]);
  if (post.kind === 'network')
    return bad([{ code: 'NO_REPLY', field: 'status', message: `the request failed: ${post.message}` }]);
  if (post.kind === 'too_large')
    return bad([
      {
        code: 'TOO_LARGE',
        field: 'body',
        message: `the reply (HTTP ${post.status}) is over ${MAX_REPLY_BYTES} bytes; the emulator reads no more`,
      },
    ]);
  if (post.status !== 200) {
    return bad([
      {
        code: 'HTTP_STATUS',
        field: 'status',
        message: `HTTP ${post.status}: a reply must be HTTP 200${post.text ? `; body: ${excerpt(post.text)}` : ''}`,
      },
    ]);
  }
  if (!/^application\/json\b/i.test(post.contentType)) {
    warnings.push({
      code: 'CONTENT_TYPE',
      field: 'content-type',
      message: `Content-Type is ${post.contentType || 'missing'}; a reply is application/json`,
    });
  }
  if (post.ms > limitMs * 0.8)
    warnings.push({
      code: 'SLOW_REPLY',
      field: 'time',
      message: `the reply took ${post.ms} ms, close to the ${limitMs} ms limit`,
    });
  if (jsonTooDeep(post.text))
    return bad(
      [
        {
          code: 'TOO_DEEP',
          field: 'body',
          message: `the reply nests arrays and objects deeper than ${MAX_DEPTH} levels`,
        },
      ],
      warnings,
    );
  let data: unknown;
  try {
    data = parseLossless(post.text);
  } catch (err) {
    return bad(
      [
        {
          code: 'NOT_JSON',
          field: 'body',
          message: `the body is not JSON (${(err as Error).message}): ${excerpt(post.text)}`,
        },
      ],
      warnings,
    );
  }
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return bad(
      [{ code: 'NOT_OBJECT', field: 'body', message: 'the body must be a JSON object (an RT.Response)' }],
      warnings,
    );
  const o = data as Record<string, unknown>;
  const v: Finding[] = [];
  for (const k of Object.keys(o)) {
    if (!TOP_FIELDS.includes(k))
      warnings.push({
        code: 'UNKNOWN_FIELD',
        field: k,
        message: `${k} is not a field of RT.Response${suggest(k, TOP_FIELDS)}; the service ignores it`,
      });
  }
  for (const k of TOP_FIELDS)
    if (!(k in o))
      v.push({
        code: 'MISSING_FIELD',
        field: k,
        message: `${k} is missing: an RT.Response has command, command_id, params and variables`,
      });

  let command: CommandName | undefined;
  if ('command' in o) {
    if (typeof o.command !== 'string')
      v.push({ code: 'BAD_TYPE', field: 'command', message: `command must be a string, got ${describe(o.command)}` });
    else if (!isCommandName(o.command))
      v.push({
        code: 'UNKNOWN_COMMAND',
        field: 'command',
        message: `"${o.command}" is not a command${suggest(o.command, COMMAND_NAMES)}`,
      });
    else command = o.command;
  }
  let commandId: string | undefined;
  if ('command_id' in o) {
    const id = o.command_id;
    if (isLosslessNumber(id) && /^(0|[1-9][0-9]*)$/.test(id.value)) commandId = id.value;
    else
      v.push({
        code: 'BAD_TYPE',
        field: 'command_id',
        message: `command_id must be a non-negative JSON integer, got ${describe(id)}`,
      });
  }
  let variables = '{}';
  if ('variables' in o) {
    if (!o.variables || typeof o.variables !== 'object' || Array.isArray(o.variables))
      v.push({
        code: 'BAD_TYPE',
        field: 'variables',
        message: `variables must be a JSON object ({} when empty), got ${describe(o.variables)}`,
      });
    else variables = stringifyLossless(o.variables)!;
  }
  let params: Record<string, unknown> | undefined;
  if ('params' in o) {
    if (!o.params || typeof o.params !== 'object' || Array.isArray(o.params))
      v.push({
        code: 'BAD_TYPE',
        field: 'params',
        message: `params must be a JSON object ({} when empty), got ${describe(o.params)}`,
      });
    else params = o.params as Record<string, unknown>;
  }
  const shown = params ? (plain(params) as Record<string, unknown>) : undefined;
  const spellings: string[] = [];
  let normalized: Record<string, unknown> = {};
  if (command && params) {
    const r = checkParams(command, params);
    v.push(...r.violations);
    normalized = r.params;
    for (const s of r.spellings) {
      spellings.push(s);
      warnings.push({
        code: 'OLD_SPELLING',
        field: `params.${s.split(' ')[0]}`,
        message: `${s}: accepted, but the reference names ${s.replace(/^.*older spelling of (\w+).*$/, '$1')}`,
      });
    }
  }
  if (v.length > 0 || !command || commandId === undefined) {
    const out: Checked = { ok: false, violations: v, warnings };
    if (typeof o.command === 'string') out.command = o.command;
    if (commandId !== undefined) out.commandId = commandId;
    if (shown) out.shown = shown;
    return out;
  }
  return {
    ok: true,
    reply: { command, commandId, params: normalized, shown: shown ?? {}, spellings, variables },
    warnings,
  };
}

function checkParams(
  command: CommandName,
  params: Record<string, unknown>,
): { violations: Finding[]; params: Record<string, unknown>; spellings: string[] } {
  const spec = COMMANDS[command].params;
  const old = OLD_SPELLINGS[command] ?? {};
  const v: Finding[] = [];
  const out: Record<string, unknown> = {};
  const spellings: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    const field = `params.${name}`;
    const s = spec[name];
    if (s) {
      const r = checkValue(command, name, s, value, field, v);
      if (r !== undefined) out[name] = r;
      continue;
    }
    const o = old[name];
    if (o) {
      if (o.standard in params) {
        v.push({
          code: 'DUPLICATE_PARAM',
          field,
          message: `${command} has both ${o.standard} and its older spelling ${name}: give ${o.standard} only`,
        });
        continue;
      }
      spellings.push(`${name} (older spelling of ${o.standard}${o.scale ? ', in ms' : ''})`);
      const r = checkValue(command, name, o.spec, value, field, v);
      if (r !== undefined) out[o.standard] = o.scale ? Math.round((r as number) * o.scale) : r;
      continue;
    }
    const names = [...Object.keys(spec), ...Object.keys(old)];
    v.push({
      code: 'UNKNOWN_PARAM',
      field,
      message:
        `${command} has no param ${name}${suggest(name, names)}` +
        (names.length ? `; its params are ${Object.keys(spec).join(', ')}` : '; it takes no params'),
    });
  }
  for (const r of REQUIRED[command] ?? []) {
    if (
      !(r in out) &&
      !v.some(
        (x) =>
          x.field === `params.${r}` ||
          Object.entries(old).some(([n, o]) => o.standard === r && x.field === `params.${n}`),
      )
    ) {
      v.push({
        code: 'MISSING_PARAM',
        field: `params.${r}`,
        message: `${command} needs ${r}: ${spec[r]?.doc ?? ''}`.trim(),
      });
    }
  }
  return { violations: v, params: out, spellings };
}

function checkValue(
  command: CommandName,
  name: string,
  s: ParamSpec,
  value: unknown,
  field: string,
  v: Finding[],
): unknown {
  const push = (code: string, message: string) => void v.push({ code, field, message });
  switch (s.type) {
    case 'int': {
      if (!isLosslessNumber(value) || !INT.test(value.value))
        return push('BAD_TYPE', `${command}.${name} must be a JSON integer, got ${describe(value)}`);
      const n = Number(value.value);
      if (n < s.min || n > s.max)
        return push('OUT_OF_BOUNDS', `${command}.${name} is ${value.value}; it must be from ${s.min} to ${s.max}`);
      return n;
    }
    case 'bool':
      if (typeof value !== 'boolean')
        return push('BAD_TYPE', `${command}.${name} must be true or false, got ${describe(value)}`);
      return value;
    case 'media': {
      if (isLosslessNumber(value)) {
        if (!/^(0|[1-9][0-9]*)$/.test(value.value))
          return push('BAD_FORMAT', `${command}.${name} ${value.value} is not a media id (a whole number)`);
        return value.value;
      }
      if (typeof value !== 'string')
        return push(
          'BAD_TYPE',
          `${command}.${name} must be a media: an integer media id or "TTS|voice|text", got ${describe(value)}`,
        );
      const bad = checkRtMedia(value);
      if (bad) return push('BAD_FORMAT', `${command}.${name} "${excerpt(value)}": ${bad}`);
      return value;
    }
    case 'targets':
      return checkTargets(command, name, value, field, v);
    case 'string': {
      if (s.format === 'callid') {
        if (!isLosslessNumber(value))
          return push(
            'BAD_TYPE',
            `${command}.${name} must be a JSON integer (the callid digit for digit), got ${describe(value)}`,
          );
        const bad = checkCallid(value.value);
        if (bad) return push('BAD_FORMAT', `${command}.${name} ${value.value}: ${bad}`);
        return value.value;
      }
      if (typeof value !== 'string')
        return push('BAD_TYPE', `${command}.${name} must be a string, got ${describe(value)}`);
      if (s.enum && !s.enum.includes(value))
        return push('BAD_VALUE', `${command}.${name} "${value}" is not one of ${s.enum.join(', ')}`);
      if (s.format) {
        const bad = checkFormat(s.format, value);
        if (bad) return push('BAD_FORMAT', `${command}.${name} "${excerpt(value)}": ${bad}`);
      }
      return value;
    }
  }
}

function checkTargets(command: string, name: string, value: unknown, field: string, v: Finding[]): unknown {
  if (!Array.isArray(value))
    return void v.push({
      code: 'BAD_TYPE',
      field,
      message: `${command}.${name} must be a list of {number, timeout}, got ${describe(value)}`,
    });
  if (value.length === 0)
    return void v.push({
      code: 'OUT_OF_BOUNDS',
      field,
      message: `${command}.${name} is empty: give at least one target`,
    });
  const out: { number: string; timeout: number }[] = [];
  value.forEach((t, i) => {
    const f = `${field}[${i}]`;
    if (!t || typeof t !== 'object' || Array.isArray(t))
      return void v.push({
        code: 'BAD_TYPE',
        field: f,
        message: `a target is an object {number, timeout}, got ${describe(t)}`,
      });
    const o = t as Record<string, unknown>;
    for (const k of Object.keys(o))
      if (k !== 'number' && k !== 'timeout')
        v.push({ code: 'UNKNOWN_PARAM', field: `${f}.${k}`, message: `a target has number and timeout, not ${k}` });
    let number = '';
    if (typeof o.number !== 'string')
      v.push({
        code: o.number === undefined ? 'MISSING_PARAM' : 'BAD_TYPE',
        field: `${f}.number`,
        message: `a target needs number, an E.164 string`,
      });
    else {
      const bad = checkFormat('phone_number', o.number);
      if (bad) v.push({ code: 'BAD_FORMAT', field: `${f}.number`, message: `"${o.number}": ${bad}` });
      number = o.number;
    }
    let timeout = 30;
    if (o.timeout !== undefined) {
      if (!isLosslessNumber(o.timeout) || !INT.test(o.timeout.value))
        v.push({
          code: 'BAD_TYPE',
          field: `${f}.timeout`,
          message: `a target's timeout is whole seconds, got ${describe(o.timeout)}`,
        });
      else if (Number(o.timeout.value) < 5 || Number(o.timeout.value) > 300)
        v.push({
          code: 'OUT_OF_BOUNDS',
          field: `${f}.timeout`,
          message: `a target's timeout is ${o.timeout.value}; it must be from 5 to 300 seconds`,
        });
      else timeout = Number(o.timeout.value);
    }
    out.push({ number, timeout });
  });
  return out;
}

/** lossless-json values to plain JSON: integers beyond 2^53 become strings of digits. */
export function plain(v: unknown): unknown {
  if (isLosslessNumber(v)) {
    const n = Number(v.value);
    return INT.test(v.value) && !Number.isSafeInteger(n) ? v.value : n;
  }
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (isLosslessNumber(v)) return `the number ${v.value}`;
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(excerpt(v))}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function excerpt(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 80 ? one.slice(0, 80) + '…' : one;
}

function bad(violations: Finding[], warnings: Finding[] = []): Checked {
  return { ok: false, violations, warnings };
}
