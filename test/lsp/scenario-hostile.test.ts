import { afterEach, describe, expect, it } from 'vitest';
import type { Location, WorkspaceEdit } from 'vscode-languageserver';
import { MAX_SCENARIO_FILES } from '../../src/lsp/scenario-files.js';
import { at, fixtureFiles, inside, places, rangeOf, workspace, type Workspace } from './workspace-fixture.js';

const FILES = fixtureFiles('lsp-scenarios');
const FLOW = FILES['flows/menu.yaml']!;
const OTHER_TEST = FILES['flows/other.test.yaml']!;
const NOT_YAML = 'flow: menu\ncases: [ { name: broken, steps: [ { expect: { step: menu, vars: { choice: 1 } } ]\n';

let ws: Workspace | undefined;
afterEach(() => ws?.dispose());

const REFUSED =
  'more than 2,000 scenario files (or 64 MiB of them) may test this flow: a rename could not reach them all';
const rename = (w: Workspace) =>
  w.client.request('textDocument/rename', {
    ...inside(w.path('flows/menu.yaml'), rangeOf(FLOW, 'menu', 1)),
    newName: 'main',
  });

const scenario = (i: number) =>
  `flow: menu\ncases:\n  - name: case ${i}\n    steps:\n      - expect: { command: read, step: menu }\n` +
  '        result: "1"\n';

describe('scenario files an author or a client may write', () => {
  it('a scenario file that is not YAML: no names, no requests answered in it, a rename passes it by', async () => {
    ws = await workspace({ ...FILES, 'flows/broken.test.yaml': NOT_YAML });
    const pos = inside(ws.path('flows/broken.test.yaml'), rangeOf(NOT_YAML, 'menu', 1));
    expect(await ws.client.request('textDocument/definition', pos)).toBeNull();
    expect(await ws.client.request('textDocument/prepareRename', pos)).toBeNull();
    const edit = await ws.client.request<WorkspaceEdit>('textDocument/rename', {
      ...inside(ws.path('flows/menu.yaml'), rangeOf(FLOW, 'menu', 1)),
      newName: 'main',
    });
    expect(Object.keys(edit.changes!).map((u) => u.slice(u.lastIndexOf('/') + 1))).toEqual([
      'menu.yaml',
      'menu.test.yaml',
      'menu-again.test.yaml',
    ]);
  });

  it("a scenario of another flow: its step: names that flow's step, never this one's", async () => {
    ws = await workspace(FILES);
    const refs = await ws.client.request<Location[]>('textDocument/references', {
      ...inside(ws.path('flows/menu.yaml'), rangeOf(FLOW, 'menu', 1)),
      context: { includeDeclaration: false },
    });
    expect(places(ws.dir, refs).filter((p) => p.startsWith('flows/other'))).toEqual([]);
    const defs = await ws.client.request<Location[]>(
      'textDocument/definition',
      inside(ws.path('flows/other.test.yaml'), rangeOf(OTHER_TEST, 'menu')),
    );
    expect(places(ws.dir, defs)).toEqual([at('flows/other.yaml', rangeOf(FILES['flows/other.yaml']!, 'menu', 1))]);
  });

  it('a scenario whose flow: is a path outside the folders scenarios are read from is not followed', async () => {
    const text = 'flow: ../../../../../../etc/menu.yaml\ncases:\n  - name: x\n    expect: { step: menu }\n';
    ws = await workspace({ ...FILES, 'flows/away.test.yaml': text });
    const pos = inside(ws.path('flows/away.test.yaml'), rangeOf(text, 'menu', 1));
    expect(await ws.client.request('textDocument/definition', pos)).toBeNull();
  });

  it('1,000 scenario files of the flow: one rename edits them all, in a bounded time', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) many[`tests/s${String(i).padStart(4, '0')}.test.yaml`] = scenario(i);
    ws = await workspace({ 'flows/menu.yaml': FLOW, ...many });
    const edit = (await rename(ws)) as WorkspaceEdit;
    const changes = Object.entries(edit.changes!);
    expect(changes.length).toBe(1001);
    const last = changes.find(([u]) => u.endsWith('s0999.test.yaml'))![1];
    expect(last).toEqual([{ range: rangeOf(scenario(999), 'menu', 1), newText: 'main' }]);
    // no timed assertion (the machine is shared): 0.3 s on an idle machine, 1 to 2 s on a loaded one; a pass
    // quadratic in the files (each file's edits made by reading every file again) took minutes, past the timeout
  }, 30_000);

  it(`more than ${MAX_SCENARIO_FILES} scenario files: the first ones are read, a rename is refused`, async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i <= MAX_SCENARIO_FILES; i++) many[`tests/s${String(i).padStart(4, '0')}.test.yaml`] = 'x: 1\n';
    // the first file (in name order) and the one past the bound name the flow's step
    many['tests/s0000.test.yaml'] = scenario(0);
    many[`tests/s${MAX_SCENARIO_FILES}.test.yaml`] = scenario(MAX_SCENARIO_FILES);
    ws = await workspace({ 'flows/menu.yaml': FLOW, ...many });
    await expect(rename(ws)).rejects.toThrow(REFUSED);
    const refs = await ws.client.request<Location[]>('textDocument/references', {
      ...inside(ws.path('flows/menu.yaml'), rangeOf(FLOW, 'menu', 1)),
      context: { includeDeclaration: false },
    });
    expect(places(ws.dir, refs)).toEqual([
      at('flows/menu.yaml', rangeOf(FLOW, 'menu', 0)),
      at('flows/menu.yaml', rangeOf(FLOW, 'menu', 2)),
      at('flows/menu.yaml', rangeOf(FLOW, 'menu', 3)),
      at('tests/s0000.test.yaml', rangeOf(scenario(0), 'menu', 1)),
    ]);
  }, 30_000);

  it('scenario files holding more than 64 MiB of text in all: the rest are not read, a rename is refused', async () => {
    // 34 files of 2,000,000 characters (each under the size limit of a file), 68 MB in all
    const big = 'flow: menu\n' + `# ${'x'.repeat(1_999_980)}\n`;
    const many: Record<string, string> = {};
    for (let i = 0; i < 34; i++) many[`tests/big${i}.test.yaml`] = big;
    ws = await workspace({ 'flows/menu.yaml': FLOW, ...many });
    await expect(rename(ws)).rejects.toThrow(REFUSED);
  }, 30_000);

  it("a caller's with: of 20,000 keys, a scenario's with: of 20,000: a rename in a bounded time", async () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: 0`).join(', ');
    const files = {
      'flows/pin.yaml': FILES['flows/pin.yaml']!,
      'flows/caller.yaml': FILES['flows/caller.yaml']!.replace('{ tries: 2 }', `{ tries: 2, ${keys} }`),
      'flows/pin.test.yaml': FILES['flows/pin.test.yaml']!.replace('{ tries: 1 }', `{ tries: 1, ${keys} }`),
    };
    ws = await workspace(files);
    const pin = files['flows/pin.yaml'];
    const edit = await ws.client.request<WorkspaceEdit>('textDocument/rename', {
      ...inside(ws.path('flows/pin.yaml'), rangeOf(pin, 'tries')),
      newName: 'attempts',
    });
    expect(Object.keys(edit.changes!).map((u) => u.slice(u.lastIndexOf('/') + 1))).toEqual([
      'pin.yaml',
      'caller.yaml',
      'pin.test.yaml',
    ]);
    await expect(
      ws.client.request('textDocument/rename', {
        ...inside(ws.path('flows/pin.yaml'), rangeOf(pin, 'tries')),
        newName: 'k19999',
      }),
    ).rejects.toThrow("caller.yaml already has 'k19999' beside 'tries' (line 5)");
    // each map's keys listed once: once per key (400 million names) took over 30 s, past the timeout
  }, 30_000);
});
