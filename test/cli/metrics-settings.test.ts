/**
 * `metrics:` in callscript.yaml: checked (positions, one diagnostic per mistake), resolved
 * into the plugin option (default on, /metrics, open), `auth: admin` refused at start when
 * no admin credentials are set, and a change of it applies at the next start.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/config/check.js';
import { resolveSettings, settingsChanges } from '../../src/cli/settings.js';

const at = (text: string) => checkConfig(text, 'c.yaml').diagnostics.map((d) => [d.code, d.line, d.column, d.message]);

function dir(config?: string): string {
  const d = mkdtempSync(join(tmpdir(), 'callscript-settings-'));
  if (config !== undefined) writeFileSync(join(d, 'callscript.yaml'), config);
  return d;
}

describe('metrics: in callscript.yaml', () => {
  it('absent: no metrics key in the config (the defaults are applied when serving); given: with its defaults', () => {
    expect(checkConfig('server: { port: 1 }\n', 'c.yaml').config!.metrics).toBeUndefined();
    expect(checkConfig('metrics: { enabled: false }\n', 'c.yaml').config!.metrics).toEqual({
      enabled: false,
      path: '/metrics',
      auth: 'none',
    });
    expect(checkConfig('metrics:\n  path: /internal/metrics\n  auth: admin\n', 'c.yaml').config!.metrics).toEqual({
      enabled: true,
      path: '/internal/metrics',
      auth: 'admin',
    });
  });

  it('a mistake is one diagnostic, at the value', () => {
    expect(at('metrics:\n  path: metrics\n')).toEqual([
      ['BAD_FORMAT', 2, 9, "metrics.path must be a path like /metrics (letters, digits, . _ ~ - and /), got 'metrics'"],
    ]);
    expect(at('metrics:\n  path: /health/metrics\n')).toEqual([
      ['BAD_FORMAT', 2, 9, "metrics.path '/health/metrics' is taken by the /health routes"],
    ]);
    expect(at('metrics:\n  path: /rt\n')).toEqual([
      ['BAD_FORMAT', 2, 9, "metrics.path '/rt' is taken by the /rt routes"],
    ]);
    expect(at('metrics:\n  path: /a//b\n')).toEqual([
      ['BAD_FORMAT', 2, 9, "metrics.path '/a//b' has an empty segment (//)"],
    ]);
    expect(at('metrics:\n  auth: basic\n')).toEqual([
      ['BAD_ENUM', 2, 9, 'metrics.auth must be one of none, admin, not "basic"'],
    ]);
    expect(at('metrics:\n  enabled: yes please\n')).toEqual([
      ['TYPE_MISMATCH', 2, 12, 'metrics.enabled must be true or false, not a string ("yes please")'],
    ]);
    expect(at('metrics:\n  port: 9100\n')).toEqual([['UNKNOWN_KEY', 2, 3, "metrics: unknown key 'port'"]]);
    expect(at('metrics: on\n')).toEqual([['TYPE_MISMATCH', 1, 10, 'metrics must be a map, not a string ("on")']]);
  });
});

describe('resolveSettings: metrics', () => {
  it('default: on at /metrics, open', async () => {
    const r = await resolveSettings({}, {}, dir());
    if (!r.ok) throw new Error('refused');
    expect(r.settings.server.metrics).toEqual({ path: '/metrics', auth: 'none' });
  });

  it('enabled: false is the plugin option false', async () => {
    const r = await resolveSettings({}, {}, dir('metrics: { enabled: false, auth: admin }\n'));
    if (!r.ok) throw new Error('refused');
    expect(r.settings.server.metrics).toBe(false);
  });

  it(
    'auth: admin without admin credentials: refused with what to do; with them from the file or the ' +
      'environment: served so',
    async () => {
      const r = await resolveSettings({}, {}, dir('metrics: { auth: admin }\n'));
      expect(r).toMatchObject({
        ok: false,
        message:
          'metrics.auth: admin puts /metrics behind the admin credentials, and none are set: give admin.login ' +
          'and admin.password (or ADMIN_LOGIN and ADMIN_PASSWORD), or use metrics.auth: none',
      });
      const file = await resolveSettings(
        {},
        {},
        dir('metrics: { auth: admin, path: /m }\nadmin: { login: ops, password: pw }\n'),
      );
      if (!file.ok) throw new Error('refused');
      expect(file.settings.server.metrics).toEqual({ path: '/m', auth: 'admin' });
      const env = await resolveSettings(
        {},
        { ADMIN_LOGIN: 'ops', ADMIN_PASSWORD: 'pw' },
        dir('metrics: { auth: admin }\n'),
      );
      expect(env.ok).toBe(true);
    },
  );

  it('a change of metrics: applies at the next start', async () => {
    const a = await resolveSettings({}, {}, dir());
    const b = await resolveSettings({}, {}, dir('metrics: { path: /prom }\n'));
    if (!a.ok || !b.ok) throw new Error('refused');
    const same = (s: typeof a.settings) => ({ ...s, server: { ...s.server, flowsDir: 'x' } });
    expect(settingsChanges(same(a.settings), same(b.settings)).restart).toEqual(['metrics']);
  });
});
