/**
 * Rename of a step id or a variable across the flow: every declaration and every use the index holds (targets,
 * `vars.x` in templates and conditions, set/save/loop names, `vars:` keys). A new name is checked as the checker
 * checks names (a step id, a variable name); one already declared would merge two names and is refused.
 */
import { parse } from 'yaml';
import {
  ResponseError,
  type PrepareRenameParams,
  type Range,
  type RenameParams,
  type TextEdit,
  type WorkspaceEdit,
} from 'vscode-languageserver';
import { ID_RE, checkVarName, isObjectMember, newCtx } from '../flow/check-context.js';
import { DEFAULT_VOICE } from '../flow/model.js';
import type { LspContext } from './server.js';
import type { Occurrence, SymbolKind } from './symbols.js';
import { uriToPath } from './uris.js';

const RENAMABLE: readonly SymbolKind[] = ['step', 'var'];
/** The protocol's code for a request the server refuses (RequestFailed). */
const REFUSED = -32803;

async function target(ctx: LspContext, uri: string, position: PrepareRenameParams['position']) {
  const path = uriToPath(uri);
  const index = path ? await ctx.index(path) : undefined;
  const at = index?.at(position);
  return index && at && RENAMABLE.includes(at.kind) ? { index, at } : undefined;
}

/** The range of the name under the cursor, when it can be renamed; null otherwise. */
export async function prepareRename(ctx: LspContext, p: PrepareRenameParams): Promise<Range | null> {
  return (await target(ctx, p.textDocument.uri, p.position))?.at.range ?? null;
}

/** Why `name` cannot be a `kind`'s new name (undefined: it can). */
export function badName(kind: SymbolKind, name: string): string | undefined {
  if (kind === 'step') {
    if (!ID_RE.test(name)) return `'${name}' is not a valid step id: letters, digits, - and _, 64 at most`;
    if (isObjectMember(name)) return `'${name}' is a reserved name (every JavaScript object has a member by it)`;
    return undefined;
  }
  const ctx = newCtx('rename', DEFAULT_VOICE);
  checkVarName(ctx, name, { line: 1, col: 1 }, 'the new name');
  return ctx.diags[0]?.message;
}

/** `name` as it must be written where a plain scalar was: quoted when YAML would read it as something else. */
function written(name: string, o: Occurrence, text: string | undefined): string {
  const lines = text?.split('\n');
  const before = lines?.[o.range.start.line]?.[o.range.start.character - 1];
  if (before === '"' || before === "'") return name; // inside quotes already (nodeRange)
  let plain: unknown;
  try {
    plain = parse(`k: ${name}`) as unknown;
  } catch {
    plain = undefined;
  }
  return (plain as { k?: unknown } | undefined)?.k === name ? name : JSON.stringify(name);
}

export async function rename(ctx: LspContext, p: RenameParams): Promise<WorkspaceEdit | null> {
  const t = await target(ctx, p.textDocument.uri, p.position);
  if (!t) return null;
  const { index, at } = t;
  if (p.newName === at.name) return { changes: {} };
  const bad = badName(at.kind, p.newName);
  if (bad) throw new ResponseError(REFUSED, bad);
  if (index.names(at.kind).includes(p.newName))
    throw new ResponseError(
      REFUSED,
      `the flow already has a ${at.kind === 'step' ? 'step' : 'variable'} '${p.newName}'`,
    );
  const text = ctx.text(uriToPath(p.textDocument.uri)!);
  const edits: TextEdit[] = index
    .of(at.kind, at.name)
    .map((o) => ({ range: o.range, newText: written(p.newName, o, text) }));
  return { changes: { [p.textDocument.uri]: edits } };
}
