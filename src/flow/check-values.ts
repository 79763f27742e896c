/**
 * Plain values: YAML nodes to model `Value`s, templates (syntax and the names they read),
 * and the typed parameters of commands (int, bool, string with a format or an enum).
 */
import { checkFormat } from '../protocol/formats.js';
import type { FormatName, ParamSpec } from '../protocol/commands.js';
import {
  checkExpression,
  checkTemplate,
  EXPRESSION_FILTERS,
  expressionPatternError,
  expressionPatterns,
  filterNames,
  isTemplate,
} from './expr.js';
import { compileWeight, MAX_FLOW_PATTERN_WEIGHT } from './pattern.js';
import { spanIn } from './spans.js';
import { checkEnvFormat } from './check-environments.js';
import { checkSpokenArgs } from './check-spoken.js';
import type { ExprValue, Value } from './model.js';
import { type Ctx, didYouMean, report, requireV2 } from './check-context.js';
import { clip, describe, type YEntry, type YNode, type YScalar } from './yaml.js';

const REF_RE = /(?<![\w.])(vars|call|env|secrets)(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])/g;
/** open("office") / holiday('office') in a condition: the calendar named by a literal is checked at load. */
const CALENDAR_CALL = /(?<![\w.])(open|holiday)\s*\(\s*(?:"([^"\\]*)"|'([^'\\]*)')?/g;
const TAG_RE = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;

/**
 * Records the `vars.x` / `call.x` names read by a CEL expression, or by the tags of a template, with where each is in
 * the text.
 */
function collectRefs(ctx: Ctx, text: string, at: YNode, template: boolean): void {
  const parts: [string, number][] = template
    ? [...text.matchAll(TAG_RE)].map((m) => [m[1] ?? m[2] ?? '', m.index! + 2])
    : [[text, 0]];
  for (const [code, base] of parts) {
    for (const m of code.matchAll(REF_RE)) {
      const name = m[2] ?? m[3];
      if (name)
        ctx.refs.push({
          root: m[1] as 'vars' | 'call' | 'env' | 'secrets',
          name,
          at,
          offset: base + m.index!,
          length: m[0].length,
        });
    }
  }
}

/**
 * The most `{{ }}` and `{% %}` tags one text may hold. liquidjs parses a template in time
 * quadratic in its tags past a few thousand (it takes each token off the front of an
 * array): 100,000 tags in one say: took 30 s, and a 4 MiB file could hold a million.
 */
export const MAX_TEMPLATE_TAGS = 1000;

/** How many `{{` and `{%` the text holds (an upper bound of its tags). */
function tagCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) {
    const c = text[i + 1];
    if (c === '{' || c === '%') {
      n++;
      i++;
    }
  }
  return n;
}

/** Checks a string that may hold a template; returns false on BAD_TEMPLATE. */
export function checkTemplateText(ctx: Ctx, text: string, at: YNode, where: string): boolean {
  if (!isTemplate(text)) return true;
  const tags = tagCount(text);
  if (tags > MAX_TEMPLATE_TAGS) {
    report(
      ctx,
      'BAD_TEMPLATE',
      at,
      `${where}the text holds ${tags.toLocaleString('en-US')} {{ }} or {% %} tags; a template may hold at ` +
        `most ${MAX_TEMPLATE_TAGS.toLocaleString('en-US')}`,
      'Split the text over several steps (or a list of media), or compute the repeated part once with set: ' +
        'and an expr.',
    );
    return false;
  }
  const err = checkTemplate(text);
  const fileTag = err ? /tag "(include|render|layout)" not found/.exec(err) : null;
  if (fileTag) {
    report(ctx, 'FORBIDDEN_TAG', at, `${where}{% ${fileTag[1]} %} reads a file: templates have no file system`);
    return false;
  }
  const filter = err ? /^undefined filter: ([\w-]+)/.exec(err) : null;
  if (filter && err) {
    // carets under the filter's name, and the nearest filter as a hint
    const m = new RegExp(`\\|\\s*(${filter[1]})\\b`).exec(text);
    const span =
      m && at.kind === 'scalar' ? spanIn(at, m.index + m[0].length - filter[1]!.length, filter[1]!.length) : undefined;
    const removed = (EXPRESSION_FILTERS as readonly string[]).includes(filter[1]!);
    if (removed) {
      report(
        ctx,
        'BAD_TEMPLATE',
        span ?? at,
        `${where}the filter ${filter[1]} is not available in flows: it runs an expression for each item, ` +
          `which no evaluation budget can stop`,
        `Use ${filter[1]!.replace(/_exp$/, '')} with a property and a value (where: "status", "open"), or ` +
          `compute the value in a set: step with CEL.`,
      );
      return false;
    }
    report(
      ctx,
      'BAD_TEMPLATE',
      span ?? at,
      `${where}template does not parse: ${err.replace(/, line:\d+, col:\d+$/, '')}`,
      didYouMean(filter[1]!, filterNames()) ??
        "Templates use Liquid's standard filters: default, upcase, downcase, capitalize, slice, split, join, " +
          'replace, append, prepend, size, date, ...',
    );
    return false;
  }
  if (err) {
    report(ctx, 'BAD_TEMPLATE', at, `${where}template does not parse: ${err}`);
    return false;
  }
  if (!checkSpokenArgs(ctx, text, at, where)) return false;
  collectRefs(ctx, text, at, true);
  return true;
}

/** Checks a CEL expression written as a YAML string; returns it, or undefined on error. */
export function checkCel(ctx: Ctx, node: YNode, where: string): string | undefined {
  if (node.kind !== 'scalar' || node.type !== 'string') {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}a condition must be a CEL expression in a string, not ${describe(node)}`,
      `Quote it: '${node.kind === 'scalar' ? node.source : '...'}'.`,
    );
    return undefined;
  }
  const src = String(node.value);
  if (src.trim() === '') {
    report(ctx, 'BAD_EXPRESSION', node, `${where}the expression is empty`);
    return undefined;
  }
  const err = checkExpression(src);
  if (err) {
    report(ctx, 'BAD_EXPRESSION', node, `${where}invalid CEL expression: ${err}`);
    return undefined;
  }
  // weighed before they are compiled: the flow's patterns are bounded in all
  for (const p of expressionPatterns(src)) ctx.patternWeight += compileWeight(p);
  if (ctx.patternWeight > MAX_FLOW_PATTERN_WEIGHT) {
    report(
      ctx,
      'BAD_PATTERN',
      node,
      `${where}the flow's patterns weigh more than ${MAX_FLOW_PATTERN_WEIGHT.toLocaleString('en-US')} to ` +
        `compile in all: use fewer and simpler patterns in matches()`,
    );
    return undefined;
  }
  const badPattern = expressionPatternError(src);
  if (badPattern) {
    report(ctx, 'BAD_PATTERN', node, `${where}${badPattern}`);
    return undefined;
  }
  collectRefs(ctx, src, node, false);
  for (const m of src.matchAll(CALENDAR_CALL)) {
    requireV2(ctx, node, 'open() and holiday() in conditions');
    const name = m[2] ?? m[3];
    // the name ends before the match's closing quote
    if (name !== undefined)
      ctx.v2.calendarRefs.push({ name, at: node, offset: m.index! + m[0].length - 1 - name.length });
  }
  return src;
}

/**
 * A YAML value as plain model data. Numbers must be finite and exact (integers within
 * 2^53); with `templates`, strings at any depth are checked as templates.
 */
export function toValue(ctx: Ctx, node: YNode, where: string, templates: boolean): Value | undefined {
  if (node.kind === 'seq') {
    const out: Value[] = [];
    let ok = true;
    for (const it of node.items) {
      const v = toValue(ctx, it, where, templates);
      if (v === undefined) ok = false;
      else out.push(v);
    }
    return ok ? out : undefined;
  }
  if (node.kind === 'map') {
    const out: Record<string, Value> = {};
    let ok = true;
    for (const e of node.entries) {
      if (e.key === '__proto__') {
        protoKey(ctx, e, where);
        ok = false;
        continue;
      }
      const v = toValue(ctx, e.value, where, templates);
      if (v === undefined) ok = false;
      else out[e.key] = v;
    }
    return ok ? out : undefined;
  }
  return scalarValue(ctx, node, where, templates);
}

/**
 * A value whose maps holding only `expr` are CEL expressions, at any depth (an http step's body): the CEL value is
 * taken typed when the request is built. The parts without one are plain values (`toValue`, strings templated).
 */
export function toExprValue(ctx: Ctx, node: YNode, where: string): ExprValue | undefined {
  const expr = exprOf(ctx, node, where);
  if (expr !== undefined) return expr === null ? undefined : { kind: 'expr', expr };
  if (node.kind === 'seq') {
    const items: ExprValue[] = [];
    let ok = true;
    for (const it of node.items) {
      const v = toExprValue(ctx, it, where);
      if (v === undefined) ok = false;
      else items.push(v);
    }
    if (!ok) return undefined;
    return items.every((x) => x.kind === 'literal')
      ? { kind: 'literal', value: items.map((x) => (x as { value: Value }).value) }
      : { kind: 'list', items };
  }
  if (node.kind === 'map') {
    const entries: [string, ExprValue][] = [];
    let ok = true;
    for (const e of node.entries) {
      if (e.key === '__proto__') {
        protoKey(ctx, e, where);
        ok = false;
        continue;
      }
      const v = toExprValue(ctx, e.value, where);
      if (v === undefined) ok = false;
      else entries.push([e.key, v]);
    }
    if (!ok) return undefined;
    if (entries.some(([, x]) => x.kind !== 'literal')) return { kind: 'map', entries };
    const out: Record<string, Value> = {};
    for (const [k, x] of entries) out[k] = (x as { value: Value }).value;
    return { kind: 'literal', value: out };
  }
  const v = scalarValue(ctx, node, where, true);
  return v === undefined ? undefined : { kind: 'literal', value: v };
}

/**
 * The CEL source of `{ expr: "..." }` (a map whose only key is expr), null when it is one but does not check, undefined
 * when the node is no such map. A map holding expr beside other keys is UNKNOWN_KEY, as in `set:`.
 */
export function exprOf(ctx: Ctx, node: YNode, where: string): string | null | undefined {
  if (node.kind !== 'map' || !node.entries.some((x) => x.key === 'expr')) return undefined;
  if (node.entries.length > 1) {
    const other = node.entries.find((x) => x.key !== 'expr')!;
    report(
      ctx,
      'UNKNOWN_KEY',
      other,
      `${where}unknown key '${other.key}' beside expr`,
      'An { expr: "..." } map holds only expr; to send a map with a key named expr, write the map in CEL: ' +
        `{ expr: '{"expr": "..."}' }.`,
    );
    return null;
  }
  return checkCel(ctx, node.entries[0]!.value, where) ?? null;
}

function protoKey(ctx: Ctx, at: YEntry, where: string): void {
  // assigning it would set the object's prototype, not a key: refused rather than silently lost
  report(
    ctx,
    'BAD_NAME',
    at,
    `${where}a key named __proto__ cannot be kept in a value (it is the prototype of every JavaScript ` +
      `object); rename it`,
  );
}

function scalarValue(ctx: Ctx, node: YScalar, where: string, templates: boolean): Value | undefined {
  if (node.type === 'float' && !Number.isFinite(node.value as number)) {
    report(ctx, 'TYPE_MISMATCH', node, `${where}${node.source} is not a finite number; variables hold JSON values`);
    return undefined;
  }
  if (node.type === 'int' && !Number.isSafeInteger(node.value as number)) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      node,
      `${where}the integer ${node.source} is too large to be kept exactly (over 2^53)`,
      `Quote it to keep it as a string: "${node.source}".`,
    );
    return undefined;
  }
  if (node.type === 'string' && templates && !checkTemplateText(ctx, node.value as string, node, where))
    return undefined;
  return node.value;
}

/**
 * An integer parameter within its bounds. `bounds` is the hint of OUT_OF_BOUNDS: where the
 * bounds come from and what the value means (it differs for a command param, a branch's
 * retry, a dialout target's timeout).
 */
export function checkInt(
  ctx: Ctx,
  node: YNode,
  name: string,
  min: number,
  max: number,
  where: string,
  bounds?: string,
): number | undefined {
  if (node.kind !== 'scalar' || node.type !== 'int') {
    const quoted = node.kind === 'scalar' && node.type === 'string' && /^-?[0-9]+$/.test(String(node.value).trim());
    const tpl = node.kind === 'scalar' && node.type === 'string' && isTemplate(String(node.value));
    const hint = quoted
      ? `Write it without quotes: ${name}: ${String((node as YScalar).value).trim()}.`
      : tpl
        ? 'Integer parameters are checked when the flow loads and cannot be templates; use a switch step to ' +
          'choose between steps with fixed values.'
        : undefined;
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}${name} must be an integer (${min}..${max}), not ${describe(node)}`,
      hint,
    );
    return undefined;
  }
  const v = node.value as number;
  if (v < min || v > max) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      node,
      `${where}${name} must be between ${min} and ${max}, got ${node.source}`,
      bounds ?? `Use a value from ${min} to ${max}.`,
    );
    return undefined;
  }
  return v;
}

export function checkBool(ctx: Ctx, node: YNode, name: string, where: string): boolean | undefined {
  if (node.kind === 'scalar' && node.type === 'bool') return node.value as boolean;
  const s = node.kind === 'scalar' ? String(node.value).toLowerCase() : '';
  const hint = ['true', 'false', 'yes', 'no', 'on', 'off'].includes(s)
    ? `Write true or false without quotes (YAML 1.2: yes/no/on/off are strings).`
    : undefined;
  report(ctx, 'TYPE_MISMATCH', node, `${where}${name} must be true or false, not ${describe(node)}`, hint);
  return undefined;
}

/**
 * A string parameter: YAML integers are taken as written (`pin_code: 0123` is "0123");
 * templates are syntax-checked and skip the format check (done again at run time).
 */
export function checkStringParam(
  ctx: Ctx,
  node: YNode,
  name: string,
  spec: Extract<ParamSpec, { type: 'string' }>,
  where: string,
): string | undefined {
  let s: string;
  if (node.kind === 'scalar' && node.type === 'string') s = node.value as string;
  else if (node.kind === 'scalar' && node.type === 'int' && /^\+?[0-9]+$/.test(node.source) && !spec.enum)
    s = node.source;
  else {
    report(ctx, 'TYPE_MISMATCH', node, `${where}${name} must be a string, not ${describe(node)}`);
    return undefined;
  }
  if (isTemplate(s))
    return checkTemplateText(ctx, s, node, where) &&
      (!spec.format || checkEnvFormat(ctx, s, node, name, spec.format, where))
      ? s
      : undefined;
  if (spec.enum && !spec.enum.includes(s)) {
    const dym = didYouMean(s, spec.enum);
    report(ctx, 'BAD_ENUM', node, `${where}${name} must be one of ${spec.enum.join(', ')}, not "${clip(s)}"`, dym);
    return undefined;
  }
  if (spec.format) {
    const err = checkFormat(spec.format, s);
    if (err) {
      report(ctx, 'BAD_FORMAT', node, `${where}${name} "${clip(s)}": ${err}`, FORMAT_HINTS[spec.format]);
      return undefined;
    }
  }
  return s;
}

const RUNTIME = 'A value known only at run time can be a template ("{{ vars.x }}"), checked when the command is sent.';

/** The hint of a BAD_FORMAT, by the format of the value checked. */
export const FORMAT_HINTS: Record<FormatName, string> = {
  rt_media: 'A media is an integer media id, 0 for none, or TTS|<voice>|<text>.',
  phone_number:
    `Write the number in E.164: +, the country code, then the number without its leading 0, no spaces or dots ` +
    `(e.g. "+33123456789"). ${RUNTIME}`,
  cli_phone_number: `A caller id is an E.164 number ("+33123456789") or BLOCKED to hide it. ${RUNTIME}`,
  cdr_customer_field: 'cdr_field is up to 32 letters and digits, no spaces or punctuation (e.g. "order12345").',
  rt_conference_id:
    'A room id is 1 to 64 letters, digits, -, _, . and : (e.g. "sales-weekly"); every call that joins the ' +
    'same id is in the same room.',
  callid:
    'A callid is the decimal 64-bit number of a call, usually "{{ call.callid }}" or a saved variable; write ' +
    'it without quotes or as a digit string.',
  locale:
    'Write the language as ll_CC, e.g. en_GB or fr_FR (lowercase language, underscore, uppercase country), ' +
    'or "" for auto-detection.',
  dtmf_digits: 'Send 1 to 64 of 0-9, * and #, e.g. "1234#"; quote the digits so that YAML keeps them as written.',
  pin_code: 'A PIN is up to 10 digits, quoted to keep leading zeros (e.g. pin_code: "0123"); "" means no PIN.',
  base64_wav: 'Encode the WAV file with base64 (e.g. `base64 -w0 prompt.wav`) and paste the text; no data: URL prefix.',
  media_file: 'Give the file name a record step returned, usually saved with save: and written "{{ vars.message }}".',
  sms_sender:
    'A sender is 1 to 11 of letters, digits, space, - and _, with at least one letter (e.g. "Acme"); leave ' +
    'from out to send from a shared short code.',
  sms_user_data: 'Shorten user_data to 32 characters; it is kept with the SMS, not sent.',
  url: 'Write a full http:// or https:// URL, e.g. https://example.com/sms-status.',
};
