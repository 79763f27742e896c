/**
 * A quick loader for the plain YAML most flow files are written in, giving exactly the tree loadYaml gives (kinds,
 * values, types, sources, raw texts, every position), or nothing: then loadYaml parses the text with the yaml
 * package as always. The yaml package builds a whole Document (and a concrete syntax tree before it) for a file: on a
 * generated 10,000-step flow (3.7 MB) that was 1.6 s of parsing and most of a further 1.6 s of garbage collection.
 *
 * What it takes, and nothing else (anything else, anywhere in the file, declines the whole file):
 * - block maps whose keys are plain words (`menu_1`, `timeout_ms`) or quoted texts without escapes (`"1"`), each key
 *   on its own line and at most MAX_KEY_CHARS long, indented with spaces, nested maps indented deeper than their key;
 * - values on the key's line: plain scalars on one line (strings, `null`/`~`, booleans, decimal integers of at most
 *   15 digits), double-quoted texts without a backslash, single-quoted texts, and flow maps `{ k: v, ... }` or flow
 *   lists `[a, b]` of such scalars or of flow maps and lists in turn (`{ say: { prompt: x } }`), on one line;
 * - comments after a value or on lines of their own, indented no deeper than the line that follows them; blank lines.
 * It declines tabs, carriage returns, control characters, byte-order marks, documents markers and directives,
 * anchors, aliases, tags, merge keys, block scalars, lists written with `-`, multi-line scalars, empty values,
 * duplicate keys (loadYaml reports them), floats and other numbers, values nested deeper than `maxDepth`, and a text
 * that does not end with a newline. Each line is read once: linear in the text, no recursion deeper than `maxDepth`.
 * test/flow/yaml-quick.test.ts compares it with the yaml package on every flow of the repository and on mutations
 * of them.
 */
import type { Loc, YEntry, YMap, YNode, YScalar, YSeq } from './yaml.js';

/** Characters that decline a file wherever they are. */
const REFUSED_CHARS = /[\t\r\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00a0\ufeff\u2028\u2029]/;
/** A plain key: a word. */
const PLAIN_KEY = /[A-Za-z_][A-Za-z0-9_.-]*/y;
/** Plain scalars the core schema reads as something other than a string, or that this loader leaves to yaml. */
const NULLS = new Set(['null', 'Null', 'NULL', '~']);
const BOOLS = new Map([
  ['true', true],
  ['True', true],
  ['TRUE', true],
  ['false', false],
  ['False', false],
  ['FALSE', false],
]);
const INT = /^-?(?:0|[1-9][0-9]{0,14})$/;
/** A plain scalar's first character, in a block (the others are YAML indicators, or numbers left to yaml). */
const PLAIN_START = /[A-Za-z_~/$(]/;

/** The longest key taken (yaml refuses an implicit key whose `:` is more than 1024 characters after its start). */
const MAX_KEY_CHARS = 1000;

class Decline extends Error {}
const DECLINE = new Decline();

interface Line {
  start: number;
  /** The offset of its newline. */
  end: number;
  indent: number;
  /** 0 blank, 1 comment, 2 content. */
  kind: 0 | 1 | 2;
}

/** The file's tree, or undefined when loadYaml must read it (see above). */
export function quickLoad(text: string, maxDepth: number): YNode | undefined {
  if (text.length === 0 || text.charCodeAt(text.length - 1) !== 10 || REFUSED_CHARS.test(text)) return undefined;
  try {
    return new QuickLoader(text, maxDepth).root();
  } catch (err) {
    if (err instanceof Decline) return undefined;
    throw err;
  }
}

class QuickLoader {
  private readonly lines: Line[] = [];
  /** The next line to read. */
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {
    // the text ends with a newline: every line has one
    for (let start = 0; start < text.length;) {
      const next = text.indexOf('\n', start);
      let i = start;
      while (text.charCodeAt(i) === 32) i++;
      const c = text.charCodeAt(i);
      const kind = i === next ? 0 : c === 35 /* # */ ? 1 : 2;
      this.lines.push({ start, end: next, indent: i - start, kind });
      start = next + 1;
    }
    // a comment line belongs where the yaml package puts it only when it is no deeper than the line after it
    let following = 0;
    for (let l = this.lines.length - 1; l >= 0; l--) {
      const line = this.lines[l]!;
      if (line.kind === 2) following = line.indent;
      else if (line.kind === 1 && line.indent > following) throw DECLINE;
    }
  }

  root(): YNode | undefined {
    const first = this.nextContent();
    if (first === undefined || this.lines[first]!.indent !== 0) throw DECLINE;
    const map = this.blockMap(0, 0);
    if (this.nextContent() !== undefined) throw DECLINE;
    return map;
  }

  /** The index of the next content line from `at` (blank and comment lines skipped), or undefined. */
  private nextContent(): number | undefined {
    while (this.at < this.lines.length && this.lines[this.at]!.kind !== 2) this.at++;
    return this.at < this.lines.length ? this.at : undefined;
  }

  private loc(line: number, offset: number): Loc {
    return { line: line + 1, col: offset - this.lines[line]!.start + 1 };
  }

  /** The block map whose keys are the content lines at `indent` from the next one. */
  private blockMap(indent: number, depth: number): YMap {
    if (depth > this.maxDepth) throw DECLINE;
    const entries: YEntry[] = [];
    const seen = new Set<string>();
    let pos: Loc | undefined;
    let last = -1;
    for (let l = this.nextContent(); l !== undefined && this.lines[l]!.indent >= indent; l = this.nextContent()) {
      const line = this.lines[l]!;
      if (line.indent !== indent) throw DECLINE;
      const keyAt = line.start + indent;
      const keyNode = this.key(l, keyAt, depth + 1);
      // yaml: the `:` of an implicit key at most 1024 characters after the key's start (KEY_OVER_1024_CHARS)
      if (keyNode.raw!.length > MAX_KEY_CHARS) throw DECLINE;
      pos ??= keyNode.pos;
      const key = String(keyNode.value);
      if (seen.has(key)) throw DECLINE;
      seen.add(key);
      // `key:` then a space and the value, or the end of the line
      let i = keyAt + keyNode.raw!.length;
      if (this.text.charCodeAt(i) !== 58 /* : */) throw DECLINE;
      i++;
      let value: YNode;
      const after = this.skipSpaces(i, line.end);
      if (after === line.end || (after > i && this.text.charCodeAt(after) === 35)) {
        // the value is the map on the lines below
        this.at = l + 1;
        const below = this.nextContent();
        if (below === undefined || this.lines[below]!.indent <= indent) throw DECLINE;
        value = this.blockMap(this.lines[below]!.indent, depth + 1);
      } else {
        if (after === i) throw DECLINE;
        value = this.inline(l, after, depth + 1);
        this.at = l + 1;
      }
      entries.push({ key, keyNode, value });
      // the last content line read (a nested map's last line included)
      last = this.lastContentBefore(this.at);
    }
    if (pos === undefined) throw DECLINE;
    // a block map ends where the line after its last value starts
    return { kind: 'map', entries, pos, end: { line: last + 2, col: 1 } };
  }

  private lastContentBefore(at: number): number {
    let l = at - 1;
    while (l >= 0 && this.lines[l]!.kind !== 2) l--;
    return l;
  }

  /** A key at `i` on line `l`: a plain word or a quoted text. */
  private key(l: number, i: number, depth: number): YScalar {
    if (depth > this.maxDepth) throw DECLINE;
    const c = this.text.charCodeAt(i);
    if (c === 34 || c === 39) return this.quoted(l, i, this.lines[l]!.end);
    PLAIN_KEY.lastIndex = i;
    const m = PLAIN_KEY.exec(this.text);
    if (!m) throw DECLINE;
    const word = m[0];
    if (NULLS.has(word) || BOOLS.has(word)) throw DECLINE;
    return this.scalar('string', word, word, false, l, i, i + word.length, word);
  }

  /** The value at `i` on line `l`, alone on the rest of the line (but for spaces and a comment). */
  private inline(l: number, i: number, depth: number): YNode {
    if (depth > this.maxDepth) throw DECLINE;
    const end = this.lines[l]!.end;
    const c = this.text.charCodeAt(i);
    let node: YNode;
    let after: number;
    if (c === 123 /* { */ || c === 91 /* [ */) {
      [node, after] = this.flow(l, i, end, depth);
    } else if (c === 34 || c === 39) {
      node = this.quoted(l, i, end);
      after = i + node.raw!.length;
    } else {
      // a plain scalar: to the end of the line or a comment, its trailing spaces left out
      let stop = i;
      while (stop < end && !(this.text.charCodeAt(stop) === 32 && this.text.charCodeAt(stop + 1) === 35)) stop++;
      let e = stop;
      while (e > i && this.text.charCodeAt(e - 1) === 32) e--;
      node = this.plain(l, i, e, false);
      after = stop;
    }
    const rest = this.skipSpaces(after, end);
    if (rest !== end && !(rest > after && this.text.charCodeAt(rest) === 35)) throw DECLINE;
    return node;
  }

  /** A flow map or list from `i` (its bracket) on one line, its values scalars or flow collections: the node and the
   * offset after it. Recursive, at most `maxDepth` levels (the caller checks `depth`). */
  private flow(l: number, i: number, end: number, depth: number): [YMap | YSeq, number] {
    const isMap = this.text.charCodeAt(i) === 123;
    const close = isMap ? 125 : 93;
    const entries: YEntry[] = [];
    const items: YNode[] = [];
    const seen = new Set<string>();
    let j = this.skipSpaces(i + 1, end);
    if (this.text.charCodeAt(j) !== close) {
      for (;;) {
        if (isMap) {
          const keyNode = this.flowScalar(l, j, end, depth + 1, true);
          const key = String(keyNode.value);
          if (keyNode.type !== 'string' || seen.has(key)) throw DECLINE;
          seen.add(key);
          j = this.offset(l, keyNode.end);
          if (this.text.charCodeAt(j) !== 58 || this.text.charCodeAt(j + 1) !== 32) throw DECLINE;
          j = this.skipSpaces(j + 1, end);
          const value = this.flowValue(l, j, end, depth + 1);
          entries.push({ key, keyNode, value });
          j = this.offset(l, value.end);
        } else {
          const item = this.flowValue(l, j, end, depth + 1);
          items.push(item);
          j = this.offset(l, item.end);
        }
        j = this.skipSpaces(j, end);
        const c = this.text.charCodeAt(j);
        if (c === close) break;
        if (c !== 44 /* , */) throw DECLINE;
        j = this.skipSpaces(j + 1, end);
        if (j === end || this.text.charCodeAt(j) === close) throw DECLINE;
      }
    }
    const pos = this.loc(l, i);
    const after = j + 1;
    const endLoc = this.loc(l, after);
    return [isMap ? { kind: 'map', entries, pos, end: endLoc } : { kind: 'seq', items, pos, end: endLoc }, after];
  }

  /** A value inside a flow collection: a flow map or list (on the same line), or a scalar. */
  private flowValue(l: number, i: number, end: number, depth: number): YNode {
    if (depth > this.maxDepth) throw DECLINE;
    const c = this.text.charCodeAt(i);
    return c === 123 || c === 91 ? this.flow(l, i, end, depth)[0] : this.flowScalar(l, i, end, depth, false);
  }

  /** The offset of a position on line `l`. */
  private offset(l: number, at: Loc): number {
    return this.lines[l]!.start + at.col - 1;
  }

  /** A scalar inside a flow collection: quoted, or plain up to `,` `]` `}` or `: `. */
  private flowScalar(l: number, i: number, end: number, depth: number, isKey: boolean): YScalar {
    if (depth > this.maxDepth) throw DECLINE;
    const c = this.text.charCodeAt(i);
    if (c === 34 || c === 39) return this.quoted(l, i, end);
    let e = i;
    for (; e < end; e++) {
      const d = this.text.charCodeAt(e);
      if (d === 44 || d === 93 || d === 125 || d === 91 || d === 123 || d === 35) break;
      if (d === 58 && (isKey || this.text.charCodeAt(e + 1) === 32)) break;
    }
    while (e > i && this.text.charCodeAt(e - 1) === 32) e--;
    return this.plain(l, i, e, true);
  }

  /** A plain scalar from `i` to `e` (exclusive) on line `l`. */
  private plain(l: number, i: number, e: number, inFlow: boolean): YScalar {
    if (e <= i) throw DECLINE;
    const s = this.text.slice(i, e);
    if (NULLS.has(s)) return this.scalar('null', null, s, false, l, i, e, undefined);
    const b = BOOLS.get(s);
    if (b !== undefined) return this.scalar('bool', b, s, false, l, i, e, undefined);
    if (INT.test(s) && s !== '-0') return this.scalar('int', Number(s), s, false, l, i, e, undefined);
    if (!PLAIN_START.test(s[0]!) || s.includes(': ') || s.includes(' #') || s.endsWith(':')) throw DECLINE;
    if (inFlow && /[,[\]{}]/.test(s)) throw DECLINE;
    return this.scalar('string', s, s, false, l, i, e, s);
  }

  /** A quoted scalar at `i` on line `l`, closed before `end`: double quotes without escapes, or single quotes. */
  private quoted(l: number, i: number, end: number): YScalar {
    const q = this.text.charCodeAt(i);
    let j = i + 1;
    let value: string;
    if (q === 34) {
      j = this.find(34, j, end);
      value = this.text.slice(i + 1, j);
      if (value.includes('\\')) throw DECLINE;
    } else {
      for (;;) {
        j = this.find(39, j, end);
        if (this.text.charCodeAt(j + 1) !== 39) break;
        j += 2;
      }
      value = this.text.slice(i + 1, j).replaceAll("''", "'");
    }
    const raw = this.text.slice(i, j + 1);
    return this.scalar('string', value, value, true, l, i, j + 1, raw);
  }

  private scalar(
    type: YScalar['type'],
    value: YScalar['value'],
    source: string,
    quoted: boolean,
    l: number,
    i: number,
    e: number,
    raw: string | undefined,
  ): YScalar {
    return { kind: 'scalar', type, value, source, quoted, pos: this.loc(l, i), end: this.loc(l, e), raw };
  }

  /** The offset of the character `code` from `i` on, before `end` (the end of its line); declines if none. */
  private find(code: number, i: number, end: number): number {
    while (i < end && this.text.charCodeAt(i) !== code) i++;
    if (i === end) throw DECLINE;
    return i;
  }

  private skipSpaces(i: number, end: number): number {
    while (i < end && this.text.charCodeAt(i) === 32) i++;
    return i;
  }
}
