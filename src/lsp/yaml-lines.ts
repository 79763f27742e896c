/**
 * YAML lines read one at a time, without a parser (the text is often incomplete while it is typed): the key a line
 * starts with and its value as written, the keys of a block map (skipping the lines below each key by their
 * indentation, read in place), the keys of the map under a key, the top-level keys.
 */
import { lineAt, lineCount, type SourceLines } from '../flow/source-lines.js';
import { isSpace, quotedEnd, scanFlow, unquote, type Entry } from './flow-scan.js';

export interface LineInfo {
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

/** A scalar value as written on a line: its comment dropped, its quotes removed. */
function scalarText(s: string): string {
  const t = s.trim();
  if (t.startsWith('"') || t.startsWith("'")) {
    const end = quotedEnd(t, 0);
    return end > 0 ? unquote(t.slice(0, end)) : t.slice(1);
  }
  return t.replace(/(^|\s)#.*$/, '').trim();
}

export function info(text: string): LineInfo {
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

export const entryOf = (l: LineInfo, line: number): Entry => ({
  key: l.key!,
  value: l.value.startsWith('{') || l.value.startsWith('[') ? l.value : scalarText(l.value),
  line,
  col: l.col,
});

/** The indentation of line `i`, read in place; -1 for a blank line or a comment. */
export function indentOf(src: SourceLines, i: number): number {
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
