/**
 * Which files an editor's document belongs with: a flow is checked with the flow files of its directory (the modules
 * it enters, the names it must not take) and the project's callscript.yaml (its limits); a callscript.yaml with the
 * flows directory it names. Texts come from the open documents first, then from the disk.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isCallerScriptName, isFlowFileName, listFlowFiles, readFlowText } from '../registry/load.js';

export type FileKind = 'flow' | 'config' | 'scenario' | 'caller' | 'other';

export function fileKind(path: string): FileKind {
  const name = basename(path);
  if (/^callscript\.ya?ml$/.test(name)) return 'config';
  if (/\.test\.ya?ml$/.test(name)) return 'scenario';
  if (isCallerScriptName(name)) return 'caller';
  return isFlowFileName(name) ? 'flow' : 'other';
}

/** The texts of open documents by absolute path: what the editor holds wins over the disk. */
export type Overlay = ReadonlyMap<string, string>;

export async function readText(path: string, overlay: Overlay): Promise<string | undefined> {
  const open = overlay.get(path);
  if (open !== undefined) return open;
  return readFile(path, 'utf8').catch(() => undefined);
}

/**
 * Whether a YAML text outside a flows directory is a flow: it has `steps:`, `start:` or `module:` at the top level.
 * A generic client (Helix) sends every YAML file of a project; a docker-compose.yml is no flow.
 */
export const looksLikeFlow = (text: string): boolean => /^(steps|start|module)[ \t]*:/m.test(text);

/**
 * The flow files of a directory (the disk's, and documents open there that are not saved yet), with their texts.
 * `all`: every YAML file is a flow (a flows directory, as the server loads it); otherwise only those that look like
 * one.
 */
export async function flowTexts(dir: string, overlay: Overlay, all = true): Promise<{ file: string; text: string }[]> {
  const files = new Set(await listFlowFiles(dir).catch(() => [] as string[]));
  for (const path of overlay.keys()) if (dirname(path) === dir && fileKind(path) === 'flow') files.add(path);
  const out: { file: string; text: string }[] = [];
  for (const file of [...files].sort()) {
    const text = overlay.get(file) ?? (await readFlowText(file).catch(() => undefined));
    if (text !== undefined && (all || looksLikeFlow(text))) out.push({ file, text });
  }
  return out;
}

/**
 * The callscript.yaml that serves a flows directory: in the directory or the one above it (the layout `callscript
 * init` makes), undefined when neither has one.
 */
export function configFor(flowsDir: string): string | undefined {
  for (const dir of [flowsDir, dirname(flowsDir)])
    for (const name of ['callscript.yaml', 'callscript.yml']) if (existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

/** The flows directory a config names (server.flows_dir, relative to the config), or flows/ beside it. */
export function flowsDirOf(configPath: string, flowsDir: string | undefined): string {
  return resolve(dirname(configPath), flowsDir ?? 'flows');
}
