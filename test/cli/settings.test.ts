import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSettings, settingsChanges } from '../../src/cli/settings.js';

function dir(config?: string): string {
  const d = mkdtempSync(join(tmpdir(), 'callscript-settings-'));
  if (config !== undefined) writeFileSync(join(d, 'callscript.yaml'), config);
  return d;
}

describe('resolveSettings', () => {
  it('defaults without a config file', async () => {
    const d = dir();
    const r = await resolveSettings({}, {}, d);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.settings.port).toBe(3000);
    expect(r.settings.host).toBe('127.0.0.1');
    expect(r.settings.server.flowsDir).toBe(join(d, 'flows'));
    expect(r.settings.server).toMatchObject({
      logLevel: 'info',
      deadlineMs: 4000,
      bodyDepth: 32,
      unknownCall: 'restart',
      auth: undefined,
      fallback: undefined,
    });
  });

  it('server.body_depth from the config file; a change of it needs a restart', async () => {
    const a = await resolveSettings({}, {}, dir());
    const b = await resolveSettings({}, {}, dir('server: { body_depth: 8 }\n'));
    if (!a.ok || !b.ok) throw new Error('settings refused');
    expect(b.settings.server.bodyDepth).toBe(8);
    expect(
      settingsChanges(
        { ...a.settings, server: { ...a.settings.server, flowsDir: 'x' } },
        { ...b.settings, server: { ...b.settings.server, flowsDir: 'x' } },
      ).restart,
    ).toEqual(['server.body_depth']);
  });

  it('config file, then env, then flags', async () => {
    const d = dir(`server: { port: 4000, host: 0.0.0.0, flows_dir: my-flows, deadline_ms: 3000 }
auth: { login: svc, password: pw }
unknown_call: hangup
fallback: "Please hold on."
routes: { default: front-desk, numbers: { "+33123456789": support-line } }
`);
    const r1 = await resolveSettings({}, {}, d);
    expect(r1.ok && r1.settings.port).toBe(4000);
    expect(r1.ok && r1.settings.server).toMatchObject({
      flowsDir: join(d, 'my-flows'),
      deadlineMs: 3000,
      unknownCall: 'hangup',
      auth: { login: 'svc', password: 'pw' },
      fallback: 'TTS|TTS_EN-GB_SERENA|Please hold on.',
      routes: { apps: {}, numbers: { '+33123456789': 'support-line' }, default: 'front-desk' },
    });
    const r2 = await resolveSettings({}, { PORT: '5000', RT_LOGIN: 'a', RT_PASSWORD: 'b', UNKNOWN_CALL: 'reject' }, d);
    expect(r2.ok && r2.settings.port).toBe(5000);
    expect(r2.ok && r2.settings.server.auth).toEqual({ login: 'a', password: 'b' });
    expect(r2.ok && r2.settings.server.unknownCall).toBe('reject');
    const r3 = await resolveSettings({ port: '6000', flows: 'x' }, { PORT: '5000' }, d);
    expect(r3.ok && r3.settings.port).toBe(6000);
    expect(r3.ok && r3.settings.server.flowsDir).toBe(join(d, 'x'));
  });

  it(
    'server timeouts, connection cap, failed-authentication limit and proxies from the file; a change needs a ' +
      'restart',
    async () => {
      const d = dir(
        'server: { headers_timeout_ms: 2000, request_timeout_ms: 3000, keep_alive_timeout_ms: 65000, ' +
          'socket_timeout_ms: 20000, max_connections: 50, auth_failure_limit: 3, auth_failure_window_s: 300, ' +
          'trust_proxy: [10.0.0.0/8] }\n',
      );
      const r = await resolveSettings({}, {}, d);
      expect(r.ok && r.settings.server).toMatchObject({
        headersTimeoutMs: 2000,
        requestTimeoutMs: 3000,
        keepAliveTimeoutMs: 65000,
        socketTimeoutMs: 20000,
        maxConnections: 50,
        authFailureLimit: 3,
        authFailureWindowMs: 300_000,
        trustProxy: ['10.0.0.0/8'],
      });
      const defaults = await resolveSettings({}, {}, dir('server: { port: 0 }\n'));
      expect(defaults.ok && defaults.settings.server).toMatchObject({
        headersTimeoutMs: 10000,
        requestTimeoutMs: 10000,
        keepAliveTimeoutMs: 5000,
        socketTimeoutMs: 30000,
        maxConnections: 900,
        authFailureLimit: 10,
        authFailureWindowMs: 60000,
      });
      expect(defaults.ok && defaults.settings.server.trustProxy).toBeUndefined();
      if (!r.ok || !defaults.ok) return;
      expect(settingsChanges(defaults.settings, r.settings).restart).toEqual(
        expect.arrayContaining([
          'server.headers_timeout_ms',
          'server.max_connections',
          'server.auth_failure_limit',
          'server.trust_proxy',
        ]),
      );
    },
  );

  it(
    'workers: server.workers, then CALLSCRIPT_WORKERS, then --workers; more than 1 needs a Redis store; a ' +
      'change needs a restart',
    async () => {
      const d = dir('server: { workers: 3 }\nstore: redis://127.0.0.1:6379\n');
      const one = await resolveSettings({}, {}, dir());
      const file = await resolveSettings({}, {}, d);
      const env = await resolveSettings({}, { CALLSCRIPT_WORKERS: '4' }, d);
      const flag = await resolveSettings({ workers: '2' }, { CALLSCRIPT_WORKERS: '4' }, d);
      if (!one.ok || !file.ok || !env.ok || !flag.ok) throw new Error('settings refused');
      expect([one.settings.workers, file.settings.workers, env.settings.workers, flag.settings.workers]).toEqual([
        1, 3, 4, 2,
      ]);
      expect(settingsChanges(file.settings, flag.settings).restart).toEqual(['server.workers']);
      const why = (r: Awaited<ReturnType<typeof resolveSettings>>) => (r.ok ? 'accepted' : r.message);
      expect(why(await resolveSettings({ workers: '0' }, {}, d))).toBe(
        '--workers must be an integer from 1 to 256, not "0"',
      );
      expect(why(await resolveSettings({}, { CALLSCRIPT_WORKERS: 'two' }, d))).toBe(
        'CALLSCRIPT_WORKERS must be an integer from 1 to 256, not "two"',
      );
      const memory =
        'with the memory store each process keeps its own calls, and the requests of one call reach any ' +
        'process. Give a Redis URL (--store, CALLSCRIPT_STORE, or store: in the config file), or run 1 worker';
      expect(why(await resolveSettings({ workers: '2' }, {}, dir()))).toBe(
        `2 workers need a shared call store: ${memory}`,
      );
      expect(why(await resolveSettings({}, { CALLSCRIPT_STORE: 'memory' }, d))).toBe(
        `3 workers need a shared call store: ${memory}`,
      );
      expect(why(await resolveSettings({ workers: '1' }, {}, dir()))).toBe('accepted');
      const bad = await resolveSettings({}, {}, dir('server: { workers: 0 }\n'));
      expect(bad.ok).toBe(false);
      expect(bad.diagnostics.map((x) => `${x.line}:${x.column} ${x.code} ${x.message}`)).toEqual([
        '1:20 OUT_OF_BOUNDS server.workers must be between 1 and 256, got 0',
      ]);
    },
  );

  it('refuses an invalid config with its diagnostics, and bad env values with a message', async () => {
    const d = dir('server: { port: 99999, colour: blue }\n');
    const r = await resolveSettings({}, {}, d);
    expect(r.ok).toBe(false);
    expect(r.diagnostics.map((x) => [x.code, x.line, x.column])).toEqual([
      ['OUT_OF_BOUNDS', 1, 17],
      ['UNKNOWN_KEY', 1, 24],
    ]);
    const d2 = dir();
    expect(await resolveSettings({}, { PORT: 'abc' }, d2)).toMatchObject({
      ok: false,
      message: 'PORT must be an integer from 0 to 65535, not "abc"',
    });
    expect(await resolveSettings({ port: '70000' }, { PORT: '5000' }, d2)).toMatchObject({
      ok: false,
      message: '--port must be an integer from 0 to 65535, not "70000"',
    });
    expect(await resolveSettings({}, { RT_LOGIN: 'x' }, d2)).toMatchObject({ ok: false });
    expect(await resolveSettings({}, { UNKNOWN_CALL: 'drop' }, d2)).toMatchObject({ ok: false });
    expect(await resolveSettings({ config: 'missing.yaml' }, {}, d2)).toMatchObject({
      ok: false,
      message: 'cannot read config file missing.yaml: ENOENT',
    });
  });
});

describe('resolveSettings: secrets from the environment', () => {
  it('takes sms.base_url from the file and the credentials from SMS_LOGIN / SMS_PASSWORD', async () => {
    const d = dir('sms: { base_url: "http://127.0.0.1:4010/rest/v1.1", timeout_ms: 2000 }\n');
    const r = await resolveSettings({}, { SMS_LOGIN: 'a', SMS_PASSWORD: 'b' }, d);
    expect(r.ok && r.settings.sms).toEqual({ baseUrl: 'http://127.0.0.1:4010/rest/v1.1', login: 'a', timeoutMs: 2000 });
    expect(r.ok && typeof r.settings.server.effects?.sms).toBe('function');
    const half = await resolveSettings({}, { SMS_LOGIN: 'a' }, d);
    expect(half).toMatchObject({
      ok: false,
      message:
        'the SMS account needs both a login and a password (SMS_LOGIN and SMS_PASSWORD, or sms.login and sms.password)',
    });
  });

  it('an empty RT_LOGIN / RT_PASSWORD does not switch auth on', async () => {
    const r = await resolveSettings({}, { RT_LOGIN: '', RT_PASSWORD: '' }, dir());
    expect(r.ok && r.settings.server.auth).toBeUndefined();
  });

  it('reports a non-URL sms.base_url as BAD_FORMAT', async () => {
    const r = await resolveSettings({}, {}, dir('sms: { base_url: "ftp//x" }\n'));
    expect(r.diagnostics.map((x) => `${x.line}:${x.column} ${x.code}`)).toEqual(['1:18 BAD_FORMAT']);
  });
});

describe('the call store setting', () => {
  const storeOf = async (flags: { store?: string }, env: Record<string, string>, config?: string) => {
    const r = await resolveSettings(flags, env, dir(config));
    if (!r.ok) return r.message ?? r.diagnostics.map((d) => `${d.code} ${d.message}`).join('; ');
    return r.settings.store;
  };

  it('memory by default; a URL from the flag, the environment or the file, in that order of precedence', async () => {
    expect(await storeOf({}, {})).toEqual({ kind: 'memory' });
    expect(await storeOf({}, {}, 'store: redis://10.0.0.5:6379/1\n')).toEqual({
      kind: 'redis',
      url: 'redis://10.0.0.5:6379/1',
      prefix: 'callscript:',
      commandTimeoutMs: 1000,
    });
    expect(
      await storeOf(
        {},
        { CALLSCRIPT_STORE: 'redis://env:6379', CALLSCRIPT_STORE_PREFIX: 'acme:' },
        'store: redis://file:6379\n',
      ),
    ).toMatchObject({ url: 'redis://env:6379', prefix: 'acme:' });
    expect(await storeOf({ store: 'memory' }, { CALLSCRIPT_STORE: 'redis://env:6379' })).toEqual({ kind: 'memory' });
  });

  it('the options of the map: prefix, timeout, cluster, sentinels', async () => {
    expect(
      await storeOf({}, {}, 'store:\n  url: rediss://h:6380/0\n  prefix: "prod:"\n  command_timeout_ms: 500\n'),
    ).toEqual({ kind: 'redis', url: 'rediss://h:6380/0', prefix: 'prod:', commandTimeoutMs: 500 });
    expect(await storeOf({}, {}, 'store:\n  cluster: [redis://a:7000, redis://b:7000]\n')).toMatchObject({
      kind: 'redis',
      cluster: ['redis://a:7000', 'redis://b:7000'],
    });
    expect(await storeOf({}, {}, 'store:\n  sentinels: [{ host: s1, port: 26379 }]\n  name: mymaster\n')).toMatchObject(
      { kind: 'redis', sentinels: [{ host: 's1', port: 26379 }], name: 'mymaster' },
    );
  });

  it('refuses what is not memory nor a Redis URL, with what is expected', async () => {
    expect(await storeOf({ store: 'postgres://x' }, {})).toBe(
      'the store must be "memory" or a Redis URL (redis://host:6379/0, rediss:// for TLS), not "postgres://x"',
    );
    expect(await storeOf({}, {}, 'store: mysql://x\n')).toBe(
      "BAD_FORMAT store must be memory or a Redis URL, got 'mysql://x'",
    );
  });

  it('a change of the store needs a restart', async () => {
    const a = await resolveSettings({}, {}, dir());
    const b = await resolveSettings({ store: 'redis://h:6379' }, {}, dir());
    if (!a.ok || !b.ok) throw new Error('refused');
    expect(
      settingsChanges(
        { ...a.settings, server: { ...a.settings.server, flowsDir: 'x' } },
        { ...b.settings, server: { ...b.settings.server, flowsDir: 'x' } },
      ).restart,
    ).toEqual(['store']);
  });
});
