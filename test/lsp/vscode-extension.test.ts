/**
 * The VS Code extension (editors/vscode) without VS Code: extension.js loaded with a fake `vscode` module and a
 * fake `vscode-languageclient/node` (Module._load answers those two requires while it loads), activated, its client
 * looked at (server command, arguments, document selector), deactivated. And its package.json as VS Code reads it.
 */
import Module, { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIR = fileURLToPath(new URL('../../editors/vscode/', import.meta.url));
const manifest = JSON.parse(readFileSync(join(DIR, 'package.json'), 'utf8'));
const require = createRequire(import.meta.url);

interface Disposable {
  dispose(): void;
}

/** A client as the fake vscode-languageclient makes it: what it was given, and what was done to it. */
class FakeClient {
  state: 'initial' | 'running' | 'startFailed' | 'stopped' = 'initial';
  constructor(
    readonly id: string,
    readonly name: string,
    readonly server: { command: string; args: string[]; options: Record<string, unknown> },
    readonly options: { documentSelector: unknown[]; synchronize: { fileEvents: unknown } },
    private readonly startError: Error | undefined,
  ) {}
  async start() {
    if (this.startError) {
      this.state = 'startFailed';
      throw this.startError;
    }
    this.state = 'running';
  }
  async stop() {
    // as vscode-languageclient 11: a client that is not running cannot be stopped
    if (this.state !== 'running') throw new Error(`Client is not running and can't be stopped (${this.state})`);
    this.state = 'stopped';
  }
}

interface Loaded {
  ext: { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void>; DEFAULT_FILES: string[] };
  context: { subscriptions: Disposable[] };
  clients: FakeClient[];
  commands: Map<string, () => Promise<void>>;
  errors: string[];
  watchers: string[];
  /** Fires onDidChangeConfiguration for a change of `section` (callscript, editor...). */
  changeConfig(section: string): void;
  settings: Record<string, unknown>;
}

/** extension.js as a fresh module (its own state), with fakes of what VS Code gives it. */
function load(settings: Record<string, unknown> = {}, opts: { folder?: string; startError?: Error } = {}): Loaded {
  const clients: FakeClient[] = [];
  const commands = new Map<string, () => Promise<void>>();
  const errors: string[] = [];
  const watchers: string[] = [];
  const configListeners: ((e: { affectsConfiguration(s: string): boolean }) => void)[] = [];
  const disposable = { dispose() {} };
  const vscode = {
    workspace: {
      workspaceFolders: opts.folder ? [{ uri: { fsPath: opts.folder } }] : undefined,
      getConfiguration: (section: string) => ({
        get: (key: string, fallback?: unknown) => settings[`${section}.${key}`] ?? fallback,
      }),
      createFileSystemWatcher: (glob: string) => {
        watchers.push(glob);
        return { glob, dispose() {} };
      },
      onDidChangeConfiguration: (fn: (typeof configListeners)[number]) => {
        configListeners.push(fn);
        return disposable;
      },
    },
    commands: {
      registerCommand: (id: string, fn: () => Promise<void>) => {
        commands.set(id, fn);
        return disposable;
      },
    },
    window: {
      showErrorMessage: async (m: string) => {
        errors.push(m);
        return undefined;
      },
    },
  };
  const client = {
    LanguageClient: class extends FakeClient {
      constructor(id: string, name: string, server: FakeClient['server'], options: FakeClient['options']) {
        super(id, name, server, options, opts.startError);
        clients.push(this);
      }
    },
  };
  const path = require.resolve(join(DIR, 'extension.js'));
  delete require.cache[path];
  const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const real = mod._load;
  mod._load = function (request, ...rest) {
    if (request === 'vscode') return vscode;
    if (request === 'vscode-languageclient/node') return client;
    return real.call(this, request, ...rest);
  };
  try {
    return {
      ext: require(path),
      context: { subscriptions: [] },
      clients,
      commands,
      errors,
      watchers,
      settings,
      changeConfig: (section) => configListeners.forEach((fn) => fn({ affectsConfiguration: (s) => s === section })),
    };
  } finally {
    mod._load = real;
  }
}

describe('editors/vscode/extension.js', () => {
  it('starts `callscript lsp --stdio` from the PATH for the YAML of flows dirs and callscript.yaml', async () => {
    const t = load();
    await t.ext.activate(t.context);
    expect(t.clients).toHaveLength(1);
    const [c] = t.clients;
    expect(c!.id).toBe('callscript');
    expect(c!.server).toEqual({ command: 'callscript', args: ['lsp', '--stdio'], options: { shell: false } });
    expect(c!.options.documentSelector).toEqual([
      { scheme: 'file', language: 'yaml', pattern: '**/flows/**/*.{yaml,yml}' },
      { scheme: 'file', language: 'yaml', pattern: '**/callscript.{yaml,yml}' },
    ]);
    expect(t.watchers).toEqual(['**/*.{yaml,yml}']);
    expect(c!.options.synchronize.fileEvents).toMatchObject({ glob: '**/*.{yaml,yml}' });
    expect(c!.state).toBe('running');
    expect(t.errors).toEqual([]);
    // the watcher, the command and the configuration listener are disposed by VS Code with the extension
    expect(t.context.subscriptions).toHaveLength(3);

    await t.ext.deactivate();
    expect(c!.state).toBe('stopped');
    await t.ext.deactivate(); // nothing left to stop: no error
    expect(t.clients).toHaveLength(1);
  });

  it('reads callscript.server.path, callscript.server.args and callscript.files', async () => {
    const npx = load({ 'callscript.server.path': 'npx', 'callscript.server.args': ['callscript'] }, { folder: '/p' });
    await npx.ext.activate(npx.context);
    expect(npx.clients[0]!.server).toEqual({
      command: 'npx',
      args: ['callscript', 'lsp', '--stdio'],
      options: { shell: false, cwd: '/p' },
    });

    const local = load(
      { 'callscript.server.path': 'node_modules/.bin/callscript', 'callscript.files': ['**/ivr/*.yaml'] },
      { folder: '/p' },
    );
    await local.ext.activate(local.context);
    expect(local.clients[0]!.server.command).toBe('/p/node_modules/.bin/callscript');
    expect(local.clients[0]!.options.documentSelector).toEqual([
      { scheme: 'file', language: 'yaml', pattern: '**/ivr/*.yaml' },
    ]);

    const absolute = load({ 'callscript.server.path': '/opt/callscript/bin/callscript.js' }, { folder: '/p' });
    await absolute.ext.activate(absolute.context);
    expect(absolute.clients[0]!.server.command).toBe('/opt/callscript/bin/callscript.js');
  });

  it('hostile settings (wrong types, empty): the defaults, never a command made of pieces', async () => {
    const t = load({
      'callscript.server.path': '   ',
      'callscript.server.args': 'callscript; rm -rf /',
      'callscript.files': [42, '**/*.yaml'],
    });
    await t.ext.activate(t.context);
    expect(t.clients[0]!.server).toEqual({
      command: 'callscript',
      args: ['lsp', '--stdio'],
      options: { shell: false },
    });
    expect(t.clients[0]!.options.documentSelector).toHaveLength(2);
    const other = load({ 'callscript.server.path': 42, 'callscript.server.args': [1, 2] });
    await other.ext.activate(other.context);
    expect(other.clients[0]!.server).toMatchObject({ command: 'callscript', args: ['lsp', '--stdio'] });
  });

  it('says so when the server cannot start, and deactivates without stopping a client that never ran', async () => {
    const t = load({}, { startError: new Error('spawn callscript ENOENT') });
    await t.ext.activate(t.context);
    expect(t.errors).toEqual([
      'callscript: could not start "callscript lsp --stdio" (spawn callscript ENOENT). ' +
        'Install callscript (npm install -g callscript) or set callscript.server.path.',
    ]);
    await t.ext.deactivate();
    expect(t.clients[0]!.state).toBe('startFailed');
    expect(t.errors).toHaveLength(1);
  });

  it('restarts the server with the new settings when a callscript setting changes, or on its command', async () => {
    const t = load({}, { folder: '/p' });
    await t.ext.activate(t.context);
    t.changeConfig('editor');
    t.settings['callscript.server.path'] = 'npx';
    t.settings['callscript.server.args'] = ['callscript'];
    t.changeConfig('callscript');
    await t.commands.get('callscript.restartServer')!(); // queued after the restart the change asked for
    expect(t.clients.map((c) => [c.state, c.server.command])).toEqual([
      ['stopped', 'callscript'],
      ['stopped', 'npx'],
      ['running', 'npx'],
    ]);
    await t.ext.deactivate();
    expect(t.clients.map((c) => c.state)).toEqual(['stopped', 'stopped', 'stopped']);
  });
});

describe('editors/vscode/package.json', () => {
  const lock = JSON.parse(readFileSync(join(DIR, 'package-lock.json'), 'utf8'));
  const source = readFileSync(join(DIR, 'extension.js'), 'utf8');

  it('names an existing main, an engine the language client supports, and its own dependencies only', () => {
    expect(manifest.main).toBe('./extension.js');
    expect(existsSync(join(DIR, manifest.main))).toBe(true);
    // vscode-languageclient declares the oldest VS Code it runs in: the extension asks for the same
    const languageclient = lock.packages['node_modules/vscode-languageclient'];
    expect(manifest.engines.vscode).toBe(languageclient.engines.vscode);
    expect(manifest.dependencies).toEqual({
      'vscode-languageclient': lock.packages[''].dependencies['vscode-languageclient'],
    });
    const required = [...source.matchAll(/require\('([^']+)'\)/g)].map((m) => m[1]);
    expect(required).toEqual(['node:path', 'vscode', 'vscode-languageclient/node']);
    const root = JSON.parse(readFileSync(join(DIR, '../../package.json'), 'utf8'));
    expect(root.dependencies['vscode-languageclient']).toBeUndefined();
    expect(root.devDependencies['vscode-languageclient']).toBeUndefined();
  });

  it('activates in a project, registers the command it contributes, declares the settings it reads', async () => {
    expect(manifest.activationEvents).toEqual([
      'workspaceContains:**/callscript.yaml',
      'workspaceContains:**/callscript.yml',
      'workspaceContains:**/flows/*.yaml',
      'workspaceContains:**/flows/*.yml',
    ]);
    const t = load();
    await t.ext.activate(t.context);
    expect(manifest.contributes.commands.map((c: { command: string }) => c.command)).toEqual([...t.commands.keys()]);
    const declared = manifest.contributes.configuration.properties;
    const read = [...source.matchAll(/config\.get\('([^']+)'\)/g)].map((m) => `callscript.${m[1]}`);
    expect(Object.keys(declared).sort()).toEqual(read.sort());
    expect(declared['callscript.server.path'].default).toBe('callscript');
    expect(declared['callscript.server.args'].default).toEqual([]);
    expect(declared['callscript.files'].default).toEqual(t.ext.DEFAULT_FILES);
    await t.ext.deactivate();
  });

  it('hostile: a workspace that is not trusted cannot pick the command the extension runs', () => {
    // callscript.server.path can be set by the workspace's .vscode/settings.json, and npx or a relative path runs
    // the workspace's own node_modules/.bin/callscript: VS Code leaves the extension off until the folder is trusted
    expect(manifest.capabilities.untrustedWorkspaces.supported).toBe(false);
  });
});
