/**
 * A flow file cut into blocks that parse on their own (the incremental loader, yaml-cache.ts): one block per
 * top-level key, from its line (col 1) to the next one's; under a `steps:` line with nothing after it but a
 * comment, one block per step, from its key's line (at the indentation of the first step) to the next step's. The
 * lines before the first key go with the first block, those between `steps:` and the first step with the first
 * step, a comment or blank line after a step with that step.
 *
 * A block is parsed in what stands for its place in the file, so that the yaml package reads it as it reads the
 * whole file (the end of a value, a plain scalar that could run on, depend on what follows): a step under `s:` (the
 * first step under the file's own `steps:` line and what follows it); followed, when a key follows it in the file,
 * by a key `_:` at that key's indentation.
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
  /** A step (under `s:`, or under the file's `steps:` line for the first step), or a top-level key. */
  step: boolean;
  /** What follows it in the file: a step, a top-level key, nothing. */
  next: 'step' | 'key' | undefined;
}

/** The text of a block parsed alone. */
export const blockText = (b: Block): string => b.before + b.body + b.after;

/** A top-level key's block, or a `steps:` key's blocks (one a step, the first one with the `steps:` line). */
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
  const keys: number[] = [];
  for (let l = 0; l < lineCount; l++) {
    if (indents[l] === 0) {
      // at col 1: a key, or an item of the list above (`key:` then `- a` at its column)
      if (kinds[l] === KEY) keys.push(l);
      else if (kinds[l] !== ITEM || keys.length === 0) return undefined;
    } else if (indents[l]! > 0 && keys.length === 0) return undefined;
  }
  if (keys.length === 0) return undefined;
  const blocks: TopBlock[] = [];
  const follow = `${NEXT_KEY}:\n`;
  for (let k = 0; k < keys.length; k++) {
    const first = k === 0 ? 0 : keys[k]!;
    const key = keys[k]!;
    const next = k + 1 < keys.length ? keys[k + 1]! : lineCount;
    const after: Block['next'] = next < lineCount ? 'key' : undefined;
    const tail = after ? follow : '';
    let heads: number[] | null = [];
    if (text.startsWith('steps:', starts[key]!)) {
      const lineEnd = key + 1 < lineCount ? starts[key + 1]! - 1 : text.length;
      if (STEPS_LINE.test(text.slice(starts[key]!, lineEnd))) heads = stepHeads(lines, key + 1, next);
    }
    if (heads === null) return undefined;
    if (heads.length === 0) {
      const block: Block = { body: slice(first, next), before: '', after: tail, line: first, step: false, next: after };
      blocks.push({ block });
      continue;
    }
    const pad = ' '.repeat(indents[heads[0]!]!);
    const steps = heads.map((h, j): Block => {
      const last = j + 1 === heads.length;
      return {
        body: slice(j === 0 ? first : h, last ? next : heads[j + 1]!),
        before: j === 0 ? '' : `${STEPS_KEY}:\n`,
        after: last ? tail : pad + follow,
        line: j === 0 ? first : h - 1,
        step: true,
        next: last ? after : 'step',
      };
    });
    blocks.push({ steps });
  }
  return blocks;
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
