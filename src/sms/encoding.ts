/**
 * SMS encoding and part count, as the service computes them (protocol-notes.md, "SMS REST
 * (v1.1)"). The GSM 03.38 tables (basic set, and the extension characters that take two
 * positions) come from sms-segments-calculator; only the part arithmetic and the
 * transliteration for a forced GSM encoding live here.
 *
 * - Auto-detection: GSM unless one character is outside the GSM basic and extension
 *   tables, then UNICODE (UCS-2).
 * - units: GSM positions (extension characters ^ { } \ [ ] ~ | € and form feed count 2),
 *   or UTF-16 code units for UNICODE (an emoji outside the BMP counts 2).
 * - parts: GSM up to 160 units in one part, else ceil(units / 153); UNICODE up to 70 in
 *   one part, else ceil(units / 67). These are the documented figures and nothing else:
 *   a surrogate pair or an escape sequence that straddles a part boundary is not moved to
 *   the next part (sms-segments-calculator's own segmentsCount does move it, and so can
 *   count one part more in that case).
 * - Empty body: GSM, 0 units, 1 part (an empty message still goes out as one SMS).
 * - force 'GSM': characters GSM lacks are transliterated (see toGsm), the rest become '?'.
 *   `text` is the transliterated body; units and parts are counted on it.
 * - force 'UNICODE': the body is sent as is, counted in UTF-16 code units.
 *
 * Time is linear in the body: sms-segments-calculator gathers a message's graphemes with
 * an `Array.concat` per grapheme (quadratic: 40,000 characters took 4 s and blocked the
 * emulator), so the body is cut into pieces of at most CHUNK graphemes at grapheme
 * boundaries (Intl.Segmenter) and each piece is given to the package on its own.
 */
import { SegmentedMessage } from 'sms-segments-calculator';

export type SmsEncodingName = 'GSM' | 'UNICODE';

export interface SmsEncodingResult {
  encoding: SmsEncodingName;
  /** Number of parts (each may be billed as one SMS); at least 1. */
  parts: number;
  /** GSM positions (extension characters count 2) or UTF-16 code units. */
  units: number;
  /** The body as it would be sent (transliterated when GSM is forced). */
  text: string;
}

export const GSM_SINGLE_PART = 160;
export const GSM_PART = 153;
export const UNICODE_SINGLE_PART = 70;
export const UNICODE_PART = 67;

/** At most this many parts: concatenated SMS carry a part counter of one byte. */
export const MAX_PARTS = 255;

/**
 * Fewest parts `body` can take, from its length alone (no segmenting): GSM positions and
 * UTF-16 units are never fewer than the body's UTF-16 length. When GSM is forced,
 * transliteration can shorten the body (e + U+0301 -> é, a cluster -> ?), but every
 * grapheme keeps a position at least: half the characters that surely start one is a
 * bound. Lets a caller refuse a body over MAX_PARTS before paying for segmenting it.
 */
export function smsPartsAtLeast(body: string, force?: SmsEncodingName): number {
  if (force === 'UNICODE') return smsParts('UNICODE', body.length);
  if (force === 'GSM') return smsParts('GSM', graphemeStarts(body));
  return smsParts('GSM', body.length);
}

/**
 * Code points that start a grapheme whatever comes before (not a combining mark, a format
 * character such as a joiner or an Arabic number sign that joins the next character, a
 * variation selector, an emoji modifier or tag, a regional indicator, a Hangul vowel or
 * final, nor one of the few Indic prepended letters): forced to GSM, each grapheme becomes
 * one position at least.
 */
function graphemeStarts(body: string): number {
  let n = 0;
  for (const _ of body.matchAll(GRAPHEME_START)) n++;
  return n;
}
// the class lists combining code points on purpose: each match is where a grapheme starts
const GRAPHEME_START = new RegExp(
  // eslint-disable-next-line no-misleading-character-class
  '[^\\p{M}\\p{Cf}\\ufe00-\\ufe0f\\u{1F3FB}-\\u{1F3FF}\\u{E0000}-\\u{E007F}\\u{1F1E6}-\\u{1F1FF}\\u1160-\\u11ff' +
    '\\ud7b0-\\ud7ff\\u0d4e\\u{111C2}\\u{111C3}\\u{1193F}\\u{11941}\\u{11A3A}\\u{11A84}-\\u{11A89}\\u{11D46}]',
  'gu',
);

/** Number of parts for `units` units of the given encoding (0 units: 1 part). */
export function smsParts(encoding: SmsEncodingName, units: number): number {
  const [single, part] = encoding === 'GSM' ? [GSM_SINGLE_PART, GSM_PART] : [UNICODE_SINGLE_PART, UNICODE_PART];
  return units <= single ? 1 : Math.ceil(units / part);
}

export function smsEncoding(body: string, force?: SmsEncodingName): SmsEncodingResult {
  if (force === 'UNICODE') return unicode(body);
  const pieces = chunks(body).map(measure);
  if (pieces.every((p) => p.gsm)) return gsm(body, sum(pieces));
  if (force === 'GSM') {
    const seen = new Map<string, string>();
    const text = pieces.map((p) => (p.gsm ? p.text : toGsm(new SegmentedMessage(p.text), seen))).join('');
    return gsm(text, sum(chunks(text).map(measure)));
  }
  return unicode(body);
}

/** A piece of a body: whether GSM 03.38 has all of it, and its GSM positions. */
interface Piece {
  text: string;
  gsm: boolean;
  units: number;
}

/**
 * GSM positions of a character (0: not in GSM), asked of the package once per character
 * and kept: the package takes about 4 µs a character (a 255-part body took 0.4 s), a
 * lookup a few nanoseconds. The answers are the package's, not a table of ours. A message
 * is GSM exactly when each of its UTF-16 units is a GSM character: a grapheme of several
 * units holds a combining mark, a joiner or a surrogate, none of which GSM has (the
 * package splits \r\n into two).
 */
class GsmChars {
  private readonly units = new Map<number, number>();

  of(code: number): number {
    let u = this.units.get(code);
    if (u === undefined) {
      const m = code >= 0xd800 && code <= 0xdfff ? undefined : new SegmentedMessage(String.fromCharCode(code));
      u = m && m.encodingName === 'GSM-7' ? m.numberOfCharacters : 0;
      this.units.set(code, u);
    }
    return u;
  }
}
const GSM_CHARS = new GsmChars();

function measure(text: string): Piece {
  let units = 0;
  for (let i = 0; i < text.length; i++) {
    const u = GSM_CHARS.of(text.charCodeAt(i));
    if (u === 0) return { text, gsm: false, units: text.length };
    units += u;
  }
  return { text, gsm: true, units };
}

/** Code units per piece given to sms-segments-calculator (its cost is quadratic in a piece). */
const CHUNK = 256;
/**
 * The widest piece: a "grapheme" longer than this (a letter with thousands of combining
 * marks: 50,000 of them blocked the emulator 81 s) is cut at a code point boundary, and
 * its pieces counted as graphemes of their own (a decision: no real message has one).
 */
const MAX_PIECE = CHUNK;
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * `text` cut at grapheme boundaries into pieces of about CHUNK code units ('' gives ['']).
 * Each window is segmented on its own (V8's segment iterator slows down on long strings)
 * and cut before its last grapheme, which may go on past the window; a window holding a
 * single grapheme is widened until the grapheme ends.
 */
function chunks(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let width = CHUNK;
  while (text.length - start > width) {
    let last = 0;
    for (const g of GRAPHEMES.segment(text.slice(start, start + width))) last = g.index;
    if (last === 0 && width < MAX_PIECE) {
      width *= 2;
      continue;
    }
    if (last === 0) {
      // no grapheme boundary in MAX_PIECE units: cut there, never inside a surrogate pair
      last = width;
      const c = text.charCodeAt(start + last - 1);
      if (c >= 0xd800 && c <= 0xdbff) last--;
    }
    out.push(text.slice(start, start + last));
    start += last;
    width = CHUNK;
  }
  out.push(text.slice(start));
  return out;
}

const sum = (pieces: Piece[]): number => pieces.reduce((t, p) => t + p.units, 0);

function gsm(text: string, units: number): SmsEncodingResult {
  return { encoding: 'GSM', parts: smsParts('GSM', units), units, text };
}

function unicode(text: string): SmsEncodingResult {
  // A JS string's length is its count of UTF-16 code units.
  return { encoding: 'UNICODE', parts: smsParts('UNICODE', text.length), units: text.length, text };
}

function isGsm(s: string): boolean {
  return s !== '' && new SegmentedMessage(s).encodingName === 'GSM-7';
}

const MARKS = /\p{Mn}/gu;

/**
 * Transliteration for a forced GSM encoding, one grapheme at a time, first match wins:
 * 1. a grapheme GSM has stays as it is (so é è ù ì ò à Ç Ø Å Ä Ö Ñ Ü ß ... are kept), and a
 *    decomposed one whose composed form GSM has is composed (e + U+0301 -> é);
 * 2. its compatibility decomposition without the combining marks, if that is GSM:
 *    ê -> e, ô -> o, ç -> c, Ê -> E, ă -> a, no-break space -> space, … -> ..., ﬁ -> fi,
 *    full-width Ａ -> A;
 * 3. a look-alike in the package's "smart encoding" map (curly quotes, dashes, ...) becomes
 *    its GSM replacement: “hi” -> "hi", ’ -> ', – -> -;
 * 4. anything else (emoji, other scripts, œ, ...) becomes a single '?'.
 * No hand-written table: step 2 is Unicode normalisation (NFKD), step 3 the package's map.
 */
function toGsm(msg: SegmentedMessage, seen: Map<string, string>): string {
  let out = '';
  for (const ch of msg.encodedChars) {
    if (ch.isGSM7) out += ch.raw;
    else {
      let g = seen.get(ch.raw);
      if (g === undefined) seen.set(ch.raw, (g = gsmFor(ch.raw)));
      out += g;
    }
  }
  return out;
}

function gsmFor(g: string): string {
  const composed = g.normalize('NFC');
  if (isGsm(composed)) return composed;
  const bare = g.normalize('NFKD').replace(MARKS, '');
  if (isGsm(bare)) return bare;
  const smart = new SegmentedMessage(g, 'auto', true).graphemes.join('');
  if (smart !== g && isGsm(smart)) return smart;
  return '?';
}
