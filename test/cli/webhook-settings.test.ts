/**
 * `webhooks:` in callscript.yaml and CALLSCRIPT_WEBHOOK_SECRET: checked with positions, resolved into the plugin's
 * webhooks option, applied at the next start.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/config/check.js';
import { resolveSettings, settingsChanges } from '../../src/cli/settings.js';

const SECRET = 'a-secret-of-sixteen-or-more';

function dir(config?: string): string {
  const d = mkdtempSync(join(tmpdir(), 'callscript-webhooks-'));
  if (config !== undefined) writeFileSync(join(d, 'callscript.yaml'), config);
  return d;
}

describe('webhooks: in callscript.yaml', () => {
  it('takes path, secret, body_limit and tolerance_ms, the others defaulted', () => {
    expect(checkConfig(`webhooks: { secret: ${SECRET} }\n`, 'c.yaml').config!.webhooks).toStrictEqual({
      path: '/webhooks/callr',
      body_limit: 262144,
      tolerance_ms: 300000,
      secret: SECRET,
    });
    expect(
      checkConfig('webhooks:\n  path: /hooks/sms\n  body_limit: 65536\n  tolerance_ms: 3600000\n', 'c.yaml').config!
        .webhooks,
    ).toStrictEqual({ path: '/hooks/sms', body_limit: 65536, tolerance_ms: 3600000 });
    expect(checkConfig('server: { port: 1 }\n', 'c.yaml').config!.webhooks).toBeUndefined();
  });

  it('reports mistakes at their place', () => {
    const d = (t: string) => checkConfig(t, 'c.yaml').diagnostics.map((x) => [x.code, x.line, x.column]);
    const m = (t: string) => checkConfig(t, 'c.yaml').diagnostics.map((x) => [x.code, x.line, x.column, x.message]);
    expect(m('webhooks:\n  secret: short\n')).toEqual([
      ['BAD_FORMAT', 2, 11, 'webhooks.secret must be 16 to 256 characters, got 5'],
    ]);
    expect(m(`webhooks:\n  secret: ${'x'.repeat(300)}\n`)).toEqual([
      ['BAD_FORMAT', 2, 11, 'webhooks.secret must be 16 to 256 characters, got 300'],
    ]);
    expect(m('webhooks:\n  path: no-slash\n')).toEqual([
      [
        'BAD_FORMAT',
        2,
        9,
        "webhooks.path must be a path like /webhooks/callr (letters, digits, / _ . -), got 'no-slash'",
      ],
    ]);
    expect(d('webhooks: { body_limit: 10 }\n')).toEqual([['OUT_OF_BOUNDS', 1, 25]]);
    // longer than event ids are remembered (48 h): a replay would be taken
    expect(d('webhooks: { tolerance_ms: 172800001 }\n')).toEqual([['OUT_OF_BOUNDS', 1, 27]]);
    expect(d('webhooks: { secrets: x }\n')).toMatchObject([['UNKNOWN_KEY', 1, 13]]);
  });

  it(
    "resolves into the plugin option; the environment's secret wins; off without any; a change applies at the " +
      'next start',
    async () => {
      const none = await resolveSettings({}, {}, dir());
      expect(none.ok && none.settings.server.webhooks).toBeUndefined();
      const env = await resolveSettings({}, { CALLSCRIPT_WEBHOOK_SECRET: SECRET }, dir());
      if (!env.ok) throw new Error(env.message);
      expect(env.settings.server.webhooks).toEqual({
        path: '/webhooks/callr',
        bodyLimit: 262144,
        toleranceMs: 300000,
        secret: SECRET,
      });
      const file = await resolveSettings({}, {}, dir(`webhooks: { path: /hooks/x, secret: ${SECRET} }\n`));
      if (!file.ok) throw new Error(file.message);
      expect(file.settings.server.webhooks).toEqual({
        path: '/hooks/x',
        bodyLimit: 262144,
        toleranceMs: 300000,
        secret: SECRET,
      });
      const both = await resolveSettings(
        {},
        { CALLSCRIPT_WEBHOOK_SECRET: `${SECRET}-env` },
        dir(`webhooks: { secret: ${SECRET} }\n`),
      );
      if (!both.ok) throw new Error(both.message);
      expect(both.settings.server.webhooks?.secret).toBe(`${SECRET}-env`);
      const noSecret = await resolveSettings({}, {}, dir('webhooks: { path: /hooks/x }\n'));
      if (!noSecret.ok) throw new Error(noSecret.message);
      expect(noSecret.settings.server.webhooks).toEqual({ path: '/hooks/x', bodyLimit: 262144, toleranceMs: 300000 });
      const same = (s: typeof env.settings) => ({ ...s, server: { ...s.server, flowsDir: 'x' } });
      expect(settingsChanges(same(env.settings), same(file.settings)).restart).toEqual(['webhooks']);
    },
  );

  it('a short secret in the environment, or a path taken by another route, stops the start', async () => {
    const short = await resolveSettings({}, { CALLSCRIPT_WEBHOOK_SECRET: 'short' }, dir());
    expect(short).toMatchObject({
      ok: false,
      message: 'CALLSCRIPT_WEBHOOK_SECRET must be 16 to 256 characters (e.g. openssl rand -base64 32)',
    });
    const taken = await resolveSettings(
      {},
      { CALLSCRIPT_WEBHOOK_SECRET: SECRET },
      dir('webhooks: { path: /admin/hooks }\n'),
    );
    expect(taken).toMatchObject({
      ok: false,
      message: 'webhooks.path /admin/hooks is taken by another route of callscript',
    });
    const previous = await resolveSettings(
      {},
      { CALLSCRIPT_WEBHOOK_SECRET: SECRET, CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS: ` ${SECRET}-old , ${SECRET}-older,` },
      dir(),
    );
    expect(previous.ok && previous.settings.server.webhooks?.previousSecrets).toEqual([
      `${SECRET}-old`,
      `${SECRET}-older`,
    ]);
    const badPrevious = await resolveSettings(
      {},
      { CALLSCRIPT_WEBHOOK_SECRET: SECRET, CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS: 'x' },
      dir(),
    );
    expect(badPrevious).toMatchObject({
      ok: false,
      message: 'each secret of CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS must be 16 to 256 characters',
    });
    const clash = await resolveSettings(
      {},
      { CALLSCRIPT_WEBHOOK_SECRET: SECRET },
      dir('webhooks: { path: /hooks }\nmetrics: { path: /hooks }\n'),
    );
    expect(clash).toMatchObject({
      ok: false,
      message: 'webhooks.path and metrics.path are both /hooks: give them different paths',
    });
    // an empty variable counts as unset
    const empty = await resolveSettings({}, { CALLSCRIPT_WEBHOOK_SECRET: '' }, dir());
    expect(empty.ok && empty.settings.server.webhooks).toBeUndefined();
  });
});
