import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { checkConfig } from '../config/check.js';
import { configFlowRefs, unknownRouteFlows } from '../config/flow-refs.js';
import { defaultFlowName } from '../flow/check.js';
import { formatDiagnostics, summarize } from '../flow/format.js';
import { compileAll, listFlowFiles } from '../registry/registry.js';
import {
  callerScriptNotFlow,
  isCallerScriptName,
  readFlowText,
  readFlows,
  unreadableReason,
} from '../registry/load.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import { printable } from '../terminal/printable.js';

export interface ValidateOptions {
  /** Files checked as server config files whatever their name (`--config prod.yaml`, repeatable). */
  configs?: string[];
  /** Where a bare `callscript validate` looks for callscript.yaml and the flows (default: the current directory). */
  cwd?: string;
  /** The environment flows with environments: must define (--env); absent: CALLSCRIPT_ENV, else none required. */
  env?: string;
}

const quiet = new WeakSet<NodeJS.WritableStream>();

/**
 * A reader that goes away (`callscript validate flows | head -1`) is no error: the rest of
 * the output is dropped, the exit code stays that of the checks. Other stream errors are
 * not hidden.
 */
function ignoreClosedReader(out: NodeJS.WritableStream): void {
  if (quiet.has(out) || typeof out.on !== 'function') return;
  quiet.add(out);
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
    throw err;
  });
}

function unreadable(p: string, err: unknown, hint = 'Check that the path exists and is readable.'): Diagnostic {
  const code = (err as NodeJS.ErrnoException).code;
  // No position: the path itself is the problem (the header shows the path alone).
  if (code === 'ENOENT')
    return {
      code: 'UNREADABLE_FILE',
      severity: 'error',
      message: `no such file or directory: ${p}`,
      file: p,
      line: 0,
      column: 0,
      hint,
    };
  if (code === 'ELOOP')
    return {
      code: 'UNREADABLE_FILE',
      severity: 'error',
      message: `cannot read ${p}: ${unreadableReason(err)}`,
      file: p,
      line: 0,
      column: 0,
      hint: 'Copy the flow into the directory, or link to a file inside it.',
    };
  if (code === 'ENOTREG' || code === 'EFBIG')
    return {
      code: 'UNREADABLE_FILE',
      severity: 'error',
      message: `cannot read ${p}: ${unreadableReason(err)}`,
      file: p,
      line: 0,
      column: 0,
      hint:
        'Keep only flow files (regular files of at most limits.flow_file_bytes) under *.yaml names in the ' +
        'flows directory.',
    };
  return {
    code: 'UNREADABLE_FILE',
    severity: 'error',
    message: `cannot read ${p}: ${code ?? (err as Error).message}`,
    file: p,
    line: 0,
    column: 0,
    hint,
  };
}

const n = (k: number, word: string) => `${k} ${word}${k === 1 ? '' : 's'}`;

/**
 * `callscript validate [files or dirs] [--config file]...`: the same checks the server runs
 * when it loads flows and its config. Directories give their flow files; a file named
 * callscript.yaml (or .yml), and every `--config` file, is checked as a config file.
 * Prints every problem with a code frame, then a summary line; exit code 1 when there is
 * an error.
 */
export async function validate(
  paths: string[],
  out: NodeJS.WritableStream = process.stdout,
  opts: ValidateOptions = {},
): Promise<number> {
  ignoreClosedReader(out);
  const configs = opts.configs ?? [];
  const asConfig = new Set(configs.map((f) => resolve(f)));
  const seenConfigs = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  const sources = new Map<string, string>();
  const flowFiles: { file: string; text: string }[] = [];
  const configFiles: string[] = [];
  let configsValid = 0;
  // The flows are checked with the file size limit of the config given (the largest of them), as the server would.
  let maxFileBytes: number | undefined;
  const addConfig = (file: string, text: string) => {
    if (seenConfigs.has(resolve(file))) return;
    seenConfigs.add(resolve(file));
    configFiles.push(file);
    sources.set(file, text);
    const checked = checkConfig(text, file);
    const found = checked.diagnostics;
    const limit = checked.config?.limits.flow_file_bytes;
    if (limit !== undefined) maxFileBytes = Math.max(maxFileBytes ?? 0, limit);
    diagnostics.push(...found);
    if (!found.some((d) => d.severity === 'error')) configsValid++;
  };
  let targets = paths;
  let missingHint: string | undefined;
  if (paths.length === 0 && configs.length === 0) {
    // A bare `callscript validate`: the project's callscript.yaml, if any, and its flows directory.
    const cwd = opts.cwd ?? process.cwd();
    const cfg = ['callscript.yaml', 'callscript.yml'].find((f) => existsSync(join(cwd, f)));
    let dir = 'flows';
    if (cfg) {
      const text = await readFile(join(cwd, cfg), 'utf8');
      addConfig(cfg, text);
      const flowsDir = checkConfig(text, cfg).config?.server.flows_dir;
      if (flowsDir !== undefined) dir = relative(cwd, resolve(cwd, flowsDir)) || '.';
    }
    targets = [opts.cwd ? join(opts.cwd, dir) : dir];
    missingHint =
      `Run callscript validate in your project's ` +
      `directory${cfg ? '' : ' (where flows/ or callscript.yaml is)'}, or name the flow files or directories ` +
      `to check: callscript validate path/to/flows`;
  }
  for (const p of targets) {
    let files: string[];
    try {
      files = (await stat(p)).isDirectory() ? await listFlowFiles(p) : [p];
    } catch (err) {
      diagnostics.push(unreadable(p, err, missingHint));
      continue;
    }
    for (const file of files) {
      if (isCallerScriptName(file) && !asConfig.has(resolve(file))) {
        out.write(`${printable(callerScriptNotFlow(file))}; not checked here\n`);
        continue;
      }
      let text: string;
      try {
        text =
          /^callscript\.ya?ml$/.test(basename(file)) || asConfig.has(resolve(file))
            ? await readFile(file, 'utf8')
            : await readFlowText(file);
      } catch (err) {
        diagnostics.push(unreadable(file, err));
        continue;
      }
      if (/^callscript\.ya?ml$/.test(basename(file)) || asConfig.has(resolve(file))) addConfig(file, text);
      else flowFiles.push({ file, text });
    }
  }
  for (const file of configs) {
    if (seenConfigs.has(resolve(file))) continue;
    let text: string;
    try {
      if ((await stat(file)).isDirectory())
        throw Object.assign(new Error('a directory, not a config file'), { code: 'EISDIR' });
      text = await readFile(file, 'utf8');
    } catch (err) {
      diagnostics.push(unreadable(file, err));
      continue;
    }
    addConfig(file, text);
  }
  // every environment of a flow is checked in one pass; --env (CALLSCRIPT_ENV) also requires the one named to exist
  const environment = opts.env ?? (process.env.CALLSCRIPT_ENV || undefined);
  const limits = {
    ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
    ...(environment !== undefined ? { environment } : {}),
  };
  // A file named alone that enters modules (subflow:) is linked with the flow files of its
  // directory, as the server would; only the files named are reported and counted.
  const named = new Set(flowFiles.map((f) => resolve(f.file)));
  const context: { file: string; text: string }[] = [];
  for (const dir of new Set(flowFiles.filter((f) => f.text.includes('subflow')).map((f) => dirname(f.file)))) {
    const { texts } = await readFlows(dir).catch(() => ({ texts: [] as { file: string; text: string }[] }));
    context.push(...texts.filter((t) => !named.has(resolve(t.file))));
  }
  const mine = (file: string) => context.length === 0 || named.has(resolve(file));
  const all = compileAll([...flowFiles, ...context], limits);
  const report = {
    ...all.report,
    diagnostics: all.report.diagnostics.filter((d) => mine(d.file)),
    refused: all.report.refused.filter(mine),
    modules: all.report.modules?.filter((f) => mine(f.model.file)),
  };
  const flows = all.flows.filter((f) => mine(f.model.file));
  diagnostics.push(...report.diagnostics);
  for (const [f, t] of all.report.sources) if (mine(f)) sources.set(f, t);
  // Routes name flows: against the flows checked here, or else the config's flows directory.
  for (const file of configFiles) {
    const refs = configFlowRefs(sources.get(file) ?? '', file);
    if (refs.length === 0) continue;
    let names: Set<string> | undefined;
    if (flowFiles.length > 0) {
      names = new Set([...flows.map((f) => f.name), ...report.refused.map((f) => defaultFlowName(f))]);
    } else {
      const dir = checkConfig(sources.get(file) ?? '', file).config?.server.flows_dir;
      const at = dir === undefined ? undefined : resolve(dirname(file), dir);
      if (at !== undefined && existsSync(at)) {
        const files = await listFlowFiles(at);
        const read = await Promise.all(
          files.map(async (f) => ({ file: f, text: await readFlowText(f).catch(() => undefined) })),
        );
        const loaded = compileAll(
          read.filter((r): r is { file: string; text: string } => r.text !== undefined),
          limits,
        );
        names = new Set([...loaded.flows.map((f) => f.name), ...loaded.report.refused.map((f) => defaultFlowName(f))]);
      }
    }
    if (!names) continue;
    const unknown = unknownRouteFlows(file, refs, names, flowFiles.length === 0);
    diagnostics.push(...unknown);
    const bad = unknown.length > 0;
    if (bad && !diagnostics.some((d) => d.file === file && d.severity === 'error' && d.code !== 'UNKNOWN_ROUTE_FLOW'))
      configsValid--;
  }
  if (diagnostics.length > 0) out.write(formatDiagnostics(diagnostics, sources) + '\n');
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const valid = flows.length + (report.modules?.length ?? 0) + configsValid;
  out.write(`${summaryLine(flowFiles.length, configFiles.length, valid)}: ${summarize(diagnostics)}\n`);
  return errors > 0 ? 1 : 0;
}

/**
 * "6 files checked, 6 valid" (flows only), or, when config files were checked,
 * "7 files checked (6 flows, 1 config), 7 valid".
 */
export function summaryLine(flowCount: number, configCount: number, valid: number): string {
  const total = flowCount + configCount;
  const parts = configCount === 0 ? '' : ` (${n(flowCount, 'flow')}, ${n(configCount, 'config')})`;
  return `${n(total, 'file')} checked${parts}, ${valid} valid`;
}
