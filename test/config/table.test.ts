/**
 * The table of server options and what is made from it: the config checker's bounds and allowed values at their
 * place, serve's variables and flags, the plugin's defaults and option check, and the checks of the modules that
 * take options of the table (transport, history, webhooks).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/config/check.js';
import { numberAt, optionAt } from '../../src/config/defaults.js';
import { defaultOf, linkBounds, type NumberOption, type OptionDef } from '../../src/config/options.js';
import { getPath } from '../../src/config/plugin.js';
import { flagProperty } from '../../src/config/sources.js';
import { OPTIONS, SECTIONS } from '../../src/config/table.js';
import { resolveSettings } from '../../src/cli/settings.js';
import { checkOptions } from '../../src/http/check-options.js';
import { DEFAULT_RT_OPTIONS } from '../../src/http/options.js';
import { codeDefault } from '../../src/config/code.js';
import { DEFAULT_ENDED_TTL_MS } from '../../src/engine/call-record.js';
import { DEFAULT_MAX_LIVE_CALLS } from '../../src/engine/resolve.js';
import { DEFAULT_MAX_STATE_BYTES } from '../../src/engine/size.js';
import { DEFAULT_SMS_BASE_URL } from '../../src/sms/client.js';
import { DEFAULT_REDIS_PREFIX } from '../../src/store/redis.js';
import { transportOptions } from '../../src/http/transport.js';
import { historySettings } from '../../src/http/history.js';
import {
  DEFAULT_WEBHOOK_BODY_LIMIT,
  DEFAULT_WEBHOOK_PATH,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  EVENT_TTL_MS,
  webhookOptionsProblem,
} from '../../src/http/webhooks.js';

const keyed = OPTIONS.filter((o): o is OptionDef & { key: string } => o.key !== undefined);
const numbers = keyed.filter((o): o is NumberOption & { key: string } => o.type === 'integer' || o.type === 'number');

/** A config file setting one key (`server.port` -> "server:\n  port: 1\n"), the value at line 1 + depth. */
function yamlOf(key: string, value: string): { text: string; line: number; column: number } {
  const parts = key.replace('*', 'desk').split('.');
  const text = parts.map((p, i) => `${'  '.repeat(i)}${p}:${i === parts.length - 1 ? ` ${value}` : ''}`).join('\n');
  const last = parts.length - 1;
  return { text: `${text}\n`, line: parts.length, column: 2 * last + parts[last]!.length + 3 };
}

function plugged(name: string, v: unknown): Record<string, unknown> {
  const o = structuredClone(DEFAULT_RT_OPTIONS) as unknown as Record<string, unknown>;
  const keys = name.split('.');
  let at = o;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys.at(-1)!] = v;
  return o;
}

describe('the table of options', () => {
  it('defines each key, variable and flag once, with a default within its bounds and a doc line', () => {
    const keys = keyed.map((o) => o.key);
    expect(new Set(keys).size).toBe(keys.length);
    const envs = OPTIONS.flatMap((o) => (o.env ? [o.env] : []));
    expect(new Set(envs).size).toBe(envs.length);
    const flags = OPTIONS.flatMap((o) => (o.flag ? [o.flag] : []));
    expect(new Set(flags).size).toBe(flags.length);
    for (const o of OPTIONS) {
      expect(o.doc, String(o.key)).toMatch(/^[A-Za-z0-9].*[.)]$/s);
      if ((o.type === 'integer' || o.type === 'number') && o.default !== undefined) {
        expect(o.default, o.key).toBeGreaterThanOrEqual(o.min);
        expect(o.default, o.key).toBeLessThanOrEqual(o.max);
      }
      if (o.type === 'enum' && o.default !== undefined) expect(o.values, o.key).toContain(o.default);
      if (o.key === undefined) expect(o.option, 'an option with no key is the plugin option').toBeDefined();
    }
    // every map of options has its doc line
    const maps = new Set(keyed.filter((o) => o.key.includes('.')).map((o) => o.key.split('.')[0]!));
    for (const m of maps) expect(SECTIONS[m]?.doc, m).toBeDefined();
  });

  it('the checker refuses each number out of its bounds, at the value, and takes both bounds', () => {
    expect(numbers.length).toBeGreaterThanOrEqual(30);
    for (const o of numbers) {
      for (const bad of [o.min - 1, o.max + 1]) {
        const y = yamlOf(o.key, String(bad));
        expect(
          checkConfig(y.text, 'c.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`),
          y.text,
        ).toEqual([
          `${y.line}:${y.column} OUT_OF_BOUNDS ${o.key.replace('*', 'desk')} must be between ${o.min} and ${o.max}, ` +
            `got ${bad}`,
        ]);
      }
      for (const good of [o.min, o.max]) {
        // headers_timeout_ms is within request_timeout_ms (10000 by default): the other one set out of the way
        const other: Record<string, string> = {
          'server.request_timeout_ms': '  headers_timeout_ms: 100\n',
          'server.headers_timeout_ms': '  request_timeout_ms: 300000\n',
        };
        const text = yamlOf(o.key, String(good)).text + (other[o.key] ?? '');
        const r = checkConfig(text, 'c.yaml');
        expect(r.diagnostics, text).toEqual([]);
        expect(getPath(r.config, o.key.replace('*', 'desk')), text).toBe(good);
      }
    }
  });

  it('the checker refuses a value outside the allowed ones with them listed', () => {
    for (const o of keyed) {
      if (o.type !== 'enum') continue;
      const y = yamlOf(o.key, 'nope');
      expect(
        checkConfig(y.text, 'c.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`),
      ).toEqual([`${y.line}:${y.column} BAD_ENUM ${o.key} must be one of ${o.values.join(', ')}, not "nope"`]);
    }
  });

  it("the JSON Schema's defaults are the config's defaults", () => {
    const r = checkConfig(
      'sms: { login: a, password: b }\nhttp: {}\nhistory: {}\nwebhooks: {}\nmetrics: {}\n',
      'c.yaml',
    );
    expect(r.diagnostics).toEqual([]);
    for (const o of keyed) {
      if (!('default' in o) || o.default === undefined || o.key.startsWith('store.')) continue;
      expect(getPath(r.config, o.key), o.key).toEqual(o.default);
    }
    const store = checkConfig('store: { name: m }\n', 'c.yaml').config!.store;
    expect(store).toEqual({ url: 'memory', prefix: 'callscript:', command_timeout_ms: 1000, name: 'm' });
  });
});

describe("serve's variables and flags, from the table", () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'callscript-options-'));
  const why = async (flags: Record<string, string>, env: Record<string, string>) => {
    const r = await resolveSettings(flags, env, dir());
    return r.ok ? 'accepted' : r.message;
  };

  // each variable and flag: a value, and where serve's settings have it (with an SMS account and a Redis store
  // where the option needs them to be read)
  const needs: Record<string, Record<string, string>> = {
    'sms.base_url': { SMS_LOGIN: 'l', SMS_PASSWORD: 'p' },
    'sms.login': { SMS_PASSWORD: 'p' },
    'sms.password': { SMS_LOGIN: 'l' },
    'sms.timeout_ms': { SMS_LOGIN: 'l', SMS_PASSWORD: 'p' },
    'store.prefix': { CALLSCRIPT_STORE: 'redis://127.0.0.1:6379' },
    'auth.login': { RT_PASSWORD: 'p' },
    'auth.password': { RT_LOGIN: 'l' },
    'admin.login': { ADMIN_PASSWORD: 'p' },
    'admin.password': { ADMIN_LOGIN: 'l' },
  };
  const cases: Record<string, [string, (s: Record<string, unknown>) => unknown, unknown?]> = {
    'server.port': ['8080', (s) => s.port, 8080],
    'server.host': ['0.0.0.0', (s) => s.host],
    'server.flows_dir': ['/srv/flows', (s) => getPath(s, 'server.flowsDir')],
    'server.deadline_ms': ['2500', (s) => getPath(s, 'server.deadlineMs'), 2500],
    'server.log_level': ['debug', (s) => getPath(s, 'server.logLevel')],
    'server.workers': ['1', (s) => s.workers, 1],
    'auth.login': ['svc', (s) => getPath(s, 'server.auth.login')],
    'auth.password': ['pw', (s) => getPath(s, 'server.auth.password')],
    'admin.login': ['boss', (s) => getPath(s, 'server.admin.login')],
    'admin.password': ['pw', (s) => getPath(s, 'server.admin.password')],
    environment: ['production', (s) => getPath(s, 'server.environment')],
    unknown_call: ['reject', (s) => getPath(s, 'server.unknownCall')],
    'store.url': ['redis://10.0.0.5:6379/1', (s) => getPath(s, 'store.url')],
    'store.prefix': ['acme:', (s) => getPath(s, 'store.prefix')],
    'sms.base_url': ['https://sms.example/rest/v1.1', (s) => getPath(s, 'sms.baseUrl')],
    'sms.login': ['me', (s) => getPath(s, 'sms.login')],
    'sms.password': ['secret', (s) => typeof getPath(s, 'server.effects.sms'), 'function'],
    'sms.timeout_ms': ['2000', (s) => getPath(s, 'sms.timeoutMs'), 2000],
    'webhooks.secret': ['0123456789abcdef0123', (s) => getPath(s, 'server.webhooks.secret')],
    // read by src/cli/service-settings.ts for serve, apps and dial (test/service/*)
    api: ['http://127.0.0.1:4010', (s) => getPath(s, 'service.url'), undefined],
  };

  it('covers every variable and flag of the table', () => {
    const given = keyed.filter((o) => o.env !== undefined || o.flag !== undefined).map((o) => o.key);
    expect(Object.keys(cases).sort()).toEqual(given.sort());
  });

  for (const o of keyed.filter((x) => x.env !== undefined || x.flag !== undefined)) {
    it(`${o.key}: ${[o.env, o.flag].filter(Boolean).join(' and ')}`, async () => {
      const [text, at, expected] = cases[o.key]!;
      if (o.key === 'api') return; // needs an account too: test/service/settings.test.ts
      const base = needs[o.key] ?? {};
      const sources: [Record<string, string>, Record<string, string>][] = [];
      if (o.env) sources.push([{}, { ...base, [o.env]: text }]);
      if (o.flag) sources.push([{ [flagProperty(o.flag)]: text }, base]);
      for (const [flags, env] of sources) {
        const r = await resolveSettings(flags, env, dir());
        if (!r.ok) throw new Error(`${o.key}: ${r.message}`);
        expect(at(r.settings as unknown as Record<string, unknown>), JSON.stringify([flags, env])).toEqual(
          expected ?? text,
        );
      }
      // an empty variable counts as unset
      if (o.env && !needs[o.key]) {
        const r = await resolveSettings({}, { [o.env]: '' }, dir());
        expect(r.ok, o.env).toBe(true);
      }
    });
  }

  it('checks a number, a choice and a pattern like the file, naming the variable or the flag', async () => {
    for (const o of numbers.filter((x) => x.env || x.flag)) {
      const base = needs[o.key] ?? {};
      const bad = String(o.max + 1);
      if (o.env)
        expect(await why({}, { ...base, [o.env]: bad })).toBe(
          `${o.env} must be an integer from ${o.min} to ${o.max}, not "${bad}"`,
        );
      if (o.flag)
        expect(await why({ [flagProperty(o.flag)]: 'x' }, base)).toBe(
          `${o.flag} must be an integer from ${o.min} to ${o.max}, not "x"`,
        );
    }
    expect(await why({}, { DEADLINE_MS: '9000' })).toBe('DEADLINE_MS must be an integer from 100 to 4900, not "9000"');
    expect(await why({}, { UNKNOWN_CALL: 'drop' })).toBe('UNKNOWN_CALL must be restart, hangup or reject, not "drop"');
    expect(await why({ logLevel: 'verbose' }, { LOG_LEVEL: 'info' })).toBe(
      '--log-level must be fatal, error, warn, info, debug, trace or silent, not "verbose"',
    );
    expect(await why({}, { CALLSCRIPT_ENV: 'pro duction' })).toBe(
      'CALLSCRIPT_ENV must be an environment name (letters, digits, - and _; 64 at most), not "pro duction"',
    );
    expect(await why({}, { SMS_LOGIN: 'l', SMS_PASSWORD: 'p', SMS_BASE_URL: 'ftp://x' })).toBe(
      'SMS_BASE_URL must be an http:// or https:// URL, not "ftp://x"',
    );
    expect(await why({}, { CALLSCRIPT_STORE: 'redis://h:6379', CALLSCRIPT_STORE_PREFIX: 'a b' })).toBe(
      'CALLSCRIPT_STORE_PREFIX may hold letters, digits and : _ . { } - (64 at most), not "a b"',
    );
  });
});

describe("the plugin's options, from the table", () => {
  const plugin = OPTIONS.filter(
    (o): o is NumberOption => o.option !== undefined && (o.option.of ?? 'plugin') === 'plugin' && o.type === 'integer',
  );

  it('DEFAULT_RT_OPTIONS: the defaults of the file in the units of the plugin', () => {
    expect(DEFAULT_RT_OPTIONS).toEqual({
      deadlineMs: 4000,
      bodyLimit: 65536,
      bodyDepth: 32,
      callTtlMs: 7_200_000,
      endedTtlMs: 600_000,
      liveCheckMs: 30_000,
      maxStateBytes: 32768,
      evalLimits: { celUnits: 100_000, templateMs: 50, templateMemory: 50_000 },
      maxFlowBytes: 2_097_152,
      maxLiveCalls: 50_000,
      reloadSettleMs: 1000,
      authFailureLimit: 10,
      authFailureWindowMs: 60_000,
      unknownCall: 'restart',
      routes: { apps: {}, numbers: {} },
    });
  });

  it('checkOptions refuses each number out of its bounds and takes both bounds', () => {
    expect(plugin.map((o) => o.option!.name).sort()).toEqual(
      [
        'deadlineMs',
        'bodyLimit',
        'bodyDepth',
        'callTtlMs',
        'endedTtlMs',
        'reloadSettleMs',
        'authFailureLimit',
        'authFailureWindowMs',
        'maxStateBytes',
        'evalLimits.celUnits',
        'evalLimits.templateMemory',
        'evalLimits.templateMs',
        'maxLiveCalls',
        'maxFlowBytes',
        'liveCheckMs',
      ].sort(),
    );
    const check = (o: Record<string, unknown>) => () =>
      checkOptions(o as unknown as Parameters<typeof checkOptions>[0]);
    for (const o of plugin) {
      const { min, max } = linkBounds(o);
      const name = o.option!.name;
      expect(check(plugged(name, min - 1)), name).toThrow(`callscript plugin: ${name} must be `);
      expect(check(plugged(name, 1.5)), name).toThrow(`, got 1.5`);
      if (max !== null) expect(check(plugged(name, max + 1)), name).toThrow(`got ${max + 1}`);
      expect(check(plugged(name, min)), name).not.toThrow();
      expect(check(plugged(name, max ?? min * 1000)), name).not.toThrow();
    }
    expect(check(plugged('deadlineMs', 99))).toThrow(
      'callscript plugin: deadlineMs must be an integer from 100 to 4900, got 99',
    );
    expect(check(plugged('authFailureWindowMs', 86_400_001))).toThrow(
      'callscript plugin: authFailureWindowMs must be an integer from 1000 to 86400000, got 86400001',
    );
    expect(check(plugged('evalLimits.templateMs', 0))).toThrow(
      'callscript plugin: evalLimits.templateMs must be an integer from 1 to 1000, got 0',
    );
    expect(check(plugged('callTtlMs', 999))).toThrow(
      'callscript plugin: callTtlMs must be an integer of at least 1000, got 999',
    );
    expect(check(plugged('maxLiveCalls', 0))).toThrow(
      'callscript plugin: maxLiveCalls must be a positive integer, got 0',
    );
    expect(check(plugged('unknownCall', 'drop'))).toThrow(
      'callscript plugin: unknownCall must be restart, hangup or reject, got drop',
    );
    expect(check({ ...DEFAULT_RT_OPTIONS, canary: { desk: 101 } })).toThrow(
      'callscript plugin: canary.desk must be a percent from 0 to 100, got 101',
    );
  });
});

describe('the modules that take options of the table check them with its bounds', () => {
  // each module's check, given one option by its name (the others at their defaults)
  const checks: Record<string, (name: string, v: number) => string | undefined> = {
    server: (name, v) => {
      // headersTimeoutMs is within requestTimeoutMs: the other one out of the way
      const other =
        name === 'requestTimeoutMs'
          ? { headersTimeoutMs: 100 }
          : name === 'headersTimeoutMs'
            ? { requestTimeoutMs: 300_000 }
            : {};
      return problem(() => transportOptions({ ...other, [name]: v }));
    },
    history: (name, v) => problem(() => historySettings({ [name.replace('history.', '')]: v })),
    webhooks: (name, v) => webhookOptionsProblem({ [name.replace('webhooks.', '')]: v }) ?? undefined,
  };
  const problem = (f: () => unknown) => {
    try {
      f();
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const taken = numbers.filter((o) => o.option?.of !== undefined && o.option.of in checks);

  it('refuses each number out of its bounds, with them in the message, and takes both bounds', () => {
    expect(taken.map((o) => o.option!.name).sort()).toEqual(
      [
        'headersTimeoutMs',
        'requestTimeoutMs',
        'keepAliveTimeoutMs',
        'socketTimeoutMs',
        'maxConnections',
        'history.keep',
        'history.ttlMs',
        'history.maxPath',
        'history.maxPathBytes',
        'history.maxBytes',
        'webhooks.bodyLimit',
        'webhooks.toleranceMs',
      ].sort(),
    );
    for (const o of taken) {
      const check = checks[o.option!.of!]!;
      const name = o.option!.name;
      const { min, max } = linkBounds(o);
      for (const bad of [min - 1, max! + 1])
        expect(check(name, bad), name).toMatch(
          new RegExp(`${name.replace('.', '\\.')} must be an integer from ${min} to ${max}, got ${bad}$`),
        );
      for (const good of [min, max!]) expect(check(name, good), name).toBeUndefined();
    }
  });

  it("defaults to the table's defaults", () => {
    const transport = transportOptions();
    const history = historySettings(undefined)!;
    for (const o of taken) {
      const name = o.option!.name;
      const value =
        o.option!.of === 'server'
          ? transport[name as keyof typeof transport]
          : o.option!.of === 'history'
            ? history[name.replace('history.', '') as keyof typeof history]
            : name === 'webhooks.toleranceMs'
              ? DEFAULT_WEBHOOK_TOLERANCE_MS
              : DEFAULT_WEBHOOK_BODY_LIMIT;
      expect(value, name).toBe(o.default);
    }
    expect(DEFAULT_WEBHOOK_PATH).toBe(defaultOf(optionAt('webhooks.path')));
    // past the event ids' memory a replayed event would be taken again
    expect(numberAt('webhooks.tolerance_ms').max).toBe(EVENT_TTL_MS);
    expect(webhookOptionsProblem({ secret: 'x'.repeat(15) })).toBe(
      'webhooks.secret must be 16 to 256 characters (e.g. openssl rand -base64 32)',
    );
    expect(webhookOptionsProblem({ secret: 'x'.repeat(256) })).toBeNull();
  });
});

describe('defaults kept below src/config, for the callers that give none, agree with the table', () => {
  // the stages src/config comes after (the engine, the stores, the SMS client) cannot read the table: the server
  // always gives them its values, and these are for their direct callers (tests, tools, embedders)
  it("the engine's, the Redis store's and the SMS client's", () => {
    expect(DEFAULT_MAX_LIVE_CALLS).toBe(codeDefault('maxLiveCalls'));
    expect(DEFAULT_MAX_STATE_BYTES).toBe(codeDefault('maxStateBytes'));
    expect(DEFAULT_ENDED_TTL_MS).toBe(codeDefault('endedTtlMs'));
    expect(DEFAULT_REDIS_PREFIX).toBe(defaultOf(optionAt('store.prefix')));
    expect(DEFAULT_SMS_BASE_URL).toBe(defaultOf(optionAt('sms.base_url')));
  });
});

describe('src/config, a stage of its own', () => {
  it('imports neither the http stage, the CLI nor the engine', () => {
    const dirUrl = new URL('../../src/config/', import.meta.url);
    for (const f of readdirSync(dirUrl)) {
      const text = readFileSync(new URL(f, dirUrl), 'utf8');
      const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      expect(
        imports.filter((i) => /^\.\.\/(http|cli|engine|store|registry)\//.test(i)),
        f,
      ).toEqual([]);
    }
  });
});
