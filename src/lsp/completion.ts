/**
 * Completion while a flow is typed: the context comes from the text around the cursor (cursor.ts: the keys above it,
 * the flow maps open on its line), the words from the checker's tables (vocabulary.ts) and the names from the file's
 * last index that had a tree, with those of the live text (live-names.ts) and of the directory's modules. At most
 * MAX_ITEMS items are answered (those matching the word typed first; the list is then marked incomplete).
 */
import {
  CompletionItemKind,
  type CompletionItem,
  type CompletionList,
  type CompletionParams,
} from 'vscode-languageserver';
import { dirname } from 'node:path';
import { sourceLines, type SourceLines } from '../flow/source-lines.js';
import { cursorAt, type Cursor } from './cursor.js';
import { expressionWords } from './expression-words.js';
import { liveNames } from './live-names.js';
import { modulesNear, type ModuleInfo } from './modules.js';
import { fileKind, looksLikeFlow } from './project.js';
import type { LspContext } from './server.js';
import { structureWords, type Found, type Sources } from './suggest.js';
import { uriToPath } from './uris.js';
import type { WordKind } from './vocabulary.js';

/** The most items one answer holds: a flow of 10,000 steps offers the steps matching what is typed, 1,000 at most. */
export const MAX_ITEMS = 1000;

/** The characters after which an editor asks for completion without being told to. */
export const TRIGGER_CHARACTERS = ['.', ' ', '(', '"', "'"];

export async function completion(ctx: LspContext, p: CompletionParams): Promise<CompletionList | null> {
  const path = uriToPath(p.textDocument.uri);
  const text = ctx.documents.get(p.textDocument.uri)?.getText() ?? (path ? ctx.text(path) : undefined);
  if (text === undefined || (path && fileKind(path) !== 'flow')) return null;
  // outside a flows directory, a YAML file that does not look like a flow (a docker-compose.yml) is none
  if (path && !looksLikeFlow(text) && !(await ctx.analyses.isFlowsDir(dirname(path)))) return null;
  const src = sourceLines(text);
  const cur = cursorAt(src, p.position.line, p.position.character);
  if (!cur) return null;
  const index = path ? await ctx.index(path, { lastGood: true }) : undefined;
  let modules: Promise<ModuleInfo[]> | undefined;
  const sources: Sources = {
    src,
    live: liveNames(src),
    index,
    modules: () => (modules ??= path ? modulesNear(ctx, path) : Promise.resolve([])),
  };
  const found = expressionWords(cur, sources) ?? (await structureWords(cur, sources));
  if (!found) return null;
  return toList(found, cur, p.position.line, src);
}

const KINDS: Record<WordKind, CompletionItemKind> = {
  action: CompletionItemKind.Function,
  param: CompletionItemKind.Property,
  key: CompletionItemKind.Property,
  result: CompletionItemKind.EnumMember,
  step: CompletionItemKind.Reference,
  var: CompletionItemKind.Variable,
  name: CompletionItemKind.Constant,
  value: CompletionItemKind.Value,
};

/** The items: each replaces the word typed (a key gets its `: `); MAX_ITEMS at most, those matching first. */
function toList(found: Found, cur: Cursor, line: number, src: SourceLines): CompletionList {
  const start = found.start ?? cur.start;
  const typed = cur.prefix.slice(start).toLowerCase();
  let words = found.words;
  const incomplete = words.length > MAX_ITEMS;
  if (incomplete) {
    const matching = words.filter((w) => w.label.toLowerCase().startsWith(typed));
    words = (matching.length > 0 ? matching : words).slice(0, MAX_ITEMS);
  }
  const end = cur.prefix.length;
  const after = src.text.slice(src.starts[line]! + end, src.ends[line]);
  const isKey = cur.slot.kind === 'key' && found.start === undefined;
  const items = words.map((w, i): CompletionItem => {
    const quote = !cur.quoted && (w.kind === 'result' || w.kind === 'step') && /^[0-9*#]/.test(w.label);
    const text = quote ? JSON.stringify(w.label) : w.label;
    const newText = isKey && !/^\s*:/.test(after) ? `${text}: ` : text;
    const item: CompletionItem = {
      label: w.label,
      kind: KINDS[w.kind],
      sortText: String(i).padStart(5, '0'),
      textEdit: { range: { start: { line, character: start }, end: { line, character: end } }, newText },
    };
    if (w.detail) item.detail = w.detail;
    if (w.doc) item.documentation = { kind: 'markdown', value: w.doc };
    return item;
  });
  return { isIncomplete: incomplete, items };
}
