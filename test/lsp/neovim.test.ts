/**
 * A real editor client: headless Neovim set up as docs/editors.md shows (editors/nvim/callscript.lua, the very
 * file), on a flow with a misspelt `next:`. Neovim gets the checker's diagnostic at its line and column, renames a
 * step through the server (textDocument/rename, the edit applied by Neovim's own LSP client), writes the file and
 * quits; test/lsp/neovim-init.lua writes what it saw to a JSON file. Skipped with a message when nvim (0.7 or later)
 * cannot be run, but under CI=true, where it fails. Debian's neovim is 0.7.2: the 0.7 path of callscript.lua
 * (vim.lsp.start_client, buf_attach_client); a newer Neovim takes vim.lsp.start.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Neovim's version, or undefined (with a message) when no nvim 0.7 or later runs here. Throws under CI=true. */
function neovim(): string | undefined {
  const r = spawnSync('nvim', ['--version'], { encoding: 'utf8' });
  const version = r.status === 0 ? /^NVIM v(\d+)\.(\d+)\.(\S+)/.exec(r.stdout) : null;
  if (version && (Number(version[1]) > 0 || Number(version[2]) >= 7)) return version.slice(1).join('.');
  const why = version
    ? `nvim ${version.slice(1).join('.')} is older than 0.7`
    : `nvim cannot be run (${r.error?.message ?? r.stderr.trim()})`;
  const full = `${why}: install Neovim (apt-get install neovim) to run test/lsp/neovim.test.ts`;
  if (process.env.CI === 'true') throw new Error(`${full}; CI=true, so it fails instead of skipping`);
  console.warn(`SKIPPED: ${full}`);
  return undefined;
}

const FLOW = `version: 1
start: welcome
steps:
  welcome:
    say: "Hello."
    next: mneu
  menu:
    read: { prompt: "Press 1.", max_digits: 1 }
    on: { "1": goodbye, TIMEOUT: goodbye, default: goodbye }
  goodbye:
    hangup: {}
`;

/** Runs nvim to its end (60 s at most, then SIGKILL): its exit code and what it printed. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn('nvim', args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`nvim did not quit within 60 s:\n${output}`));
    }, 60_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const version = neovim();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(version === undefined)(`headless Neovim ${version ?? ''} with editors/nvim/callscript.lua`, () => {
  it('shows UNKNOWN_STEP at the misspelt step, and renames a step through the server (written to disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callscript-nvim-'));
    dirs.push(dir);
    const flows = join(dir, 'project', 'flows');
    mkdirSync(flows, { recursive: true });
    writeFileSync(join(flows, 'desk.yaml'), FLOW);
    writeFileSync(join(flows, 'other.yaml'), FLOW.replace('next: mneu', 'next: menu'));
    writeFileSync(join(dir, 'project', 'compose.yaml'), 'services: {}\n');
    const xdg = join(dir, 'xdg'); // Neovim's state, cache and LSP log: not the user's
    const env = {
      plugin: join(ROOT, 'editors/nvim/callscript.lua'),
      cmd: [process.execPath, ...CLI, 'lsp', '--stdio'],
      timeout: 20_000,
      out: join(dir, 'seen.json'),
      // `goodbye:` (line 10, 0-based 9), from its first character
      rename: { position: { line: 9, character: 2 }, newName: 'bye' },
      sibling: join(flows, 'other.yaml'),
      outside: join(dir, 'project', 'compose.yaml'),
    };
    const { code, output } = await run(
      [
        '--headless',
        '-n',
        '-i',
        'NONE',
        '--noplugin',
        '-u',
        join(ROOT, 'test/lsp/neovim-init.lua'),
        join(flows, 'desk.yaml'),
      ],
      {
        CALLSCRIPT_NVIM_TEST: JSON.stringify(env),
        XDG_CONFIG_HOME: xdg,
        XDG_DATA_HOME: xdg,
        XDG_STATE_HOME: xdg,
        XDG_CACHE_HOME: xdg,
      },
    );
    expect(code, output).toBe(0);
    const seen = JSON.parse(readFileSync(env.out, 'utf8'));
    expect(seen).toEqual({
      diagnosed: true,
      clients: 'callscript:1',
      diagnostics: [
        {
          lnum: 5,
          col: 10,
          end_lnum: 5,
          end_col: 14,
          severity: 1, // vim.diagnostic.severity.ERROR
          code: 'UNKNOWN_STEP',
          source: 'callscript',
          message: "no step 'mneu' in this flow\ndid you mean 'menu'?",
        },
      ],
      rename: { answers: 1 },
      sibling_clients: 'callscript:1', // the same client: one server for the project
      outside_clients: '',
    });
    expect(readFileSync(join(flows, 'desk.yaml'), 'utf8')).toBe(`version: 1
start: welcome
steps:
  welcome:
    say: "Hello."
    next: mneu
  menu:
    read: { prompt: "Press 1.", max_digits: 1 }
    on: { "1": bye, TIMEOUT: bye, default: bye }
  bye:
    hangup: {}
`);
    // the rename is the flow's own: the other flow of the directory keeps its goodbye
    expect(readFileSync(join(flows, 'other.yaml'), 'utf8')).toContain('  goodbye:\n');
  }, 90_000);
});
