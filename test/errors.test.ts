import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../src/errors/catalogue.js';

const root = new URL('..', import.meta.url).pathname;
const doc = readFileSync(join(root, 'docs/errors.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** All of src/ except the catalogue itself: where codes are emitted. */
const code = sources(join(root, 'src'))
  .filter((p) => !p.includes('/src/errors/'))
  .map((p) => readFileSync(p, 'utf8'))
  .join('\n');

describe('the error catalogue', () => {
  it('has unique, stable-looking codes with a title and a hint', () => {
    const codes = CATALOGUE.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of CATALOGUE) {
      expect(c.code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(c.title.length).toBeGreaterThan(10);
      expect(c.hint.length).toBeGreaterThan(10);
    }
  });

  it('documents every code in docs/errors.md, and nothing else', () => {
    const documented = [...doc.matchAll(/^### `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]);
    const codes = CATALOGUE.map((c) => c.code);
    expect(
      codes.filter((c) => !documented.includes(c)),
      'codes missing from docs/errors.md',
    ).toEqual([]);
    expect(
      documented.filter((c) => !codes.includes(c!)),
      'codes documented but not in the catalogue',
    ).toEqual([]);
  });

  it('uses every code somewhere in src/', () => {
    const unused = CATALOGUE.map((c) => c.code).filter((c) => !code.includes(`'${c}'`) && !code.includes(`"${c}"`));
    expect(unused, 'codes in the catalogue that no code emits').toEqual([]);
  });
});

describe('docs/errors.md', () => {
  it('is the generated catalogue (run: npx tsx src/cli/main.ts errors --markdown > docs/errors.md)', async () => {
    const { errorsMarkdown } = await import('../src/errors/markdown.js');
    const { CATALOGUE_SECTIONS } = await import('../src/errors/catalogue.js');
    expect(doc).toBe(errorsMarkdown(CATALOGUE_SECTIONS));
  });
});
