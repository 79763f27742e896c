/**
 * Go to definition and find references: for steps, variables, prompts, calendars, environment keys and secrets of a
 * flow, modules and their params across the flows of a directory, and the steps and variables scenario files name.
 */
import type { DefinitionParams, Location, ReferenceParams } from 'vscode-languageserver';
import type { LspContext } from './server.js';
import { uriToPath } from './uris.js';
import { definitions, places, symbolAt, uriOf } from './workspace.js';

/** Where the name under the cursor is declared (a step's key, a variable's declarations, a module's `module:`). */
export async function definition(ctx: LspContext, p: DefinitionParams): Promise<Location[] | null> {
  const path = uriToPath(p.textDocument.uri);
  const at = path ? await symbolAt(ctx, path, p.position) : undefined;
  if (!at) return null;
  const defs = await definitions(ctx, at.sym);
  return defs.length === 0 ? null : defs.map((d) => ({ uri: uriOf(ctx, d.path), range: d.range }));
}

/** Every place the name under the cursor is declared or used (declarations only when asked for). */
export async function references(ctx: LspContext, p: ReferenceParams): Promise<Location[] | null> {
  const path = uriToPath(p.textDocument.uri);
  const at = path ? await symbolAt(ctx, path, p.position) : undefined;
  if (!at) return null;
  return (await places(ctx, at.sym, true)).places
    .filter((o) => p.context.includeDeclaration || !o.def)
    .map((o) => ({ uri: uriOf(ctx, o.path), range: o.range }));
}
