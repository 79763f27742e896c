/**
 * The loaded flows: each flow by name, its versions by content hash, and which version
 * new calls get. A live call names its version in its snapshot and is served by it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, basename } from 'node:path';
import { checkFlow } from '../flow/check.js';
import { compileFlow, type CompiledFlow } from '../flow/compile.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import { hasErrors } from '../errors/diagnostic.js';

export interface FlowEntry {
  name: string;
  file: string;
  current: CompiledFlow;
  versions: Map<string, CompiledFlow>;
}

export interface LoadReport {
  /** Every diagnostic of every file (warnings of loaded flows included). */
  diagnostics: Diagnostic[];
  /** File text by path, for code frames. */
  sources: Map<string, string>;
  /** Files refused because of errors. */
  refused: string[];
}

/** Flow files of a directory: *.yaml and *.yml, not scenarios (*.test.yaml) nor the config. */
export async function listFlowFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((n) => /\.ya?ml$/.test(n) && !/\.test\.ya?ml$/.test(n) && !/^callscript\.ya?ml$/.test(n))
    .sort()
    .map((n) => join(dir, n));
}

/** Checks and compiles flow texts; flows with errors (or a taken name) are refused. */
export function compileAll(files: { file: string; text: string }[]): { flows: CompiledFlow[]; report: LoadReport } {
  const report: LoadReport = { diagnostics: [], sources: new Map(), refused: [] };
  const flows: CompiledFlow[] = [];
  const byName = new Map<string, string>();
  for (const { file, text } of files) {
    report.sources.set(file, text);
    const { model, diagnostics } = checkFlow(text, file);
    report.diagnostics.push(...diagnostics);
    if (!model || hasErrors(diagnostics)) {
      report.refused.push(file);
      continue;
    }
    const taken = byName.get(model.name);
    if (taken) {
      report.diagnostics.push({
        code: 'DUPLICATE_FLOW_NAME',
        severity: 'error',
        message: `flow name "${model.name}" is already used by ${taken}`,
        file,
        line: 1,
        column: 1,
        hint: 'Give each flow a distinct `name:` (or rename the file when the name comes from it).',
      });
      report.refused.push(file);
      continue;
    }
    byName.set(model.name, file);
    flows.push(compileFlow(model, text));
  }
  return { flows, report };
}

export class Registry {
  private readonly entries = new Map<string, FlowEntry>();

  /** Loads every flow file of `dir`. Never throws for bad flows: they are reported. */
  static async fromDirectory(dir: string): Promise<{ registry: Registry; report: LoadReport }> {
    const registry = new Registry();
    let files: string[];
    try {
      files = await listFlowFiles(dir);
    } catch (err) {
      const report: LoadReport = { diagnostics: [], sources: new Map(), refused: [] };
      report.diagnostics.push({
        code: 'FLOWS_DIR_MISSING',
        severity: 'error',
        message: `cannot read the flows directory ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        file: dir,
        line: 1,
        column: 1,
        hint: 'Create it, or point FLOWS_DIR / --flows / server.flows_dir at the folder holding your *.yaml flows.',
      });
      return { registry, report };
    }
    const texts = await Promise.all(files.map(async (file) => ({ file, text: await readFile(file, 'utf8') })));
    const { flows, report } = compileAll(texts);
    for (const f of flows) registry.publish(f, f.model.file);
    return { registry, report };
  }

  /** Adds a version and makes it current for new calls. */
  publish(flow: CompiledFlow, file: string): void {
    const entry = this.entries.get(flow.name);
    if (entry) {
      entry.versions.set(flow.version, flow);
      entry.current = flow;
      entry.file = file;
    } else {
      this.entries.set(flow.name, { name: flow.name, file, current: flow, versions: new Map([[flow.version, flow]]) });
    }
  }

  /** The version new calls of `name` get. */
  current(name: string): CompiledFlow | undefined {
    return this.entries.get(name)?.current;
  }

  /** A given version (a live call's). */
  get(name: string, version: string): CompiledFlow | undefined {
    return this.entries.get(name)?.versions.get(version);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  list(): { name: string; version: string; file: string }[] {
    return [...this.entries.values()]
      .map((e) => ({ name: e.name, version: e.current.version, file: basename(e.file) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}
