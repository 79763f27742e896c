/**
 * docs/editors.md shows the editor files as they are (the Neovim module the headless Neovim test runs, the Helix
 * configuration), and the npm package ships them where the page says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('docs/editors.md', () => {
  const docs = read('docs/editors.md');

  it('shows editors/nvim/callscript.lua and editors/helix/languages.toml whole, as they are', () => {
    expect(docs).toContain('```lua\n' + read('editors/nvim/callscript.lua') + '```\n');
    expect(docs).toContain('```toml\n' + read('editors/helix/languages.toml') + '```\n');
  });

  it('names files the npm package ships', () => {
    const pkg = JSON.parse(read('package.json')) as { files: string[] };
    expect(docs).toContain('node_modules/callscript/editors/nvim/callscript.lua');
    expect(pkg.files).toEqual(expect.arrayContaining(['docs', 'schemas', 'editors/nvim', 'editors/helix']));
  });
});
