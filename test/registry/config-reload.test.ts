import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings, settingsChanges } from '../../src/cli/settings.js';

describe('config reload: what applies live', () => {
  it(
    'applies routes and canary, lists the settings that need a ' + 'restart; admin from the file or the environment',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'callscript-cfg-'));
      mkdirSync(join(dir, 'flows'));
      const file = join(dir, 'callscript.yaml');
      writeFileSync(
        file,
        'admin: { login: boss, password: s3cret }\ncanary: { desk: 10 }\nroutes: { default: desk }\n',
      );
      const a = await resolveSettings({ config: file }, {}, dir);
      if (!a.ok) throw new Error(a.message);
      expect(a.settings.server).toMatchObject({
        admin: { login: 'boss', password: 's3cret' },
        canary: { desk: 10 },
        watch: true,
      });
      writeFileSync(
        file,
        'server: { port: 4000, watch: false }\nadmin: { login: boss, password: s3cret }\ncanary: { desk: 50 ' +
          '}\nroutes: { default: other }\n',
      );
      const b = await resolveSettings({ config: file }, {}, dir);
      if (!b.ok) throw new Error(b.message);
      expect(settingsChanges(a.settings, b.settings)).toEqual({
        routes: { apps: {}, numbers: {}, default: 'other' },
        canary: { desk: 50 },
        restart: ['server.port', 'server.watch'],
      });
      const env = await resolveSettings({ config: file }, { ADMIN_LOGIN: 'x', ADMIN_PASSWORD: 'y' }, dir);
      expect(env.ok && env.settings.server.admin).toEqual({ login: 'x', password: 'y' });
      const half = await resolveSettings({}, { ADMIN_LOGIN: 'x' }, join(dir, 'flows'));
      expect(half.ok).toBe(false);
    },
  );
});
