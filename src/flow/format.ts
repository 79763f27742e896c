/**
 * Diagnostics as text for terminals: `file:line:col severity CODE message`, a code frame
 * (one line of context on each side, a caret under the column) and the hint.
 * A source's lines are indexed once (formatDiagnostics: once per file of the list), so
 * formatting n diagnostics of a file costs O(file + n), not O(file x n).
 * A flow's text, its values in messages and its file's name are shown with their control
 * characters escaped (src/terminal/printable.ts); the colours are added around them.
 */
import type { Diagnostic } from '../errors/diagnostic.js';
import { printable, printableLines } from '../terminal/printable.js';
import { type SourceLines, lineAt, lineCount, sourceLines } from './source-lines.js';

export interface FormatOptions {
  /** ANSI colours (default false). */
  color?: boolean;
}

const ANSI = {
  red: '\x1b[31m',
  yellow: '\x1b[33m',
  cyan: '\x1b[36m',
  dim: '\x1b[2m',
  bold: '\x1b[1m',
  reset: '\x1b[0m',
};

function paint(on: boolean | undefined, style: keyof typeof ANSI, s: string): string {
  return on ? `${ANSI[style]}${s}${ANSI.reset}` : s;
}

/** A source as text, or already indexed by sourceLines() (to format many diagnostics of it). */
export type Source = string | SourceLines;

const indexed = (source: Source): SourceLines => (typeof source === 'string' ? sourceLines(source) : source);

/** The line of `d` with its neighbours and a caret line; '' when the source has no such line. */
export function codeFrame(d: Diagnostic, source: Source, opts: FormatOptions = {}): string {
  const src = indexed(source);
  const count = lineCount(src);
  const at = d.line - 1;
  if (!Number.isInteger(at) || at < 0 || at >= count) return '';
  const first = Math.max(0, at - 1);
  const last = Math.min(count - 1, at + 1);
  const width = String(last + 1).length;
  const gutter = (n: number | '') => paint(opts.color, 'dim', `${String(n).padStart(width)} | `);
  const out: string[] = [];
  for (let i = first; i <= last; i++) {
    const text = lineAt(src, i);
    // tabs stay (the caret line keeps them to line up); every other control character is escaped
    out.push(`${gutter(i + 1)}${printableLines(text)}`.trimEnd());
    if (i === at) {
      const col = Math.max(1, Math.min(d.column, text.length + 1));
      // the caret under the escaped text: as wide as the escapes before and in the span
      const pad = printableLines(text.slice(0, col - 1)).replace(/[^\t]/g, ' ');
      const end =
        d.endLine === d.line && d.endColumn !== undefined && d.endColumn > col
          ? Math.min(d.endColumn, text.length + 1)
          : 0;
      const span = end > col ? printableLines(text.slice(col - 1, end - 1)).length : 1;
      const caret = '^'.repeat(Math.max(1, span));
      out.push(`${gutter('')}${pad}${paint(opts.color, d.severity === 'error' ? 'red' : 'yellow', caret)}`);
    }
  }
  return out.join('\n');
}

/** One diagnostic: the header line, the code frame (when the source is given) and the hint. */
export function formatDiagnostic(d: Diagnostic, source?: Source, opts: FormatOptions = {}): string {
  const sev = paint(opts.color, d.severity === 'error' ? 'red' : 'yellow', d.severity);
  // Line 0: the file (or directory) itself, no position in it.
  const file = printable(d.file);
  const where = d.line > 0 ? `${file}:${d.line}:${d.column}` : file;
  const parts = [`${where} ${sev} ${paint(opts.color, 'bold', printable(d.code))} ${printable(d.message)}`];
  if (source !== undefined) {
    const frame = codeFrame(d, source, opts);
    if (frame) parts.push(frame);
  }
  if (d.hint) parts.push(`${paint(opts.color, 'cyan', 'hint:')} ${printable(d.hint)}`);
  return parts.join('\n');
}

/** Several diagnostics, each with its file's source when `sources` has it, separated by blank lines. */
export function formatDiagnostics(
  list: readonly Diagnostic[],
  sources: ReadonlyMap<string, string> = new Map(),
  opts: FormatOptions = {},
): string {
  const lines = new Map<string, SourceLines>();
  const sourceOf = (file: string): SourceLines | undefined => {
    let src = lines.get(file);
    if (src === undefined) {
      const text = sources.get(file);
      if (text === undefined) return undefined;
      src = sourceLines(text);
      lines.set(file, src);
    }
    return src;
  };
  return list.map((d) => formatDiagnostic(d, sourceOf(d.file), opts)).join('\n\n');
}

/** "2 errors, 1 warning", or "no problems". */
export function summarize(list: readonly Diagnostic[]): string {
  const errors = list.filter((d) => d.severity === 'error').length;
  const warnings = list.length - errors;
  if (errors === 0 && warnings === 0) return 'no problems';
  const n = (k: number, w: string) => `${k} ${w}${k === 1 ? '' : 's'}`;
  return `${n(errors, 'error')}, ${n(warnings, 'warning')}`;
}
