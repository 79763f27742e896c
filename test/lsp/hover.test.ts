import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hover } from 'vscode-languageserver';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codeInfo } from '../../src/errors/catalogue.js';
import { COMMANDS } from '../../src/protocol/commands.js';
import { lspClient, type TestClient } from './client.js';
import { BANK, PIN_CHECK, at, doc, edit } from './fixtures.js';

let dir: string;
let file: string;
let client: TestClient;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lsp-'));
  file = join(dir, 'bank.yaml');
  writeFileSync(join(dir, 'pin-check.yaml'), PIN_CHECK);
  client = await lspClient(dir);
  client.open(file, BANK);
});
afterEach(async () => {
  await client.request('textDocument/hover', doc(file, 0, 0));
  await client.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** The hover at the mark of `text` (the document changed to it first). */
async function hoverAt(text: string): Promise<Hover | null> {
  const c = at(text);
  client.change(file, c.text);
  return client.request<Hover | null>('textDocument/hover', doc(file, c.line, c.character));
}

const md = (value: string) => ({ kind: 'markdown', value });
const range = (line: number, from: number, to: number) => ({
  start: { line, character: from },
  end: { line, character: to },
});

describe('commands and params', () => {
  it("shows a command's doc, its results and its params' bounds on the command's key", async () => {
    const h = await hoverAt(edit(BANK, '    read: {', '    re‸ad: {'));
    expect(h).toEqual({
      contents: md(
        `**read** (command): ${COMMANDS.read.doc} Results: the keys pressed, or TIMEOUT.\n\n` +
          '- `media_id`: media (required)\n' +
          '- `attempts`: integer 1..10, default 3\n' +
          '- `max_digits`: integer 1..20, default 1\n' +
          '- `timeout_ms`: integer 100..30000, default 5000\n' +
          '- `prompt`: media (required; alias of media_id)',
      ),
      range: range(28, 4, 8),
    });
  });

  it("shows a param's bounds and doc on the param's key", async () => {
    const h = await hoverAt(edit(BANK, 'max_digits: 1 }', 'max_‸digits: 1 }'));
    expect(h).toEqual({
      contents: md(`**read.max_digits**: integer 1..20, default 1\n\n${COMMANDS.read.params.max_digits!.doc}`),
      range: range(28, 32, 42),
    });
  });

  it('shows the doc line of the other keys of a step and of the top level', async () => {
    expect((await hoverAt(edit(BANK, '    save: choice', '    sa‸ve: choice')))?.contents).toEqual(
      md('**save**: Stores the result in vars.<name>.'),
    );
    expect((await hoverAt(edit(BANK, 'calendars:\n', 'calen‸dars:\n')))?.contents).toEqual(
      md(
        '**calendars**: Version 2: opening-hours calendars by name (calendar steps, open() and holiday() in ' +
          'conditions).',
      ),
    );
  });
});

describe('steps', () => {
  it('summarises a step on a reference to it: what it sends, where it goes, what it saves', async () => {
    const h = await hoverAt(edit(BANK, '{ "1": verify,', '{ "1": ver‸ify,'));
    expect(h).toEqual({
      contents: md(
        '**step `verify`** (line 32): `subflow` flow: pin-check, with: { account: "{{ vars.choice }}" }\n\n' +
          '- `verified` → `lookup`\n' +
          '- `locked` → `goodbye`\n\n' +
          'saves `vars.holder`',
      ),
      range: range(30, 15, 21),
    });
  });

  it('summarises a step on its own id, with retries and conditions', async () => {
    const text = edit(
      BANK,
      '  end:\n',
      '  ch‸eck:\n    switch:\n      - { when: "vars.tries > 2", goto: end }\n    default: menu\n  end:\n',
    );
    const h = await hoverAt(
      edit(text, 'TIMEOUT: goodbye, default: menu', 'TIMEOUT: { retry: 2, then: check }, default: menu'),
    );
    expect(h?.contents).toEqual(
      md('**step `check`** (line 42): `switch`\n\n- when `vars.tries > 2` → `end`\n- default → `menu`'),
    );
  });
});

describe('names', () => {
  it('says where a module and its params are declared: in the module file, not this flow', async () => {
    const h = await hoverAt(edit(BANK, 'flow: pin-check,', 'flow: pin-‸check,'));
    expect(h?.contents).toEqual(
      md("**module `pin-check`**\n\ndeclared in the module's file: go to definition opens it\n\nread at line 33"),
    );
  });

  it("lists a variable's declarations (where, with their line) and the lines that read it", async () => {
    const h = await hoverAt(edit(BANK, '{{ vars.holder }}', '{{ vars.hol‸der }}'));
    expect(h).toEqual({
      contents: md(
        '**vars.holder**\n\nset at:\n- line 34 (save: in step `verify`): `save: { holder: name }`\n\nread at line 40',
      ),
      range: range(39, 26, 32),
    });
  });

  it("lists an environment key's values, a calendar's and a prompt's declarations", async () => {
    expect((await hoverAt(edit(BANK, '{{ env.api }}', '{{ env.a‸pi }}')))?.contents).toEqual(
      md(
        '**env.api**\n\ndeclared at:\n' +
          '- line 19 (environment staging): `staging: { api: "https://staging.example" }`\n' +
          '- line 20 (environment production): `production: { api: "https://api.example" }`\n\n' +
          'read at line 37',
      ),
    );
    expect(await hoverAt(edit(BANK, 'calendar: office', 'calendar: off‸ice'))).toEqual({
      contents: md('**calendar `office`**\n\ndeclared at:\n- line 8 (calendars:): `office:`\n\nread at line 26'),
      range: range(25, 14, 20),
    });
    expect((await hoverAt(edit(BANK, 'say: { prompt: hello }', 'say: { prompt: hel‸lo }')))?.contents).toEqual(
      md('**prompt `hello`**\n\ndeclared at:\n- line 15 (prompts:): `hello:`\n\nread at line 23'),
    );
  });
});

describe('diagnostics', () => {
  it("shows the error code's doc from the catalogue on the diagnostic's range", async () => {
    const c = at(edit(BANK, 'next: end', 'next: mn‸u'));
    client.change(file, c.text);
    await client.diagnostics(file, (d) => d.some((x) => x.code === 'UNKNOWN_STEP'));
    const h = await client.request<Hover>('textDocument/hover', doc(file, c.line, c.character));
    const info = codeInfo('UNKNOWN_STEP');
    expect(h).toEqual({
      contents: md(`**UNKNOWN_STEP** (error): ${info.title}\n\n${info.hint}\n\n---\n\n**step \`mnu\`**: no such step`),
      range: range(40, 10, 13),
    });
  });
});

describe('error codes named in comments', () => {
  it("shows the code's doc on a code named in a comment, in a flow and in callscript.yaml", async () => {
    const c = at(edit(BANK, '  tries: 0', '  tries: 0 # a warning we keep: MAYBE_UN‸SET, see the wiki'));
    client.change(file, c.text);
    const h = await client.request<Hover>('textDocument/hover', doc(file, c.line, c.character));
    const info = codeInfo('MAYBE_UNSET');
    expect(h).toEqual({
      contents: md(`**MAYBE_UNSET** (warning): ${info.title}\n\n${info.hint}`),
      range: range(5, 32, 43),
    });
    const cfg = join(dir, 'callscript.yaml');
    client.open(cfg, '# FILE_TOO_LARGE past 2 MiB:\nlimits: { flow_file_bytes: 4194304 }\n');
    const onConfig = await client.request<Hover>('textDocument/hover', doc(cfg, 0, 3));
    expect(onConfig?.range).toEqual(range(0, 2, 16));
    expect((onConfig?.contents as { value: string }).value).toMatch(/^\*\*FILE_TOO_LARGE\*\* \(error\): /);
  });

  it('shows nothing for a code-like word outside a comment, nor for a word the catalogue lacks', async () => {
    expect(await hoverAt(edit(BANK, '"Hello."', '"NOT_FO‸UND."'))).toBeNull();
    expect(await hoverAt(edit(BANK, '  tries: 0', '  tries: 0 # NOT_A_CO‸DE'))).toBeNull();
  });
});

describe('hostile input', () => {
  it('answers null away from any name or key, past the end, and for a document that is no file', async () => {
    expect(await hoverAt(edit(BANK, '"Hello."', '"Hel‸lo."'))).toBeNull();
    expect(await client.request('textDocument/hover', doc(file, 10_000, 3))).toBeNull();
    expect(await client.request('textDocument/hover', doc(file, 3, 10_000))).toBeNull();
    const other = { textDocument: { uri: 'untitled:Untitled-1' }, position: { line: 0, character: 0 } };
    expect(await client.request('textDocument/hover', other)).toBeNull();
  });

  it('lists at most 20 lines of uses of a name read on thousands of lines', async () => {
    const says = Array.from({ length: 5000 }, (_, i) => `  s${i}: { say: "{{ vars.tries }}", next: end }`).join('\n');
    const text = edit(BANK, '  end:\n', `${says}\n  end:\n`).replace('  tries: 0', '  tr‸ies: 0');
    const h = await hoverAt(text);
    const lines = Array.from({ length: 20 }, (_, i) => 42 + i).join(', ');
    expect(h?.contents).toEqual(
      md(`**vars.tries**\n\nset at:\n- line 6 (vars:): \`tries: 0\`\n\nread at lines ${lines}, …`),
    );
  });
});
