/**
 * Where the cursor is in a flow being typed, read from the text around it (the YAML is often incomplete or invalid
 * then): the keys above it by indentation, the flow maps open on its line (`on: { TIMEOUT: { goto: `), and whether a
 * key, a value or a list item is being written. Nothing is parsed as a whole: the lines above the cursor are read up
 * to the top-level key holding it, and the keys beside a level only when asked for (linear in the lines read).
 */
import { lineAt, lineCount, type SourceLines } from '../flow/source-lines.js';
import { MAX_DEPTH } from '../flow/yaml.js';

/** A key as written: its value's text on the key's line (quotes removed; `{...}` for a flow map), where it is. */
export interface Entry {
  key: string;
  value: string;
  line: number;
  /** The key's column; -1 for a key of a flow map (`{ a: b }`). */
  col: number;
}

/** A key the cursor is under. */
export interface Level extends Entry {
  /** The keys of the map this key belongs to (itself included). */
  siblings(): Map<string, Entry>;
}

export type Slot =
  /** A key of the map under the last level is being written; `item`: as the first key of a list item (`- `). */
  | { kind: 'key'; item: boolean; siblings(): Map<string, Entry> }
  /** The value of `key` (a key of the map under the last level). */
  | { kind: 'value'; key: string }
  /** An item of the list that is the value of the last level's key (`[a, b` or `- b`). */
  | { kind: 'item' };

export interface Cursor {
  /** The keys from the top level down to the map (or list) the cursor is in. */
  path: Level[];
  slot: Slot;
  /** The text of the line before the cursor. */
  prefix: string;
  /** The word being written (after a quote, if any), and the column it starts at: what a completion replaces. */
  word: string;
  start: number;
  /** The word is inside quotes. */
  quoted: boolean;
}

interface LineInfo {
  blank: boolean;
  /** Column of the first character that is not a space. */
  ind: number;
  /** Dashes of list items before the content (`- - x`). */
  dashed: boolean;
  /** Column of the content after the dashes. */
  col: number;
  key?: string;
  value: string;
  /** Column of the value after `key: ` (its spaces skipped). */
  valueCol: number;
}

/** Where a quoted scalar starting at `i` ends (just after its closing quote); -1 when it does not end. */
function quotedEnd(s: string, i: number): number {
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

const isSpace = (c: string | undefined) => c === ' ' || c === '\t';

/** The key a line's content starts with (`key:` followed by a space or the end), and where its `:` ends. */
function splitKey(rest: string): { key: string; end: number } | undefined {
  const c = rest[0];
  if (c === undefined) return undefined;
  if (c === '"' || c === "'") {
    const close = quotedEnd(rest, 0);
    if (close < 0) return undefined;
    let j = close;
    while (isSpace(rest[j])) j++;
    if (rest[j] !== ':' || !(j + 1 === rest.length || /\s/.test(rest[j + 1]!))) return undefined;
    return { key: unquote(rest.slice(0, close)), end: j + 1 };
  }
  if (/[\s#'"{}[\],:]/.test(c)) return undefined;
  for (let i = rest.indexOf(':'); i >= 0; i = rest.indexOf(':', i + 1)) {
    if (i + 1 < rest.length && !/\s/.test(rest[i + 1]!)) continue;
    const key = rest.slice(0, i);
    return /\s#/.test(key) ? undefined : { key: key.trimEnd(), end: i + 1 };
  }
  return undefined;
}

function unquote(s: string): string {
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) return s.slice(1, -1).replace(/\\(.)/g, '$1');
  if (s.length >= 2 && s.startsWith("'") && s.endsWith("'")) return s.slice(1, -1).replace(/''/g, "'");
  return s;
}

/** A scalar value as written on a line: its comment dropped, its quotes removed. */
function scalarText(s: string): string {
  const t = s.trim();
  if (t.startsWith('"') || t.startsWith("'")) {
    const end = quotedEnd(t, 0);
    return end > 0 ? unquote(t.slice(0, end)) : t.slice(1);
  }
  return t.replace(/(^|\s)#.*$/, '').trim();
}

function info(text: string): LineInfo {
  const m = /^( *)((?:-[ \t]+|-$)*)/.exec(text)!;
  const ind = m[1]!.length;
  const col = ind + m[2]!.length;
  const rest = text.slice(col);
  const empty = rest.trim() === '' || rest.trimStart().startsWith('#');
  const out: LineInfo = {
    blank: empty && m[2] === '',
    ind,
    dashed: m[2] !== '',
    col,
    value: '',
    valueCol: text.length,
  };
  if (empty) return out;
  const k = splitKey(rest);
  if (k) {
    out.key = k.key;
    const after = rest.slice(k.end);
    out.value = after.trim();
    out.valueCol = col + k.end + (after.length - after.trimStart().length);
  }
  return out;
}

const entryOf = (l: LineInfo, line: number): Entry => ({
  key: l.key!,
  value: l.value.startsWith('{') || l.value.startsWith('[') ? l.value : scalarText(l.value),
  line,
  col: l.col,
});

/** The indentation of line `i`, read in place; -1 for a blank line or a comment. */
function indentOf(src: SourceLines, i: number): number {
  const start = src.starts[i]!;
  const end = src.ends[i]!;
  let j = start;
  while (j < end && src.text.charCodeAt(j) === 32) j++;
  return j === end || src.text.charCodeAt(j) === 35 ? -1 : j - start;
}

/**
 * The keys of the block map whose keys are at column `col`, around line `line`. Only the lines at that column (or
 * list items less indented) are read: the lines of the values below each key are skipped by their indentation.
 */
export function blockKeys(src: SourceLines, line: number, col: number): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const upward: Entry[] = [];
  for (let i = line; i >= 0; i--) {
    const ind = indentOf(src, i);
    if (ind < 0 || (ind > col && i !== line)) continue;
    const l = info(lineAt(src, i));
    if (l.key !== undefined && l.col === col && (i === line || !l.dashed || l.ind < col)) upward.push(entryOf(l, i));
    if (l.ind < col) break;
  }
  for (const e of upward.reverse()) if (!out.has(e.key)) out.set(e.key, e);
  for (let i = line + 1; i < lineCount(src); i++) {
    const ind = indentOf(src, i);
    if (ind < 0 || ind > col) continue;
    if (ind < col) break;
    const l = info(lineAt(src, i));
    if (l.key !== undefined && l.col === col && !l.dashed && !out.has(l.key)) out.set(l.key, entryOf(l, i));
  }
  return out;
}

/** The keys of the map that is the value of `e` (a flow map written on its line, or the block below it). */
export function childKeys(src: SourceLines, e: Entry): Map<string, Entry> {
  if (e.value.startsWith('{')) return scanFlow(e.value, e.line, undefined).outer;
  if (e.value !== '' || e.col < 0) return new Map();
  for (let i = e.line + 1; i < lineCount(src); i++) {
    const l = info(lineAt(src, i));
    if (l.blank) continue;
    if (l.ind <= e.col || l.dashed || l.key === undefined) return new Map();
    return blockKeys(src, i, l.col);
  }
  return new Map();
}

/** The top-level keys of a document (one pass). */
export function topKeys(src: SourceLines): Map<string, Entry> {
  const out = new Map<string, Entry>();
  for (let i = 0; i < lineCount(src); i++) {
    if (indentOf(src, i) !== 0) continue;
    const l = info(lineAt(src, i));
    if (l.key !== undefined && !l.dashed && !out.has(l.key)) out.set(l.key, entryOf(l, i));
  }
  return out;
}

interface Frame {
  open: '{' | '[';
  /** The key this flow collection is the value of (for a list, of the list; for a map in a list, the list's). */
  of: string | undefined;
  keys: Map<string, Entry>;
  key?: string;
  expectValue: boolean;
  start: number;
}

interface Flow {
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
function scanFlow(text: string, line: number, of: string | undefined): Flow {
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

/** The cursor at (`line`, `character`), 0-based; undefined past the last line, in a comment or after a flow map. */
export function cursorAt(src: SourceLines, line: number, character: number): Cursor | undefined {
  if (!Number.isInteger(line) || line < 0 || line >= lineCount(src)) return undefined;
  const text = lineAt(src, line);
  const prefix = text.slice(0, Math.max(0, Math.min(character, text.length)));
  const here = info(prefix);
  const path = ancestors(src, line, here, prefix);
  const base = { prefix, quoted: false };
  if (here.key === undefined) {
    // a key being written, or a list item (`- x`)
    const rest = prefix.slice(here.col);
    if (/(^|\s)#/.test(rest)) return undefined;
    if (rest.startsWith('{') || rest.startsWith('[')) return inFlow(path, rest, here.col, line, undefined, base);
    const quoted = /^["']/.test(rest);
    const word = { word: quoted ? rest.slice(1) : rest, start: quoted ? here.col + 1 : here.col, quoted };
    const col = here.dashed || prefix.trim() !== '' ? here.col : prefix.length;
    const siblings = () => blockKeys(src, line, col);
    return { ...base, path, slot: { kind: 'key', item: here.dashed, siblings }, ...word };
  }
  // `key: value`: the value being written
  const raw = prefix.slice(here.valueCol);
  const col = here.col;
  const me: Level = { key: here.key, value: here.value, line, col, siblings: () => blockKeys(src, line, col) };
  if (raw.startsWith('{') || raw.startsWith('['))
    return inFlow([...path, me], raw, here.valueCol, line, here.key, base);
  const quoted = /^["']/.test(raw);
  if (!quoted && /(^|\s)#/.test(raw)) return undefined;
  const word = { word: quoted ? raw.slice(1) : raw, start: quoted ? here.valueCol + 1 : here.valueCol, quoted };
  return { ...base, path, slot: { kind: 'value', key: here.key }, ...word };
}

/**
 * The cursor inside flow collections opened on its line: `text` starts with `{` or `[` at column `at`, the value of
 * the key `of` (the last level), or a list item.
 */
function inFlow(
  path: Level[],
  text: string,
  at: number,
  line: number,
  of: string | undefined,
  base: { prefix: string; quoted: boolean },
): Cursor | undefined {
  const flow = scanFlow(text, line, of);
  const inner = flow.frames.at(-1);
  if (flow.comment || !inner) return undefined;
  const trimmed = flow.tail.trimStart();
  const word = { word: trimmed, start: at + flow.tailAt + flow.tail.length - trimmed.length, quoted: flow.quote };
  // a collection opened as the value of a key of a flow map is under that key (a map in a list: under the list's)
  const levels = [...path];
  for (const parent of flow.frames.slice(0, -1))
    if (parent.open === '{' && parent.key !== undefined)
      levels.push({ ...parent.keys.get(parent.key)!, siblings: () => parent.keys });
  if (inner.open === '[') return { ...base, path: levels, slot: { kind: 'item' }, ...word };
  if (inner.expectValue && inner.key !== undefined)
    return { ...base, path: levels, slot: { kind: 'value', key: inner.key }, ...word };
  const keys = inner.keys;
  return { ...base, path: levels, slot: { kind: 'key', item: false, siblings: () => keys }, ...word };
}

/**
 * The keys above the cursor's line by indentation, top-down: a key line less indented than the current limit is a
 * parent; a list item's dash lowers the limit to its own column (its parent key may be as indented as the dash).
 */
function ancestors(src: SourceLines, line: number, here: LineInfo, prefix: string): Level[] {
  const out: Level[] = [];
  let limit = here.key === undefined && !here.dashed && prefix.trim() === '' ? prefix.length : here.col;
  let inList = false;
  if (here.dashed) {
    limit = here.ind;
    inList = true;
  }
  for (let i = line - 1; i >= 0 && limit > 0; i--) {
    // only a line less indented than the limit (or as indented, above a list item) can hold a parent
    const ind = indentOf(src, i);
    if (ind < 0 || ind > limit || (ind === limit && !inList)) continue;
    const text = lineAt(src, i);
    if (/^(---|\.\.\.)(\s|$)/.test(text)) break;
    const l = info(text);
    if (!l.dashed) {
      if ((l.ind < limit || (inList && l.ind === limit)) && l.key !== undefined) {
        const e = entryOf(l, i);
        out.push({ ...e, siblings: () => blockKeys(src, i, l.col) });
        limit = l.ind;
        inList = false;
      }
      continue;
    }
    if (l.ind >= limit) continue;
    if (l.key !== undefined && l.col < limit) {
      const e = entryOf(l, i);
      out.push({ ...e, siblings: () => blockKeys(src, i, l.col) });
    }
    limit = l.ind;
    inList = true;
  }
  return out.reverse();
}
