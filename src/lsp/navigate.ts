/** Go to definition and find references: for steps, variables, prompts, calendars, environment keys and secrets. */
import type { DefinitionParams, Location, ReferenceParams } from 'vscode-languageserver';
import type { LspContext } from './server.js';
import { uriToPath } from './uris.js';

/** Where the name under the cursor is declared (a step's key, a variable's declarations). */
export async function definition(ctx: LspContext, p: DefinitionParams): Promise<Location[] | null> {
  const path = uriToPath(p.textDocument.uri);
  const index = path ? await ctx.index(path) : undefined;
  const at = index?.at(p.position);
  if (!index || !at) return null;
  const defs = index.of(at.kind, at.name).filter((o) => o.def);
  return defs.length === 0 ? null : defs.map((o) => ({ uri: p.textDocument.uri, range: o.range }));
}

/** Every place the name under the cursor is declared or used (declarations only when asked for). */
export async function references(ctx: LspContext, p: ReferenceParams): Promise<Location[] | null> {
  const path = uriToPath(p.textDocument.uri);
  const index = path ? await ctx.index(path) : undefined;
  const at = index?.at(p.position);
  if (!index || !at) return null;
  return index
    .of(at.kind, at.name)
    .filter((o) => p.context.includeDeclaration || !o.def)
    .map((o) => ({ uri: p.textDocument.uri, range: o.range }));
}
