/**
 * The modules a flow may enter: the flow files of its directory that declare `module:`, as their last check saw them
 * (name, params, results, returns read from the checked tree, errors or not).
 */
import { dirname } from 'node:path';
import { entry, type YNode } from '../flow/yaml.js';
import { listFlowFiles } from '../registry/load.js';
import { fileKind } from './project.js';
import type { LspContext } from './server.js';
import { uriToPath } from './uris.js';

export interface ModuleParam {
  name: string;
  required: boolean;
  /** The default as written. */
  value?: string;
}

export interface ModuleInfo {
  name: string;
  file: string;
  params: ModuleParam[];
  results: string[];
  returns: string[];
}

const strings = (n: YNode | undefined): string[] =>
  n?.kind === 'seq'
    ? n.items.flatMap((i) => (i.kind === 'scalar' && typeof i.value === 'string' ? [i.value] : []))
    : [];

/** A flow's `module:` declaration, from its tree; undefined when it has none. */
export function moduleOf(root: YNode | undefined): Omit<ModuleInfo, 'name' | 'file'> | undefined {
  const mod = root?.kind === 'map' ? entry(root, 'module')?.value : undefined;
  if (mod?.kind !== 'map') return undefined;
  const params = entry(mod, 'params')?.value;
  return {
    params:
      params?.kind === 'map'
        ? params.entries.map((e) => {
            const v = e.value;
            const required = v.kind === 'scalar' && v.value === 'required' && !v.quoted;
            return {
              name: e.key,
              required,
              ...(!required && v.kind === 'scalar' ? { value: v.source } : {}),
            };
          })
        : [],
    results: strings(entry(mod, 'results')?.value),
    returns: strings(entry(mod, 'returns')?.value),
  };
}

/** The modules of the directory of `path` (the file itself left out), as last checked. */
export async function modulesNear(ctx: LspContext, path: string): Promise<ModuleInfo[]> {
  const dir = dirname(path);
  const files = new Set(await listFlowFiles(dir).catch(() => [] as string[]));
  for (const d of ctx.documents.all()) {
    const p = uriToPath(d.uri);
    if (p && dirname(p) === dir && fileKind(p) === 'flow') files.add(p);
  }
  const out: ModuleInfo[] = [];
  for (const file of [...files].sort()) {
    if (file === path) continue;
    const result = ctx.analyses.result(file);
    const mod = result?.module ? moduleOf(result.symbols?.root) : undefined;
    if (result?.name && mod) out.push({ name: result.name, file, ...mod });
  }
  return out;
}
