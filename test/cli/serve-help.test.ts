/**
 * `callscript serve --help` gives the bounds, variables, keys and defaults of the server options from their table:
 * after each flag that sets one, and for the variables of the options with no flag, after the flags.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flagNote } from '../../src/cli/serve-help.js';
import { OPTIONS } from '../../src/config/table.js';

const root = new URL('../..', import.meta.url).pathname;

/** The help as printed (commander wraps it), its runs of spaces and line breaks made one space. */
function help(...args: string[]): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.replace(/\s+/g, ' ');
}

describe('callscript serve --help', () => {
  it("says each flag's bounds or values, variable, key and default, and the other options' variables", () => {
    const text = help('serve', '--help');
    expect(text).toContain('-p, --port <port> port to listen on, 0: any free one (0..65535; env PORT, config ');
    expect(text).toContain('server.port; default 3000)');
    expect(text).toContain(
      '-l, --log-level <level> log level (fatal|error|warn|info|debug|trace|silent; env LOG_LEVEL, config ' +
        'server.log_level; default info)',
    );
    expect(text).toContain(' DEADLINE_MS server.deadline_ms (100..4900, default 4000) ');
    const flagged = OPTIONS.filter((o) => o.flag !== undefined);
    expect(flagged.length).toBe(7);
    for (const o of flagged) {
      // the flag, then its own words, then the table's note
      const at = text.indexOf(`${o.flag} <`);
      expect(at, o.flag).toBeGreaterThan(0);
      const own = text.slice(at + o.flag!.length).split(/ (?:-\w, )?--[a-z-]+ </)[0];
      expect(own, o.flag).toContain(flagNote(o.flag!));
    }
    for (const o of OPTIONS.filter((x) => x.env !== undefined && x.flag === undefined))
      expect(text, o.env).toContain(` ${o.env} ${o.key}`);
    // `help serve` is the same help
    expect(help('help', 'serve')).toBe(text);
  });
});
