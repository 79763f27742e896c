/**
 * Command actions: the value of a `read:`, `dialout:`, ... key checked against the command
 * catalogue (params, aliases, scalar shorthands, bounds, formats, required params) and
 * turned into a CommandCall.
 */
import {
  PARAM_ALIASES,
  REQUIRED_COMMAND_PARAMS,
  SCALAR_PARAM,
  type CommandName,
  type ParamSpec,
} from '../protocol/commands.js';
import { ACTION_SPECS, type ActionName } from './actions.js';
import { checkFormat } from '../protocol/formats.js';
import { isTemplate } from './expr.js';
import type { CommandCall, Value } from './model.js';
import { type Ctx, closest, didYouMean, report } from './check-context.js';
import { checkMedia, checkWav } from './check-media.js';
import { FORMAT_HINTS, checkBool, checkInt, checkStringParam, checkTemplateText } from './check-values.js';
import { clip, describe, type YEntry, type YMap, type YNode } from './yaml.js';

/** Parameters without which an action is meaningless: the commands' (protocol) and the effects'. */
export const REQUIRED_PARAMS: Partial<Record<ActionName, readonly string[]>> = {
  ...REQUIRED_COMMAND_PARAMS,
  sms: ['to', 'body'],
};

/**
 * Checks a command's value (`read: {...}`, `wait: 5`, `hangup:`); undefined after an error.
 * `excused`: required params that an UNKNOWN_KEY already accounts for (a parameter written
 * beside the command instead of under it), so that one mistake gives one error.
 */
export function checkCommand(
  ctx: Ctx,
  name: ActionName,
  action: YEntry,
  where: string,
  excused: ReadonlySet<string> = new Set(),
): CommandCall | undefined {
  const call: CommandCall = { name, params: {}, media: {} };
  const spec = ACTION_SPECS[name];
  const node = action.value;
  const scalar = SCALAR_PARAM[name as CommandName];
  const aliases = PARAM_ALIASES[name as CommandName] ?? {};
  const errorsBefore = ctx.diags.length;
  const given = new Map<string, YEntry>();
  // a typo of a required param (`promt:`) is reported once, as UNKNOWN_KEY with its did-you-mean
  const typos = new Set<string>(excused);

  if (
    node.kind === 'map' &&
    !(scalar && spec.params[scalar]?.type === 'media' && node.entries.some((e) => e.key === 'say'))
  ) {
    for (const e of node.entries) {
      const canonical = aliases[e.key] ?? e.key;
      const p = spec.params[canonical];
      if (!p) {
        const known = [...Object.keys(spec.params), ...Object.keys(aliases)];
        const near = closest(e.key, known);
        if (near !== undefined) typos.add(aliases[near] ?? near);
        const none = known.length === 0 ? `${name} takes no parameters` : `known: ${known.join(', ')}`;
        report(
          ctx,
          'UNKNOWN_KEY',
          e,
          `${where}unknown key '${e.key}' in ${name}`,
          near !== undefined ? `did you mean '${near}'?` : `Remove it (${none}).`,
        );
        continue;
      }
      const prev = given.get(canonical);
      if (prev) {
        report(
          ctx,
          'DUPLICATE_KEY',
          e,
          `${where}'${e.key}' and '${prev.key}' are the same parameter of ${name}`,
          'Keep only one of them.',
        );
        continue;
      }
      given.set(canonical, e);
      checkParam(ctx, call, canonical, p, e.value, where);
    }
  } else if (node.kind === 'scalar' && node.type === 'null') {
    // `hangup:`, `record:`: no parameters
  } else if (scalar && (node.kind !== 'seq' || spec.params[scalar]?.type === 'media')) {
    given.set(scalar, action);
    checkParam(ctx, call, scalar, spec.params[scalar]!, node, where);
  } else {
    const short = scalar ? ` (or the value of ${scalar} alone)` : '';
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}${name} takes a map of parameters${short}, not ${describe(node)}`,
      Object.keys(spec.params).length === 0
        ? `Write \`${name}: {}\`.`
        : `Write e.g. \`${name}: { ${Object.keys(spec.params)[0]}: ... }\`.`,
    );
    return undefined;
  }

  for (const req of REQUIRED_PARAMS[name] ?? []) {
    if (given.has(req) || typos.has(req)) continue;
    const alias = Object.entries(aliases).find(([, c]) => c === req)?.[0];
    report(ctx, 'MISSING_KEY', action, `${where}${name} needs '${req}'${alias ? ` (or its alias '${alias}')` : ''}`);
  }
  if (ctx.diags.length === errorsBefore) checkOrder(ctx, call, given, where);
  return ctx.diags.length === errorsBefore ? call : undefined;
}

/** Pairs of int params where the first may not exceed the second (defaults count when one is not given). */
const ORDERED_PARAMS: Partial<Record<ActionName, readonly (readonly [string, string, string])[]>> = {
  play_talk_detect: [
    [
      'min_ms',
      'max_ms',
      'the shortest talk counted cannot be longer than the longest one: no speech could ever be detected',
    ],
  ],
};

function checkOrder(ctx: Ctx, call: CommandCall, given: Map<string, YEntry>, where: string): void {
  const spec = ACTION_SPECS[call.name];
  for (const [lo, hi, why] of ORDERED_PARAMS[call.name] ?? []) {
    const value = (p: string): number | undefined => {
      const v = call.params[p];
      if (typeof v === 'number') return v;
      const s = spec.params[p];
      return s?.type === 'int' ? s.default : undefined;
    };
    const a = value(lo);
    const b = value(hi);
    if (a === undefined || b === undefined || a <= b) continue;
    const at = given.get(lo) ?? given.get(hi);
    if (!at) continue;
    const shown = (p: string, v: number) => (given.has(p) ? `${p} (${v})` : `${p}'s default (${v})`);
    report(
      ctx,
      'OUT_OF_BOUNDS',
      at.value,
      `${where}${call.name} ${shown(lo, a)} is greater than ${shown(hi, b)}: ${why}`,
      `Make ${lo} at most ${hi}, e.g. ${lo}: ${Math.min(a, b)} or ${hi}: ${Math.max(a, b)}.`,
    );
  }
}

function checkParam(ctx: Ctx, call: CommandCall, name: string, spec: ParamSpec, node: YNode, where: string): void {
  let v: Value | undefined;
  switch (spec.type) {
    case 'media': {
      const m = checkMedia(ctx, node, name, where);
      if (m) call.media[name] = m;
      return;
    }
    case 'int':
      v = checkInt(
        ctx,
        node,
        name,
        spec.min,
        spec.max,
        where,
        `The telephony service accepts ${call.name} ${name} from ${spec.min} to ${spec.max} ` +
          `(${spec.doc.replace(/\.$/, '').toLowerCase()}` +
          `${spec.default !== undefined ? `; ${spec.default} when not given` : ''}).`,
      );
      break;
    case 'bool':
      v = checkBool(ctx, node, name, where);
      break;
    case 'targets':
      v = checkTargets(ctx, node, where);
      break;
    case 'string':
      if (
        node.kind === 'scalar' &&
        node.type === 'string' &&
        String(node.value).trim() === '' &&
        REQUIRED_PARAMS[call.name]?.includes(name)
      ) {
        const hint =
          name === 'body'
            ? 'Give the SMS a text, e.g. body: "Your code is {{ vars.code }}".'
            : spec.format
              ? FORMAT_HINTS[spec.format]
              : undefined;
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `${where}${call.name} ${name} is empty${name === 'body' ? ': an SMS needs a text' : ''}`,
          hint ?? `Give ${name} a value.`,
        );
        return;
      }
      if (spec.format === 'callid') v = checkCallid(ctx, node, name, where);
      else if (spec.format === 'base64_wav') v = checkAudio(ctx, node, name, where);
      else v = checkStringParam(ctx, node, name, spec, where);
      break;
  }
  if (v !== undefined) call.params[name] = v;
}

/**
 * A callid: a YAML integer (its source digits are kept, so 18446744073709551615 stays
 * exact), a digit string, or a template. Stored as the decimal string.
 */
function checkCallid(ctx: Ctx, node: YNode, name: string, where: string): string | undefined {
  if (node.kind === 'scalar' && node.type === 'int') {
    let digits: string | undefined;
    try {
      if (/^(?:[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$/.test(node.source)) digits = BigInt(node.source).toString();
    } catch {
      digits = undefined;
    }
    const err =
      digits === undefined ? 'a callid is a 64-bit unsigned integer (digits only)' : checkFormat('callid', digits);
    if (err) {
      report(ctx, 'BAD_FORMAT', node, `${where}${name} ${node.source}: ${err}`, FORMAT_HINTS.callid);
      return undefined;
    }
    return digits;
  }
  if (node.kind === 'scalar' && node.type === 'string') {
    const s = String(node.value);
    if (isTemplate(s)) return checkTemplateText(ctx, s, node, where) ? s : undefined;
    const err = checkFormat('callid', s.trim());
    if (err) {
      report(ctx, 'BAD_FORMAT', node, `${where}${name} "${clip(s)}": ${err}`, FORMAT_HINTS.callid);
      return undefined;
    }
    return BigInt(s.trim()).toString();
  }
  report(ctx, 'TYPE_MISMATCH', node, `${where}${name} must be an integer or a template, not ${describe(node)}`);
  return undefined;
}

/** play_wav_data audio: base64, and when literal, a WAV the service can play. */
function checkAudio(ctx: Ctx, node: YNode, name: string, where: string): string | undefined {
  if (node.kind !== 'scalar' || node.type !== 'string') {
    report(ctx, 'TYPE_MISMATCH', node, `${where}${name} must be a base64 string, not ${describe(node)}`);
    return undefined;
  }
  const s = String(node.value);
  if (isTemplate(s)) return checkTemplateText(ctx, s, node, where) ? s : undefined;
  const err = checkFormat('base64_wav', s);
  if (err) {
    report(ctx, 'BAD_FORMAT', node, `${where}${name}: ${err}`, FORMAT_HINTS.base64_wav);
    return undefined;
  }
  const wav = checkWav(Buffer.from(s.replace(/\s+/g, ''), 'base64'));
  if (wav) {
    report(ctx, 'BAD_WAV', node, `${where}${name}: ${wav}`);
    return undefined;
  }
  return s.replace(/\s+/g, '');
}

const PHONE: Extract<ParamSpec, { type: 'string' }> = { type: 'string', format: 'phone_number', doc: '' };

/** dialout targets: a list of `{ number, timeout }` (a bare number string is `{ number }`). */
function checkTargets(ctx: Ctx, node: YNode, where: string): Value | undefined {
  const items =
    node.kind === 'seq' ? node.items : node.kind === 'scalar' && node.type === 'string' ? [node] : undefined;
  if (!items) {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}targets must be a list of { number, timeout }, not ${describe(node)}`,
      'Write targets: [{ number: "+33123456789", timeout: 30 }].',
    );
    return undefined;
  }
  if (items.length === 0) {
    report(ctx, 'MISSING_KEY', node, `${where}targets is empty: dialout needs at least one number to call`);
    return undefined;
  }
  const out: Value[] = [];
  let ok = true;
  for (const it of items) {
    const t = checkTarget(ctx, it, where);
    if (t) out.push(t);
    else ok = false;
  }
  return ok ? out : undefined;
}

function checkTarget(ctx: Ctx, node: YNode, where: string): Record<string, Value> | undefined {
  if (node.kind === 'scalar' && node.type === 'string') {
    const n = checkStringParam(ctx, node, 'number', PHONE, `${where}target: `);
    return n === undefined ? undefined : { number: n };
  }
  if (node.kind !== 'map') {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}a target must be { number, timeout } or a number string, not ${describe(node)}`,
    );
    return undefined;
  }
  const out: Record<string, Value> = {};
  let ok = true;
  for (const e of (node as YMap).entries) {
    if (e.key === 'number') {
      const n = checkStringParam(ctx, e.value, 'number', PHONE, `${where}target: `);
      if (n === undefined) ok = false;
      else out.number = n;
    } else if (e.key === 'timeout') {
      const t = checkInt(
        ctx,
        e.value,
        'timeout',
        5,
        300,
        `${where}target: `,
        "A target rings for timeout seconds, from 5 to 300 (the telephony service's bounds); give the step a " +
          'NOANSWER branch for what comes next.',
      );
      if (t === undefined) ok = false;
      else out.timeout = t;
    } else {
      report(
        ctx,
        'UNKNOWN_KEY',
        e,
        `${where}unknown key '${e.key}' in a dialout target`,
        didYouMean(e.key, ['number', 'timeout']) ?? 'A target has number and timeout.',
      );
      ok = false;
    }
  }
  if (ok && out.number === undefined) {
    report(ctx, 'MISSING_KEY', node, `${where}a dialout target needs 'number'`);
    return undefined;
  }
  return ok ? out : undefined;
}
