// The callscript extension for VS Code: starts `callscript lsp --stdio` (the language server of the callscript package,
// docs/editors.md) and hands it the YAML files of a callscript project. Everything else (diagnostics, definition,
// references, rename...) is the server's: this file only says how to start it and which files it gets.
'use strict';

const path = require('node:path');
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

/** The files the server gets by default (the setting `callscript.files` replaces them). */
const DEFAULT_FILES = ['**/flows/**/*.{yaml,yml}', '**/callscript.{yaml,yml}'];

/**
 * The client running now. VS Code calls deactivate() without arguments and waits for the promise it returns, so the
 * client must be found where activate() left it: the one piece of module state, as in VS Code's own samples.
 */
const running = { client: undefined };

/** A setting that must be a non-empty string (VS Code only warns about a value of another type): else `fallback`. */
function stringOr(value, fallback) {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
}

/** A setting that must be an array of strings: else `fallback`. */
function strings(value, fallback) {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : fallback;
}

/** The document selector: YAML files (the language id the YAML extension also serves) that match one of `files`. */
function documentSelector(files) {
  return files.map((pattern) => ({ scheme: 'file', language: 'yaml', pattern }));
}

/**
 * How to start the server: `<callscript.server.path> <callscript.server.args...> lsp --stdio`. A relative path with
 * a slash (node_modules/.bin/callscript) is read from the first workspace folder, which is also the server's working
 * directory (npx looks for the project's callscript there).
 */
function serverOptions(config, folder) {
  const configured = stringOr(config.get('server.path'), 'callscript');
  const command =
    folder && configured.includes('/') && !path.isAbsolute(configured) ? path.join(folder, configured) : configured;
  const args = [...strings(config.get('server.args'), []), 'lsp', '--stdio'];
  // Windows runs callscript and npx through their .cmd shims, which only a shell starts
  const options = { shell: process.platform === 'win32', ...(folder ? { cwd: folder } : {}) };
  return { command, args, options };
}

/** Starts a client (and its server) with the settings as they are now; an error message when it cannot start. */
async function start(watcher) {
  const config = vscode.workspace.getConfiguration('callscript');
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const server = serverOptions(config, folder);
  const files = strings(config.get('files'), DEFAULT_FILES);
  const client = new LanguageClient('callscript', 'callscript', server, {
    documentSelector: documentSelector(files),
    synchronize: { fileEvents: watcher },
  });
  running.client = client;
  try {
    await client.start();
  } catch (err) {
    if (running.client === client) running.client = undefined; // a client that did not start cannot be stopped
    const message = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(
      `callscript: could not start "${[server.command, ...server.args].join(' ')}" (${message}). ` +
        'Install callscript (npm install -g callscript) or set callscript.server.path.',
    );
  }
}

/** Stops the running client (its server is asked to shut down, and killed if it does not within 2 s). */
async function stop() {
  const client = running.client;
  running.client = undefined;
  if (!client) return;
  await client.stop().catch((err) => {
    void vscode.window.showErrorMessage(`callscript: the language server did not stop cleanly (${String(err)})`);
  });
}

/** Called by VS Code when a callscript project is opened (package.json activationEvents) or the command is run. */
async function activate(context) {
  // the server re-checks a flow's directory when a file of it changes on disk (a git checkout, another editor)
  const watcher = vscode.workspace.createFileSystemWatcher('**/*.{yaml,yml}');
  // one restart at a time: a client that is still starting cannot be stopped
  let restarts = Promise.resolve();
  const restart = () => (restarts = restarts.then(stop).then(() => start(watcher)));
  context.subscriptions.push(
    watcher,
    vscode.commands.registerCommand('callscript.restartServer', restart),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('callscript')) void restart();
    }),
  );
  await start(watcher);
}

/** Called by VS Code on shutdown or when the extension is disabled: the server is told to exit. */
function deactivate() {
  return stop();
}

module.exports = { activate, deactivate, DEFAULT_FILES };
