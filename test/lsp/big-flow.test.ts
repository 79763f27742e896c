/**
 * The language server on a big flow, changed a character at a time (the check loads again only the blocks a change
 * touches, yaml-cache.ts): each change's diagnostics are those of the whole check of the text. `npm run bench:lsp`
 * measures how long they take.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { toLspDiagnostic } from '../../src/lsp/positions.js';
import { bigFlow } from '../helpers/big-flow.js';
import { lspClient, type TestClient } from './client.js';

let dir: string;
let client: TestClient;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lsp-big-'));
  client = await lspClient(dir);
});
afterEach(() => {
  client.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** What the server should publish for `text`: the whole check's diagnostics. */
const expected = (text: string, file: string) =>
  checkFlow(text, file).diagnostics.map((d) => JSON.parse(JSON.stringify(toLspDiagnostic(d, text))) as unknown);

describe('a 300-step flow changed a character at a time', () => {
  it('publishes after each change what the whole check of the text says', async () => {
    const file = join(dir, 'big.yaml');
    const flow = bigFlow(300);
    const renamed = (t: string) => t.replace('  menu_40:\n', '  menu_4O:\n'); // a step id three steps target
    const prompt = (t: string) => t.replace('Menu 7.', 'Menu 7!');
    const moved = (t: string) => t.replace('name: big\n', 'name: big\n\n# every step a line down\n');
    const digits = (t: string) => t.replace('max_digits: 1\n', 'max_digits: 99\n');
    const texts = [renamed(flow), prompt(flow), digits(moved(prompt(flow))), renamed(digits(moved(prompt(flow))))];
    client.open(file, flow);
    let previous = -1;
    for (const text of texts) {
      const want = expected(text, file);
      expect(want.length).not.toBe(previous); // each change publishes something new (else the wait proves nothing)
      previous = want.length;
      client.change(file, text);
      const got = await client.diagnostics(file, (d) => d.length === want.length);
      expect(got).toEqual(want);
    }
    expect(previous).toBe(6);
  });
});
