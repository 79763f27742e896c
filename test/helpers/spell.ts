/**
 * Random JSON values and random spellings of one value, for the request-parsing property
 * and fuzz tests. A value is generated as a tree (`J`); `spell` writes it as JSON text
 * with random whitespace, member order, string escapes and number spellings: every text
 * `spell` gives for one tree is the same JSON value.
 */

import { int, pick, type Rand } from './random.js';

export { int, pick, rng, type Rand } from './random.js';

/**
 * A JSON value; a number is its decimal digits `d` (no leading zeros, "0" for zero), the
 * count `f` of those that are after the decimal point, and its sign.
 */
export type J =
  | { t: 'num'; neg: boolean; d: string; f: number }
  | { t: 'str'; s: string }
  | { t: 'lit'; v: 'true' | 'false' | 'null' }
  | { t: 'arr'; items: J[] }
  | { t: 'obj'; members: [string, J][] };

const CHARS = [
  'a',
  'b',
  'Z',
  '0',
  ' ',
  '/',
  '"',
  '\\',
  '\n',
  '\t',
  '\u0001',
  '\u001f',
  'é',
  'ß',
  '€',
  '中',
  '\u2028',
  '\u00a0',
  '😀',
  '𝄞',
  '\ufffd',
  '{',
  ']',
  ':',
  ',',
];
const KEYS = [
  'a',
  'b',
  'crm',
  'lang',
  '10',
  '9',
  '',
  'A b',
  'é',
  '😀',
  'x"y',
  'back\\slash',
  'new\nline',
  'constructor',
  'toString',
  'variables',
  'callid',
];

export function randomString(r: Rand, max = 8): string {
  let s = '';
  for (let i = int(r, max + 1); i > 0; i--) s += pick(r, CHARS);
  return s;
}

function randomNumber(r: Rand): J {
  const kind = int(r, 6);
  const neg = r() < 0.3;
  if (kind === 0) return { t: 'num', neg: false, d: '0', f: 0 };
  if (kind === 1) return { t: 'num', neg, d: String(1 + int(r, 1000)), f: 0 };
  if (kind === 2) return { t: 'num', neg, d: String(1 + int(r, 99_999)), f: 1 + int(r, 3) };
  if (kind === 3)
    return { t: 'num', neg, d: '1' + Array.from({ length: 18 + int(r, 10) }, () => String(int(r, 10))).join(''), f: 0 };
  if (kind === 4) return { t: 'num', neg, d: '9007199254740993', f: int(r, 5) };
  return { t: 'num', neg, d: String(1 + int(r, 9)), f: 0 };
}

/** A random value; objects have distinct keys. */
export function randomValue(r: Rand, depth = 0): J {
  const kind = int(r, depth >= 4 ? 3 : 5);
  if (kind === 0) return randomNumber(r);
  if (kind === 1) return { t: 'str', s: randomString(r) };
  if (kind === 2) return { t: 'lit', v: pick(r, ['true', 'false', 'null'] as const) };
  if (kind === 3) return { t: 'arr', items: Array.from({ length: int(r, 4) }, () => randomValue(r, depth + 1)) };
  return randomObject(r, depth + 1);
}

export function randomObject(r: Rand, depth = 1): J & { t: 'obj' } {
  const keys = new Set<string>();
  for (let i = int(r, 5); i > 0; i--) keys.add(r() < 0.7 ? pick(r, KEYS) : randomString(r, 4));
  return { t: 'obj', members: [...keys].map((k) => [k, randomValue(r, depth)]) };
}

const SHORT: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
const hex4 = (r: Rand, c: number) => {
  const h = c.toString(16).padStart(4, '0');
  return '\\u' + (r() < 0.5 ? h : h.toUpperCase());
};

/**
 * `s` as a JSON string, each character written raw or escaped at random (control characters, quote and backslash always
 * escaped).
 */
export function spellString(r: Rand, s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    const must = c < 32 || ch === '"' || ch === '\\';
    if ((c & 0xfc00) === 0xd800) {
      // a pair: both halves raw or both escaped (a lone half could not travel as UTF-8)
      const low = s.charCodeAt(++i);
      out += r() < 0.5 ? ch + s[i] : hex4(r, c) + hex4(r, low);
    } else if (must || r() < 0.25) out += SHORT[ch] && r() < 0.6 ? SHORT[ch] : hex4(r, c);
    else out += ch;
  }
  return out + '"';
}

/** A number, written with its decimal point moved and an exponent, trailing zeros, E or e, + or not. */
export function spellNumber(r: Rand, n: { neg: boolean; d: string; f: number }): string {
  const p = int(r, 6); // digits after the point in the mantissa written
  const e = p - n.f;
  let m: string;
  if (p === 0) m = n.d;
  else if (p >= n.d.length) m = '0.' + '0'.repeat(p - n.d.length) + n.d;
  else m = n.d.slice(0, n.d.length - p) + '.' + n.d.slice(n.d.length - p);
  if (p > 0 && r() < 0.3) m += '0'.repeat(1 + int(r, 3));
  if (p === 0 && r() < 0.2) m += '.0';
  const exp =
    e === 0 && r() < 0.7 ? '' : (r() < 0.5 ? 'e' : 'E') + (e < 0 ? '-' : r() < 0.3 ? '+' : '') + String(Math.abs(e));
  return (n.neg || (n.d === '0' && r() < 0.3) ? '-' : '') + m + exp;
}

const WS = ['', '', '', ' ', '\n', '\t', '\r\n ', '  '];
export const ws = (r: Rand) => pick(r, WS);

export function shuffle<T>(r: Rand, xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = int(r, i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** `v` as JSON text, spelled at random (a different text per `r`, one value). */
export function spell(r: Rand, v: J): string {
  switch (v.t) {
    case 'num':
      return spellNumber(r, v);
    case 'str':
      return spellString(r, v.s);
    case 'lit':
      return v.v;
    case 'arr':
      return '[' + ws(r) + v.items.map((x) => spell(r, x)).join(ws(r) + ',' + ws(r)) + ws(r) + ']';
    case 'obj':
      return (
        '{' +
        ws(r) +
        shuffle(r, v.members)
          .map(([k, x]) => spellString(r, k) + ws(r) + ':' + ws(r) + spell(r, x))
          .join(ws(r) + ',' + ws(r)) +
        ws(r) +
        '}'
      );
  }
}
