/**
 * A YAML (or JSON) document with positions: where each value of a path is written, and
 * the text of a scalar as written (so that `+447700900123` or `0042` written without
 * quotes, which YAML reads as numbers, are taken as the digits the author typed).
 */
import { isMap, isPair, isScalar, LineCounter, parseDocument, type Document, type Node } from 'yaml';

export type Path = (string | number)[];

export interface ScriptError {
  file: string;
  line: number;
  column: number;
  /** e.g. actions[2].read */
  path: string;
  message: string;
}

export class Source {
  readonly doc: Document;
  private readonly lc = new LineCounter();

  /**
   * `uniqueKeys: false` leaves repeated keys to the caller: yaml's own check compares each key with every earlier
   * one of its map (10,000 keys took 3 s).
   */
  constructor(
    readonly text: string,
    readonly file: string,
    opts: { uniqueKeys?: boolean } = {},
  ) {
    this.doc = parseDocument(text, {
      lineCounter: this.lc,
      prettyErrors: false,
      uniqueKeys: opts.uniqueKeys ?? true,
    });
  }

  /** YAML syntax errors, positioned. */
  syntaxErrors(): ScriptError[] {
    return this.doc.errors.map((e) => {
      const p = this.lc.linePos(e.pos[0]);
      return { file: this.file, line: p.line, column: p.col, path: '', message: e.message.split('\n')[0]! };
    });
  }

  node(path: Path): Node | undefined {
    if (path.length === 0) return (this.doc.contents as Node | null) ?? undefined;
    return this.doc.getIn(path, true) as Node | undefined;
  }

  /** Where the value at `path` is written (or its key, with onKey). */
  pos(path: Path, onKey = false): { line: number; column: number } {
    let offset: number | undefined;
    if (onKey && path.length > 0) {
      const parent = this.node(path.slice(0, -1));
      if (isMap(parent)) {
        const last = path[path.length - 1];
        const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === last);
        offset = pair && isScalar(pair.key) ? pair.key.range?.[0] : undefined;
      }
    }
    if (offset === undefined) {
      for (let n = path.length; n >= 0 && offset === undefined; n--) offset = this.node(path.slice(0, n))?.range?.[0];
    }
    const p = this.lc.linePos(offset ?? 0);
    return { line: p.line, column: p.col };
  }

  /** The text of a number scalar as written; other values unchanged. */
  asWritten(path: Path, value: unknown): unknown {
    if (typeof value !== 'number') return value;
    const n = this.node(path);
    if (isScalar(n) && n.range) return this.text.slice(n.range[0], n.range[1]).trim();
    return String(value);
  }

  /** 1-based line and column of an offset in the text. */
  at(offset: number): { line: number; column: number } {
    const p = this.lc.linePos(offset);
    return { line: p.line, column: p.col };
  }

  where(path: Path): string {
    const p = this.pos(path);
    return `${this.file}:${p.line}:${p.column}`;
  }
}

export function pathText(path: Path): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : `.${p}`;
  return s;
}

/** `file:line:col path: message`, the source line and a caret under the column. */
export function formatScriptErrors(errors: ScriptError[], text: string): string {
  const lines = text.split(/\r?\n/);
  return errors
    .map((e) => {
      const src = lines[e.line - 1];
      const head = `${e.file}:${e.line}:${e.column} ${e.path ? e.path + ': ' : ''}${e.message}`;
      if (src === undefined) return head;
      const num = String(e.line);
      return `${head}\n  ${num} | ${src}\n  ${' '.repeat(num.length)} | ${' '.repeat(Math.max(0, e.column - 1))}^`;
    })
    .join('\n');
}
