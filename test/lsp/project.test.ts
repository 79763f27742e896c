/**
 * What a change reaches beyond its file: the flows that enter a module, the config that routes to flows; and what
 * a client cannot make the server do (a document that is no file, a file too large, a burst of changes).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathToUri } from '../../src/lsp/uris.js';
import { lspClient, type TestClient } from './client.js';
import { workspace, type Workspace } from './workspace-fixture.js';

const MODULE = `version: 2
name: pin-check
module:
  params: { account: required }
  results: [verified, locked]
start: ask
steps:
  ask:
    read: { prompt: "Enter the PIN of account {{ vars.account }}.", max_digits: 4 }
    on: { "1234": done, default: fail, TIMEOUT: fail }
  done: { return: verified }
  fail: { return: locked }
`;

const MAIN = `version: 2
name: main
start: verify
steps:
  verify:
    subflow: { flow: pin-check, with: { account: "123" } }
    on: { verified: bye, locked: bye }
  bye: { hangup: {} }
`;

let ws: Workspace;
let dir: string;
let client: TestClient;
beforeEach(async () => {
  ws = await workspace({});
  ({ dir, client } = ws);
});
afterEach(() => ws.dispose());

describe('across files', () => {
  it("a module's change reaches the flow that enters it, open or not", async () => {
    writeFileSync(join(dir, 'pin-check.yaml'), MODULE);
    writeFileSync(join(dir, 'main.yaml'), MAIN);
    client.open(join(dir, 'pin-check.yaml'), MODULE);
    expect(await client.diagnostics(join(dir, 'pin-check.yaml'))).toEqual([]);
    // the module renames its param: main passes one it does not take, and misses the required one
    client.change(join(dir, 'pin-check.yaml'), MODULE.replace('account: required', 'acct: required'));
    const diags = await client.diagnostics(join(dir, 'main.yaml'), (d) => d.length > 0);
    expect(diags.map((d) => [d.code, d.range.start.line])).toEqual([
      ['UNKNOWN_PARAM', 5],
      ['MISSING_PARAM', 5],
    ]);
    client.change(join(dir, 'pin-check.yaml'), MODULE);
    expect(await client.diagnostics(join(dir, 'main.yaml'), (d) => d.length === 0)).toEqual([]);
  });

  it('a module changed on disk, not open, reaches the open flow that enters it (didChangeWatchedFiles)', async () => {
    writeFileSync(join(dir, 'pin-check.yaml'), MODULE);
    client.open(join(dir, 'main.yaml'), MAIN);
    expect(await client.diagnostics(join(dir, 'main.yaml'))).toEqual([]);
    const renamed = MODULE.replace('[verified, locked]', '[ok, locked]').replace('return: verified', 'return: ok');
    writeFileSync(join(dir, 'pin-check.yaml'), renamed);
    await client.rpc.sendNotification('workspace/didChangeWatchedFiles', {
      changes: [{ uri: pathToUri(join(dir, 'pin-check.yaml')), type: 2 }],
    });
    const diags = await client.diagnostics(join(dir, 'main.yaml'), (d) => d.length > 0);
    expect(diags.map((d) => [d.code, d.range.start.line])).toEqual([
      ['UNKNOWN_RESULT', 6],
      ['UNHANDLED_RESULT', 4],
    ]);
  });

  it('a flow deleted from disk takes its diagnostics with it', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, MAIN.replace('verified: bye', 'verified: bey'));
    writeFileSync(join(dir, 'pin-check.yaml'), MODULE);
    client.open(join(dir, 'pin-check.yaml'), MODULE);
    expect((await client.diagnostics(bad, (d) => d.length > 0)).map((d) => d.code)).toEqual(['UNKNOWN_STEP']);
    rmSync(bad);
    await client.rpc.sendNotification('workspace/didChangeWatchedFiles', {
      changes: [{ uri: pathToUri(bad), type: 3 }],
    });
    expect(await client.diagnostics(bad, (d) => d.length === 0)).toEqual([]);
  });

  it('a callscript.yaml changed on disk, not open, has the flows directory it names checked again', async () => {
    mkdirSync(join(dir, 'ivr'));
    const flow = join(dir, 'ivr', 'main.yaml');
    const text = `version: 1\nstart: a\nsteps:\n  a: { say: "${'x'.repeat(2000)}", next: b }\n  b: { hangup: {} }\n`;
    writeFileSync(flow, text);
    writeFileSync(join(dir, 'callscript.yaml'), 'server:\n  flows_dir: ivr\n');
    client.open(flow, text);
    expect(await client.diagnostics(flow)).toEqual([]);
    writeFileSync(join(dir, 'callscript.yaml'), 'server:\n  flows_dir: ivr\nlimits:\n  flow_file_bytes: 1024\n');
    await client.rpc.sendNotification('workspace/didChangeWatchedFiles', {
      changes: [{ uri: pathToUri(join(dir, 'callscript.yaml')), type: 2 }],
    });
    const diags = await client.diagnostics(flow, (d) => d.length > 0);
    expect(diags.map((d) => d.code)).toEqual(['FILE_TOO_LARGE']);
  });

  it("a config's route to a flow its directory lacks is UNKNOWN_ROUTE_FLOW, with a did-you-mean", async () => {
    mkdirSync(join(dir, 'flows'));
    writeFileSync(join(dir, 'flows', 'main.yaml'), MAIN.replace(/subflow[\s\S]*$/, 'hangup: {}\n'));
    const cfg = join(dir, 'callscript.yaml');
    const text = 'routes:\n  default: mian\n';
    writeFileSync(cfg, text);
    client.open(cfg, text);
    const [d, ...rest] = await client.diagnostics(cfg, (d) => d.length > 0);
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      code: 'UNKNOWN_ROUTE_FLOW',
      range: { start: { line: 1, character: 11 }, end: { line: 1, character: 15 } },
    });
    expect(d!.message).toContain("did you mean 'main'?");
  });
});

describe('file events', () => {
  it('asks a client that lets it to watch the YAML files; not a client that does not', async () => {
    const watching = await lspClient(
      dir,
      { debounceMs: 0 },
      { workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
    );
    try {
      // the registration is asked for as the server handles `initialized`, before it answers the next request
      await watching.request('textDocument/hover', {
        textDocument: { uri: 'untitled:x' },
        position: { line: 0, character: 0 },
      });
      expect(watching.registrations).toEqual([
        {
          method: 'workspace/didChangeWatchedFiles',
          registerOptions: { watchers: [{ globPattern: '**/*.{yaml,yml}' }] },
        },
      ]);
    } finally {
      await watching.dispose();
    }
    await client.request('textDocument/hover', {
      textDocument: { uri: 'untitled:x' },
      position: { line: 0, character: 0 },
    });
    expect(client.registrations).toEqual([]);
  });
});

describe('which YAML files are flows', () => {
  it('outside a flows directory, only those that look like one (steps:, start: or module: on top)', async () => {
    const compose = join(dir, 'docker-compose.yml');
    const flow = join(dir, 'ivr.yaml');
    writeFileSync(compose, 'services:\n  web: { image: nginx }\n');
    client.open(compose, 'services:\n  web: { image: nginx }\n');
    client.open(flow, 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n  b: { hangup: {} }\n');
    expect((await client.diagnostics(flow, (d) => d.length > 0)).map((d) => d.code)).toEqual(['UNREACHABLE_STEP']);
    expect(client.history(compose)).toEqual([]);
  });
});

describe('hostile', () => {
  it('ignores a document that is not a file (untitled:), and still serves the others', async () => {
    await client.rpc.sendNotification('textDocument/didOpen', {
      textDocument: { uri: 'untitled:Untitled-1', languageId: 'yaml', version: 1, text: 'steps: [' },
    });
    expect(
      await client.request('textDocument/definition', {
        textDocument: { uri: 'untitled:Untitled-1' },
        position: { line: 0, character: 1 },
      }),
    ).toBeNull();
    mkdirSync(join(dir, 'flows'));
    const file = join(dir, 'flows', 'x.yaml');
    client.open(file, 'version: 1\n');
    expect((await client.diagnostics(file, (d) => d.length > 0)).map((d) => d.code)).toEqual([
      'MISSING_KEY',
      'MISSING_KEY',
    ]);
  });

  it('a file over the size limit is one FILE_TOO_LARGE at 1:1, not a parse of it', async () => {
    mkdirSync(join(dir, 'flows'));
    const file = join(dir, 'flows', 'huge.yaml');
    client.open(file, `version: 1\n# ${'x'.repeat(3 * 1024 * 1024)}\n`);
    const diags = await client.diagnostics(file, (d) => d.length > 0);
    expect(diags.map((d) => [d.code, d.range.start])).toEqual([['FILE_TOO_LARGE', { line: 0, character: 0 }]]);
  });

  it('a burst of changes is checked once, for the last text', async () => {
    const slow = await lspClient(dir, { debounceMs: 500 }); // far longer than 20 notifications take to arrive
    try {
      const file = join(dir, 'burst.yaml');
      const flow = (target: string) =>
        `version: 1\nstart: a\nsteps:\n  a: { say: "Hi.", next: ${target} }\n  b: { hangup: {} }\n`;
      slow.open(file, flow('x1'));
      for (let i = 2; i <= 20; i++) slow.change(file, flow(`x${i}`));
      await slow.diagnostics(file, (d) => d.some((x) => String(x.message).includes("'x20'")));
      const seen = slow.history(file).map((ds) => ds.map((d) => String(d.message).split('\n')[0]));
      expect(seen).toEqual([["no step 'x20' in this flow"]]);
    } finally {
      await slow.dispose();
    }
  });
});
