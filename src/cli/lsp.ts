/** `callscript lsp`: the language server on stdin and stdout (docs/editors.md). */
import { startStdioServer } from '../lsp/server.js';

export function lsp(opts: { debounce?: string }): void {
  const debounceMs = opts.debounce === undefined ? undefined : Number(opts.debounce);
  if (debounceMs !== undefined && (!Number.isInteger(debounceMs) || debounceMs < 0 || debounceMs > 10_000)) {
    process.stderr.write(
      `callscript lsp: --debounce must be a whole number of ms from 0 to 10000, not ${opts.debounce}\n`,
    );
    process.exitCode = 2;
    return;
  }
  startStdioServer(debounceMs === undefined ? {} : { debounceMs });
}
