/**
 * MEDIA_TEMPLATE_TEXT: a media written as one `{{ vars.x }}` alone is a media computed at run time (sent as rendered:
 * a media id or TTS|voice|text), but the flow gives vars.x a text (in `vars:` or a `set:` literal). When it holds
 * that text the command cannot be sent (RUNTIME_MEDIA at run time, INVALID_PARAM); the author meant it spoken. Only
 * what the flow writes literally is known: a variable saved from a result or computed is not reported.
 */
import { checkRtMedia } from '../protocol/formats.js';
import { type Ctx, report } from './check-context.js';
import { isTemplate } from './expr.js';
import type { Step, Value } from './model.js';
import { clip } from './yaml.js';

const WHOLE_VAR = /^\s*\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$/;

/** A literal that is text, not a media (nor a template, rendered at run time). */
function isText(v: Value | undefined): v is string {
  if (typeof v !== 'string' || isTemplate(v)) return false;
  const s = v.trim();
  return s !== '' && !s.startsWith('TTS|') && checkRtMedia(s) !== null;
}

export function checkRawMediaText(ctx: Ctx, initial: Record<string, Value>, steps: Record<string, Step>): void {
  if (!ctx.rawMedia?.length) return;
  // the first text each variable is given: in vars:, else in a set: literal
  const texts = new Map<string, { value: string; origin: string }>();
  for (const [name, v] of Object.entries(initial)) if (isText(v)) texts.set(name, { value: v, origin: 'vars:' });
  for (const s of Object.values(steps)) {
    if (s.kind !== 'set') continue;
    for (const a of s.assign)
      if (a.value.kind === 'literal' && isText(a.value.value) && !texts.has(a.name))
        texts.set(a.name, { value: a.value.value, origin: `set at step '${s.id}'` });
  }
  for (const r of ctx.rawMedia) {
    const name = WHOLE_VAR.exec(r.source)?.[1];
    const text = name === undefined ? undefined : texts.get(name);
    if (!text) continue;
    report(
      ctx,
      'MEDIA_TEMPLATE_TEXT',
      r.at,
      `${r.where}${r.name} is "${clip(r.source.trim())}" alone: a media computed at run time (a media id or ` +
        `TTS|voice|text), but vars.${name} is text ("${clip(text.value)}", ${text.origin}): the command cannot be ` +
        'sent then (INVALID_PARAM), and without an error branch the call ends',
      `To speak the variable's text, write { say: "{{ vars.${name} }}" } (or text around the template); to play a ` +
        'media, give the variable a media id or TTS|voice|text.',
    );
  }
}
