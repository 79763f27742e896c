/**
 * Names across files, for definition, references and rename: a flow's own names (steps, variables, prompts,
 * calendars, environment keys, secrets) with the uses its scenario files write (steps and variables); a module by
 * its name among the flows of its directory (its `module:`, the subflow steps that enter it); a module's params
 * (its `module.params` keys, its `vars.x` reads, the `with:` keys of the flows that enter it and of its scenarios).
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Position, Range } from 'vscode-languageserver';
import { listFlowFiles } from '../registry/load.js';
import { contains } from './positions.js';
import { fileKind } from './project.js';
import { scenarioNames, type ScenarioNames } from './scenario-names.js';
import { flowDirsOf, readScenarios, scenarioFiles, scenarioText } from './scenario-files.js';
import type { LspContext } from './server.js';
import type { FlowIndex, SymbolKind } from './symbols.js';
import { pathToUri, uriToPath } from './uris.js';

/** A name across files: one flow's own (by its file), or a module (by its name, among a directory's flows). */
export type Sym =
  | { kind: Exclude<SymbolKind, 'module' | 'param'>; file: string; name: string; param?: boolean }
  | { kind: 'module'; dir: string; name: string };

/** Where a name is written. */
export interface Place {
  path: string;
  range: Range;
  def: boolean;
  /** The keys of the map it is a key of (its own too): a rename must not take another. */
  siblings?: readonly string[];
  /** Part of a longer scalar (`module:step`): a new name is written as it is. */
  inside?: boolean;
}

export interface Flow {
  file: string;
  /** The flow's name (`name:`, else its file's), by which scenarios and subflow steps name it. */
  name: string | undefined;
  index: FlowIndex;
}

/** The flow files of a directory as checked (the directory checked first when it never was, or a change is pending). */
async function filesIn(ctx: LspContext, dir: string): Promise<readonly string[]> {
  const files = ctx.analyses.files(dir);
  const open = ctx.documents
    .all()
    .map((d) => uriToPath(d.uri))
    .filter((p): p is string => p !== undefined && dirname(p) === dir && fileKind(p) === 'flow');
  const first = files?.[0] ?? open[0] ?? (await listFlowFiles(dir).catch(() => [] as string[]))[0];
  if (first === undefined) return [];
  await ctx.index(first);
  return ctx.analyses.files(dir) ?? [];
}

/** A flow file with its name and index. */
async function flowOf(ctx: LspContext, file: string): Promise<Flow | undefined> {
  const index = await ctx.index(file);
  return index && { file, name: ctx.analyses.result(file)?.name, index };
}

/** The flows of a directory with their indexes. */
async function flowsIn(ctx: LspContext, dir: string): Promise<Flow[]> {
  const out: Flow[] = [];
  for (const file of await filesIn(ctx, dir)) {
    const flow = await flowOf(ctx, file);
    if (flow) out.push(flow);
  }
  return out;
}

/** The flow of a directory named `name`: the module by that name, else a flow by it (found without indexes). */
async function named(ctx: LspContext, dir: string, name: string): Promise<Flow | undefined> {
  const files = (await filesIn(ctx, dir)).filter((f) => ctx.analyses.result(f)?.name === name);
  const file = files.find((f) => ctx.analyses.result(f)?.module) ?? files[0];
  return file === undefined ? undefined : flowOf(ctx, file);
}

/** Whether a scenario's `flow:` (a name, or a path from the scenario's folder) names `flow`. */
function names(value: string, scenario: string, flow: Flow): boolean {
  return /\.ya?ml$/.test(value) ? resolve(dirname(scenario), value) === flow.file : value === flow.name;
}

/**
 * The flow a scenario file tests, in the directories whose scenarios scenarioDirs reads (a path elsewhere is not
 * followed: a scenario file does not make the server check the flows of any directory it names).
 */
async function scenarioFlow(ctx: LspContext, scenario: string, value: string): Promise<Flow | undefined> {
  const near = flowDirsOf(scenario);
  const dirs = /\.ya?ml$/.test(value)
    ? [dirname(resolve(dirname(scenario), value))].filter((d) => near.includes(d))
    : near;
  for (const dir of dirs) {
    if (/\.ya?ml$/.test(value)) {
      const file = resolve(dirname(scenario), value);
      if ((await filesIn(ctx, dir)).includes(file)) return flowOf(ctx, file);
    } else {
      const flow = await named(ctx, dir, value);
      if (flow) return flow;
    }
  }
  return undefined;
}

/** The name under the cursor of a flow or scenario file, as a name across files, and its range. */
export async function symbolAt(
  ctx: LspContext,
  path: string,
  p: Position,
): Promise<{ sym: Sym; range: Range } | undefined> {
  if (fileKind(path) === 'scenario') return scenarioSymbolAt(ctx, path, p);
  const index = await ctx.index(path);
  const o = index?.at(p);
  if (!o) return undefined;
  const dir = dirname(path);
  if (o.kind === 'module') return { sym: { kind: 'module', dir, name: o.name }, range: o.range };
  if (o.kind === 'param') {
    const mod = o.module === undefined ? undefined : await named(ctx, dir, o.module);
    return mod && { sym: { kind: 'var', file: mod.file, name: o.name, param: true }, range: o.range };
  }
  return { sym: { kind: o.kind, file: path, name: o.name }, range: o.range };
}

async function scenarioSymbolAt(ctx: LspContext, path: string, p: Position) {
  const text = await scenarioText(path, ctx.text);
  const sn = text === undefined ? undefined : scenarioNames(text, path);
  const u = sn?.uses.find((x) => contains(x.range, p));
  const flow = u && sn?.flow ? await scenarioFlow(ctx, path, sn.flow.value) : undefined;
  if (!u || !flow) return undefined;
  const file = u.module === undefined ? flow.file : (await named(ctx, dirname(flow.file), u.module))?.file;
  if (file === undefined) return undefined;
  const sym: Sym = { kind: u.kind, file, name: u.name };
  if (u.param) sym.param = true;
  return { sym, range: u.range };
}

/** Where `sym` is declared: a module at its `module:` (or its file's top), a param at its `module.params` key. */
export async function definitions(ctx: LspContext, sym: Sym): Promise<Place[]> {
  if (sym.kind === 'module') {
    const flow = await named(ctx, sym.dir, sym.name);
    const defs = flow?.index.of('module', sym.name).filter((o) => o.def) ?? [];
    const top = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
    if (flow && defs.length === 0) return [{ path: flow.file, range: top, def: true }];
    return defs.map((o) => ({ path: flow!.file, range: o.range, def: true }));
  }
  const index = await ctx.index(sym.file);
  const param = sym.kind === 'var' && sym.param ? index?.params.get(sym.name) : undefined;
  if (param) return [{ path: sym.file, range: param, def: true }];
  return (index?.of(sym.kind, sym.name) ?? []).filter((o) => o.def).map((o) => ({ ...o, path: sym.file }));
}

export interface Found {
  places: Place[];
  /** There were more scenario files (or text) than a request reads. */
  truncated: boolean;
  /** The texts of the scenario files read (those holding the name). */
  texts?: ReadonlyMap<string, string>;
}

/** Every place `sym` is written (declarations first), with the scenario files' uses when `scenarios`. */
export async function places(ctx: LspContext, sym: Sym, scenarios: boolean): Promise<Found> {
  if (sym.kind === 'module') {
    const out: Place[] = [];
    for (const f of await flowsIn(ctx, sym.dir))
      for (const o of f.index.of('module', sym.name)) out.push({ path: f.file, range: o.range, def: o.def });
    return { places: [...out.filter((x) => x.def), ...out.filter((x) => !x.def)], truncated: false };
  }
  const flow = await flowOf(ctx, sym.file);
  if (!flow) return { places: [], truncated: false };
  const out: Place[] = flow.index.of(sym.kind, sym.name).map((o) => ({ path: sym.file, range: o.range, def: o.def }));
  const mod = flow.index.module;
  if (sym.kind === 'var' && mod !== undefined && flow.index.params.has(sym.name))
    for (const f of await flowsIn(ctx, dirname(sym.file)))
      for (const o of f.index.occurrences)
        if (o.kind === 'param' && o.module === mod && o.name === sym.name)
          out.push({ path: f.file, range: o.range, def: false, siblings: o.siblings ?? [] });
  if (!scenarios || (sym.kind !== 'step' && sym.kind !== 'var')) return { places: out, truncated: false };
  const more = await scenarioPlaces(ctx, flow, sym.kind, sym.name);
  return { ...more, places: [...out, ...more.places] };
}

/**
 * The uses of a step or a variable of `flow` in scenario files: those testing it, and (a step of a module) any that
 * names it by its namespaced id. Files are read only when their text holds the name.
 */
async function scenarioPlaces(ctx: LspContext, flow: Flow, kind: 'step' | 'var', name: string) {
  const open = ctx.documents.all().map((d) => uriToPath(d.uri) ?? '');
  const list = await scenarioFiles(dirname(flow.file), open);
  const out: Place[] = [];
  const { texts, truncated } = await readScenarios(list.files, ctx.text, (text) => text.includes(name));
  for (const [path, text] of texts) {
    const sn: ScenarioNames | undefined = scenarioNames(text, path);
    const tests = sn?.flow !== undefined && names(sn.flow.value, path, flow);
    for (const u of sn?.uses ?? []) {
      if (u.kind !== kind || u.name !== name) continue;
      const mine =
        u.module !== undefined
          ? u.module === flow.index.module
          : tests && (!u.param || (kind === 'var' && flow.index.params.has(name)));
      if (!mine) continue;
      const place: Place = { path, range: u.range, def: false };
      if (u.siblings) place.siblings = u.siblings;
      if (u.inside) place.inside = true;
      out.push(place);
    }
  }
  return { places: out, truncated: list.truncated || truncated, texts };
}

/** The URI an editor knows a file by: the open document's, else the file's. */
export function uriOf(ctx: LspContext, path: string): string {
  return ctx.documents.all().find((d) => uriToPath(d.uri) === path)?.uri ?? pathToUri(path);
}

/** A file's text: the open document's, else the disk's. */
export async function textOf(ctx: LspContext, path: string): Promise<string | undefined> {
  return ctx.text(path) ?? (await readFile(path, 'utf8').catch(() => undefined));
}
