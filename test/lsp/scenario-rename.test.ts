import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Location, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { uriToPath } from '../../src/lsp/uris.js';
import { at, fixtureFiles, inside, places, rangeOf, workspace, type Workspace } from './workspace-fixture.js';

const FILES = fixtureFiles('lsp-scenarios');
const FLOW = FILES['flows/menu.yaml']!;
const BESIDE = FILES['flows/menu.test.yaml']!;
const TESTS = FILES['tests/menu-again.test.yaml']!;
const BY_PATH = FILES['flows/tests/by-path.test.yaml']!;
const PIN = FILES['flows/pin.yaml']!;
const CALLER = FILES['flows/caller.yaml']!;
const NOT_YAML = 'flow: menu\ncases: [ { name: broken, steps: [ { expect: { step: menu, vars: { choice: 1 } } ]\n';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace({ ...FILES, 'flows/broken.test.yaml': NOT_YAML });
});
afterEach(() => ws.dispose());

/** The texts of the files an edit changes, once applied (by path inside the workspace). */
function applied(edit: WorkspaceEdit | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [uri, edits] of Object.entries(edit?.changes ?? {})) {
    const path = uriToPath(uri)!;
    const doc = TextDocument.create(uri, 'yaml', 1, readFileSync(path, 'utf8'));
    out[path.slice(ws.dir.length + 1)] = TextDocument.applyEdits(doc, edits as TextEdit[]);
  }
  return out;
}

const rename = (file: string, text: string, word: string, newName: string, n = 0) =>
  ws.client.request<WorkspaceEdit | null>('textDocument/rename', {
    ...inside(ws.path(file), rangeOf(text, word, n)),
    newName,
  });

describe('rename across the flow and its scenario files', () => {
  it("renames a step in the flow and in the step: of every scenario testing it, not in another flow's", async () => {
    const out = applied(await rename('flows/menu.yaml', FLOW, 'menu', 'main_menu', 1));
    expect(Object.keys(out).sort()).toEqual(['flows/menu.test.yaml', 'flows/menu.yaml', 'tests/menu-again.test.yaml']);
    expect(out['flows/menu.yaml']).toBe(FLOW.replace(/\bmenu\b/g, 'main_menu'));
    expect(out['flows/menu.test.yaml']).toBe(BESIDE.replace('step: menu', 'step: main_menu'));
    expect(out['tests/menu-again.test.yaml']).toBe(TESTS.replace('step: "menu"', 'step: "main_menu"'));
  });

  it("renames a variable from a scenario: the flow's save: and vars.x, cases' vars: and expect.vars", async () => {
    const out = applied(await rename('flows/menu.test.yaml', BESIDE, 'choice', 'picked', 1));
    expect(Object.keys(out).sort()).toEqual([
      'flows/menu.test.yaml',
      'flows/menu.yaml',
      'flows/tests/by-path.test.yaml',
      'tests/menu-again.test.yaml',
    ]);
    expect(out['flows/menu.yaml']).toBe(FLOW.replace(/\bchoice\b/g, 'picked'));
    expect(out['flows/menu.test.yaml']).toBe(BESIDE.replace(/\bchoice\b/g, 'picked'));
    expect(out['tests/menu-again.test.yaml']).toBe(TESTS.replace('choice', 'picked'));
    expect(out['flows/tests/by-path.test.yaml']).toBe(BY_PATH.replace('choice', 'picked'));
  });

  it('uses the text of an open scenario document, not the disk', async () => {
    const open = BESIDE.replace('step: goodbye', 'step: end');
    ws.client.open(ws.path('flows/menu.test.yaml'), open);
    const edit = await rename('flows/menu.yaml', FLOW, 'end', 'finish', 1);
    const uri = Object.keys(edit!.changes!).find((u) => u.endsWith('flows/menu.test.yaml'))!;
    const doc = TextDocument.create(uri, 'yaml', 1, open);
    expect(TextDocument.applyEdits(doc, edit!.changes![uri]!)).toBe(open.replace(/step: end/g, 'step: finish'));
  });

  it('lists the scenario uses among the references, a flow named by path included', async () => {
    const refs = await ws.client.request<Location[]>('textDocument/references', {
      ...inside(ws.path('flows/menu.yaml'), rangeOf(FLOW, 'end', 1)),
      context: { includeDeclaration: true },
    });
    expect(places(ws.dir, refs)).toEqual([
      at('flows/menu.yaml', rangeOf(FLOW, 'end', 1)),
      at('flows/menu.yaml', rangeOf(FLOW, 'end', 0)),
      at('flows/menu.test.yaml', rangeOf(BESIDE, 'end')),
      at('flows/tests/by-path.test.yaml', rangeOf(BY_PATH, 'end')),
    ]);
  });

  it("goes from a scenario's step: to the flow's step", async () => {
    const defs = await ws.client.request<Location[]>(
      'textDocument/definition',
      inside(ws.path('flows/menu.test.yaml'), rangeOf(BESIDE, 'goodbye')),
    );
    expect(places(ws.dir, defs)).toEqual([at('flows/menu.yaml', rangeOf(FLOW, 'goodbye', 1))]);
  });

  it('refuses a name a scenario map has already (it would write the key twice)', async () => {
    const text = BESIDE.replace('{ vars: { choice: "1" }, step: goodbye }', '{ vars: { choice: "1", extra: 2 } }');
    ws.write('flows/menu.test.yaml', text);
    await expect(rename('flows/menu.yaml', FLOW, 'choice', 'extra')).rejects.toThrow(
      "menu.test.yaml already has 'extra' beside 'choice' (line 8)",
    );
  });
});

describe('rename in a module', () => {
  it('renames a step of a module, and its namespaced id in the scenarios of the flows that enter it', async () => {
    const out = applied(await rename('flows/pin.yaml', PIN, 'ask', 'question', 1));
    expect(Object.keys(out).sort()).toEqual(['flows/caller.test.yaml', 'flows/pin.test.yaml', 'flows/pin.yaml']);
    expect(out['flows/pin.yaml']).toBe(PIN.replace(/\bask\b/g, 'question'));
    expect(out['flows/caller.test.yaml']).toBe(FILES['flows/caller.test.yaml']!.replace('pin:ask', 'pin:question'));
    expect(out['flows/pin.test.yaml']).toBe(FILES['flows/pin.test.yaml']!.replace('step: ask', 'step: question'));
  });

  it("renames a param from a caller's with: key: the module, every caller, the module's scenarios", async () => {
    const out = applied(await rename('flows/caller.yaml', CALLER, 'tries', 'attempts'));
    expect(Object.keys(out).sort()).toEqual(['flows/caller.yaml', 'flows/pin.test.yaml', 'flows/pin.yaml']);
    // the param's key and its read, not the word "tries" of the prompt's text
    expect(out['flows/pin.yaml']).toBe(
      PIN.replace('{ tries: 3 }', '{ attempts: 3 }').replace('vars.tries', 'vars.attempts'),
    );
    expect(out['flows/caller.yaml']).toBe(CALLER.replace('tries', 'attempts'));
    expect(out['flows/pin.test.yaml']).toBe(FILES['flows/pin.test.yaml']!.replace('tries', 'attempts'));
  });

  it("refuses a param's new name that a caller's with: has already", async () => {
    ws.write('flows/caller.yaml', CALLER.replace('{ tries: 2 }', '{ tries: 2, attempts: 1 }'));
    await expect(rename('flows/pin.yaml', PIN, 'tries', 'attempts')).rejects.toThrow(
      "caller.yaml already has 'attempts' beside 'tries' (line 5)",
    );
  });
});
