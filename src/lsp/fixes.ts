/**
 * Quick fixes: a diagnostic whose hint says `did you mean 'x'?` (the checker's didYouMean, the link stage's, the
 * config checks') offers to change the misspelt word to x. The word is the one the diagnostic's message names,
 * inside the diagnostic's range: the whole range (`next: mnu`, a key), the text inside its quotes, or the name
 * alone in a longer text (`vars.nmae` in a template, `open("ofice")` in a condition). A hint that moves a key
 * elsewhere (a command's param written beside it) offers nothing, nor does a range that holds no word the message
 * names.
 */
import {
  CodeActionKind,
  type CodeAction,
  type CodeActionParams,
  type Diagnostic,
  type Range,
} from 'vscode-languageserver';
import { written } from './rename.js';
import type { LspContext } from './server.js';

const DID_YOU_MEAN = /did you mean '([^'\n]+)'(?: \([^)\n]*\))?\?/;
/** A hint whose fix is a move, not a change of word (`'x' is a parameter of play: indent it under play:`). */
const MOVE = /indent it under/;
/** Words a message names: quoted, or read as `vars.x`, `call.x`, `env.x`, `secrets.x`. */
const NAMED = /'([^'\n]+)'|"([^"\n]+)"|\b(?:vars|call|env|secrets)\.([A-Za-z_][A-Za-z0-9_]*)/g;

/** The words of a message compared with the range's text, and the diagnostics of one request looked at (a client
 * sends back what the server published, but bounds do not rest on that). */
const MAX_WORDS = 16;
const MAX_DIAGNOSTICS = 500;

/** Where `word` is in `text` as a whole word (not inside a longer name). */
function wordAt(text: string, word: string): number[] {
  const out: number[] = [];
  const edge = /[A-Za-z0-9_-]/;
  for (let i = text.indexOf(word); i >= 0; i = text.indexOf(word, i + 1))
    if (!edge.test(text[i - 1] ?? '') && !edge.test(text[i + word.length] ?? '')) out.push(i);
  return out;
}

/** The edit a diagnostic's did-you-mean makes in a document (`lineAt`: its lines), if it has one. */
export function quickFix(
  d: Diagnostic,
  lineAt: (line: number) => string | undefined,
): { range: Range; newText: string; meant: string } | undefined {
  const data = d.data as { hint?: string | null } | undefined;
  const lines = typeof d.message === 'string' ? d.message.split('\n') : [];
  const hint = data?.hint ?? lines.slice(1).join('\n');
  const meant = DID_YOU_MEAN.exec(hint)?.[1];
  if (meant === undefined || MOVE.test(hint) || d.range.start.line !== d.range.end.line) return undefined;
  const line = lineAt(d.range.start.line);
  if (line === undefined) return undefined;
  let from = d.range.start.character;
  let to = Math.min(d.range.end.character, line.length);
  const q = line[from];
  const quoted = to - from >= 2 && (q === '"' || q === "'") && line[to - 1] === q;
  if (quoted) {
    from++;
    to--;
  }
  const inner = line.slice(from, to);
  const message = lines[0] ?? '';
  const words: string[] = [];
  for (const m of message.matchAll(NAMED)) {
    const w = m[1] ?? m[2] ?? m[3]!;
    if (w !== meant) words.push(w);
    if (words.length === MAX_WORDS) break;
  }
  let at: { start: number; word: string } | undefined;
  if (words.includes(inner)) at = { start: from, word: inner };
  else
    for (const w of words) {
      const hits = wordAt(inner, w);
      if (hits.length === 1) {
        at = { start: from + hits[0]!, word: w };
        break;
      }
    }
  if (!at || at.word === '') return undefined;
  const whole = at.start === from && at.word === inner && !quoted;
  const range = {
    start: { line: d.range.start.line, character: at.start },
    end: { line: d.range.start.line, character: at.start + at.word.length },
  };
  return { range, newText: whole ? written(meant, line[at.start - 1]) : meant, meant };
}

/** The quick fixes of the diagnostics the editor sends (those of callscript). */
export function codeActions(ctx: LspContext, p: CodeActionParams): CodeAction[] {
  if (p.context.only && !p.context.only.some((k) => CodeActionKind.QuickFix.startsWith(k))) return [];
  const doc = ctx.documents.get(p.textDocument.uri);
  if (!doc) return [];
  const lineAt = (line: number) =>
    line < 0 || line >= doc.lineCount
      ? undefined
      : doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } }).replace(/\r?\n$/, '');
  const out: CodeAction[] = [];
  for (const d of p.context.diagnostics.slice(0, MAX_DIAGNOSTICS)) {
    if (d.source !== 'callscript') continue;
    const fix = quickFix(d, lineAt);
    if (!fix) continue;
    out.push({
      title: `Change to '${fix.meant}'`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [d],
      isPreferred: true,
      edit: { changes: { [p.textDocument.uri]: [{ range: fix.range, newText: fix.newText }] } },
    });
  }
  return out;
}
