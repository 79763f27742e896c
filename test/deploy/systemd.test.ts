/**
 * deploy/callscript.service: its keys as an operator relies on them, and `systemd-analyze
 * verify` on it (with ExecStart's node pointed at this machine's, so that the check of the
 * executable means something). Without systemd-analyze the verify case is skipped with a
 * message, failing under CI=true.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RT_OPTIONS } from '../../src/http/options.js';
import { DEFAULT_TRANSPORT } from '../../src/http/transport.js';

const root = new URL('../..', import.meta.url).pathname;
const text = readFileSync(join(root, 'deploy/callscript.service'), 'utf8');

/** The unit's sections: each key with its values in order (keys may repeat). */
function sections(unit: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let at: Record<string, string[]> | undefined;
  for (const raw of unit.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const s = /^\[(.+)\]$/.exec(line);
    if (s) {
      at = out[s[1]!] = {};
      continue;
    }
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!kv || !at) throw new Error(`unreadable unit line: ${line}`);
    (at[kv[1]!] ??= []).push(kv[2]!);
  }
  return out;
}

/** A systemd time span in seconds ("30s", "1min 30s", "45"). */
function seconds(span: string): number {
  const units: Record<string, number> = { '': 1, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
  return span.split(/\s+/).reduce((sum, part) => {
    const m = /^(\d+)([a-z]*)$/.exec(part);
    if (!m || !(m[2]! in units)) throw new Error(`not a time span: ${span}`);
    return sum + Number(m[1]) * units[m[2]!]!;
  }, 0);
}

const unit = sections(text);
const service = unit.Service!;
const one = (k: string) => {
  expect(service[k], k).toHaveLength(1);
  return service[k]![0]!;
};

describe('deploy/callscript.service', () => {
  it('runs the built server as a user of its own, with its secrets from an EnvironmentFile', () => {
    expect(one('Type')).toBe('simple');
    expect(one('User')).toBe('callscript');
    expect(one('Group')).toBe('callscript');
    expect(one('EnvironmentFile')).toBe('/etc/callscript/callscript.env');
    expect(one('ExecStart')).toBe(
      '/usr/bin/node /opt/callscript/dist/cli/main.js serve --config /etc/callscript/callscript.yaml',
    );
    expect(one('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(unit.Install!.WantedBy).toEqual(['multi-user.target']);
    expect(unit.Unit!.After).toEqual(['network-online.target']);
  });

  it(
    'restarts on failure, stops with SIGTERM to the main process, and waits longer than a drain takes before ' +
      'killing',
    () => {
      expect(one('Restart')).toBe('on-failure');
      expect(one('KillSignal')).toBe('SIGTERM');
      expect(one('KillMode')).toBe('mixed');
      // a drain: the requests in progress end within the request timeout (a slow client) and the reply deadline
      const drain = (DEFAULT_TRANSPORT.requestTimeoutMs + DEFAULT_RT_OPTIONS.deadlineMs) / 1000;
      expect(seconds(one('TimeoutStopSec'))).toBeGreaterThan(drain);
    },
  );

  it('keeps the process from writing the system or gaining privileges', () => {
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('ProtectHome')).toBe('yes');
    // V8 writes executable memory: a unit that forbids it would not start node
    expect(service.MemoryDenyWriteExecute).toBeUndefined();
  });

  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  const why =
    analyze.status === 0
      ? undefined
      : `systemd-analyze cannot be run (${analyze.error?.message ?? analyze.stderr}): install systemd to ` +
        `verify the unit`;
  if (why && process.env.CI === 'true') throw new Error(`${why}; CI=true, so this fails instead of skipping`);
  if (why) console.warn(`SKIPPED: ${why}`);

  it.skipIf(!!why)(
    'systemd-analyze verify finds nothing to say (and does find a unit whose ExecStart is missing)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'callscript-unit-'));
      try {
        const file = join(dir, 'callscript.service');
        writeFileSync(file, text.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `));
        const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
        expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: '' });
        writeFileSync(file, text.replace('ExecStart=/usr/bin/node ', 'ExecStart=/nonexistent/node '));
        const bad = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
        expect(bad.status).not.toBe(0);
        expect(bad.stderr).toContain('/nonexistent/node is not executable');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
