/**
 * A flows directory on disk with a language client over it, for the tests of navigation, rename and quick fixes
 * across files; and ranges found in a fixture's text by the words they cover.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Location, Range } from 'vscode-languageserver';
import { pathToUri } from '../../src/lsp/uris.js';
import { lspClient, type TestClient } from './client.js';

export interface Workspace {
  dir: string;
  client: TestClient;
  /** Writes a file under the directory (folders made as needed); returns its path. */
  write(name: string, text: string): string;
  path(name: string): string;
  dispose(): Promise<void>;
}

export async function workspace(files: Record<string, string>): Promise<Workspace> {
  const dir = mkdtempSync(join(tmpdir(), 'lsp-ws-'));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  for (const [name, text] of Object.entries(files)) write(name, text);
  const client = await lspClient(dir);
  return {
    dir,
    client,
    write,
    path: (name) => join(dir, name),
    async dispose() {
      await client.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The range of the `n`-th `word` in `text` (0-based), or of `part` inside it. */
export function rangeOf(text: string, word: string, n = 0, part?: string): Range {
  let i = -1;
  for (let k = 0; k <= n; k++) {
    i = text.indexOf(word, i + 1);
    if (i < 0) throw new Error(`no ${n + 1}th '${word}' in the fixture`);
  }
  if (part !== undefined) i += word.indexOf(part);
  const before = text.slice(0, i).split('\n');
  const line = before.length - 1;
  const character = before[line]!.length;
  return { start: { line, character }, end: { line, character: character + (part ?? word).length } };
}

/** A request's position: inside the range (its second character). */
export const inside = (path: string, r: Range) => ({
  textDocument: { uri: pathToUri(path) },
  position: { line: r.start.line, character: r.start.character + 1 },
});

/** Locations as `file@line:from-to` (0-based), for exact comparisons that read well. */
export function places(dir: string, locs: Location[] | null): string[] {
  return (locs ?? []).map((l) => {
    const file = decodeURIComponent(l.uri).slice(pathToUri(dir).length + 1);
    return `${file}@${l.range.start.line}:${l.range.start.character}-${l.range.end.character}`;
  });
}

export const at = (file: string, r: Range) => `${file}@${r.start.line}:${r.start.character}-${r.end.character}`;

/** The files of test/fixtures/<name>, by path inside it. */
export function fixtureFiles(name: string): Record<string, string> {
  const root = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) walk(join(dir, e.name));
      else out[relative(root, join(dir, e.name))] = readFileSync(join(dir, e.name), 'utf8');
  };
  walk(root);
  return out;
}
