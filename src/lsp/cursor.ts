/**
 * Where the cursor is in a flow being typed, read from the text around it (the YAML is often incomplete or invalid
 * then): the keys above it by indentation, the flow maps open on its line (`on: { TIMEOUT: { goto: `), and whether a
 * key, a value or a list item is being written. Nothing is parsed as a whole: the lines above the cursor are read up
 * to the top-level key holding it, and the keys beside a level only when asked for (linear in the lines read).
 */
import { lineAt, lineCount, type SourceLines } from '../flow/source-lines.js';
import { scanFlow, type Entry } from './flow-scan.js';
import { blockKeys, entryOf, indentOf, info, type LineInfo } from './yaml-lines.js';

export type { Entry } from './flow-scan.js';

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
