/**
 * Flow collections as they are written on one line (`{ a: b, c: [d, e] }`), read without a parser from the start of a
 * text to its end, as far as they go: the keys seen in each map, the collections still open at the end (where the
 * cursor is), and the word being written there. One pass over the text.
 */
import { MAX_DEPTH } from '../flow/yaml.js';

/** A key as written: its value's text on the key's line (quotes removed; `{...}` for a flow map), where it is. */
export interface Entry {
  key: string;
  value: string;
  line: number;
  /** The key's column; -1 for a key of a flow map (`{ a: b }`). */
  col: number;
}

/** Where a quoted scalar starting at `i` ends (just after its closing quote); -1 when it does not end. */
export function quotedEnd(s: string, i: number): number {
  const q = s[i];
  for (let j = i + 1; j < s.length; j++) {
    if (q === '"' && s[j] === '\\') j++;
    else if (s[j] === q) {
      if (q === "'" && s[j + 1] === "'") j++;
      else return j + 1;
    }
  }
  return -1;
}

export const isSpace = (c: string | undefined) => c === ' ' || c === '\t';

/** A quoted scalar's text, its escapes resolved (double quotes: a backslash escapes the next character). */
export function unquote(s: string): string {
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) return s.slice(1, -1).replace(/\\(.)/g, '$1');
  if (s.length >= 2 && s.startsWith("'") && s.endsWith("'")) return s.slice(1, -1).replace(/''/g, "'");
  return s;
}

export interface Frame {
  open: '{' | '[';
  /** The key this flow collection is the value of (for a list, of the list; for a map in a list, the list's). */
  of: string | undefined;
  keys: Map<string, Entry>;
  key?: string;
  expectValue: boolean;
  start: number;
}

export interface Flow {
  frames: Frame[];
  /** The keys of the outermost map. */
  outer: Map<string, Entry>;
  /** The text after the last delimiter (the word being written), where it starts, and its opening quote if any. */
  tail: string;
  tailAt: number;
  quote: boolean;
  /** Nothing to offer: the text ends in a comment, or nests deeper than a flow may. */
  comment: boolean;
}

/**
 * Reads flow collections (`{ a: b, c: [d, e] }`) from the start of `text` to its end, as far as they go: the
 * collections still open at the end, the keys seen in each, and the text being written at the end.
 */
export function scanFlow(text: string, line: number, of: string | undefined): Flow {
  // a plain scalar, from lastIndex: up to a flow indicator, a `: `, a comment or the end
  const plain = /[^,{}[\]]*?(?=[,{}[\]]|:(?:\s|$)|\s#|$)/y;
  const frames: Frame[] = [];
  const out: Flow = { frames, outer: new Map(), tail: '', tailAt: text.length, quote: false, comment: false };
  let token: string | undefined;
  const top = () => frames.at(-1);
  const setValue = (f: Frame | undefined, value: string) => {
    if (f?.open === '{' && f.key !== undefined && f.expectValue) f.keys.set(f.key, { ...f.keys.get(f.key)!, value });
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      out.comment = true;
      return out;
    }
    if (c === '{' || c === '[') {
      // deeper than any flow may nest (TOO_DEEP): nothing to offer there
      if (frames.length >= MAX_DEPTH) return { ...out, comment: true };
      const t = top();
      const keys = new Map<string, Entry>();
      if (frames.length === 0 && c === '{') out.outer = keys;
      frames.push({ open: c, of: t ? (t.open === '{' ? t.key : t.of) : of, keys, expectValue: false, start: i });
      token = undefined;
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      const f = frames.pop();
      if (f) setValue(top(), text.slice(f.start, i + 1));
      if (frames.length === 0) return { ...out, tail: '', tailAt: text.length };
      token = undefined;
      i++;
      continue;
    }
    if (c === ',') {
      const t = top();
      if (t?.open === '{') {
        if (!t.expectValue && token !== undefined) t.keys.set(token, { key: token, value: '', line, col: -1 });
        t.key = undefined;
        t.expectValue = false;
      }
      token = undefined;
      i++;
      continue;
    }
    if (c === ':' && token !== undefined) {
      const t = top();
      if (t?.open === '{' && !t.expectValue) {
        t.key = token;
        t.expectValue = true;
        t.keys.set(token, { key: token, value: '', line, col: -1 });
      }
      token = undefined;
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = quotedEnd(text, i);
      if (end < 0) return { ...out, tail: text.slice(i + 1), tailAt: i + 1, quote: true };
      token = unquote(text.slice(i, end));
      if (top()?.expectValue) setValue(top(), token);
      i = end;
      continue;
    }
    if (frames.length === 0) return { ...out, tail: text.slice(i), tailAt: i };
    // a plain scalar: up to a flow indicator, or a `: ` that makes it a key
    plain.lastIndex = i;
    const m = plain.exec(text)!;
    if (i + m[0].length >= text.length) return { ...out, tail: m[0], tailAt: i };
    token = m[0].trim();
    if (top()?.expectValue) setValue(top(), token);
    i += Math.max(1, m[0].length);
  }
  return out;
}
