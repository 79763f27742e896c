/**
 * The incremental YAML loader, for an editor that checks a big flow after every keystroke: the file is cut into
 * blocks (yaml-blocks.ts: top-level keys, steps; a step of some size is a block of its own), each block is loaded
 * alone (loadBlock) and kept in a YamlCache by its text, so a change loads again only the block it touches; a block
 * that moved keeps its tree, copied to its new lines. The blocks' keys are then put together as the whole-document
 * load does (the root map, the steps map, their duplicate keys, their ranges).
 *
 * Its result is exactly loadYaml's (tree, positions, raw texts, diagnostics): whatever could make it differ (a YAML
 * error, anchors, aliases, merge keys, tabs, directives, a layout splitBlocks does not take, a depth past the limit)
 * makes it load the whole document instead (test/flow/yaml-cache.test.ts compares the two).
 */
import type { Diagnostic } from '../errors/diagnostic.js';
import { blockText, splitBlocks, type Block } from './yaml-blocks.js';
import {
  DUPLICATE_HINT,
  MAX_DEPTH,
  MAX_FILE_BYTES,
  duplicateKeyMessage,
  loadBlock,
  loadYaml,
  type BlockPair,
  type LoadedBlock,
  type LoadResult,
  type Loc,
  type YEntry,
  type YMap,
  type YNode,
} from './yaml.js';

/** A block's keys, at the lines of its last use. */
interface Cached {
  body: string;
  /** How the block is read: the same lines may be read in two contexts. */
  step: boolean;
  before: string;
  after: string;
  /** Its keys as last used, at `line` (0-based first line of the block); null: the block needs the whole load. */
  loaded: LoadedBlock | null;
  line: number;
  /** The load that last used it. */
  used: number;
  /** How many files' last loads (YamlCache.finish) used it. */
  users: number;
  /** The last pass of finish that saw it. */
  mark: number;
}

/** How many files' last loads are remembered (to drop the blocks a file's next load no longer uses). */
const FILES = 256;

/**
 * The blocks of flow files already loaded, by text, for loadYamlCached. A block that a file's load no longer uses
 * (its text changed) is dropped, unless another file's last load uses it; past `maxBlocks` blocks or
 * `maxChars` characters of their texts, those used longest ago go first. One per editor session (or per
 * directory), never shared between threads; any number of files may use it.
 */
export class YamlCache {
  private readonly blocks = new Map<string, Cached[]>();
  /** The blocks of each file's last load (finish), for the last FILES files loaded. */
  private readonly files = new Map<string, Cached[]>();
  private current: Cached[] = [];
  private count = 0;
  private chars = 0;
  private loads = 0;
  private marks = 0;
  private depth = MAX_DEPTH;
  /** Blocks loaded (not found in the cache), and loads that fell back to the whole document, since it was made. */
  readonly stats = { parsed: 0, whole: 0 };

  constructor(
    readonly maxBlocks = 100_000,
    readonly maxChars = 8 * 1024 * 1024,
  ) {}

  /** How many blocks it holds. */
  get size(): number {
    return this.count;
  }

  /** Starts a load with `maxDepth` (the cache is emptied when it differs from the last one's). */
  begin(maxDepth: number): void {
    if (maxDepth !== this.depth) this.clear();
    this.depth = maxDepth;
    this.loads++;
    this.current = [];
  }

  /** The keys of `block` at its lines (null: the whole load decides). */
  block(block: Block): LoadedBlock | null {
    const { body, before, after, step } = block;
    let same = this.blocks.get(body);
    let c: Cached | undefined;
    for (const x of same ?? []) if (x.step === step && x.before === before && x.after === after) c = x;
    if (!c) {
      this.stats.parsed++;
      const loaded = loadBlock(blockText(block), this.depth, step, block.next, block.pairs) ?? null;
      c = { body, step, before, after, loaded, line: 0, used: this.loads, users: 0, mark: 0 };
      if (!same) {
        same = [];
        this.blocks.set(body, same);
        this.chars += body.length;
      }
      same.push(c);
      this.count++;
    }
    c.used = this.loads;
    this.current.push(c);
    if (c.loaded && c.line !== block.line) {
      c.loaded = shiftBlock(c.loaded, block.line - c.line);
      c.line = block.line;
    }
    return c.loaded;
  }

  /**
   * Ends a load of `file` that took all its blocks from here: the blocks its last load used and this one does not
   * (the lines a change replaced) are dropped, unless another file's last load uses them.
   */
  finish(file: string): void {
    const last = this.files.get(file) ?? [];
    // marks, not sets: a big flow's load holds tens of thousands of blocks
    const mark = ++this.marks;
    for (const c of last) c.mark = mark;
    for (const c of this.current) {
      if (c.mark === mark) continue;
      c.mark = mark;
      c.users++;
    }
    this.files.delete(file);
    this.files.set(file, this.current);
    this.release(last, (c) => c.used !== this.loads);
    for (const [f, blocks] of this.files) {
      if (this.files.size <= FILES) break;
      this.files.delete(f);
      this.release(blocks, () => true);
    }
  }

  /** A file's last load no longer uses those of `blocks` that pass `gone`: dropped when no file's does. */
  private release(blocks: Cached[], gone: (c: Cached) => boolean): void {
    const mark = ++this.marks;
    for (const c of blocks) {
      if (c.mark === mark || !gone(c)) continue;
      c.mark = mark;
      if (--c.users === 0) this.drop(c);
    }
  }

  /** While over the bounds, drops the blocks used longest ago (those of the last load last). */
  trim(): void {
    if (this.count <= this.maxBlocks && this.chars <= this.maxChars) return;
    const all = [...this.blocks.values()].flat().sort((a, b) => a.used - b.used);
    for (const c of all) {
      if (this.count <= this.maxBlocks && this.chars <= this.maxChars) return;
      this.drop(c);
    }
  }

  private drop(c: Cached): void {
    const same = this.blocks.get(c.body);
    const i = same?.indexOf(c) ?? -1;
    if (i < 0) return;
    same!.splice(i, 1);
    this.count--;
    if (same!.length === 0) {
      this.blocks.delete(c.body);
      this.chars -= c.body.length;
    }
    // a file's last load may still name it: its tree goes now
    c.loaded = null;
  }

  clear(): void {
    this.blocks.clear();
    this.files.clear();
    this.current = [];
    this.count = 0;
    this.chars = 0;
  }
}

/** loadYaml(text, file, maxBytes, maxDepth), its unchanged blocks taken from `cache`. */
export function loadYamlCached(
  text: string,
  file: string,
  cache: YamlCache,
  maxBytes = MAX_FILE_BYTES,
  maxDepth = MAX_DEPTH,
): LoadResult {
  const whole = () => {
    cache.stats.whole++;
    return loadYaml(text, file, maxBytes, maxDepth);
  };
  if (maxDepth < 2 || (text.length * 3 > maxBytes && Buffer.byteLength(text, 'utf8') > maxBytes)) return whole();
  const blocks = splitBlocks(text);
  if (!blocks) return whole();
  cache.begin(maxDepth);
  try {
    const diagnostics: Diagnostic[] = [];
    const root = new MapBuilder(file, diagnostics);
    let tail: Loc | undefined;
    for (const b of blocks) {
      if (b.block) {
        const loaded = cache.block(b.block);
        if (!loaded) return whole();
        root.start(loaded.start);
        for (const p of loaded.pairs) root.add(p);
        tail = loaded.pairs[loaded.pairs.length - 1]!.end;
        continue;
      }
      const steps = new MapBuilder(file, diagnostics);
      let first: LoadedBlock | undefined;
      let last: LoadedBlock | undefined;
      for (const s of b.steps) {
        const loaded = cache.block(s);
        if (!loaded) return whole();
        first ??= loaded;
        steps.start(loaded.start);
        for (const p of loaded.pairs) steps.add(p);
        last = loaded;
      }
      const end = last!.pairs[last!.pairs.length - 1]!.end;
      const { key, start } = first!.outer!;
      root.start(start);
      root.add({ entry: { key: 'steps', keyNode: key, value: steps.map(end) }, diagnostics: [], end });
      tail = last!.tail;
    }
    cache.finish(file);
    return { root: root.map(tail!), diagnostics };
  } finally {
    cache.trim();
  }
}

/** A map put together from blocks' pairs, as the loader's convertMap makes it (duplicate keys refused). */
class MapBuilder {
  private readonly entries: YEntry[] = [];
  private readonly seen = new Map<string, YEntry>();
  private pos: Loc | undefined;

  constructor(
    private readonly file: string,
    private readonly diagnostics: Diagnostic[],
  ) {}

  /** Where the map starts: the start its first block gives. */
  start(at: Loc): void {
    this.pos ??= at;
  }

  add(p: BlockPair): void {
    for (const d of p.diagnostics) this.diagnostics.push({ ...d, file: this.file });
    const e = p.entry;
    const prev = this.seen.get(e.key);
    if (!prev) {
      this.seen.set(e.key, e);
      this.entries.push(e);
      return;
    }
    const k = e.keyNode;
    const d: Diagnostic = {
      code: 'DUPLICATE_KEY',
      severity: 'error',
      message: duplicateKeyMessage(e.key, prev.keyNode.pos),
      file: this.file,
      line: k.pos.line,
      column: k.pos.col,
    };
    if (k.end.line !== k.pos.line || k.end.col !== k.pos.col) {
      d.endLine = k.end.line;
      d.endColumn = k.end.col;
    }
    d.hint = DUPLICATE_HINT;
    this.diagnostics.push(d);
  }

  map(end: Loc): YMap {
    return { kind: 'map', entries: this.entries, pos: this.pos!, end };
  }
}

/** A block `delta` lines further down (a copy: the trees handed out are never changed). */
function shiftBlock(b: LoadedBlock, delta: number): LoadedBlock {
  const at = (l: Loc): Loc => ({ line: l.line + delta, col: l.col });
  const out: LoadedBlock = {
    pairs: b.pairs.map((p) => ({
      entry: { key: p.entry.key, keyNode: shift(p.entry.keyNode, delta), value: shift(p.entry.value, delta) },
      diagnostics: p.diagnostics.map((d) => shiftDiagnostic(d, delta)),
      end: at(p.end),
    })),
    start: at(b.start),
    tail: at(b.tail),
  };
  if (b.outer) out.outer = { key: shift(b.outer.key, delta), start: at(b.outer.start) };
  return out;
}

function shift(n: YNode, delta: number): YNode {
  const pos = { line: n.pos.line + delta, col: n.pos.col };
  const end = { line: n.end.line + delta, col: n.end.col };
  if (n.kind === 'scalar') {
    const { type, value, source, quoted, raw } = n;
    return { kind: 'scalar', type, value, source, quoted, pos, end, raw };
  }
  if (n.kind === 'seq') return { kind: 'seq', items: n.items.map((i) => shift(i, delta)), pos, end };
  const entries = n.entries.map((e) => ({
    key: e.key,
    keyNode: shift(e.keyNode, delta),
    value: shift(e.value, delta),
  }));
  return { kind: 'map', entries, pos, end };
}

/** Where duplicateKeyMessage says the first key is. */
const FIRST_AT = /\(first at line (\d+), column (\d+)\)$/;

function shiftDiagnostic(d: Diagnostic, delta: number): Diagnostic {
  const out: Diagnostic = { ...d, line: d.line + delta };
  if (d.endLine !== undefined) out.endLine = d.endLine + delta;
  if (d.code === 'DUPLICATE_KEY')
    out.message = d.message.replace(
      FIRST_AT,
      (_m, l: string, c: string) => `(first at line ${Number(l) + delta}, column ${c})`,
    );
  return out;
}
