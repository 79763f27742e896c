import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathToUri } from '../../src/lsp/uris.js';
import type { TestClient } from './client.js';
import { doc } from './fixtures.js';
import { workspace, type Workspace } from './workspace-fixture.js';

const FLOW = `version: 1
start: menu
vars:
  tries: 0
steps:
  menu:
    read: { prompt: "Try {{ vars.tries }}. Press 1.", max_digits: 1 }
    save: choice
    on: { "1": goodbye, TIMEOUT: goodbye, default: menu }
  goodbye:
    say: "You chose {{ vars.choice }}."
    next: end
  end:
    hangup: {}
`;

let ws: Workspace;
let file: string;
let client: TestClient;
beforeEach(async () => {
  ws = await workspace({});
  client = ws.client;
  file = ws.path('nav.yaml');
  client.open(file, FLOW);
});
afterEach(() => ws.dispose());

const at = (line: number, character: number) => doc(file, line, character);
const range = (line: number, from: number, to: number) => ({
  start: { line, character: from },
  end: { line, character: to },
});

describe('definition and references', () => {
  it('goes from a branch target to the step it names', async () => {
    // `"1": goodbye` on line 8 (0-based), goodbye at column 15
    const defs = await client.request('textDocument/definition', at(8, 16));
    expect(defs).toEqual([{ uri: pathToUri(file), range: range(9, 2, 9) }]);
  });

  it('lists every use of a step, with its declaration when asked', async () => {
    const refs = await client.request<{ range: unknown }[]>('textDocument/references', {
      ...at(9, 3),
      context: { includeDeclaration: true },
    });
    expect(refs.map((r) => r.range)).toEqual([range(9, 2, 9), range(8, 15, 22), range(8, 33, 40)]);
  });

  it('goes from vars.x in a template to the save: that declares it', async () => {
    // `{{ vars.choice }}` on line 10: "choice" starts at column 28
    const defs = await client.request<{ range: unknown }[]>('textDocument/definition', at(10, 30));
    expect(defs.map((d) => d.range)).toEqual([range(7, 10, 16)]);
  });

  it('answers null away from any name', async () => {
    expect(await client.request('textDocument/definition', at(0, 2))).toBeNull();
  });
});
