/**
 * What the server advertises in its answer to initialize: a client sends a request only for a capability it was
 * told of (Neovim answers "method textDocument/rename is not supported" without asking the server).
 */
import { PassThrough } from 'node:stream';
import {
  createConnection,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/lsp/server.js';

describe('initialize', () => {
  it('advertises definition, references, rename with prepareRename, completion, hover and quick fixes', async () => {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const server = createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
    startServer(server, { debounceMs: 0 });
    const rpc = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
    rpc.listen();
    try {
      const init: InitializeResult = await rpc.sendRequest('initialize', {
        processId: null,
        rootUri: null,
        capabilities: {},
      });
      expect(init.serverInfo).toEqual({ name: 'callscript' });
      expect(init.capabilities).toMatchObject({
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        completionProvider: { triggerCharacters: ['.', ' ', '(', '"', "'"] },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: ['quickfix'] },
      });
    } finally {
      rpc.dispose();
      server.dispose();
    }
  });
});
