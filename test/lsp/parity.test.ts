/**
 * The editor shows what `callscript validate` prints: for every flow of the repository's flows/ and of the test
 * fixtures' directories, the same codes, at the same lines and columns, with the same messages and hints.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll, listFlowFiles } from '../../src/registry/registry.js';
import { looksLikeFlow } from '../../src/lsp/project.js';
import { lspClient, type TestClient } from './client.js';

const root = new URL('../..', import.meta.url).pathname;
const fixtures = join(root, 'test/fixtures');
const dirs = [
  join(root, 'flows'),
  ...readdirSync(fixtures)
    .map((d) => join(fixtures, d))
    .filter((d) => statSync(d).isDirectory()),
];

let client: TestClient;
beforeAll(async () => {
  client = await lspClient(root);
});
afterAll(() => client.dispose());

describe.each(dirs.map((d) => [d.slice(root.length)]))('%s', (rel) => {
  it('has the diagnostics validate gives, file by file', async () => {
    const dir = join(root, rel);
    const files = await listFlowFiles(dir);
    if (files.length === 0) return;
    // outside a directory named flows, the editor checks the files that look like flows (docs/editors.md)
    const texts = files
      .map((file) => ({ file, text: readFileSync(file, 'utf8') }))
      .filter((t) => rel === '/flows' || looksLikeFlow(t.text));
    if (texts.length === 0) return;
    const expected = compileAll(texts).report.diagnostics;
    const first = texts[0]!.file;
    client.open(first, texts[0]!.text);
    for (const { file } of texts) {
      const want = expected
        .filter((d) => d.file === file)
        .map((d) => ({
          code: d.code,
          line: Math.max(1, d.line) - 1,
          character: Math.max(1, d.column) - 1,
          message: d.hint ? `${d.message}\n${d.hint}` : d.message,
        }));
      const got = (file === first || want.length > 0 ? await client.diagnostics(file) : []).map((d) => ({
        code: d.code,
        line: d.range.start.line,
        character: d.range.start.character,
        message: d.message,
      }));
      expect(got, file).toEqual(want);
    }
    client.close(first);
  });
});
