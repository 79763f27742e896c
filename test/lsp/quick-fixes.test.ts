import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CodeAction, Diagnostic, TextEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { pathToUri } from '../../src/lsp/uris.js';
import { rangeOf, workspace, type Workspace } from './workspace-fixture.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace({});
});
afterEach(() => ws.dispose());

const flow = (...steps: string[]) => ['version: 2', 'start: a', 'steps:', ...steps].join('\n') + '\n';

/** The published diagnostics of `text` (opened as `name`) of `code`, and the actions offered for them. */
async function fixes(name: string, text: string, code: string, only?: string[]) {
  const path = ws.path(name);
  ws.client.open(path, text);
  const all = await ws.client.diagnostics(path, (d) => d.some((x) => x.code === code));
  const diagnostics = all.filter((d) => d.code === code);
  const actions = await ws.client.request<CodeAction[]>('textDocument/codeAction', {
    textDocument: { uri: pathToUri(path) },
    range: diagnostics[0]!.range,
    context: { diagnostics, ...(only ? { only } : {}) },
  });
  return { diagnostics, actions, path };
}

/** `text` once the action's edit is applied. */
function applied(text: string, a: CodeAction | undefined): string {
  const [edits] = Object.values(a?.edit?.changes ?? {});
  return TextDocument.applyEdits(TextDocument.create('x', 'yaml', 1, text), (edits ?? []) as TextEdit[]);
}

/** The one action offered: its title, preference and kind, and the range it edits. */
function only(actions: CodeAction[], d: Diagnostic) {
  expect(actions).toHaveLength(1);
  const [a] = actions;
  expect(a!.kind).toBe('quickfix');
  expect(a!.isPreferred).toBe(true);
  expect(a!.diagnostics).toEqual([d]);
  return { title: a!.title, range: Object.values(a!.edit!.changes!)[0]![0]!.range };
}

describe('quick fixes of did-you-mean hints', () => {
  it("UNKNOWN_STEP: changes the target to the step meant, at the word alone ('Change to ...')", async () => {
    const text = flow('  a: { say: "Hi.", next: mnu }', '  menu: { hangup: {} }');
    const { diagnostics, actions } = await fixes('a.yaml', text, 'UNKNOWN_STEP');
    expect(diagnostics[0]!.range).toEqual(rangeOf(text, 'mnu'));
    expect(only(actions, diagnostics[0]!)).toEqual({ title: "Change to 'menu'", range: rangeOf(text, 'mnu') });
    expect(applied(text, actions[0])).toBe(text.replace('mnu', 'menu'));
  });

  it('UNKNOWN_STEP in quotes: the word inside them; a plain one YAML would read as a number: quoted', async () => {
    const quoted = flow('  a: { say: "Hi.", next: "mnu" }', '  menu: { hangup: {} }');
    const q = await fixes('q.yaml', quoted, 'UNKNOWN_STEP');
    expect(only(q.actions, q.diagnostics[0]!).range).toEqual(rangeOf(quoted, 'mnu'));
    expect(applied(quoted, q.actions[0])).toBe(quoted.replace('"mnu"', '"menu"'));
    const digits = flow('  a: { say: "Hi.", next: 00a7 }', '  "0007": { hangup: {} }');
    const n = await fixes('n.yaml', digits, 'UNKNOWN_STEP');
    expect(only(n.actions, n.diagnostics[0]!).title).toBe("Change to '0007'");
    expect(applied(digits, n.actions[0])).toBe(digits.replace('next: 00a7', 'next: "0007"'));
  });

  it('UNKNOWN_KEY: the key, at the top level and in a step', async () => {
    const text =
      'version: 2\ndescripton: A menu.\nstart: a\nsteps:\n  a:\n    sya: "Hi."\n    next: b\n  b: { hangup: {} }\n';
    const { diagnostics, actions } = await fixes('k.yaml', text, 'UNKNOWN_KEY');
    expect(diagnostics.map((d) => d.range)).toEqual([rangeOf(text, 'descripton'), rangeOf(text, 'sya')]);
    expect(actions.map((a) => a.title)).toEqual(["Change to 'description'", "Change to 'say'"]);
    expect(applied(text, actions[0])).toBe(text.replace('descripton', 'description'));
    expect(applied(text, actions[1])).toBe(text.replace('sya', 'say'));
  });

  it('UNKNOWN_VARIABLE: the name alone in vars.x of a template, and call.x of a condition', async () => {
    const text = flow(
      '  a: { read: { prompt: "Press 1.", max_digits: 1 }, save: choice, next: b }',
      '  b: { say: "You chose {{ vars.choise }}.", next: c }',
      '  c: { when: \'call.calle == "x"\', then: d, else: d }',
      '  d: { hangup: {} }',
    );
    const { diagnostics, actions } = await fixes('v.yaml', text, 'UNKNOWN_VARIABLE');
    expect(diagnostics.map((d) => d.range)).toEqual([rangeOf(text, 'vars.choise'), rangeOf(text, 'call.calle')]);
    expect(actions.map((a) => a.title)).toEqual(["Change to 'choice'", "Change to 'caller'"]);
    const edits = actions.map((a) => Object.values(a.edit!.changes!)[0]![0]);
    expect(edits).toEqual([
      { range: rangeOf(text, 'vars.choise', 0, 'choise'), newText: 'choice' },
      { range: rangeOf(text, 'call.calle', 0, 'calle'), newText: 'caller' },
    ]);
    expect(applied(text, actions[0])).toBe(text.replace('vars.choise', 'vars.choice'));
  });

  it('IMPOSSIBLE_RESULT: a result key of on:', async () => {
    const text = flow(
      '  a:',
      '    read: { prompt: "Press 1.", max_digits: 1 }',
      '    on: { "1": b, TIMOUT: a }',
      '  b: { hangup: {} }',
    );
    const { diagnostics, actions } = await fixes('r.yaml', text, 'IMPOSSIBLE_RESULT');
    expect(only(actions, diagnostics[0]!)).toEqual({ title: "Change to 'TIMEOUT'", range: rangeOf(text, 'TIMOUT') });
    expect(applied(text, actions[0])).toBe(text.replace('TIMOUT', 'TIMEOUT'));
  });

  it('UNKNOWN_CALENDAR in open("x"): the name inside the condition', async () => {
    const text =
      'version: 2\nstart: a\ncalendars:\n  office: { timezone: UTC, weekly: { mon: "09:00-17:00" } }\nsteps:\n' +
      '  a: { when: \'open("ofice")\', then: b, else: b }\n  b: { hangup: {} }\n';
    const { diagnostics, actions } = await fixes('c.yaml', text, 'UNKNOWN_CALENDAR');
    expect(only(actions, diagnostics[0]!)).toEqual({ title: "Change to 'office'", range: rangeOf(text, 'ofice') });
  });

  it("UNKNOWN_MODULE: a module's name in a subflow step (the link stage's hint)", async () => {
    ws.write('pin-check.yaml', 'version: 2\nstart: a\nmodule: { results: [ok] }\nsteps:\n  a: { return: ok }\n');
    const text = flow('  a:', '    subflow: { flow: pin-chek }', '    on: { ok: b }', '  b: { hangup: {} }');
    const { diagnostics, actions } = await fixes('main.yaml', text, 'UNKNOWN_MODULE');
    expect(only(actions, diagnostics[0]!)).toEqual({
      title: "Change to 'pin-check'",
      range: rangeOf(text, 'pin-chek'),
    });
  });

  it('UNKNOWN_PARAM: a with: key, the key alone (not its colon)', async () => {
    ws.write(
      'pin-check.yaml',
      'version: 2\nstart: a\nmodule: { params: { tries: 3 }, results: [ok] }\nsteps:\n  a: { return: ok }\n',
    );
    const text = flow(
      '  a:',
      '    subflow: { flow: pin-check, with: { trie: 1 } }',
      '    on: { ok: b }',
      '  b: { hangup: {} }',
    );
    const { diagnostics, actions } = await fixes('main.yaml', text, 'UNKNOWN_PARAM');
    expect(diagnostics[0]!.range).toEqual(rangeOf(text, 'trie'));
    expect(only(actions, diagnostics[0]!)).toEqual({ title: "Change to 'tries'", range: rangeOf(text, 'trie') });
    expect(applied(text, actions[0])).toBe(text.replace('trie:', 'tries:'));
  });

  it('UNKNOWN_KEY in callscript.yaml', async () => {
    const text = 'servr:\n  port: 3000\n';
    const { diagnostics, actions } = await fixes('callscript.yaml', text, 'UNKNOWN_KEY');
    expect(only(actions, diagnostics[0]!)).toEqual({ title: "Change to 'server'", range: rangeOf(text, 'servr') });
  });

  it("UNKNOWN_ROUTE_FLOW in callscript.yaml: the route's flow", async () => {
    mkdirSync(join(ws.dir, 'flows'));
    writeFileSync(join(ws.dir, 'flows', 'hello.yaml'), flow('  a: { hangup: {} }'));
    const text = 'routes:\n  default: "helo"\n';
    const { diagnostics, actions } = await fixes('callscript.yaml', text, 'UNKNOWN_ROUTE_FLOW');
    expect(only(actions, diagnostics[0]!)).toEqual({ title: "Change to 'hello'", range: rangeOf(text, 'helo') });
    expect(applied(text, actions[0])).toBe('routes:\n  default: "hello"\n');
  });
});

describe('no quick fix', () => {
  it('for a key that belongs under the command (the fix is a move, not a word)', async () => {
    const text = flow(
      '  a:',
      '    read: { prompt: "Press 1." }',
      '    max_digit: 1',
      '    next: b',
      '  b: { hangup: {} }',
    );
    const { diagnostics, actions } = await fixes('m.yaml', text, 'UNKNOWN_KEY');
    expect(diagnostics[0]!.message).toContain("did you mean 'max_digits'? It is a parameter of read");
    expect(actions).toEqual([]);
  });

  it('for a hint with no suggestion, for another kind of action, for a diagnostic of another source', async () => {
    const text = flow('  a: { say: "Hi.", next: zzzzzz }', '  menu: { hangup: {} }');
    const none = await fixes('z.yaml', text, 'UNKNOWN_STEP');
    expect(none.actions).toEqual([]);
    const typo = flow('  a: { say: "Hi.", next: mnu }', '  menu: { hangup: {} }');
    expect((await fixes('t.yaml', typo, 'UNKNOWN_STEP', ['refactor'])).actions).toEqual([]);
    const { diagnostics, path } = await fixes('t.yaml', typo, 'UNKNOWN_STEP');
    const foreign = await ws.client.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri: pathToUri(path) },
      range: diagnostics[0]!.range,
      context: { diagnostics: [{ ...diagnostics[0]!, source: 'other' }] },
    });
    expect(foreign).toEqual([]);
  });

  it("for a range that holds no word the message names (the editor's stale diagnostic over changed text)", async () => {
    const typo = flow('  a: { say: "Hi.", next: mnu }', '  menu: { hangup: {} }');
    const { diagnostics, path } = await fixes('s.yaml', typo, 'UNKNOWN_STEP');
    const changed = typo.replace('mnu', 'xyz');
    ws.client.change(path, changed);
    await ws.client.diagnostics(path, (d) => d.some((x) => String(x.message).includes("'xyz'")));
    const stale = await ws.client.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri: pathToUri(path) },
      range: diagnostics[0]!.range,
      context: { diagnostics },
    });
    expect(stale).toEqual([]);
  });
});

describe('what a client may send', () => {
  it('a range past the text, a message of 10,000 quoted words, 5,000 diagnostics: bounded', async () => {
    const typo = flow('  a: { say: "Hi.", next: mnu }', '  menu: { hangup: {} }');
    const { diagnostics, path } = await fixes('h.yaml', typo, 'UNKNOWN_STEP');
    const d = diagnostics[0]!;
    const far = { ...d, range: { start: { line: 900, character: 0 }, end: { line: 900, character: 5 } } };
    const wordy = { ...d, message: `${"'x' ".repeat(10_000)}'mnu'\ndid you mean 'menu'?` };
    const many = Array.from({ length: 5000 }, () => d);
    const ask = (ds: Diagnostic[]) =>
      ws.client.request<CodeAction[]>('textDocument/codeAction', {
        textDocument: { uri: pathToUri(path) },
        range: d.range,
        context: { diagnostics: ds },
      });
    expect(await ask([far])).toEqual([]);
    // 'mnu' is past the words compared: no fix rather than a search through every word
    expect(await ask([wordy])).toEqual([]);
    expect((await ask(many)).length).toBe(500);
  });
});
