/**
 * `languages:`, `language:` and `prompts:` (version 2): prompts written once per
 * language, each language with its voice, and how a call's language is chosen. A media
 * `{ prompt: name }` plays the prompt in the call's language (check-media.ts).
 */
import { checkMedia, checkVoice } from './check-media.js';
import { countryProblem } from './countries.js';
import { type Ctx, asMap, checkVarName, didYouMean, knownEntries, report, requireV2 } from './check-context.js';
import type { LanguageChoice, MediaParam } from './model.js';
import { describe, entry, type YEntry, type YNode } from './yaml.js';

/** Bounds, checked at load (TOO_MANY_ENTRIES). */
export const MAX_LANGUAGES = 50;
export const MAX_PROMPTS = 5000;

/** A language tag: en, en-GB, fr-FR, zh-Hant-TW (BCP 47's common shapes). */
const TAG_RE = /^[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|[0-9]{3}))?$/;

/** The keys of a language of `languages:`, and of `language:`. */
export const LANGUAGE_ENTRY_KEYS = ['voice'] as const;
export const LANGUAGE_KEYS = ['default', 'by_country', 'variable'] as const;

export function checkLanguages(ctx: Ctx, e: YEntry | undefined): Record<string, { voice: string }> | undefined {
  if (!e) return undefined;
  requireV2(ctx, e, 'languages:');
  const map = asMap(ctx, e.value, 'languages');
  ctx.v2.languages = new Set(map?.entries.map((x) => x.key) ?? []);
  if (!map) return undefined;
  if (map.entries.length > MAX_LANGUAGES) {
    report(
      ctx,
      'TOO_MANY_ENTRIES',
      e,
      `languages: ${map.entries.length.toLocaleString('en-US')} languages; a flow may declare at most ${MAX_LANGUAGES}`,
    );
    return undefined;
  }
  if (map.entries.length === 0)
    report(ctx, 'MISSING_KEY', e, 'languages: declare at least one language (e.g. en-GB: { voice: TTS_EN-GB_SERENA })');
  const out: Record<string, { voice: string }> = {};
  for (const l of map.entries) {
    if (!TAG_RE.test(l.key)) {
      report(
        ctx,
        'BAD_FORMAT',
        l,
        `languages: '${l.key}' is not a language tag`,
        'Write a language tag: the language in lowercase, then the country in uppercase, e.g. en-GB, fr-FR, fr-BE.',
      );
      continue;
    }
    const m = asMap(ctx, l.value, `language ${l.key}`);
    if (!m) continue;
    knownEntries(ctx, m, LANGUAGE_ENTRY_KEYS, `language ${l.key}: `);
    const v = entry(m, 'voice');
    if (!v) {
      report(ctx, 'MISSING_KEY', l, `language ${l.key}: missing 'voice': the TTS voice its prompts are spoken in`);
      continue;
    }
    const voice = checkVoice(ctx, v.value, `language ${l.key}: `);
    if (voice !== undefined) out[l.key] = { voice };
  }
  return out;
}

/** A language named somewhere (language.default, by_country, a prompt's key): declared, or UNKNOWN_LANGUAGE. */
function declared(ctx: Ctx, name: string, at: YNode | YEntry, where: string): boolean {
  const langs = ctx.v2.languages;
  if (langs?.has(name)) return true;
  report(
    ctx,
    'UNKNOWN_LANGUAGE',
    at,
    `${where}'${name}' is not a language of languages:`,
    (langs && didYouMean(name, langs)) ??
      (langs && langs.size > 0
        ? `Languages: ${[...langs].join(', ')}.`
        : 'Declare it under languages: with its voice.'),
  );
  return false;
}

export function checkLanguageChoice(
  ctx: Ctx,
  e: YEntry | undefined,
  languagesAt: YEntry | undefined,
): LanguageChoice | undefined {
  const langs = ctx.v2.languages;
  if (!e) {
    if (languagesAt && langs && langs.size > 0) return { default: [...langs][0]!, byCountry: {} };
    return undefined;
  }
  requireV2(ctx, e, 'language:');
  if (!languagesAt) {
    report(
      ctx,
      'MISSING_KEY',
      e,
      "language: chooses among the flow's languages, and there is no languages: map",
      'Declare the languages with their voices: languages: { en-GB: { voice: TTS_EN-GB_SERENA } }.',
    );
    return undefined;
  }
  const m = asMap(ctx, e.value, 'language');
  if (!m) return undefined;
  knownEntries(ctx, m, LANGUAGE_KEYS, 'language: ');
  const out: LanguageChoice = { default: langs && langs.size > 0 ? [...langs][0]! : '', byCountry: {} };
  const d = entry(m, 'default');
  if (d) {
    if (d.value.kind !== 'scalar' || d.value.type !== 'string')
      report(ctx, 'TYPE_MISMATCH', d.value, `language.default must be a language tag, not ${describe(d.value)}`);
    else if (declared(ctx, String(d.value.value), d.value, 'language.default: ')) out.default = String(d.value.value);
  }
  const bc = entry(m, 'by_country');
  if (bc) {
    const cm = asMap(ctx, bc.value, 'language.by_country');
    if (cm && cm.entries.length > 300)
      report(
        ctx,
        'TOO_MANY_ENTRIES',
        bc,
        `language.by_country: ${cm.entries.length.toLocaleString('en-US')} countries; there are fewer than 300`,
      );
    else
      for (const c of cm?.entries ?? []) {
        const tag = c.value.kind === 'scalar' && c.value.type === 'string' ? String(c.value.value) : undefined;
        const bad = countryProblem(c.key, tag);
        if (bad) {
          report(ctx, 'BAD_FORMAT', c, `language.by_country: ${bad.message}`, bad.hint);
          continue;
        }
        if (c.value.kind !== 'scalar' || c.value.type !== 'string')
          report(
            ctx,
            'TYPE_MISMATCH',
            c.value,
            `language.by_country.${c.key} must be a language tag, not ${describe(c.value)}`,
          );
        else if (declared(ctx, String(c.value.value), c.value, `language.by_country.${c.key}: `))
          out.byCountry[c.key] = String(c.value.value);
      }
  }
  const v = entry(m, 'variable');
  if (v) {
    if (v.value.kind !== 'scalar' || v.value.type !== 'string')
      report(ctx, 'TYPE_MISMATCH', v.value, `language.variable must be a variable name, not ${describe(v.value)}`);
    else if (checkVarName(ctx, String(v.value.value), v.value, 'language.variable:'))
      out.variable = String(v.value.value);
  }
  return out;
}

/**
 * `prompts:`: each prompt a map from language to a media (every media form, escalation
 * lists included). A prompt missing a declared language is MISSING_TRANSLATION at the
 * prompt's name. Parsed before the steps: their `{ prompt: name }` media are checked
 * against ctx.v2.prompts.
 */
export function checkPrompts(
  ctx: Ctx,
  e: YEntry | undefined,
  languagesAt: YEntry | undefined,
): Record<string, Record<string, MediaParam>> | undefined {
  if (!e) return undefined;
  requireV2(ctx, e, 'prompts:');
  const map = asMap(ctx, e.value, 'prompts');
  ctx.v2.prompts = new Set(map?.entries.map((x) => x.key) ?? []);
  if (!map) return undefined;
  if (map.entries.length > MAX_PROMPTS) {
    report(
      ctx,
      'TOO_MANY_ENTRIES',
      e,
      `prompts: ${map.entries.length.toLocaleString('en-US')} prompts; a flow may have at ` +
        `most ${MAX_PROMPTS.toLocaleString('en-US')}`,
    );
    return undefined;
  }
  if (!languagesAt) {
    report(
      ctx,
      'MISSING_KEY',
      e,
      'prompts: are written per language, and the flow has no languages: map',
      'Declare the languages with their voices: languages: { en-GB: { voice: TTS_EN-GB_SERENA } }.',
    );
    return undefined;
  }
  const langs = ctx.v2.languages ?? new Set<string>();
  const voices = new Map<string, string>();
  if (languagesAt.value.kind === 'map') {
    for (const l of languagesAt.value.entries) {
      const v = l.value.kind === 'map' ? entry(l.value, 'voice')?.value : undefined;
      if (v?.kind === 'scalar' && v.type === 'string') voices.set(l.key, String(v.value));
    }
  }
  const out: Record<string, Record<string, MediaParam>> = {};
  const outer = ctx.voice;
  for (const p of map.entries) {
    const where = `prompt '${p.key}': `;
    const m = asMap(ctx, p.value, `${where}a prompt`);
    if (!m) continue;
    const per: Record<string, MediaParam> = {};
    for (const l of m.entries) {
      if (!declared(ctx, l.key, l, where)) continue;
      if (l.value.kind === 'map' && entry(l.value, 'prompt')) {
        report(ctx, 'BAD_MEDIA', l.value, `${where}${l.key}: a prompt cannot refer to another prompt`);
        continue;
      }
      // plain text is spoken in the language's voice
      ctx.voice = voices.get(l.key) ?? outer;
      try {
        const media = checkMedia(ctx, l.value, l.key, where);
        if (media) per[l.key] = media;
      } finally {
        ctx.voice = outer;
      }
    }
    const missing = [...langs].filter((l) => !m.entries.some((x) => x.key === l));
    if (missing.length > 0)
      report(
        ctx,
        'MISSING_TRANSLATION',
        p,
        `${where}no ${missing.join(', ')} text: every prompt is written in every language of languages:`,
        `Add ${missing.map((x) => `${x}: "..."`).join(', ')} under ${p.key}:.`,
      );
    out[p.key] = per;
  }
  return out;
}

/** The `{ prompt: name }` media form: the name is a prompt of prompts:. */
export function promptRef(ctx: Ctx, node: YNode, where: string): string | undefined {
  requireV2(ctx, node, 'prompt tables');
  if (node.kind !== 'scalar' || node.type !== 'string') {
    report(ctx, 'TYPE_MISMATCH', node, `${where}prompt: names a prompt of prompts:, not ${describe(node)}`);
    return undefined;
  }
  const name = String(node.value);
  ctx.uses?.push({ kind: 'prompt', name, at: node });
  const known = ctx.v2.prompts;
  if (known?.has(name)) return name;
  report(
    ctx,
    'UNKNOWN_PROMPT',
    node,
    `${where}there is no prompt '${name}'${known ? '' : ' (the flow has no prompts:)'}`,
    (known && didYouMean(name, known, ctx.suggest)) ?? 'Declare it under prompts:, with a text per language.',
  );
  return undefined;
}
