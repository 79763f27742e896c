/**
 * Loads one YAML document into a small positioned tree (`YNode`) that the checkers walk.
 * Aliases and merge keys (`<<: *base`) are resolved here, duplicate keys and YAML errors
 * become diagnostics, and every node and key keeps its exact 1-based line and column.
 * Integer scalars keep their source text, so 64-bit values (callids) stay exact.
 *
 * Limits (untrusted input): the file's size (FILE_TOO_LARGE), and what aliases repeat
 * (ALIAS_LIMIT), not the size of the document itself. An anchored value is converted
 * once and every alias of it shares that YNode, so an alias costs O(1) here and a
 * "billion laughs" bomb is refused before anything is expanded; the checkers, which walk
 * aliased values once per alias, see at most MAX_ALIAS_WEIGHT more than the file holds.
 */
import {
  CST,
  Lexer,
  LineCounter,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  visit,
  type Document,
  type Node as YamlNode,
} from 'yaml';
import type { Diagnostic } from '../errors/diagnostic.js';
import { NEXT_KEY } from './yaml-blocks.js';
import { quickLoad } from './yaml-quick.js';
import { FLOW_CODES } from '../errors/flow-codes.js';

export interface Loc {
  line: number; // 1-based
  col: number; // 1-based
}

export type ScalarType = 'null' | 'bool' | 'int' | 'float' | 'string';

interface NodeBase {
  pos: Loc;
  end: Loc;
}

export interface YScalar extends NodeBase {
  kind: 'scalar';
  type: ScalarType;
  value: null | boolean | number | string;
  /** The text as written (for plain scalars), or the string value (quoted ones). */
  source: string;
  /** Written with quotes or as a block scalar: always a string. */
  quoted: boolean;
  /** A string's text as written in the file (quotes and escapes included), for positions inside it. */
  raw?: string | undefined;
}

export interface YEntry {
  key: string;
  keyNode: YNode;
  value: YNode;
}

export interface YMap extends NodeBase {
  kind: 'map';
  entries: YEntry[];
}

export interface YSeq extends NodeBase {
  kind: 'seq';
  items: YNode[];
}

export type YNode = YScalar | YMap | YSeq;

export interface LoadResult {
  /** Absent when the file is empty (or only comments) or when YAML errors were found. */
  root?: YNode;
  diagnostics: Diagnostic[];
}

/**
 * The largest flow (or config, or scenario) file by default, in bytes of UTF-8:
 * FILE_TOO_LARGE. A server sets its own with limits.flow_file_bytes.
 */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
/**
 * How much aliases may repeat in all (ALIAS_LIMIT): the weight of the values they stand
 * for, aliases inside them counted as expanded. A map or a list weighs 1, a scalar 1 plus
 * the length of its text: about the characters the value would take written out. As much
 * as a file may hold, so aliases at most double the work of checking the largest file.
 */
export const MAX_ALIAS_WEIGHT = MAX_FILE_BYTES;
/**
 * The deepest nesting of maps and lists in a file (TOO_DEEP): no flow needs more. A scenario or routes file, which
 * holds a call's values inside its own levels, is given more (src/testing/scenario.ts).
 */
export const MAX_DEPTH = 64;

/** An anchored value once converted: its tree, its weight and its height. */
interface Anchored {
  node: YNode;
  weight: number;
  height: number;
}

interface LoadCtx {
  file: string;
  text: string;
  doc: Document;
  lc: LineCounter;
  diags: Diagnostic[];
  stack: Set<YamlNode>;
  /**
   * Alias -> anchored node, from one pass over the document (yaml's resolve() searches the whole document each time).
   */
  targets?: Map<YamlNode, YamlNode | undefined>;
  /** Anchored values already converted: their aliases share the YNode. */
  anchored: Map<YamlNode, Anchored>;
  /** Weight of all the values converted so far, aliases included. */
  weight: number;
  /** Weight the aliases have added so far. */
  aliasWeight: number;
  /** The deepest level reached so far. */
  deepest: number;
  /** The deepest level allowed (TOO_DEEP past it). */
  maxDepth: number;
  /** The line (0-based) of the last position looked up. */
  line: number;
  stopped: boolean;
}

type LoaderCode = 'YAML_SYNTAX' | 'DUPLICATE_KEY' | 'FILE_TOO_LARGE' | 'ALIAS_LIMIT' | 'TOO_DEEP';

/** Records a loader diagnostic; none once the loader has stopped (no follow-on errors). */
function yamlDiag(
  ctx: LoadCtx,
  code: LoaderCode,
  offset: number,
  message: string,
  hint?: string,
  endOffset?: number,
): void {
  if (ctx.stopped) return;
  const at = ctx.lc.linePos(offset);
  const d: Diagnostic = { code, severity: 'error', message, file: ctx.file, line: at.line, column: at.col };
  if (endOffset !== undefined && endOffset > offset) {
    const e = ctx.lc.linePos(endOffset);
    d.endLine = e.line;
    d.endColumn = e.col;
  }
  if (hint) d.hint = hint;
  ctx.diags.push(d);
}

const hintOf = (code: LoaderCode) => FLOW_CODES.find((c) => c.code === code)!.hint;
const FILE_HINT = hintOf('FILE_TOO_LARGE');
const ALIAS_HINT = hintOf('ALIAS_LIMIT');
const DEEP_HINT = hintOf('TOO_DEEP');
const YAML_HINT =
  'Fix the YAML at the position shown: indent with spaces (never tabs), close quotes and brackets, keep one ' +
  'document per file.';

/** How the yaml package parses a flow: duplicate keys and merge keys are the loader's own. */
const PARSE_OPTIONS = { uniqueKeys: false, merge: true, prettyErrors: false, strict: true } as const;

function newCtx(file: string, text: string, doc: Document, lc: LineCounter, maxDepth: number): LoadCtx {
  return {
    file,
    text,
    doc,
    lc,
    diags: [],
    stack: new Set(),
    anchored: new Map(),
    weight: 0,
    aliasWeight: 0,
    deepest: 0,
    maxDepth,
    line: 0,
    stopped: false,
  };
}

/**
 * Parses `text`; YAML errors (and warnings such as unknown tags) are reported as YAML_SYNTAX; values nested more than
 * `maxDepth` levels deep are TOO_DEEP.
 */
export function loadYaml(text: string, file: string, maxBytes = MAX_FILE_BYTES, maxDepth = MAX_DEPTH): LoadResult {
  // A string's UTF-8 size is at most 3 bytes per UTF-16 unit: only count when it may matter.
  const bytes = text.length * 3 > maxBytes ? Buffer.byteLength(text, 'utf8') : text.length;
  if (bytes > maxBytes) {
    const message =
      `the file is ${bytes.toLocaleString('en-US')} bytes; a file may be at ` +
      `most ${maxBytes.toLocaleString('en-US')} bytes (limits.flow_file_bytes)`;
    return {
      diagnostics: [{ code: 'FILE_TOO_LARGE', severity: 'error', message, file, line: 1, column: 1, hint: FILE_HINT }],
    };
  }
  // the plain YAML most flows are written in, read without the yaml package (yaml-quick.ts); else the whole way
  const quick = quickLoad(text, maxDepth);
  if (quick) return { root: quick, diagnostics: [] };
  return loadYamlDocument(text, file, maxDepth);
}

/** loadYaml through the yaml package's Document, whatever the text (the size checked already). */
export function loadYamlDocument(text: string, file: string, maxDepth = MAX_DEPTH): LoadResult {
  const lc = new LineCounter();
  const deep = tooDeepAt(text, maxDepth);
  if (deep !== undefined) {
    lc.addNewLine(0);
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lc.addNewLine(i + 1);
    const at = lc.linePos(deep);
    const message = `values are nested more than ${maxDepth} levels deep`;
    return {
      diagnostics: [
        { code: 'TOO_DEEP', severity: 'error', message, file, line: at.line, column: at.col, hint: DEEP_HINT },
      ],
    };
  }
  const doc = parseDocument(text, { lineCounter: lc, ...PARSE_OPTIONS });
  const ctx = newCtx(file, text, doc, lc, maxDepth);
  const lines = new Set<number>();
  // A tab used as indentation throws off the parser for the rest of the block: every
  // later line (blank ones included) gets an error of its own. The tab is the mistake.
  const tab = doc.errors.find((e) => e.code === 'TAB_AS_INDENT');
  for (const e of tab ? [tab] : [...doc.errors, ...doc.warnings]) {
    const msg =
      e.code === 'MULTIPLE_DOCS'
        ? 'a flow file holds a single YAML document (remove the `---` separator)'
        : e.message.replace(/ at line \d+, column \d+[\s\S]*$/, '');
    const [start, end] = errorSpan(text, e.pos[0], e.pos[1]);
    // one YAML mistake often yields several errors on its line: the first one says it
    const line = lc.linePos(start).line;
    if (lines.has(line)) continue;
    lines.add(line);
    yamlDiag(ctx, 'YAML_SYNTAX', start, `YAML: ${msg}`, YAML_HINT, end);
  }
  if (ctx.diags.length > 0) return { diagnostics: ctx.diags };
  const contents = doc.contents as YamlNode | null;
  if (contents === null || contents === undefined) return { diagnostics: [] };
  const root = convert(ctx, contents, 0);
  if (ctx.stopped) return { diagnostics: ctx.diags };
  return { root, diagnostics: ctx.diags };
}

/** A key of a block loaded alone (loadBlock): its entry, the loader's diagnostics inside it, where it ends. */
export interface BlockPair {
  entry: YEntry;
  /** Duplicate keys inside its value, at the block's lines; `file` is empty. */
  diagnostics: Diagnostic[];
  /** Where its value ends with what follows it (what the end of the map holding it is if it comes last). */
  end: Loc;
}

/**
 * A block of a file loaded alone (loadBlock, yaml-blocks.ts): its keys, positions counted from the block text's
 * first line (line 1).
 */
export interface LoadedBlock {
  pairs: BlockPair[];
  /** Where the map that holds them starts (the root map, or the steps map). */
  start: Loc;
  /** Where the map that holds them ends, its trailing comments included (what follows the last step). */
  tail: Loc;
  /**
   * A block of steps: the key of the `steps:` line above them and where the root map starts (of use for the first
   * block, whose text starts with the file's `steps:` line).
   */
  outer?: { key: YNode; start: Loc };
}

/**
 * Loads `text`, a block of a flow file in its context (yaml-blocks.ts): `count` top-level keys, or `count` steps
 * under `steps:`; followed by `_:` when `next` says a key follows. Undefined whenever the whole file's load could
 * say otherwise: a YAML error or warning, anchors, aliases, merge keys (they reach across blocks), any other shape,
 * a value past the depth limit.
 */
export function loadBlock(
  text: string,
  maxDepth: number,
  step: boolean,
  next: 'step' | 'key' | undefined,
  count: number,
): LoadedBlock | undefined {
  if (tooDeepAt(text, maxDepth) !== undefined) return undefined;
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, ...PARSE_OPTIONS });
  if (doc.errors.length > 0 || doc.warnings.length > 0 || doc.directives.docStart) return undefined;
  if (/[&*]|<</.test(text) && aliasing(doc)) return undefined;
  let holder = pairsOf(doc.contents as YamlNode | null, step ? 1 : count, next === 'key');
  if (!holder) return undefined;
  const ctx = newCtx('', text, doc, lc, maxDepth);
  let outer: LoadedBlock['outer'];
  if (step) {
    const root = holder.map;
    const steps = pairsOf(holder.pairs[0]!.value, count, next === 'step');
    if (!steps || !root.range) return undefined;
    outer = { key: convert(ctx, holder.pairs[0]!.key, 1), start: locOf(ctx, root.range[0]) };
    holder = steps;
  }
  const depth = step ? 2 : 1;
  const pairs: BlockPair[] = [];
  for (const pair of holder.pairs) {
    const before = ctx.diags.length;
    const k = convert(ctx, pair.key, depth);
    const v = pair.value ? convert(ctx, pair.value, depth) : nullAt(ctx, pair.key);
    if (ctx.stopped || k.kind !== 'scalar' || !pair.value?.range) return undefined;
    const entry = { key: keyText(k), keyNode: k, value: v };
    pairs.push({ entry, diagnostics: ctx.diags.slice(before), end: locOf(ctx, pair.value.range[2]) });
  }
  const range = holder.map.range;
  if (!range) return undefined;
  const out: LoadedBlock = { pairs, start: locOf(ctx, range[0]), tail: locOf(ctx, range[2]) };
  if (outer) out.outer = outer;
  return out;
}

type ScalarKeyPair = { key: YamlNode & { value: unknown }; value: YamlNode | null };

/** A block map's first `count` pairs (their keys scalars, not `<<`), then `_:` if `followed`; nothing else. */
function pairsOf(
  node: YamlNode | null,
  count: number,
  followed: boolean,
): { map: YamlNode; pairs: ScalarKeyPair[] } | undefined {
  if (!isMap(node) || node.flow || node.anchor || node.tag) return undefined;
  if (node.items.length !== count + (followed ? 1 : 0)) return undefined;
  const items = node.items as { key: YamlNode | null; value: YamlNode | null }[];
  const pairs: ScalarKeyPair[] = [];
  for (const pair of items.slice(0, count)) {
    if (!isScalar(pair.key) || typeof pair.key.value === 'symbol') return undefined;
    pairs.push(pair as ScalarKeyPair);
  }
  const after = items[count];
  if (followed && !(isScalar(after!.key) && after!.key.source === NEXT_KEY && isScalar(after!.value))) return undefined;
  return { map: node, pairs };
}

/** Whether the document has an anchor, an alias or a merge key. */
function aliasing(doc: Document): boolean {
  let found = false;
  visit(doc, {
    Node: (_key, n) => {
      if (isAlias(n) || n.anchor || (isScalar(n) && typeof n.value === 'symbol')) {
        found = true;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * Nesting the YAML parser must never see: the yaml package composes a document
 * recursively (3,000 levels of `[` overflow the stack) and its parser takes seconds and a
 * gigabyte on a million levels. Its lexer is iterative and cheap, so the text is lexed
 * first and, at the first token past PRESCAN_FACTOR times the bound (maxDepth), refused (its offset returned).
 * The level of a token is bounded above by the open flow collections ([ {), the
 * indentations still open above its line and the block indicators (- ?) before it on its
 * line; the exact check (`maxDepth`) happens when the document is converted.
 */
const PRESCAN_FACTOR = 4;
const MARKERS = new Set(['\u0002', '\u0018', '\u001f']);

function tooDeepAt(text: string, maxDepth: number): number | undefined {
  let offset = 0;
  let flow = 0;
  let onLine = 0;
  let lineStart = true;
  const indents: number[] = [];
  for (const tok of new Lexer().lex(text)) {
    if (MARKERS.has(tok)) continue;
    const type = CST.tokenType(tok);
    if (type === 'newline') {
      lineStart = true;
      onLine = 0;
    } else if (type === 'space' && lineStart && !tok.includes('\n')) {
      // the indentation of the line, known once something other than a comment follows
    } else if (
      type !== 'comment' &&
      type !== 'space' &&
      type !== 'byte-order-mark' &&
      type !== 'doc-start' &&
      type !== 'doc-end'
    ) {
      if (lineStart) {
        const col = offset - (text.lastIndexOf('\n', offset - 1) + 1);
        while (indents.length > 0 && indents[indents.length - 1]! >= col) indents.pop();
        indents.push(col);
        lineStart = false;
      }
      if (type === 'flow-map-start' || type === 'flow-seq-start') flow++;
      else if (type === 'flow-map-end' || type === 'flow-seq-end') flow = Math.max(0, flow - 1);
      else if (type === 'seq-item-ind' || type === 'explicit-key-ind') onLine++;
      if (flow + indents.length + onLine > PRESCAN_FACTOR * maxDepth) return offset;
    }
    offset += tok.length;
  }
  return undefined;
}

/**
 * Where a YAML error really is. The yaml package puts indentation errors (BAD_INDENT,
 * a misplaced `- item`) at the start of the line, i.e. column 1 of its `linePos`, while
 * the offending thing is the first character after the indentation: move there, and span
 * the token (the key) that starts at it. Tabs stay where they are (they are the error).
 */
export function errorSpan(text: string, start: number, end: number): [number, number] {
  let i = start;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  if (!/^ *$/.test(text.slice(lineStart, start))) return [start, end];
  while (i < text.length && text[i] === ' ') i++;
  if (i === start || i >= text.length || /[\r\n\t]/.test(text[i]!)) return [start, end];
  let j = i;
  while (j < text.length && !/[\s:]/.test(text[j]!)) j++;
  return [i, Math.max(j, i + 1)];
}

/**
 * The line and column of an offset. Nodes come mostly in the order of the text, so the
 * line of the previous lookup (or the next one) usually holds it; else a binary search.
 */
function locOf(ctx: LoadCtx, offset: number): Loc {
  const o = Math.max(0, offset);
  const starts = ctx.lc.lineStarts;
  let i = ctx.line;
  if (!(i < starts.length && starts[i]! <= o && (i + 1 === starts.length || o < starts[i + 1]!))) {
    if (i + 2 < starts.length && starts[i + 1]! <= o && o < starts[i + 2]!) i++;
    else {
      const p = ctx.lc.linePos(o);
      if (p.line < 1) return { line: p.line, col: p.col };
      i = p.line - 1;
    }
    ctx.line = i;
  }
  return { line: i + 1, col: o - starts[i]! + 1 };
}

function rangeOf(ctx: LoadCtx, node: YamlNode): { pos: Loc; end: Loc } {
  const r = node.range;
  return r ? { pos: locOf(ctx, r[0]), end: locOf(ctx, r[1]) } : { pos: locOf(ctx, 0), end: locOf(ctx, 0) };
}

/** Stops the loader with one diagnostic at `node`: everything after it is left unchecked. */
function stop(
  ctx: LoadCtx,
  node: YamlNode,
  message: string,
  code: LoaderCode = 'YAML_SYNTAX',
  hint = YAML_HINT,
): YNode {
  yamlDiag(ctx, code, node.range?.[0] ?? 0, message, hint);
  ctx.stopped = true;
  return {
    kind: 'scalar',
    type: 'null',
    value: null,
    source: '',
    quoted: false,
    ...rangeOf(ctx, node),
    raw: undefined,
  };
}

/** The anchored node an alias stands for: the last anchor of that name before it, as yaml's resolve() finds it. */
function aliasTarget(ctx: LoadCtx, alias: YamlNode): YamlNode | undefined {
  if (!ctx.targets) {
    const targets = new Map<YamlNode, YamlNode | undefined>();
    const last = new Map<string, YamlNode>();
    visit(ctx.doc, {
      Node: (_key, n) => {
        if (isAlias(n)) targets.set(n, last.get(n.source));
        else if (n.anchor) last.set(n.anchor, n);
      },
    });
    ctx.targets = targets;
  }
  return ctx.targets.get(alias);
}

function convert(ctx: LoadCtx, node: YamlNode, depth: number): YNode {
  if (ctx.stopped) return stop(ctx, node, '');
  if (depth > ctx.maxDepth)
    return stop(ctx, node, `values are nested more than ${ctx.maxDepth} levels deep`, 'TOO_DEEP', DEEP_HINT);
  if (isAlias(node)) return convertAlias(ctx, node, depth);
  if (depth > ctx.deepest) ctx.deepest = depth;
  if (!node.anchor) return convertNode(ctx, node, depth);
  const weight = ctx.weight;
  const deepest = ctx.deepest;
  ctx.deepest = depth;
  const y = convertNode(ctx, node, depth);
  if (!ctx.stopped) ctx.anchored.set(node, { node: y, weight: ctx.weight - weight, height: ctx.deepest - depth });
  ctx.deepest = Math.max(deepest, ctx.deepest);
  return y;
}

/** An alias: the anchored value's tree, shared; its weight counts against MAX_ALIAS_WEIGHT. */
function convertAlias(ctx: LoadCtx, node: YamlNode & { source: string }, depth: number): YNode {
  const target = aliasTarget(ctx, node);
  if (!target) return stop(ctx, node, `the alias *${node.source} names no anchor defined before it`);
  if (ctx.stack.has(target))
    return stop(ctx, node, `the alias *${node.source} refers to a value that contains it (recursive alias)`);
  let done = ctx.anchored.get(target);
  if (!done) {
    // not converted where it is written (the value of a refused key): convert it now
    const weight = ctx.weight;
    convert(ctx, target, depth + 1);
    ctx.weight = weight;
    done = ctx.anchored.get(target);
    if (!done) return stop(ctx, node, '');
  }
  if (depth + 1 + done.height > ctx.maxDepth)
    return stop(
      ctx,
      node,
      `values are nested more than ${ctx.maxDepth} levels deep once the alias *${node.source} is expanded`,
      'TOO_DEEP',
      DEEP_HINT,
    );
  ctx.aliasWeight += done.weight;
  if (ctx.aliasWeight > MAX_ALIAS_WEIGHT) {
    const max = MAX_ALIAS_WEIGHT.toLocaleString('en-US');
    return stop(
      ctx,
      node,
      `the alias *${node.source} makes the aliases repeat more than ${max} characters of values in all (an ` +
        `alias bomb?)`,
      'ALIAS_LIMIT',
      ALIAS_HINT,
    );
  }
  ctx.weight += done.weight;
  ctx.deepest = Math.max(ctx.deepest, depth + 1 + done.height);
  return done.node;
}

function convertNode(ctx: LoadCtx, node: YamlNode, depth: number): YNode {
  ctx.stack.add(node);
  try {
    if (isScalar(node)) return convertScalar(ctx, node);
    ctx.weight += 1;
    if (isSeq(node)) {
      const items: YNode[] = [];
      for (const it of node.items) {
        items.push(it === null || it === undefined ? nullAt(ctx, node) : convert(ctx, it as YamlNode, depth + 1));
        if (ctx.stopped) break;
      }
      return { kind: 'seq', items, ...rangeOf(ctx, node) };
    }
    if (isMap(node)) return convertMap(ctx, node, depth);
    return stop(ctx, node, 'unsupported YAML node');
  } finally {
    ctx.stack.delete(node);
  }
}

function nullAt(ctx: LoadCtx, near: YamlNode): YScalar {
  const r = rangeOf(ctx, near);
  return {
    kind: 'scalar',
    type: 'null',
    value: null,
    source: '',
    quoted: false,
    pos: r.end,
    end: r.end,
    raw: undefined,
  };
}

/** The type of a value the YAML parser gave; undefined when flows cannot hold it. */
function scalarType(v: unknown): ScalarType | undefined {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'string') return 'string';
  return undefined;
}

function convertScalar(ctx: LoadCtx, node: YamlNode & { value: unknown; source?: string; type?: string }): YNode {
  const v = node.value;
  const quoted = node.type !== undefined && node.type !== 'PLAIN';
  const source = typeof node.source === 'string' ? node.source : String(v ?? '');
  // a scalar weighs its text: the checkers' work on it grows with its length
  ctx.weight += 1 + (typeof v === 'string' ? v.length : source.length);
  const type = scalarType(v);
  if (type === undefined)
    return stop(
      ctx,
      node,
      `unsupported YAML value${node.tag ? ` (tag ${node.tag})` : ''}: flows hold strings, numbers, booleans, ` +
        `null, lists and maps`,
    );
  const value: YScalar['value'] = v === undefined ? null : typeof v === 'bigint' ? Number(v) : (v as YScalar['value']);
  const r = node.range;
  const pos = locOf(ctx, r ? r[0] : 0);
  // one object shape for every scalar (the checkers read millions of them)
  const raw = type === 'string' && r ? ctx.text.slice(r[0], r[1]) : undefined;
  return { kind: 'scalar', type, value, source, quoted, pos, end: r ? locOf(ctx, r[1]) : pos, raw };
}

function keyText(k: YNode): string {
  if (k.kind !== 'scalar') return '';
  if (k.quoted || k.type === 'string') return String(k.value);
  return k.source;
}

function convertMap(
  ctx: LoadCtx,
  node: YamlNode & { items: { key: unknown; value: unknown }[] },
  depth: number,
): YNode {
  const explicit: YEntry[] = [];
  const merges: { index: number; maps: YMap[] }[] = [];
  const seen = new Map<string, YEntry>();
  for (const pair of node.items) {
    if (ctx.stopped) break;
    const keyNode = pair.key as YamlNode | null;
    const valNode = pair.value as YamlNode | null;
    if (keyNode && isScalar(keyNode) && typeof keyNode.value === 'symbol') {
      // merge key `<<`: a map or a list of maps, whose keys come in where `<<` is written
      const v = valNode ? convert(ctx, valNode, depth + 1) : nullAt(ctx, keyNode);
      const maps = v.kind === 'seq' ? v.items : [v];
      const ok: YMap[] = [];
      for (const m of maps) {
        if (m.kind === 'map') ok.push(m);
        else if (!ctx.stopped)
          yamlDiag(
            ctx,
            'YAML_SYNTAX',
            offsetOf(keyNode),
            'YAML: a merge key `<<` takes a map or a list of maps (usually an alias such as *defaults)',
            YAML_HINT,
          );
      }
      merges.push({ index: explicit.length, maps: ok });
      continue;
    }
    const k = keyNode ? convert(ctx, keyNode, depth + 1) : nullAt(ctx, node);
    if (k.kind !== 'scalar') {
      yamlDiag(
        ctx,
        'YAML_SYNTAX',
        keyNode?.range?.[0] ?? 0,
        'YAML: a key must be a plain value, not a list or a map',
        YAML_HINT,
      );
      continue;
    }
    const value = valNode ? convert(ctx, valNode, depth + 1) : nullAt(ctx, keyNode ?? node);
    const entry: YEntry = { key: keyText(k), keyNode: k, value };
    const prev = seen.get(entry.key);
    if (prev) {
      const off = keyNode?.range?.[0] ?? 0;
      yamlDiag(
        ctx,
        'DUPLICATE_KEY',
        off,
        duplicateKeyMessage(entry.key, prev.keyNode.pos),
        DUPLICATE_HINT,
        keyNode?.range?.[1],
      );
      continue;
    }
    seen.set(entry.key, entry);
    explicit.push(entry);
  }
  if (merges.length === 0) return { kind: 'map', entries: explicit, ...rangeOf(ctx, node) };
  const entries: YEntry[] = [];
  const taken = new Set(seen.keys());
  let mi = 0;
  for (let i = 0; i <= explicit.length; i++) {
    while (mi < merges.length && merges[mi]!.index === i) {
      for (const m of merges[mi]!.maps)
        for (const e of m.entries)
          if (!taken.has(e.key)) {
            taken.add(e.key);
            entries.push(e);
          }
      mi++;
    }
    if (i < explicit.length) entries.push(explicit[i]!);
  }
  return { kind: 'map', entries, ...rangeOf(ctx, node) };
}

/** DUPLICATE_KEY's message (yaml-cache.ts moves the line it names when it moves the key). */
export const duplicateKeyMessage = (key: string, first: Loc) =>
  `duplicate key '${key}' (first at line ${first.line}, column ${first.col})`;

export const DUPLICATE_HINT =
  'Keep one of them. YAML would silently keep only one value; callscript refuses to guess which one you meant.';

function offsetOf(node: YamlNode): number {
  return node.range?.[0] ?? 0;
}

/** A map's entry by key. */
export function entry(map: YMap, key: string): YEntry | undefined {
  return map.entries.find((e) => e.key === key);
}

/** The YAML node as plain data (aliases already resolved). */
export function plain(node: YNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'seq') return node.items.map(plain);
  const o: Record<string, unknown> = {};
  // own properties whatever the key: a `__proto__` key stays a key (the schema checks see it), never a prototype
  for (const e of node.entries)
    Object.defineProperty(o, e.key, { value: plain(e.value), enumerable: true, writable: true, configurable: true });
  return o;
}

/** Describes a node's type for messages: "a string", "a list"... */
export function describe(node: YNode): string {
  if (node.kind === 'map') return 'a map';
  if (node.kind === 'seq') return 'a list';
  switch (node.type) {
    case 'null':
      return 'nothing (null)';
    case 'bool':
      return `a boolean (${node.source})`;
    case 'int':
      return `an integer (${node.source})`;
    case 'float':
      return `a number (${node.source})`;
    default:
      return `a string ("${clip(String(node.value))}")`;
  }
}

export function clip(s: string, n = 40): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}
