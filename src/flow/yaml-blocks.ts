/**
 * A flow file cut into blocks that parse on their own (the incremental loader, yaml-cache.ts): top-level keys, from
 * a key's line (col 1) to the next one's, and under a `steps:` line with nothing after it but a comment, steps, from
 * a step's key line (at the indentation of the first step) to the next step's. The lines before the first key go
 * with the first block, those between `steps:` and the first step with the first step, a comment or blank line
 * after a key with that key. A key of 512 characters or more is a block of its own; smaller keys go together
 * (GROUP_CHARS: each is a document for the yaml package to parse, and a document costs as much as a few hundred
 * characters).
 *
 * A block is parsed in what stands for its place in the file, so that the yaml package reads it as it reads the
 * whole file (the end of a value, a plain scalar that could run on, depend on what follows): steps under `s:`
 * (the first block of steps under the file's own `steps:` line and what follows it); followed, when a key follows
 * in the file, by a key `_:` at that key's indentation.
 *
 * Undefined when the file is not plainly laid out that way (the whole-document load then decides): a byte order
 * mark, a tab or a lone carriage return anywhere, a directive or a document marker (`%`, `---`, `...`) at col 1, a
 * line at a key's indentation that starts with an indicator (`?`, `:`, `[`, `&`...) other than a list's `- `, a
 * first key indented, a line under `steps:` indented less than the first step.
 */

export interface Block {
  /** The block's lines, as in the file. */
  body: string;
  /** What stands for its context, before and after it (above): the text parsed is before + body + after. */
  before: string;
  after: string;
  /** The file's line (0-based) of the text's first line (the line above a step's: `s:` stands for it). */
  line: number;
  /** Steps (under `s:`, or under the file's `steps:` line for the first block of steps), or top-level keys. */
  step: boolean;
  /** What follows it in the file: a step, a top-level key, nothing. */
  next: 'step' | 'key' | undefined;
  /** How many keys it holds (consecutive top-level keys, or steps). */
  pairs: number;
}

/** The text of a block parsed alone. */
export const blockText = (b: Block): string => b.before + b.body + b.after;

/** A block of top-level keys, or a `steps:` key's blocks of steps (the first one with the `steps:` line). */
export type TopBlock = { block: Block; steps?: undefined } | { block?: undefined; steps: Block[] };

/** The key that stands for the one that follows a block. */
export const NEXT_KEY = '_';
/** The key that stands for `steps:` above a step. */
export const STEPS_KEY = 's';

const STEPS_LINE = /^steps:(?: +(?:#.*)?)?\r?$/;
const SPACE = 32;
const HASH = 35;
const CR = 13;
const NL = 10;
const DASH = 45;
const PERCENT = 37;
const COLON = 58;
/**
 * Small keys go together, so that a file of many tiny steps is not parsed as many tiny documents (each costs the
 * yaml package about as much as a step of a few hundred characters): a key of GROUP_CHARS or more ends its block,
 * and one in sixteen of the others (by a hash of its line, so that an edit moves no boundary but its own); a block
 * holds GROUP_KEYS keys at most.
 */
const GROUP_CHARS = 512;
const GROUP_KEYS = 64;
/** What a key never starts with (a quote may), by character code. */
const INDICATOR = new Uint8Array(128);
for (const c of '-?:,[]{}#&*!|>%@`') INDICATOR[c.charCodeAt(0)] = 1;

/** What a line holds, by its first character after the indentation. */
const BLANK = 0; // or a comment
const KEY = 1;
const ITEM = 2; // `- ` (a list's item)
const ODD = 3; // another indicator

interface Lines {
  count: number;
  starts: Int32Array;
  /** -1 for a blank line or a comment. */
  indents: Int32Array;
  kinds: Uint8Array;
}

export function splitBlocks(text: string): TopBlock[] | undefined {
  if (text.includes('\t') || text.includes('\ufeff') || (text.includes('\r') && /\r(?!\n)/.test(text)))
    return undefined;
  const lines = scan(text);
  if (!lines) return undefined;
  const { starts, indents, kinds, count: lineCount } = lines;
  const offset = (line: number) => (line < lineCount ? starts[line]! : text.length);
  const slice = (a: number, b: number) => text.slice(offset(a), offset(b));
  /** Whether the key at line `h` (the next at line `next`) ends its block: a long one, or one in 16 by its line. */
  const ends = (h: number, next: number) =>
    offset(next) - offset(h) >= GROUP_CHARS || keyHash(text, starts[h]!) % 16 === 0;
  const keys: number[] = [];
  for (let l = 0; l < lineCount; l++) {
    if (indents[l] === 0) {
      // at col 1: a key, or an item of the list above (`key:` then `- a` at its column)
      if (kinds[l] === KEY) keys.push(l);
      else if (kinds[l] !== ITEM || keys.length === 0) return undefined;
    } else if (indents[l]! > 0 && keys.length === 0) return undefined;
  }
  if (keys.length === 0) return undefined;
  keys.push(lineCount);
  const follow = `${NEXT_KEY}:\n`;
  const blocks: TopBlock[] = [];
  /** The top-level keys keys[from..to) in one block (the lines before the first key go with it). */
  const tops = (from: number, to: number) => {
    const first = from === 0 ? 0 : keys[from]!;
    const next = keys[to]!;
    const after = next < lineCount ? 'key' : undefined;
    const body = slice(first, next);
    blocks.push({
      block: { body, before: '', after: after ? follow : '', line: first, step: false, next: after, pairs: to - from },
    });
  };
  let run = 0; // the first top-level key not in a block yet
  for (let k = 0; k + 1 < keys.length; k++) {
    const key = keys[k]!;
    const next = keys[k + 1]!;
    let heads: number[] | null = [];
    if (text.startsWith('steps:', starts[key]!)) {
      const lineEnd = key + 1 < lineCount ? starts[key + 1]! - 1 : text.length;
      if (STEPS_LINE.test(text.slice(starts[key]!, lineEnd))) heads = stepHeads(lines, key + 1, next);
    }
    if (heads === null) return undefined;
    if (heads.length === 0) {
      if (k + 2 === keys.length || k + 1 - run === GROUP_KEYS || ends(key, next)) {
        tops(run, k + 1);
        run = k + 1;
      }
      continue;
    }
    if (run < k) tops(run, k);
    run = k + 1;
    const first = k === 0 ? 0 : key;
    const after = next < lineCount ? 'key' : undefined;
    const pad = ' '.repeat(indents[heads[0]!]!);
    heads.push(next);
    const steps: Block[] = [];
    for (let a = 0; a + 1 < heads.length;) {
      let b = a + 1;
      while (b + 1 < heads.length && b - a < GROUP_KEYS && !ends(heads[b - 1]!, heads[b]!)) b++;
      const last = b + 1 === heads.length;
      steps.push({
        body: slice(a === 0 ? first : heads[a]!, heads[b]!),
        before: a === 0 ? '' : `${STEPS_KEY}:\n`,
        after: last ? (after ? follow : '') : pad + follow,
        line: a === 0 ? first : heads[a]! - 1,
        step: true,
        next: last ? after : 'step',
        pairs: b - a,
      });
      a = b;
    }
    blocks.push({ steps });
  }
  return blocks;
}

/** FNV-1a of a key's line, up to its colon: where blocks of small keys end does not move when values change. */
function keyHash(text: string, from: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === NL || c === COLON) break;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

/** The lines of `text`; undefined at a directive or a document marker at col 1. */
function scan(text: string): Lines | undefined {
  let count = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) count++;
  const starts = new Int32Array(count);
  const indents = new Int32Array(count);
  const kinds = new Uint8Array(count);
  for (let l = 0, s = 0; l < count; l++) {
    let e = text.indexOf('\n', s);
    if (e < 0) e = text.length;
    let i = s;
    while (i < e && text.charCodeAt(i) === SPACE) i++;
    const c = i < e ? text.charCodeAt(i) : NL;
    let kind = BLANK;
    if (c !== NL && c !== HASH && !(c === CR && i + 1 === e)) {
      if (i === s && (c === PERCENT || text.startsWith('---', s) || text.startsWith('...', s))) return undefined;
      const c1 = i + 1 < e ? text.charCodeAt(i + 1) : NL;
      if (c === DASH && (c1 === SPACE || c1 === NL || c1 === CR)) kind = ITEM;
      else kind = c < 128 && INDICATOR[c] === 1 ? ODD : KEY;
    }
    starts[l] = s;
    indents[l] = kind === BLANK ? -1 : i - s;
    kinds[l] = kind;
    s = e + 1;
  }
  return { count, starts, indents, kinds };
}

/**
 * The first lines of the steps between lines `from` and `to` (the lines at the first step's indentation); null
 * when one of them is not a key (but a list's item), or a line is indented less.
 */
function stepHeads({ indents, kinds }: Lines, from: number, to: number): number[] | null {
  let l = from;
  while (l < to && kinds[l] === BLANK) l++;
  if (l === to) return [];
  const n = indents[l]!;
  if (kinds[l] !== KEY) return null;
  const heads: number[] = [];
  for (; l < to; l++) {
    const i = indents[l]!;
    if (i === n && kinds[l] === KEY) heads.push(l);
    else if (i === n ? kinds[l] !== ITEM : i >= 0 && i < n) return null;
  }
  return heads;
}
