import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Location } from 'vscode-languageserver';
import { at, inside, places, rangeOf, workspace, type Workspace } from './workspace-fixture.js';

const MAIN = readFileSync(new URL('../fixtures/lsp-nav/main.yaml', import.meta.url), 'utf8');
const MODULE = readFileSync(new URL('../fixtures/lsp-nav/pin-check.yaml', import.meta.url), 'utf8');
const OTHER = readFileSync(new URL('../fixtures/lsp-nav/other.yaml', import.meta.url), 'utf8');

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace({ 'main.yaml': MAIN, 'pin-check.yaml': MODULE, 'other.yaml': OTHER });
});
afterEach(() => ws.dispose());

const definition = (file: string, text: string, word: string, n = 0, part?: string) =>
  ws.client
    .request<Location[] | null>('textDocument/definition', inside(ws.path(file), rangeOf(text, word, n, part)))
    .then((l) => places(ws.dir, l));
const references = (file: string, text: string, word: string, n = 0, part?: string, includeDeclaration = true) =>
  ws.client
    .request<Location[] | null>('textDocument/references', {
      ...inside(ws.path(file), rangeOf(text, word, n, part)),
      context: { includeDeclaration },
    })
    .then((l) => places(ws.dir, l));

describe('modules', () => {
  it("goes from a subflow step's flow: to the module's module: key, in its file", async () => {
    expect(await definition('main.yaml', MAIN, 'pin-check')).toEqual([at('pin-check.yaml', rangeOf(MODULE, 'module'))]);
  });

  it('lists the subflow steps that enter a module, in every flow of the directory', async () => {
    const from = await references('pin-check.yaml', MODULE, 'module');
    expect(from).toEqual([
      at('pin-check.yaml', rangeOf(MODULE, 'module')),
      at('main.yaml', rangeOf(MAIN, 'pin-check')),
      at('other.yaml', rangeOf(OTHER, 'pin-check')),
    ]);
    expect(await references('other.yaml', OTHER, 'pin-check', 0, undefined, false)).toEqual(from.slice(1));
  });

  it('goes to the top of a flow that a subflow step names but that is no module', async () => {
    ws.write('plain.yaml', 'version: 2\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    const text = OTHER.replace('flow: pin-check', 'flow: plain');
    ws.client.open(ws.path('other.yaml'), text);
    expect(await definition('other.yaml', text, 'plain')).toEqual(['plain.yaml@0:0-0']);
  });

  it('answers null for a module no file declares', async () => {
    const text = OTHER.replace('flow: pin-check', 'flow: pin-chek');
    ws.client.open(ws.path('other.yaml'), text);
    expect(await definition('other.yaml', text, 'pin-chek')).toEqual([]);
  });
});

describe("a module's params", () => {
  it("goes from a with: key to the module's module.params entry", async () => {
    expect(await definition('main.yaml', MAIN, 'tries')).toEqual([at('pin-check.yaml', rangeOf(MODULE, 'tries'))]);
  });

  it("lists the param's declaration, its reads in the module and the with: keys of every caller", async () => {
    const expected = [
      at('pin-check.yaml', rangeOf(MODULE, 'tries')),
      at('pin-check.yaml', rangeOf(MODULE, 'vars.tries', 0, 'tries')),
      at('main.yaml', rangeOf(MAIN, 'tries')),
      at('other.yaml', rangeOf(OTHER, 'tries')),
    ];
    expect(await references('pin-check.yaml', MODULE, 'tries')).toEqual(expected);
    expect(await references('main.yaml', MAIN, 'tries')).toEqual(expected);
  });
});

describe('prompts, calendars and environment keys', () => {
  it('goes from { prompt: x } to the prompts: key, and lists its uses', async () => {
    const decl = at('main.yaml', rangeOf(MAIN, 'welcome', 0));
    expect(await definition('main.yaml', MAIN, 'welcome', 1)).toEqual([decl]);
    expect(await references('main.yaml', MAIN, 'welcome', 0)).toEqual([
      decl,
      at('main.yaml', rangeOf(MAIN, 'welcome', 1)),
    ]);
  });

  it('goes from a calendar step and from open("x") to the calendars: key; lists both uses', async () => {
    const decl = at('main.yaml', rangeOf(MAIN, 'office'));
    expect(await definition('main.yaml', MAIN, 'office', 1)).toEqual([decl]);
    expect(await definition('main.yaml', MAIN, 'office', 2)).toEqual([decl]);
    expect(await references('main.yaml', MAIN, 'office', 0)).toEqual([
      decl,
      at('main.yaml', rangeOf(MAIN, 'office', 1)),
      at('main.yaml', rangeOf(MAIN, 'office', 2)),
    ]);
  });

  it('goes from env.x to the key in each environment; lists the reads in conditions and templates', async () => {
    const decls = [at('main.yaml', rangeOf(MAIN, 'site', 0)), at('main.yaml', rangeOf(MAIN, 'site', 1))];
    expect(await definition('main.yaml', MAIN, 'env.site', 0, 'site')).toEqual(decls);
    expect(await definition('main.yaml', MAIN, 'env.site', 1, 'site')).toEqual(decls);
    expect(await references('main.yaml', MAIN, 'site', 0, undefined, false)).toEqual([
      at('main.yaml', rangeOf(MAIN, 'env.site', 0, 'site')),
      at('main.yaml', rangeOf(MAIN, 'env.site', 1, 'site')),
    ]);
  });
});
