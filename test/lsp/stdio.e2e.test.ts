/**
 * `callscript lsp --stdio` as an editor starts it: a process, the protocol on its stdin and stdout. Each feature once
 * through the real transport (open, change, completion, hover, definition, references, rename, code action), what
 * the process does with input that is no message (it says so on stderr and answers the next request), a flow file
 * that is no UTF-8 beside the one edited, and a clean exit after shutdown. The features' details are the in-process
 * tests' (client.ts joins the server to a client by two pipes).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type CodeAction,
  type CompletionList,
  type Diagnostic,
  type Hover,
  type Location,
  type MessageConnection,
  type WorkspaceEdit,
} from 'vscode-languageserver/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathToUri } from '../../src/lsp/uris.js';
import { CLI } from '../helpers/cli.js';

const FLOW = `version: 1
start: welcome
steps:
  welcome:
    say: "Hello."
    next: mneu
  menu:
    read: { prompt: "Press 1.", max_digits: 1 }
    save: choice
    on: { "1": goodbye, TIMEOUT: goodbye, default: goodbye }
  goodbye:
    say: "You chose {{ vars.choice }}."
    next: end
  end:
    hangup: {}
`;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;
let file: string;
let uri: string;
let latin: string;
let child: ChildProcessWithoutNullStreams;
let rpc: MessageConnection;
let stderr = '';
let exited: Promise<number | null>;
const published = new Map<string, Diagnostic[]>();
const waiters = new Set<() => void>();

/** The diagnostics published for `path` once `ready` holds of them (30 s at most: a process under load). */
function diagnostics(path: string, ready: (d: Diagnostic[]) => boolean): Promise<Diagnostic[]> {
  const u = pathToUri(path);
  return new Promise((resolve, reject) => {
    const check = () => {
      const d = published.get(u);
      if (!d || !ready(d)) return;
      waiters.delete(check);
      clearTimeout(timer);
      resolve(d);
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`no diagnostics for ${path} as expected: ${JSON.stringify(published.get(u))}\n${stderr}`));
    }, 30_000);
    waiters.add(check);
    check();
  });
}

const at = (line: number, character: number) => ({ textDocument: { uri }, position: { line, character } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lsp-stdio-'));
  mkdirSync(join(dir, 'flows'));
  file = join(dir, 'flows', 'desk.yaml');
  uri = pathToUri(file);
  writeFileSync(file, FLOW);
  // a flow of the directory in Latin-1 (é as the one byte 0xE9, no UTF-8): read as the server reads it, checked
  latin = join(dir, 'flows', 'latin.yaml');
  writeFileSync(
    latin,
    Buffer.concat([
      Buffer.from('version: 1\nstart: a\nsteps:\n  a:\n    say: "Caf'),
      Buffer.from([0xe9, 0xff]),
      Buffer.from('."\n    next: bb\n  b: { hangup: {} }\n'),
    ]),
  );
  // from the repository (`--import tsx` is found from the working directory); the flows are named by absolute path
  child = spawn(process.execPath, [...CLI, 'lsp', '--stdio'], { cwd: ROOT });
  child.stderr.on('data', (d) => (stderr += d));
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  rpc = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  rpc.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diagnostic[] }) => {
    published.set(p.uri, p.diagnostics);
    for (const w of [...waiters]) w();
  });
  rpc.listen();
  const init = rpc.sendRequest('initialize', { processId: process.pid, rootUri: pathToUri(dir), capabilities: {} });
  const died = exited.then((code) => Promise.reject(new Error(`callscript lsp exited (${code}):\n${stderr}`)));
  await Promise.race([init, died]);
  await rpc.sendNotification('initialized', {});
}, 60_000);

afterAll(() => {
  rpc?.dispose();
  if (child?.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('callscript lsp --stdio, a process', () => {
  it('publishes the diagnostics of the flow opened, and of the Latin-1 flow beside it', async () => {
    await rpc.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'yaml', version: 1, text: FLOW },
    });
    const [d, ...rest] = await diagnostics(file, (x) => x.length > 0);
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      code: 'UNKNOWN_STEP',
      range: { start: { line: 5, character: 10 }, end: { line: 5, character: 14 } },
      message: "no step 'mneu' in this flow\ndid you mean 'menu'?",
    });
    const [l, ...more] = await diagnostics(latin, (x) => x.length > 0);
    expect(more).toEqual([]);
    expect(l).toMatchObject({ code: 'UNKNOWN_STEP', range: { start: { line: 5, character: 10 } } });
  }, 60_000);

  it('offers the quick fix of the did-you-mean', async () => {
    const diags = await diagnostics(file, (x) => x.length > 0);
    const actions = await rpc.sendRequest<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: diags[0]!.range,
      context: { diagnostics: diags },
    });
    expect(actions.map((a) => [a.title, a.edit])).toEqual([
      ["Change to 'menu'", { changes: { [uri]: [{ range: diags[0]!.range, newText: 'menu' }] } }],
    ]);
  }, 30_000);

  it('takes a change (incremental) and publishes the flow clean', async () => {
    await rpc.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 5, character: 10 }, end: { line: 5, character: 14 } }, text: 'menu' }],
    });
    expect(await diagnostics(file, (x) => x.length === 0)).toEqual([]);
  }, 30_000);

  it('completes step ids after next:', async () => {
    // `    next: end` (line 12): the cursor after `next: `
    const list = await rpc.sendRequest<CompletionList>('textDocument/completion', at(12, 10));
    expect(list.items.map((i) => i.label)).toEqual(['welcome', 'menu', 'goodbye', 'end']);
  }, 30_000);

  it("hovers a step's reference with the step's summary", async () => {
    const h = await rpc.sendRequest<Hover>('textDocument/hover', at(5, 11));
    expect(h.contents).toEqual({
      kind: 'markdown',
      value: [
        '**step `menu`** (line 7): `read` prompt: "Press 1.", max_digits: 1',
        '',
        '- `1` → `goodbye`',
        '- `TIMEOUT` → `goodbye`',
        '- `default` → `goodbye`',
        '',
        'saves `vars.choice`',
      ].join('\n'),
    });
  }, 30_000);

  it('goes to the definition of a variable, and lists its references', async () => {
    // `{{ vars.choice }}` on line 12 (0-based 11)
    const defs = await rpc.sendRequest<Location[]>('textDocument/definition', at(11, 30));
    expect(defs).toEqual([{ uri, range: { start: { line: 8, character: 10 }, end: { line: 8, character: 16 } } }]);
    const refs = await rpc.sendRequest<Location[]>('textDocument/references', {
      ...at(11, 30),
      context: { includeDeclaration: false },
    });
    expect(refs).toEqual([{ uri, range: { start: { line: 11, character: 28 }, end: { line: 11, character: 34 } } }]);
  }, 30_000);

  it('renames a step at its key and at every target', async () => {
    const edit = await rpc.sendRequest<WorkspaceEdit>('textDocument/rename', { ...at(10, 3), newName: 'bye' });
    const lines = (edit.changes?.[uri] ?? []).map((e) => [e.range.start.line, e.range.start.character, e.newText]);
    expect(lines).toEqual([
      [10, 2, 'bye'],
      [9, 15, 'bye'],
      [9, 33, 'bye'],
      [9, 51, 'bye'],
    ]);
  }, 30_000);

  it('drops input that is no message, says so on stderr, and answers the next request', async () => {
    child.stdin.write('Garbage-Header\r\n\r\nxxxx');
    child.stdin.write('Content-Length: 99999999999\r\n\r\n{}');
    const list = await rpc.sendRequest<CompletionList>('textDocument/completion', at(12, 10));
    expect(list.items.map((i) => i.label)).toEqual(['welcome', 'menu', 'goodbye', 'end']);
    expect(stderr).toContain(
      'callscript lsp: dropped input that is no message of the protocol (a header line without a name: ' +
        '"Garbage-Header")',
    );
  }, 30_000);

  it('exits with 0 after shutdown and exit', async () => {
    await rpc.sendRequest('shutdown');
    await rpc.sendNotification('exit');
    expect(await exited).toBe(0);
  }, 30_000);
});
