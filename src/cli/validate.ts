import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { checkConfig } from '../flow/config.js';
import { formatDiagnostics, summarize } from '../flow/format.js';
import { compileAll, listFlowFiles } from '../registry/registry.js';
import type { Diagnostic } from '../errors/diagnostic.js';

/**
 * `callscript validate [files or dirs]`: the same checks the server runs when it loads
 * flows. Prints every problem with a code frame; exit code 1 when there is an error.
 */
export async function validate(paths: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const targets = paths.length > 0 ? paths : ['flows'];
  const diagnostics: Diagnostic[] = [];
  const sources = new Map<string, string>();
  const flowFiles: { file: string; text: string }[] = [];
  for (const p of targets) {
    let files: string[];
    try {
      files = (await stat(p)).isDirectory() ? await listFlowFiles(p) : [p];
    } catch (err) {
      diagnostics.push({ code: 'UNREADABLE_FILE', severity: 'error', message: `cannot read ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, file: p, line: 1, column: 1, hint: 'Check that the path exists and is readable.' });
      continue;
    }
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      if (/^callscript\.ya?ml$/.test(basename(file))) {
        sources.set(file, text);
        diagnostics.push(...checkConfig(text, file).diagnostics);
      } else flowFiles.push({ file, text });
    }
  }
  const { flows, report } = compileAll(flowFiles);
  diagnostics.push(...report.diagnostics);
  for (const [f, t] of report.sources) sources.set(f, t);
  if (diagnostics.length > 0) out.write(formatDiagnostics(diagnostics, sources) + '\n');
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  out.write(`${flowFiles.length} file${flowFiles.length === 1 ? '' : 's'} checked, ${flows.length} valid: ${summarize(diagnostics)}\n`);
  return errors > 0 ? 1 : 0;
}
