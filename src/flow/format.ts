/**
 * Diagnostics as text for terminals: `file:line:col severity CODE message`, a code frame
 * (one line of context on each side, a caret under the column) and the hint.
 */
import type { Diagnostic } from '../errors/diagnostic.js';

export interface FormatOptions {
  /** ANSI colours (default false). */
  color?: boolean;
}

const ANSI = { red: '\x1b[31m', yellow: '\x1b[33m', cyan: '\x1b[36m', dim: '\x1b[2m', bold: '\x1b[1m', reset: '\x1b[0m' };

function paint(on: boolean | undefined, style: keyof typeof ANSI, s: string): string {
  return on ? `${ANSI[style]}${s}${ANSI.reset}` : s;
}

/** The line of `d` with its neighbours and a caret line; '' when the source has no such line. */
export function codeFrame(d: Diagnostic, source: string, opts: FormatOptions = {}): string {
  const lines = source.split(/\r\n|\r|\n/);
  const at = d.line - 1;
  if (at < 0 || at >= lines.length) return '';
  const first = Math.max(0, at - 1);
  const last = Math.min(lines.length - 1, at + 1);
  const width = String(last + 1).length;
  const gutter = (n: number | '') => paint(opts.color, 'dim', `${String(n).padStart(width)} | `);
  const out: string[] = [];
  for (let i = first; i <= last; i++) {
    out.push(`${gutter(i + 1)}${lines[i]}`.trimEnd());
    if (i === at) {
      const text = lines[i]!;
      const col = Math.max(1, Math.min(d.column, text.length + 1));
      const pad = text.slice(0, col - 1).replace(/[^\t]/g, ' ');
      const span = d.endLine === d.line && d.endColumn !== undefined && d.endColumn > col ? Math.min(d.endColumn, text.length + 1) - col : 1;
      const caret = '^'.repeat(Math.max(1, span));
      out.push(`${gutter('')}${pad}${paint(opts.color, d.severity === 'error' ? 'red' : 'yellow', caret)}`);
    }
  }
  return out.join('\n');
}

/** One diagnostic: the header line, the code frame (when the source is given) and the hint. */
export function formatDiagnostic(d: Diagnostic, source?: string, opts: FormatOptions = {}): string {
  const sev = paint(opts.color, d.severity === 'error' ? 'red' : 'yellow', d.severity);
  const parts = [`${d.file}:${d.line}:${d.column} ${sev} ${paint(opts.color, 'bold', d.code)} ${d.message}`];
  if (source !== undefined) {
    const frame = codeFrame(d, source, opts);
    if (frame) parts.push(frame);
  }
  if (d.hint) parts.push(`${paint(opts.color, 'cyan', 'hint:')} ${d.hint}`);
  return parts.join('\n');
}

/** Several diagnostics, each with its file's source when `sources` has it, separated by blank lines. */
export function formatDiagnostics(list: readonly Diagnostic[], sources: ReadonlyMap<string, string> = new Map(), opts: FormatOptions = {}): string {
  return list.map((d) => formatDiagnostic(d, sources.get(d.file), opts)).join('\n\n');
}

/** "2 errors, 1 warning", or "no problems". */
export function summarize(list: readonly Diagnostic[]): string {
  const errors = list.filter((d) => d.severity === 'error').length;
  const warnings = list.length - errors;
  if (errors === 0 && warnings === 0) return 'no problems';
  const n = (k: number, w: string) => `${k} ${w}${k === 1 ? '' : 's'}`;
  return `${n(errors, 'error')}, ${n(warnings, 'warning')}`;
}
