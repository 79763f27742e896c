/**
 * `history:` in callscript.yaml: checked with positions, resolved into the plugin's history option, applied at the next
 * start.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/config/check.js';
import { resolveSettings, settingsChanges } from '../../src/cli/settings.js';

function dir(config?: string): string {
  const d = mkdtempSync(join(tmpdir(), 'callscript-history-'));
  if (config !== undefined) writeFileSync(join(d, 'callscript.yaml'), config);
  return d;
}

describe('history: in callscript.yaml', () => {
  it('takes keep, ttl_ms, max_path, max_path_bytes and max_bytes, the others defaulted', () => {
    expect(checkConfig('history: { keep: 50 }\n', 'c.yaml').config!.history).toStrictEqual({
      keep: 50,
      ttl_ms: 86_400_000,
      max_path: 200,
      max_path_bytes: 131_072,
      max_bytes: 33_554_432,
    });
    expect(
      checkConfig(
        'history:\n  keep: 0\n  ttl_ms: 3600000\n  max_path: 20\n  max_path_bytes: 8192\n  max_bytes: 2000000\n',
        'c.yaml',
      ).config!.history,
    ).toStrictEqual({ keep: 0, ttl_ms: 3_600_000, max_path: 20, max_path_bytes: 8192, max_bytes: 2_000_000 });
    expect(checkConfig('server: { port: 1 }\n', 'c.yaml').config!.history).toBeUndefined();
  });

  it('reports mistakes at their place', () => {
    const d = (t: string) => checkConfig(t, 'c.yaml').diagnostics.map((x) => [x.code, x.line, x.column, x.message]);
    expect(d('history:\n  keep: -1\n  max_path: 100000\n')).toEqual([
      ['OUT_OF_BOUNDS', 2, 9, 'history.keep must be between 0 and 100000, got -1'],
      ['OUT_OF_BOUNDS', 3, 13, 'history.max_path must be between 1 and 10000, got 100000'],
    ]);
    expect(d('history: { ttl_ms: 5 }\n')).toEqual([
      ['OUT_OF_BOUNDS', 1, 20, 'history.ttl_ms must be between 1000 and 2592000000, got 5'],
    ]);
    expect(d('history: { max_path_bytes: 100, max_bytes: 5000000000 }\n')).toEqual([
      ['OUT_OF_BOUNDS', 1, 28, 'history.max_path_bytes must be between 4096 and 4194304, got 100'],
      ['OUT_OF_BOUNDS', 1, 44, 'history.max_bytes must be between 1048576 and 4294967296, got 5000000000'],
    ]);
    expect(d('history: { kept: 5 }\n')).toMatchObject([['UNKNOWN_KEY', 1, 12, "history: unknown key 'kept'"]]);
    expect(d('history: lots\n')).toMatchObject([
      ['TYPE_MISMATCH', 1, 10, 'history must be a map, not a string ("lots")'],
    ]);
  });

  it('resolves into the plugin option (keep 0: false); a change applies at the next start', async () => {
    const none = await resolveSettings({}, {}, dir());
    const some = await resolveSettings(
      {},
      {},
      dir('history: { keep: 10, ttl_ms: 60000, max_path: 5, max_path_bytes: 8192, max_bytes: 2000000 }\n'),
    );
    const off = await resolveSettings({}, {}, dir('history: { keep: 0 }\n'));
    if (!none.ok || !some.ok || !off.ok) throw new Error('settings refused');
    expect(none.settings.server.history).toEqual({
      keep: 1000,
      ttlMs: 86_400_000,
      maxPath: 200,
      maxPathBytes: 131_072,
      maxBytes: 33_554_432,
    });
    expect(some.settings.server.history).toEqual({
      keep: 10,
      ttlMs: 60_000,
      maxPath: 5,
      maxPathBytes: 8192,
      maxBytes: 2_000_000,
    });
    expect(off.settings.server.history).toBe(false);
    const same = (s: typeof none.settings) => ({ ...s, server: { ...s.server, flowsDir: 'x' } });
    expect(settingsChanges(same(none.settings), same(some.settings)).restart).toEqual(['history']);
  });
});
