/** Rewrites the reference of the server options in docs/configuration.md from src/config/table.ts. */
import { readFileSync, writeFileSync } from 'node:fs';
import { withOptionsReference } from '../src/config/docs.js';

const page = new URL('../docs/configuration.md', import.meta.url);
const before = readFileSync(page, 'utf8');
const after = withOptionsReference(before);
if (after !== before) writeFileSync(page, after);
process.stdout.write(
  `docs/configuration.md: the option reference ${after === before ? 'was up to date' : 'rewritten'}\n`,
);
