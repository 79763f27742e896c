/**
 * Rename of a step id or a variable across the flow and its scenario files: every declaration and every use the
 * index holds (targets, `vars.x` in templates and conditions, set/save/loop names, `vars:` keys), the scenario
 * files' `step:` values and `vars:`, `expect.vars` and `with:` keys, and for a module's param the `with:` keys of the
 * flows that enter it. A new name is checked as the checker checks names (a step id, a variable name); one the flow
 * already declares would merge two names, one a map already has as a key would write a key twice: both are refused.
 * So is a rename with more scenario files around than a request reads (it could not reach them all). Modules are not
 * renamed: a module's name is its `name:` or its file's, and the file would have to move with it.
 */
import { basename } from 'node:path';
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
import { MAX_SCENARIO_CHARS, MAX_SCENARIO_FILES } from './scenario-files.js';
import type { LspContext } from './server.js';
import type { SymbolKind } from './symbols.js';
import { uriToPath } from './uris.js';
import { places, symbolAt, textOf, uriOf, type Place } from './workspace.js';

const RENAMABLE: readonly SymbolKind[] = ['step', 'var'];
/** The protocol's code for a request the server refuses (RequestFailed). */
const REFUSED = -32803;

async function target(ctx: LspContext, uri: string, position: PrepareRenameParams['position']) {
  const path = uriToPath(uri);
  const at = path ? await symbolAt(ctx, path, position) : undefined;
  return at && at.sym.kind !== 'module' && RENAMABLE.includes(at.sym.kind) ? { ...at, sym: at.sym } : undefined;
}

/** The range of the name under the cursor, when it can be renamed; null otherwise. */
export async function prepareRename(ctx: LspContext, p: PrepareRenameParams): Promise<Range | null> {
  return (await target(ctx, p.textDocument.uri, p.position))?.range ?? null;
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

/**
 * `name` as it must be written where a plain scalar was (`before`: the character before it): quoted when YAML would
 * read it as something else; as it is inside quotes.
 */
export function written(name: string, before: string | undefined): string {
  if (before === '"' || before === "'") return name; // inside quotes already (nodeRange)
  let plain: unknown;
  try {
    plain = parse(`k: ${name}`) as unknown;
  } catch {
    plain = undefined;
  }
  return (plain as { k?: unknown } | undefined)?.k === name ? name : JSON.stringify(name);
}

/** The edits of one file: the new name at each place, quoted where it must be. */
async function fileEdits(ctx: LspContext, path: string, text: string | undefined, at: Place[], name: string) {
  const lines = (text ?? (await textOf(ctx, path)))?.split('\n');
  return at.map((o): TextEdit => {
    const before = lines?.[o.range.start.line]?.[o.range.start.character - 1];
    return { range: o.range, newText: o.inside ? name : written(name, before) };
  });
}

export async function rename(ctx: LspContext, p: RenameParams): Promise<WorkspaceEdit | null> {
  const t = await target(ctx, p.textDocument.uri, p.position);
  if (!t) return null;
  const { sym } = t;
  if (p.newName === sym.name) return { changes: {} };
  const refuse = (why: string) => new ResponseError(REFUSED, why);
  const bad = badName(sym.kind, p.newName);
  if (bad) throw refuse(bad);
  const index = await ctx.index(sym.file);
  if (index?.names(sym.kind).includes(p.newName))
    throw refuse(`the flow already has a ${sym.kind === 'step' ? 'step' : 'variable'} '${p.newName}'`);
  const found = await places(ctx, sym, true);
  if (found.truncated)
    throw refuse(
      `more than ${MAX_SCENARIO_FILES.toLocaleString('en-US')} scenario files (or ${MAX_SCENARIO_CHARS / 2 ** 20} ` +
        'MiB of them) may test this flow: a rename could not reach them all',
    );
  const clash = found.places.find((o) => o.siblings?.includes(p.newName));
  if (clash)
    throw refuse(
      `${basename(clash.path)} already has '${p.newName}' beside '${sym.name}' (line ${clash.range.start.line + 1})`,
    );
  const byPath = new Map<string, Place[]>();
  for (const o of found.places) {
    const list = byPath.get(o.path);
    if (list) list.push(o);
    else byPath.set(o.path, [o]);
  }
  const changes: Record<string, TextEdit[]> = {};
  for (const [path, at] of byPath)
    changes[uriOf(ctx, path)] = await fileEdits(ctx, path, found.texts?.get(path), at, p.newName);
  return { changes };
}
