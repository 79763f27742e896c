/**
 * Media parameters (rt_media) normalised to MediaSpec lists, and the WAV check of
 * play_wav_data. Accepted forms: integer id, 0 (none), "TTS|voice|text", plain text
 * (TTS in the flow voice), { say, voice }, a whole-value template (raw), or a list of these.
 */
import { checkRtMedia } from '../protocol/formats.js';
import { isTemplate } from './expr.js';
import type { MediaParam, MediaSpec } from './model.js';
import { type Ctx, knownEntries, report } from './check-context.js';
import { checkTemplateText } from './check-values.js';
import { promptRef } from './check-prompts.js';
import { clip, describe, type YNode } from './yaml.js';

const VOICE_RE = /^[A-Za-z0-9_-]{1,64}$/;

export interface MediaOptions {
  /** `say:` speaks text: a whole-value template is TTS text, not a raw rt_media. */
  say?: boolean;
  /** false: templates are refused (server config). Default true. */
  templates?: boolean;
}

/** `{{ ... }}` and nothing else: the rendered value is the media itself. */
export function isWholeTemplate(s: string): boolean {
  const t = s.trim();
  if (!t.startsWith('{{') || !t.endsWith('}}')) return false;
  return !t.slice(2, -2).includes('}}') && !t.slice(2, -2).includes('{{');
}

export function checkVoice(ctx: Ctx, node: YNode, where: string): string | undefined {
  if (node.kind !== 'scalar' || node.type !== 'string') {
    report(ctx, 'TYPE_MISMATCH', node, `${where}voice must be a string, not ${describe(node)}`);
    return undefined;
  }
  const v = String(node.value);
  if (!VOICE_RE.test(v)) {
    report(
      ctx,
      'BAD_FORMAT',
      node,
      `${where}"${clip(v)}" is not a voice id: letters, digits, - and _ (e.g. TTS_EN-GB_SERENA)`,
      'Write the id of a TTS voice of the service, e.g. TTS_EN-GB_SERENA or TTS_FR-FR_AUDREY, without spaces.',
    );
    return undefined;
  }
  return v;
}

/** A media parameter as a list of choices (escalating prompts); undefined after an error. */
export function checkMedia(
  ctx: Ctx,
  node: YNode,
  name: string,
  where: string,
  opts: MediaOptions = {},
): MediaParam | undefined {
  if (node.kind === 'seq') {
    if (node.items.length === 0) {
      report(ctx, 'BAD_MEDIA', node, `${where}${name} is an empty list; give at least one media`);
      return undefined;
    }
    const out: MediaSpec[] = [];
    let ok = true;
    for (const it of node.items) {
      if (it.kind === 'seq') {
        report(ctx, 'BAD_MEDIA', it, `${where}${name}: a list of media (escalating prompts) cannot hold another list`);
        ok = false;
        continue;
      }
      const m = mediaItem(ctx, it, name, where, opts);
      if (m) out.push(m);
      else ok = false;
    }
    return ok ? out : undefined;
  }
  const m = mediaItem(ctx, node, name, where, opts);
  return m ? [m] : undefined;
}

function mediaItem(ctx: Ctx, node: YNode, name: string, where: string, opts: MediaOptions): MediaSpec | undefined {
  if (node.kind === 'map' && node.entries.some((e) => e.key === 'prompt')) return promptMap(ctx, node, name, where);
  if (node.kind === 'map') return sayMap(ctx, node, name, where, opts);
  if (node.kind === 'seq') return undefined;
  if (node.type === 'int') {
    const v = node.value as number;
    if (v < 0 || !Number.isSafeInteger(v)) {
      report(
        ctx,
        'BAD_MEDIA',
        node,
        `${where}${name}: ${node.source} is not a media id (a media id is a positive integer; 0 means no media)`,
      );
      return undefined;
    }
    return v === 0 ? { kind: 'none' } : { kind: 'id', id: v };
  }
  if (node.type !== 'string') {
    const hint = node.type === 'null' ? 'Write 0 for no media, or remove the parameter.' : undefined;
    report(
      ctx,
      'BAD_MEDIA',
      node,
      `${where}${name} must be a media (id, text, TTS|voice|text or { say, voice }), not ${describe(node)}`,
      hint,
    );
    return undefined;
  }
  const s = String(node.value);
  if (s.trim() === '') {
    report(
      ctx,
      'BAD_MEDIA',
      node,
      `${where}${name} is an empty text`,
      'Write 0 for no media, or remove the parameter.',
    );
    return undefined;
  }
  if (opts.templates === false && isTemplate(s)) {
    report(
      ctx,
      'BAD_MEDIA',
      node,
      `${where}${name} cannot be a template here ("${clip(s)}")`,
      'Write a fixed text, TTS|voice|text or a media id.',
    );
    return undefined;
  }
  if (/^[0-9]+$/.test(s.trim())) {
    const id = Number(s.trim());
    if (!Number.isSafeInteger(id)) {
      report(ctx, 'BAD_MEDIA', node, `${where}${name}: ${s.trim()} is too large for a media id`);
      return undefined;
    }
    return id === 0 ? { kind: 'none' } : { kind: 'id', id };
  }
  if (isWholeTemplate(s) && !opts.say) {
    if (!checkTemplateText(ctx, s, node, where)) return undefined;
    (ctx.rawMedia ??= []).push({ at: node, source: s, name, where });
    return { kind: 'raw', value: s };
  }
  if (s.startsWith('TTS|')) {
    const err = checkRtMedia(s);
    if (err) {
      report(
        ctx,
        'BAD_MEDIA',
        node,
        `${where}${name} "${clip(s)}": ${err}`,
        'A raw TTS media is TTS|<voice>|<text>, e.g. TTS|TTS_EN-GB_SERENA|Hello; or write the text alone to ' +
          'use the flow voice.',
      );
      return undefined;
    }
    const [, voice, ...rest] = s.split('|');
    const text = rest.join('|');
    if (!checkTemplateText(ctx, text, node, where)) return undefined;
    return { kind: 'tts', voice: voice!, text };
  }
  if (!checkTemplateText(ctx, s, node, where)) return undefined;
  return { kind: 'tts', voice: ctx.voice, text: s };
}

/** The keys of a media written as a map: `{ say, voice }`, or `{ prompt }` (version 2). */
export const SAY_MEDIA_KEYS = ['say', 'voice'] as const;
export const PROMPT_MEDIA_KEYS = ['prompt'] as const;

/** `{ prompt: name }`: the prompt table's entry in the call's language (version 2). */
function promptMap(ctx: Ctx, node: YNode & { kind: 'map' }, name: string, where: string): MediaSpec | undefined {
  const known = knownEntries(ctx, node, PROMPT_MEDIA_KEYS, `${where}${name}: `);
  if (known.length !== node.entries.length) return undefined;
  const p = promptRef(ctx, known[0]!.value, `${where}${name}: `);
  return p === undefined ? undefined : { kind: 'prompt', name: p };
}

function sayMap(
  ctx: Ctx,
  node: YNode & { kind: 'map' },
  name: string,
  where: string,
  opts: MediaOptions,
): MediaSpec | undefined {
  const known = knownEntries(ctx, node, SAY_MEDIA_KEYS, `${where}${name}: `);
  if (known.length !== node.entries.length) return undefined;
  const say = node.entries.find((e) => e.key === 'say');
  if (!say) {
    report(ctx, 'MISSING_KEY', node, `${where}${name}: a media map needs 'say' (the text to speak)`);
    return undefined;
  }
  const v = node.entries.find((e) => e.key === 'voice');
  const voice = v ? checkVoice(ctx, v.value, `${where}${name}: `) : ctx.voice;
  if (say.value.kind !== 'scalar' || say.value.type !== 'string') {
    report(ctx, 'TYPE_MISMATCH', say.value, `${where}${name}: say must be a text, not ${describe(say.value)}`);
    return undefined;
  }
  const text = String(say.value.value);
  if (text.trim() === '') {
    report(ctx, 'BAD_MEDIA', say.value, `${where}${name}: the text to say is empty`);
    return undefined;
  }
  if (opts.templates === false && isTemplate(text)) {
    report(ctx, 'BAD_MEDIA', say.value, `${where}${name} cannot be a template here ("${clip(text)}")`);
    return undefined;
  }
  if (!checkTemplateText(ctx, text, say.value, where) || voice === undefined) return undefined;
  return { kind: 'tts', voice, text };
}

/**
 * Checks decoded WAV bytes against what the service plays (PCM, 8000 Hz, 16-bit, mono).
 * null when fine, else the precise reason.
 */
export function checkWav(buf: Uint8Array): string | null {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < 12 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') {
    return 'the data is not a WAV file (it does not start with a RIFF/WAVE header)';
  }
  let off = 12;
  let fmt: { format: number; channels: number; rate: number; bits: number } | undefined;
  let data = false;
  while (off + 8 <= b.length) {
    const id = b.toString('latin1', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > b.length) return 'the WAV fmt chunk is truncated';
      let format = b.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE
      if (format === 0xfffe && size >= 40 && body + 26 <= b.length) format = b.readUInt16LE(body + 24);
      fmt = {
        format,
        channels: b.readUInt16LE(body + 2),
        rate: b.readUInt32LE(body + 4),
        bits: b.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      data = true;
      break;
    }
    off = body + size + (size % 2);
  }
  if (!fmt) return 'the WAV file has no fmt chunk (it is truncated or not a WAV file)';
  const wrong: string[] = [];
  if (fmt.format !== 1) wrong.push(`encoding is not PCM (format code ${fmt.format})`);
  if (fmt.rate !== 8000) wrong.push(`sample rate is ${fmt.rate} Hz, not 8000 Hz`);
  if (fmt.bits !== 16) wrong.push(`samples are ${fmt.bits}-bit, not 16-bit`);
  if (fmt.channels !== 1) wrong.push(`it has ${fmt.channels} channels, not 1 (mono)`);
  if (wrong.length > 0) return `the WAV ${wrong.join(', ')}; the service plays PCM 8000 Hz 16-bit mono only`;
  if (!data) return 'the WAV file has no data chunk (no audio)';
  return null;
}
