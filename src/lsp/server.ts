/**
 * `callscript lsp`: the language server. Wires the protocol (vscode-languageserver) to the analysis: open documents
 * are an overlay over the disk, a change schedules the check of its directory (debounced), and the diagnostics of
 * every file it touched are published; requests read the index of the file's last check. Thin: each feature is a
 * function of its own module.
 */
import { dirname } from 'node:path';
import {
  CodeActionKind,
  createConnection,
  DidChangeWatchedFilesNotification,
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic } from '../errors/diagnostic.js';
import { Analyses } from './analysis.js';
import { completion, TRIGGER_CHARACTERS } from './completion.js';
import { hover } from './hover.js';
import { codeActions } from './fixes.js';
import { definition, references } from './navigate.js';
import { toLspDiagnostic } from './positions.js';
import { prepareRename, rename } from './rename.js';
import { checkConfig } from '../config/check.js';
import { fileKind, flowsDirOf, readText } from './project.js';
import { FrameGuard } from './framing.js';
import { FlowIndex } from './symbols.js';
import { pathToUri, uriToPath } from './uris.js';

export interface LspOptions {
  /** How long after the last change a directory is checked again, in ms (default 150). */
  debounceMs?: number;
}

/** What the features read: the open documents, the analyses, the index of a file as last checked. */
export interface LspContext {
  documents: TextDocuments<TextDocument>;
  analyses: Analyses;
  /** The text of a file: the open document's, else undefined. */
  text(path: string): string | undefined;
  /**
   * The index of a flow file, once its pending check (if any) has run. `lastGood`: at once, the index of the file's
   * last check that had a tree (completion, while the text is being typed; the first time, after its check).
   */
  index(path: string, opts?: { lastGood?: boolean }): Promise<FlowIndex | undefined>;
  /** The diagnostics last published for a file. */
  diagnostics(path: string): readonly Diagnostic[];
}

export function startServer(connection: Connection, opts: LspOptions = {}): LspContext {
  const debounceMs = opts.debounceMs ?? 150;
  const documents = new TextDocuments(TextDocument);
  const overlay = new Map<string, string>();
  const analyses = new Analyses(overlay);
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Map<string, Promise<void>>();
  const published = new Set<string>();
  const lastDiagnostics = new Map<string, readonly Diagnostic[]>();
  const indexes = new Map<string, { hash: unknown; index: FlowIndex }>();

  let stopped = false;
  const publish = (path: string, diags: readonly Diagnostic[], text: string | undefined) => {
    if (stopped) return;
    lastDiagnostics.set(path, diags);
    const open = documents.all().find((d) => uriToPath(d.uri) === path);
    if (diags.length === 0 && !published.has(path) && !open) return;
    if (diags.length === 0) published.delete(path);
    else published.add(path);
    const uri = open?.uri ?? pathToUri(path);
    void connection.sendDiagnostics({ uri, diagnostics: diags.map((d) => toLspDiagnostic(d, text)) });
  };

  const checkDir = async (dir: string): Promise<void> => {
    const flows = await analyses.flows(dir);
    for (const [file, diags] of flows.diagnostics) publish(file, diags, flows.texts.get(file));
    // a file of the directory that is gone (deleted, renamed) or no flow any more: its diagnostics go with it
    for (const path of [...published])
      if (dirname(path) === dir && fileKind(path) === 'flow' && !flows.diagnostics.has(path))
        publish(path, [], undefined);
    // the open configs (their routes name flows of a directory: any of them may have changed)
    for (const doc of documents.all()) {
      const path = uriToPath(doc.uri);
      if (path && fileKind(path) === 'config') publish(path, await analyses.config(path, doc.getText()), doc.getText());
    }
  };

  /** Runs the check of `dir` now (one at a time per directory; a check asked for while one runs runs after it). */
  const run = (dir: string): Promise<void> => {
    clearTimeout(timers.get(dir));
    timers.delete(dir);
    const prev = running.get(dir) ?? Promise.resolve();
    const next = prev
      .then(() => checkDir(dir))
      .catch((err: unknown) => {
        connection.console.error(`callscript lsp: checking ${dir} failed: ${String(err)}`);
      });
    running.set(dir, next);
    return next;
  };

  /** Checks `dir` once no change has come for debounceMs. */
  const arm = (dir: string) => {
    clearTimeout(timers.get(dir));
    if (!stopped)
      timers.set(
        dir,
        setTimeout(() => void run(dir), debounceMs),
      );
  };

  /** The flows directory a config serves, by its text. */
  const servedBy = (config: string, text: string) =>
    flowsDirOf(config, checkConfig(text, config).config?.server.flows_dir);

  /**
   * Checks again, once no change has come for debounceMs, the directory whose check covers `path`: a flow's own; for a
   * config, the flows directory it serves (by the open document's text, else by the disk's).
   */
  const schedule = (path: string) => {
    if (fileKind(path) !== 'config') return arm(dirname(path));
    const open = overlay.get(path);
    if (open !== undefined) return arm(servedBy(path, open));
    void readText(path, overlay).then((text) => arm(servedBy(path, text ?? '')));
  };

  const onText = (doc: TextDocument) => {
    const path = uriToPath(doc.uri);
    if (!path) return;
    overlay.set(path, doc.getText());
    if (fileKind(path) === 'flow' || fileKind(path) === 'config') schedule(path);
  };
  documents.onDidOpen((e) => onText(e.document));
  documents.onDidChangeContent((e) => onText(e.document));
  documents.onDidClose((e) => {
    const path = uriToPath(e.document.uri);
    if (!path) return;
    overlay.delete(path);
    if (fileKind(path) === 'flow') schedule(path);
  });
  connection.onDidChangeWatchedFiles((e) => {
    for (const c of e.changes) {
      const path = uriToPath(c.uri);
      if (path && !overlay.has(path) && (fileKind(path) === 'flow' || fileKind(path) === 'config')) schedule(path);
    }
  });

  const ctx: LspContext = {
    documents,
    analyses,
    text: (path) => overlay.get(path),
    async index(path, opts = {}) {
      if (fileKind(path) !== 'flow') return undefined;
      const dir = dirname(path);
      const cached = indexes.get(path);
      if (!opts.lastGood || !cached) {
        if (timers.has(dir) || !analyses.result(path)) await run(dir);
        else await running.get(dir);
      }
      const result = analyses.result(path);
      if (!result?.symbols) return opts.lastGood ? cached?.index : undefined;
      if (cached?.hash === result) return cached.index;
      const index = new FlowIndex(result.symbols, result.name);
      indexes.set(path, { hash: result, index });
      return index;
    },
    diagnostics: (path) => lastDiagnostics.get(path) ?? [],
  };

  const initializeResult: InitializeResult = {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      definitionProvider: true,
      referencesProvider: true,
      // without it a client (VS Code, Neovim) never sends prepareRename nor rename
      renameProvider: { prepareProvider: true },
      completionProvider: { triggerCharacters: TRIGGER_CHARACTERS },
      hoverProvider: true,
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
    },
    serverInfo: { name: 'callscript' },
  };
  // a client that lets the server ask for file events is asked for those of YAML files: a module changed on disk (by
  // another editor, a checkout) has the flows that enter it checked again. (VS Code's extension also asks on its own;
  // an event sent twice is checked once, after the debounce.)
  let watchFiles = false;
  connection.onInitialize((p): InitializeResult => {
    watchFiles = p.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return initializeResult;
  });
  connection.onInitialized(() => {
    if (!watchFiles) return;
    const watchers = [{ globPattern: '**/*.{yaml,yml}' }];
    connection.client.register(DidChangeWatchedFilesNotification.type, { watchers }).catch((err: unknown) => {
      connection.console.error(`callscript lsp: the client refused to watch files: ${String(err)}`);
    });
  });
  // shutdown: no check starts or publishes any more (the client exits next)
  connection.onShutdown(() => {
    stopped = true;
    for (const t of timers.values()) clearTimeout(t);
    timers.clear();
  });
  connection.onDefinition((p) => definition(ctx, p));
  connection.onReferences((p) => references(ctx, p));
  connection.onPrepareRename((p) => prepareRename(ctx, p));
  connection.onRenameRequest((p) => rename(ctx, p));
  connection.onCompletion((p) => completion(ctx, p));
  connection.onHover((p) => hover(ctx, p));
  connection.onCodeAction((p) => codeActions(ctx, p));
  documents.listen(connection);
  connection.listen();
  return ctx;
}

/**
 * The server over stdin and stdout (`callscript lsp`); what comes in that is no frame of the protocol is dropped and
 * said on stderr (framing.ts), and the server goes on with the next message.
 */
export function startStdioServer(opts: LspOptions = {}): LspContext {
  const input = process.stdin.pipe(new FrameGuard((why) => process.stderr.write(`${why}\n`)));
  return startServer(createConnection(input, process.stdout), opts);
}
