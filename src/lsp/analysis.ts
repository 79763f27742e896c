/**
 * The checks an editor runs after a change: a flows directory's files through the registry's own check-and-link
 * (FlowFiles: a text already checked is not checked again, so a change re-checks one file), a config with the flows
 * it routes to. The same diagnostics as `callscript validate`, by file.
 */
import { basename, dirname } from 'node:path';
import { checkConfig } from '../config/check.js';
import { configFlowRefs, unknownRouteFlows } from '../config/flow-refs.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import { checkFlow, defaultFlowName, type CheckResult } from '../flow/check.js';
import { flowVersion } from '../flow/compile.js';
import { YamlCache } from '../flow/yaml-cache.js';
import { FlowFiles } from '../registry/files.js';
import { configFor, flowTexts, flowsDirOf, readText, type Overlay } from './project.js';

export interface DirAnalysis {
  dir: string;
  /** Every flow file of the directory, with its text as checked. */
  texts: Map<string, string>;
  /** Diagnostics by file (every flow file has an entry, empty when clean). */
  diagnostics: Map<string, Diagnostic[]>;
}

export class Analyses {
  private readonly dirs = new Map<string, { files: FlowFiles; maxFileBytes: number | undefined }>();
  /** The flow files of each directory as last analysed. */
  private readonly listed = new Map<string, string[]>();

  constructor(private readonly overlay: Overlay) {}

  /** The file size limit of the config serving `dir` (limits.flow_file_bytes), if any. */
  private async limitFor(dir: string): Promise<number | undefined> {
    const cfg = configFor(dir);
    const text = cfg === undefined ? undefined : await readText(cfg, this.overlay);
    return text === undefined ? undefined : checkConfig(text, cfg!).config?.limits.flow_file_bytes;
  }

  private async filesFor(dir: string): Promise<FlowFiles> {
    const maxFileBytes = await this.limitFor(dir);
    let entry = this.dirs.get(dir);
    if (!entry || entry.maxFileBytes !== maxFileBytes) {
      // the blocks of the directory's files as last loaded: a change loads again the blocks it touches
      const opts = {
        symbols: true,
        yamlCache: new YamlCache(),
        ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
      };
      entry = { files: new FlowFiles((text, file) => checkFlow(text, file, opts)), maxFileBytes };
      this.dirs.set(dir, entry);
    }
    return entry.files;
  }

  /** A directory named flows, or the one a callscript.yaml serves (in it or above it). */
  async isFlowsDir(dir: string): Promise<boolean> {
    if (basename(dir) === 'flows') return true;
    const cfg = configFor(dir);
    const text = cfg === undefined ? undefined : await readText(cfg, this.overlay);
    if (text === undefined) return false;
    return flowsDirOf(cfg!, checkConfig(text, cfg!).config?.server.flows_dir) === dir;
  }

  /** Checks and links the flows of `dir` (the open documents' texts first). */
  async flows(dir: string): Promise<DirAnalysis> {
    const files = await this.filesFor(dir);
    const texts = await flowTexts(dir, this.overlay, await this.isFlowsDir(dir));
    const report = files.diagnose(texts.map((t) => ({ ...t, hash: flowVersion(t.text) })));
    this.listed.set(
      dir,
      texts.map((t) => t.file),
    );
    const diagnostics = new Map<string, Diagnostic[]>(texts.map((t) => [t.file, []]));
    for (const d of report.diagnostics) diagnostics.get(d.file)?.push(d);
    return { dir, texts: new Map(texts.map((t) => [t.file, t.text])), diagnostics };
  }

  /** The check result of a flow file as last analysed (its tree and the names it reads), if any. */
  result(file: string): CheckResult | undefined {
    return this.dirs.get(dirname(file))?.files.result(file);
  }

  /** The flow files of `dir` as last analysed (undefined: never analysed). */
  files(dir: string): readonly string[] | undefined {
    return this.listed.get(dir);
  }

  /** A config file's diagnostics: its own, and the routes to flows its flows directory does not hold. */
  async config(path: string, text: string): Promise<Diagnostic[]> {
    const checked = checkConfig(text, path);
    const out = [...checked.diagnostics];
    const refs = configFlowRefs(text, path);
    if (refs.length === 0 || !checked.config) return out;
    const dir = flowsDirOf(path, checked.config.server.flows_dir);
    const flows = await this.flows(dir);
    if (flows.texts.size === 0) return out;
    const names = new Set<string>();
    for (const file of flows.texts.keys()) names.add(this.result(file)?.name ?? defaultFlowName(file));
    out.push(...unknownRouteFlows(path, refs, names, true));
    return out;
  }
}
