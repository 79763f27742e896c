/**
 * The package as a user installs it: every dependency is used, the license is there, and
 * the files the README links to are shipped.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license: string;
  files: string[];
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (/\.(ts|js)$/.test(e.name)) out.push(readFileSync(p, 'utf8'));
  }
  return out;
}

describe('the package', () => {
  it('imports every dependency it declares', () => {
    const code = [...sources(join(root, 'src')), ...sources(join(root, 'bin'))].join('\n');
    const unused = Object.keys(pkg.dependencies).filter(
      (d) => !code.includes(`'${d}'`) && !code.includes(`'${d}/`) && !code.includes(`"${d}"`),
    );
    expect(unused).toEqual([]);
  });

  it(
    'runs from dist/ without tsx: tsx and typescript are development dependencies, npm start and the bin run ' +
      'the built JavaScript',
    () => {
      expect(pkg.dependencies.tsx).toBeUndefined();
      expect(pkg.dependencies.typescript).toBeUndefined();
      expect(pkg.devDependencies.tsx).toBeDefined();
      expect(pkg.scripts.start).toBe('exec node dist/cli/main.js serve');
      expect(pkg.scripts.prepare).toBe('node scripts/prepare.mjs');
      expect(readFileSync(join(root, 'bin/callscript.js'), 'utf8')).toContain("import('../dist/cli/main.js')");
      // the only mention of tsx in the sources: the checker's worker when running from .ts (tests, npm run callscript)
      const tsx = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter(
        (f) => /\.ts$/.test(f) && /['"]tsx[/'"]/.test(readFileSync(join(root, 'src', f), 'utf8')),
      );
      expect(tsx).toEqual(['registry/checker.ts']);
    },
  );

  it('ships its license and the files the README links to', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#:]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(5);
    for (const l of links) {
      expect(existsSync(join(root, l)), l).toBe(true);
      expect(
        pkg.files.some((f) => l === f || l.startsWith(`${f}/`)),
        `${l} is not in package.json "files"`,
      ).toBe(true);
    }
  });
});
