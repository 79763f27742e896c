/**
 * Where a flow's sensitive variables (`sensitive: [pin]`, version 2) go: the checker warns
 * when one would leave the process in a command that does not need it, or lose its mask.
 *
 * - SENSITIVE_RENDERED: `{{ vars.pin }}` in a media text (say:, a branch's say:, a prompt or
 *   any media param, TTS text, a dialout whisper) or in an sms body: the telephony service
 *   reads it out or sends it on (and its logs keep it). `{{ result }}` in the say: of a
 *   branch of a step whose `save:` is sensitive counts too. Commands that need the value
 *   (a conference pin_code, a dialout number, an sms `to`, an http body) are not warned.
 * - SENSITIVE_COPIED: `set: { x: ... }` reading a sensitive variable into `x`, which is not
 *   listed: x is masked too (sensitivity follows the value, src/flow/sensitive-flow.ts), but
 *   the flow does not say so. List x in `sensitive:` too.
 * - UNKNOWN_VARIABLE: a name in `sensitive:` that nothing sets (a typo masks nothing).
 *
 * Warnings, not errors: the flow runs; the values are masked in logs and stores either way.
 */
import { isAction } from './actions.js';
import { ACTION_SPECS } from './actions.js';
import { PARAM_ALIASES, SCALAR_PARAM, type CommandName, type ParamSpec } from '../protocol/commands.js';
import { type Ctx, didYouMean, report } from './check-context.js';
import type { Step } from './model.js';
import { spanIn } from './spans.js';
import { fieldRead, keysAfter, sensitiveFields } from './sensitive-flow.js';
import type { YEntry, YNode } from './yaml.js';

/** A written step: its id and its YAML entry. */
export interface WrittenStep {
  id: string;
  entry: YEntry;
}

function isMedia(p: ParamSpec | undefined): boolean {
  return p !== undefined && (p.type === 'media' || (p.type === 'string' && p.format === 'rt_media'));
}

/** Every node of a subtree, into `into` with `what`. */
function mark(n: YNode, what: string, into: Map<YNode, string>): void {
  into.set(n, what);
  if (n.kind === 'map') for (const e of n.entries) mark(e.value, what, into);
  else if (n.kind === 'seq') for (const i of n.items) mark(i, what, into);
}

const RESULT_IN_TAG = /\{\{[^}]*\bresult\b/;

export function checkSensitiveUse(
  ctx: Ctx,
  listed: readonly { name: string; at: YNode }[],
  written: readonly WrittenStep[],
  steps: Record<string, Step>,
  initial: readonly string[],
): void {
  if (listed.length === 0) return;
  const names = new Set(listed.map((l) => l.name).filter((n) => !n.includes('.')));
  const fields = sensitiveFields(listed.map((l) => l.name));
  const rendered = new Map<YNode, string>();
  const copied = new Map<YNode, string>();
  /** Branch says of steps whose save: is sensitive: `{{ result }}` there is the sensitive input. */
  const resultSays: { node: YNode; step: string }[] = [];
  for (const { id, entry } of written) {
    const v = entry.value;
    if (v.kind !== 'map') continue;
    const step = steps[id];
    const sensitiveSave = step?.kind === 'command' && step.save !== undefined && names.has(step.save);
    for (const e of v.entries) {
      if (e.key === 'say') mark(e.value, 'a say: text', rendered);
      else if (e.key === 'on' && e.value.kind === 'map') {
        for (const b of e.value.entries) {
          if (b.value.kind !== 'map') continue;
          const say = b.value.entries.find((x) => x.key === 'say');
          if (!say) continue;
          mark(say.value, `the say: of branch ${b.key}`, rendered);
          if (sensitiveSave) {
            const sub = new Map<YNode, string>();
            mark(say.value, '', sub);
            for (const n of sub.keys())
              if (n.kind === 'scalar' && typeof n.value === 'string' && RESULT_IN_TAG.test(n.value))
                resultSays.push({ node: n, step: id });
          }
        }
      } else if (e.key === 'set' && e.value.kind === 'map') {
        for (const a of e.value.entries) if (!names.has(a.key)) mark(a.value, a.key, copied);
      } else if (isAction(e.key)) {
        const name = e.key;
        const spec = ACTION_SPECS[name];
        const aliases = PARAM_ALIASES[name as CommandName] ?? {};
        if (e.value.kind === 'map') {
          for (const p of e.value.entries) {
            const canonical = aliases[p.key] ?? p.key;
            if (p.key === 'say' || isMedia(spec.params[canonical])) mark(p.value, `${name} ${p.key}`, rendered);
            else if (name === 'sms' && canonical === 'body') mark(p.value, 'the sms body', rendered);
          }
        } else {
          const scalar = SCALAR_PARAM[name as CommandName];
          if (scalar && isMedia(spec.params[scalar])) mark(e.value, `${name} ${scalar}`, rendered);
        }
      }
    }
  }
  const seen = new Set<string>();
  for (const r of ctx.refs) {
    if (r.root !== 'vars' || (!names.has(r.name) && !fields.has(r.name))) continue;
    const where = rendered.get(r.at);
    const into = where === undefined ? copied.get(r.at) : undefined;
    if (where === undefined && into === undefined) continue;
    // a field: only a read of it (or of what holds it) is sensitive, not one of another field beside it
    let name = r.name;
    let is = 'is sensitive';
    if (!names.has(r.name)) {
      const text = r.at.kind === 'scalar' && typeof r.at.value === 'string' ? r.at.value : '';
      const keys = r.offset !== undefined ? keysAfter(text, r.offset + (r.length ?? 0)) : [];
      const field = fieldRead(fields.get(r.name)!, keys);
      if (!field) continue;
      const path = [r.name, ...field].join('.');
      if (keys.length >= field.length) name = path;
      else {
        name = [r.name, ...keys].join('.');
        is = `holds the sensitive field ${path}`;
      }
    }
    const key = `${name}@${r.at.pos.line}:${r.at.pos.col}:${r.offset ?? 0}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const at = (r.offset !== undefined && r.at.kind === 'scalar' && spanIn(r.at, r.offset, r.length ?? 0)) || r.at;
    if (where !== undefined) {
      report(
        ctx,
        'SENSITIVE_RENDERED',
        at,
        `vars.${name} ${is}, and ${where} sends it to the telephony service in clear (spoken or ` +
          `sent on, and kept in its logs)`,
        `Leave the value out of the text (e.g. "the PIN you typed"), or remove ${name} from sensitive: if ` +
          `it may be shown.`,
      );
    } else {
      report(
        ctx,
        'SENSITIVE_COPIED',
        at,
        `vars.${name} ${is}, and set: copies it into '${into}', which is not listed in sensitive: ` +
          `'${into}' is masked too, since it holds a sensitive value, but the flow does not say so`,
        listed.length < 12
          ? `List '${into}' in sensitive: too (sensitive: [${[...listed.map((l) => l.name), into].join(', ')}]).`
          : `List '${into}' in sensitive: too.`,
      );
    }
  }
  for (const { node, step } of resultSays) {
    const text = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : '';
    const m = /\bresult\b/.exec(text.slice(text.search(RESULT_IN_TAG)));
    const offset = m ? text.search(RESULT_IN_TAG) + m.index : undefined;
    const at = (offset !== undefined && node.kind === 'scalar' && spanIn(node, offset, 6)) || node;
    report(
      ctx,
      'SENSITIVE_RENDERED',
      at,
      `result is the sensitive input of step '${step}' (its save: is sensitive), and this say: sends it to ` +
        `the telephony service in clear`,
      'Leave the value out of the text, or remove the saved variable from sensitive: if it may be shown.',
    );
  }
  // a name nothing sets masks nothing: most likely a typo
  const set = new Set<string>([...initial, ...ctx.declared]);
  for (const s of Object.values(steps)) {
    if (s.kind === 'command' && s.save) set.add(s.save);
    if (s.kind === 'set') for (const a of s.assign) set.add(a.name);
    if (s.kind === 'loop') set.add(s.as);
  }
  for (const { name: listedName, at } of listed) {
    // a field's variable must be set: `customer.dob` masks nothing when nothing sets customer
    const n = listedName.split('.')[0]!;
    if (set.has(n)) continue;
    report(
      ctx,
      'UNKNOWN_VARIABLE',
      at,
      n === listedName
        ? `sensitive: '${n}' is a variable nothing sets (no vars:, save: or set: of '${n}'): it masks nothing`
        : `sensitive: '${listedName}' is a field of '${n}', a variable nothing sets (no vars:, save: or set: of ` +
            `'${n}'): it masks nothing`,
      didYouMean(n, set, ctx.suggest) ?? 'List the variables the flow saves or sets.',
    );
  }
}
