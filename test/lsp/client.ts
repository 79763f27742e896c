/**
 * An in-process language client for the protocol tests: the server (startServer) and a JSON-RPC client joined by
 * two pipes, as an editor joins them over stdio. Documents are named by absolute path; diagnostics are kept as
 * the server publishes them, and awaited with a bound.
 */
import { PassThrough } from 'node:stream';
import {
  createConnection,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type Diagnostic,
  type MessageConnection,
} from 'vscode-languageserver/node';
import { startServer, type LspOptions } from '../../src/lsp/server.js';
import { pathToUri } from '../../src/lsp/uris.js';

export interface TestClient {
  rpc: MessageConnection;
  open(path: string, text: string): void;
  /** Replaces the whole text (version + 1). */
  change(path: string, text: string): void;
  close(path: string): void;
  /** The diagnostics last published for `path`, once `ready` holds of them (5 s at most). */
  diagnostics(path: string, ready?: (d: Diagnostic[]) => boolean): Promise<Diagnostic[]>;
  /** Every publication for `path` so far, in order (its diagnostics' codes and first message lines). */
  history(path: string): Diagnostic[][];
  request<T>(method: string, params: object): Promise<T>;
  /** What the server asked the client to register (client/registerCapability), in order. */
  registrations: { method: string; registerOptions?: unknown }[];
  /** Shuts the server down (nothing is published after) and closes the pipes. */
  dispose(): Promise<void>;
}

export async function lspClient(
  root: string,
  opts: LspOptions = { debounceMs: 0 },
  capabilities: object = {},
): Promise<TestClient> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
  startServer(server, opts);
  const rpc = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  const published = new Map<string, Diagnostic[]>();
  const log: { uri: string; diagnostics: Diagnostic[] }[] = [];
  const waiters = new Set<() => void>();
  rpc.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diagnostic[] }) => {
    published.set(p.uri, p.diagnostics);
    log.push(p);
    for (const w of [...waiters]) w();
  });
  rpc.onRequest('workspace/configuration', () => []);
  const registrations: TestClient['registrations'] = [];
  rpc.onRequest('client/registerCapability', (p: { registrations: TestClient['registrations'] }) => {
    registrations.push(...p.registrations.map(({ method, registerOptions }) => ({ method, registerOptions })));
    return null;
  });
  rpc.listen();
  await rpc.sendRequest('initialize', { processId: null, rootUri: pathToUri(root), capabilities });
  await rpc.sendNotification('initialized', {});
  const versions = new Map<string, number>();
  return {
    rpc,
    open(path, text) {
      versions.set(path, 1);
      void rpc.sendNotification('textDocument/didOpen', {
        textDocument: { uri: pathToUri(path), languageId: 'yaml', version: 1, text },
      });
    },
    change(path, text) {
      const version = (versions.get(path) ?? 1) + 1;
      versions.set(path, version);
      void rpc.sendNotification('textDocument/didChange', {
        textDocument: { uri: pathToUri(path), version },
        contentChanges: [{ text }],
      });
    },
    close(path) {
      void rpc.sendNotification('textDocument/didClose', { textDocument: { uri: pathToUri(path) } });
    },
    diagnostics(path, ready = () => true) {
      const uri = pathToUri(path);
      return new Promise((resolve, reject) => {
        const check = () => {
          const d = published.get(uri);
          if (d && ready(d)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(d);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no diagnostics for ${path} as expected: last ${JSON.stringify(published.get(uri))}`));
        }, 5000);
        waiters.add(check);
        check();
      });
    },
    history: (path) => log.filter((p) => p.uri === pathToUri(path)).map((p) => p.diagnostics),
    request: (method, params) => rpc.sendRequest(method, params),
    registrations,
    async dispose() {
      await rpc.sendRequest('shutdown');
      rpc.dispose();
      server.dispose();
      toServer.destroy();
      toClient.destroy();
    },
  };
}
