/**
 * Hover: the doc of an error code on a diagnostic's range or named in a comment (from the error catalogue); a step's
 * summary on its id or a reference to it; a variable's (or another name's) declarations and uses, by line; a
 * command's doc and its params' bounds on its key, a param's on the param's key; the doc line of any other key.
 */
import type { Hover, HoverParams, Position, Range } from 'vscode-languageserver';
import { CATALOGUE } from '../errors/catalogue.js';
import { isAction } from '../flow/actions.js';
import { ACTIONS } from '../flow/check-steps.js';
import { clip, entry, type YEntry, type YNode } from '../flow/yaml.js';
import { contains, nodeRange, toLspDiagnostic } from './positions.js';
import type { LspContext } from './server.js';
import { stepSummary } from './summary.js';
import type { FlowIndex, Occurrence } from './symbols.js';
import { locate } from './tree.js';
import { uriToPath } from './uris.js';
import { actionWord, paramWord, paramWords, stepKeyWord, topWords } from './vocabulary.js';

/** How many lines of uses a name's hover lists. */
const MAX_LINES = 20;
/** How much of a line is read for an error code named in a comment. */
const MAX_COMMENT_LINE = 1000;

export async function hover(ctx: LspContext, p: HoverParams): Promise<Hover | null> {
  const path = uriToPath(p.textDocument.uri);
  if (!path) return null;
  const index = await ctx.index(path);
  const text = ctx.documents.get(p.textDocument.uri)?.getText() ?? ctx.text(path);
  const parts: string[] = [];
  let range: Range | undefined;
  const line = p.position.line + 1;
  for (const d of ctx.diagnostics(path)) {
    // only those on the cursor's lines are placed (placing one reads its line in the text)
    if (Math.max(1, d.line) > line || (d.endLine ?? Math.max(1, d.line)) < line) continue;
    const lsp = toLspDiagnostic(d, text);
    if (!contains(lsp.range, p.position)) continue;
    parts.push(codeDoc(d.code, d.severity));
    range ??= lsp.range;
    if (parts.length === 3) break;
  }
  const named = parts.length === 0 ? commentCode(lineOf(ctx, p, text), p.position.character) : undefined;
  if (named) {
    parts.push(codeDoc(named.code));
    range = {
      start: { line: p.position.line, character: named.from },
      end: { line: p.position.line, character: named.to },
    };
  }
  const about = index ? explain(index, p.position, text) : undefined;
  if (about) {
    parts.push(about.text);
    range = about.range;
  }
  return parts.length === 0
    ? null
    : { contents: { kind: 'markdown', value: parts.join('\n\n---\n\n') }, range: range! };
}

/** An error code's title and hint from the catalogue (docs/errors.md), with the severity given or the code's own. */
function codeDoc(code: string, severity?: string): string {
  const info = CATALOGUE.find((c) => c.code === code);
  const head = `**${code}** (${severity ?? info?.severity ?? 'unknown code'})`;
  return info ? `${head}: ${info.title}\n\n${info.hint}` : head;
}

/** The text of the cursor's line. */
function lineOf(ctx: LspContext, p: HoverParams, text: string | undefined): string {
  const { line } = p.position;
  const doc = ctx.documents.get(p.textDocument.uri);
  if (doc) return doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } });
  return text?.split('\n', line + 1)[line] ?? '';
}

/**
 * The error code under the cursor in a comment (`# UNREACHABLE_STEP: kept for the summer menu`), when the catalogue
 * has it: its columns. Elsewhere a word such as NOT_FOUND or DEADLINE is the flow's text, not a code.
 */
function commentCode(line: string, at: number): { code: string; from: number; to: number } | undefined {
  for (const m of line.slice(0, MAX_COMMENT_LINE).matchAll(/\b[A-Z][A-Z0-9_]*[A-Z0-9]\b/g)) {
    const from = m.index;
    const to = from + m[0].length;
    if (at < from || at > to) continue;
    if (!/(^|\s)#/.test(line.slice(0, from)) || !CATALOGUE.some((c) => c.code === m[0])) return undefined;
    return { code: m[0], from, to };
  }
  return undefined;
}

/** What the name or key under the cursor is. */
function explain(index: FlowIndex, p: Position, text: string | undefined): { text: string; range: Range } | undefined {
  const root = index.symbols.root;
  const at = index.at(p);
  if (at?.kind === 'step') {
    const steps = root.kind === 'map' ? entry(root, 'steps')?.value : undefined;
    const step = steps?.kind === 'map' ? entry(steps, at.name) : undefined;
    if (!step) return { text: `**step \`${at.name}\`**: no such step`, range: at.range };
    return { text: stepSummary(at.name, step.value, step.keyNode.pos.line), range: at.range };
  }
  if (at) return { text: nameHover(index, at, text), range: at.range };
  const { path, onKey } = locate(root, p);
  const last = path.at(-1);
  if (!last) return undefined;
  if (!onKey) {
    // a calendar step's calendar, a `{ prompt: name }` media: names the index holds the declarations of
    const v = last.value;
    const kind =
      last.key === 'calendar' && path.length === 3 ? 'calendar' : last.key === 'prompt' ? 'prompt' : undefined;
    if (!kind || v.kind !== 'scalar' || typeof v.value !== 'string' || index.of(kind, v.value).length === 0)
      return undefined;
    const named: Occurrence = { kind, name: v.value, range: nodeRange(v), def: false };
    return { text: nameHover(index, named, text), range: named.range };
  }
  const doc = keyDoc(path.map((e) => e.key));
  return doc ? { text: doc, range: nodeRange(last.keyNode) } : undefined;
}

const TITLES: Record<Occurrence['kind'], (n: string) => string> = {
  step: (n) => `step \`${n}\``,
  var: (n) => `vars.${n}`,
  env: (n) => `env.${n}`,
  secret: (n) => `secrets.${n}`,
  prompt: (n) => `prompt \`${n}\``,
  calendar: (n) => `calendar \`${n}\``,
  module: (n) => `module \`${n}\``,
  param: (n) => `param \`${n}\``,
};

/** A name's declarations (the line of each, and where it is: vars:, a step's save:...) and the lines that read it. */
function nameHover(index: FlowIndex, at: Occurrence, text: string | undefined): string {
  const all = index.of(at.kind, at.name);
  const lines = text?.split('\n', Math.max(0, ...all.map((o) => o.range.start.line)) + 1) ?? [];
  const out = [`**${TITLES[at.kind](at.name)}**`];
  const defs = all.filter((o) => o.def);
  if (defs.length === 0 && (at.kind === 'module' || at.kind === 'param'))
    out.push('', `declared in the module's file: go to definition opens it`);
  else if (defs.length === 0) out.push('', 'declared nowhere in this flow');
  else {
    out.push('', at.kind === 'var' ? 'set at:' : 'declared at:');
    for (const d of defs.slice(0, MAX_LINES)) {
      const where = whereDeclared(index.symbols.root, d.range.start);
      const source = lines[d.range.start.line]?.trim();
      out.push(
        `- line ${d.range.start.line + 1}${where ? ` (${where})` : ''}${source ? `: \`${clip(source, 60)}\`` : ''}`,
      );
    }
  }
  const uses = [...new Set(all.filter((o) => !o.def).map((o) => o.range.start.line + 1))];
  if (uses.length > 0) {
    const shown = uses.slice(0, MAX_LINES).join(', ');
    out.push('', `read at line${uses.length > 1 ? 's' : ''} ${shown}${uses.length > MAX_LINES ? ', …' : ''}`);
  }
  return out.join('\n');
}

/** Where a declaration is: `vars:`, `module.params`, `save: in step x`... from the tree's keys above it. */
function whereDeclared(root: YNode, p: Position): string | undefined {
  const keys = locate(root, p).path.map((e: YEntry) => e.key);
  if (keys[0] === 'steps' && keys.length >= 3) return `${keys[2]}: in step \`${keys[1]}\``;
  if (keys[0] === 'environments' && keys.length >= 2) return `environment ${keys[1]}`;
  return keys.length > 0 ? `${keys.slice(0, -1).join('.') || keys[0]}:` : undefined;
}

/** The doc of a key of the language, by the keys above it: a command and its params, step keys, top-level keys. */
function keyDoc(keys: string[]): string | undefined {
  const [first] = keys;
  const key = keys.at(-1)!;
  if (first === 'handlers' && keys[1] === 'on' && keys.length === 3) return isAction(key) ? actionDoc(key) : undefined;
  if (first === 'steps' && keys.length === 3) {
    if (ACTIONS.includes(key)) return actionDoc(key);
    const doc = stepKeyWord(key).doc;
    return doc ? `**${key}**: ${doc}` : undefined;
  }
  if (first === 'steps' && keys.length === 4 && isAction(keys[2]!)) {
    const w = paramWord(keys[2], key);
    return w ? `**${keys[2]}.${key}**: ${w.detail}\n\n${w.doc ?? ''}`.trim() : undefined;
  }
  if (keys.length === 1) {
    const w = topWords().find((x) => x.label === key);
    return w?.doc ? `**${key}**: ${w.doc}` : undefined;
  }
  return undefined;
}

/** A command's (or effect's, or logic action's) doc, then its params with their bounds. */
function actionDoc(name: string): string {
  const w = actionWord(name);
  const head = `**${name}** (${w.detail}): ${w.doc ?? ''}`.trim();
  if (!isAction(name)) return head;
  const params = paramWords(name).map((p) => `- \`${p.label}\`: ${p.detail}`);
  return params.length > 0 ? `${head}\n\n${params.join('\n')}` : head;
}
