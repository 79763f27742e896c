/**
 * Positions between callscript and the editor: callscript's are 1-based lines and columns counted in UTF-16 code
 * units (the JavaScript string's), the protocol's are 0-based in the same units. A diagnostic or node without an end
 * covers the word it starts.
 */
import { DiagnosticSeverity, type Diagnostic as LspDiagnostic, type Position, type Range } from 'vscode-languageserver';
import type { Diagnostic } from '../errors/diagnostic.js';
import type { Loc, YNode } from '../flow/yaml.js';

export const toPosition = (l: Loc): Position => ({ line: Math.max(0, l.line - 1), character: Math.max(0, l.col - 1) });

export const toLoc = (p: Position): Loc => ({ line: p.line + 1, col: p.character + 1 });

/** Whether `p` is inside `r` (its end included: the cursor just after a word is on it). */
export function contains(r: Range, p: Position): boolean {
  const after = (a: Position, b: Position) => a.line > b.line || (a.line === b.line && a.character >= b.character);
  return after(p, r.start) && after(r.end, p);
}

/**
 * The range of a node; for a quoted scalar on one line, its text inside the quotes (what a rename replaces and a
 * reference underlines).
 */
export function nodeRange(n: YNode): Range {
  const start = toPosition(n.pos);
  const end = toPosition(n.end);
  if (n.kind === 'scalar' && n.quoted && n.raw && /^["']/.test(n.raw) && n.pos.line === n.end.line)
    return { start: { ...start, character: start.character + 1 }, end: { ...end, character: end.character - 1 } };
  return { start, end };
}

/**
 * The word at `text`'s line and column: from the diagnostic's start to the first space, quote or bracket, without
 * the colon that ends a key (`trie:` of `with: { trie: 1 }` is the key `trie`).
 */
function wordEnd(text: string | undefined, line: number, col: number): number {
  const l = text?.split('\n', line)[line - 1];
  if (l === undefined) return col;
  const word = /^[^\s"',{}[\]]*/.exec(l.slice(col - 1))?.[0] ?? '';
  return col + Math.max(1, word.length > 1 && word.endsWith(':') ? word.length - 1 : word.length);
}

/** A checker's diagnostic as the editor shows it: its code, its message and hint, its range. */
export function toLspDiagnostic(d: Diagnostic, text?: string): LspDiagnostic {
  const line = Math.max(1, d.line);
  const col = Math.max(1, d.column);
  const endLine = d.endLine ?? line;
  const endCol = d.endColumn ?? (d.line === 0 ? 1 : wordEnd(text, line, col));
  return {
    range: { start: toPosition({ line, col }), end: toPosition({ line: endLine, col: endCol }) },
    severity: d.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: 'callscript',
    message: d.hint ? `${d.message}\n${d.hint}` : d.message,
    data: { hint: d.hint ?? null },
  };
}
