import { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextEdit, WorkspaceEdit } from 'vscode-languageserver';
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
    when: 'vars.choice == "1" && vars.tries < 3'
    then: "end"
    else: end
  end:
    say: "You chose {{ vars.choice }}."
    next: bye
  bye:
    hangup: {}
`;

let ws: Workspace;
let file: string;
let client: TestClient;
beforeEach(async () => {
  ws = await workspace({});
  client = ws.client;
  file = ws.path('ren.yaml');
  client.open(file, FLOW);
});
afterEach(() => ws.dispose());

const at = (line: number, character: number) => doc(file, line, character);

/** The flow's text once the edit is applied. */
function applied(edit: WorkspaceEdit): string {
  const document = TextDocument.create(pathToUri(file), 'yaml', 1, FLOW);
  return TextDocument.applyEdits(document, edit.changes![pathToUri(file)] as TextEdit[]);
}

describe('rename', () => {
  it('renames a step at its key and at every target, inside quotes where it was quoted', async () => {
    const edit = await client.request<WorkspaceEdit>('textDocument/rename', { ...at(13, 3), newName: 'finish' });
    const text = applied(edit);
    expect(text).toContain('  finish:\n    say:');
    expect(text).toContain('    then: "finish"\n    else: finish\n');
    expect(text).not.toMatch(/\bend\b/);
  });

  it('renames a variable in save:, templates and conditions', async () => {
    const edit = await client.request<WorkspaceEdit>('textDocument/rename', { ...at(7, 12), newName: 'picked' });
    const text = applied(edit);
    expect(text).toContain('    save: picked\n');
    expect(text).toContain(`when: 'vars.picked == "1" && vars.tries < 3'`);
    expect(text).toContain('"You chose {{ vars.picked }}."');
    expect(text).not.toContain('choice');
  });

  it('quotes a new step id that YAML would read as a number', async () => {
    const edit = await client.request<WorkspaceEdit>('textDocument/rename', { ...at(16, 3), newName: '0123' });
    expect(applied(edit)).toContain('    next: "0123"\n  "0123":\n');
  });

  it('refuses a name the checker refuses, and a name the flow already has', async () => {
    await expect(client.request('textDocument/rename', { ...at(7, 12), newName: '1x' })).rejects.toThrow(
      /not a valid variable name/,
    );
    await expect(client.request('textDocument/rename', { ...at(13, 3), newName: 'menu' })).rejects.toThrow(
      "the flow already has a step 'menu'",
    );
  });

  it('prepares a rename on a name only', async () => {
    expect(await client.request('textDocument/prepareRename', at(13, 3))).toEqual({
      start: { line: 13, character: 2 },
      end: { line: 13, character: 5 },
    });
    expect(await client.request('textDocument/prepareRename', at(0, 1))).toBeNull();
  });
});
