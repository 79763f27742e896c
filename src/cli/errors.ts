import { CATALOGUE, CATALOGUE_SECTIONS } from '../errors/catalogue.js';
import { errorsMarkdown } from '../errors/markdown.js';

/** `callscript errors [CODE] [--markdown]`: explain one code, list them all, or print docs/errors.md. */
export function errors(
  code: string | undefined,
  flags: { markdown?: boolean },
  out: NodeJS.WritableStream = process.stdout,
): number {
  if (flags.markdown) {
    out.write(errorsMarkdown(CATALOGUE_SECTIONS));
    return 0;
  }
  if (code) {
    const c = CATALOGUE.find((x) => x.code === code.toUpperCase());
    if (!c) {
      out.write(`no error code ${code}; \`callscript errors\` lists them all\n`);
      return 1;
    }
    const tags = [c.severity, c.http ? `HTTP ${c.http}` : ''].filter(Boolean).join(', ');
    out.write(`${c.code}${tags ? ` (${tags})` : ''}\n  ${c.title}\n  hint: ${c.hint}\n`);
    return 0;
  }
  for (const [section, codes] of Object.entries(CATALOGUE_SECTIONS)) {
    out.write(`${section}:\n`);
    for (const c of codes) out.write(`  ${c.code.padEnd(24)} ${c.title}\n`);
  }
  return 0;
}
