/**
 * What `callscript serve` runs with: defaults, then callscript.yaml, then environment
 * variables, then command-line flags (each overrides the one before). Which option has which
 * variable and flag, its default and bounds: the table of options (src/config/table.ts).
 */
import { Sealer } from '../engine/seal.js';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { readFile } from 'node:fs/promises';
import { resolve, dirname } from 'node:path';
import { checkConfig } from '../config/check.js';
import {
  CONFIG_DEFAULTS,
  HISTORY_CONFIG_DEFAULTS,
  HTTP_DEFAULTS,
  METRICS_DEFAULTS,
  optionAt,
  STORE_DEFAULTS,
  WEBHOOKS_CONFIG_DEFAULTS,
} from '../config/defaults.js';
import type { Value } from '../config/options.js';
import { configOptionNames, getPath, optionsFromConfig } from '../config/plugin.js';
import { givenText, resolveOption, type Sources } from '../config/sources.js';
import type { ServerConfig } from '../config/types.js';
import { allowedHostsProblem } from '../http/hosts.js';
import { webhookOptionsProblem, type WebhookOptions } from '../http/webhooks.js';
import { storeUrlProblem, type StoreSetting } from '../store/open.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import type { MediaSpec } from '../flow/model.js';
import type { ServerOptions } from '../http/server.js';
import { smsSender, type SmsAccount } from '../http/sms-effect.js';
import { resolveService } from './service-settings.js';

export interface ServeFlags {
  /** memory, or a Redis URL (env CALLSCRIPT_STORE, store: in callscript.yaml). */
  store?: string;
  port?: string;
  host?: string;
  /** Processes serving the port (env CALLSCRIPT_WORKERS, server.workers). */
  workers?: string;
  flows?: string;
  config?: string;
  logLevel?: string;
  /** The environment of the flows' environments: (env CALLSCRIPT_ENV, environment: in callscript.yaml). */
  env?: string;
}

export interface Settings {
  port: number;
  host: string;
  /** Processes serving the port (node:cluster): 1 is this process alone. */
  workers: number;
  configFile?: string;
  /** Where calls live: this process, or Redis (shared by instances). */
  store: StoreSetting;
  /** The SMS account of sms steps, if any (its password is not repeated here). */
  sms?: Omit<SmsAccount, 'password'>;
  /** The service account outbound calls are placed with (POST /admin/calls), if any: its address and login. */
  service?: { url: string; login: string; from: string };
  server: ServerOptions & { flowsDir: string };
}

export type SettingsResult =
  | { ok: true; settings: Settings; diagnostics: Diagnostic[]; sources: Map<string, string> }
  | { ok: false; message?: string; diagnostics: Diagnostic[]; sources: Map<string, string> };

/** A setting that cannot be used: resolveSettings answers its message. */
class Refused extends Error {}

export async function resolveSettings(flags: ServeFlags, env: NodeJS.ProcessEnv, cwd: string): Promise<SettingsResult> {
  const sources = new Map<string, string>();
  const configPath =
    flags.config ??
    env.CALLSCRIPT_CONFIG ??
    (existsSync(resolve(cwd, 'callscript.yaml')) ? 'callscript.yaml' : undefined);
  let config: ServerConfig | undefined;
  let diagnostics: Diagnostic[] = [];
  if (configPath) {
    const file = resolve(cwd, configPath);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      return {
        ok: false,
        message:
          `cannot read config ` +
          `file ${configPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        diagnostics: [],
        sources,
      };
    }
    sources.set(configPath, text);
    const checked = checkConfig(text, configPath);
    diagnostics = checked.diagnostics;
    if (!checked.config) return { ok: false, diagnostics, sources };
    config = checked.config;
  }
  try {
    return { ok: true, diagnostics, sources, settings: settingsOf(flags, env, cwd, configPath, config) };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, message: err.message, diagnostics, sources };
    throw err;
  }
}

/** The settings from the checked config (if any), the environment and the flags; a problem is thrown (Refused). */
function settingsOf(
  flags: ServeFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
  configPath: string | undefined,
  config: ServerConfig | undefined,
): Settings {
  const baseDir = configPath ? dirname(resolve(cwd, configPath)) : cwd;
  const given: Sources = { flags: flags as Record<string, string | undefined>, env };
  // an option of the table from its flag, its variable, the file or its default
  const option = <T>(key: string, fileValue: unknown, check?: (text: string, from: string) => string | undefined) => {
    const r = resolveOption(key, given, fileValue as Value | undefined, check);
    if ('problem' in r) throw new Refused(r.problem);
    return r.value as T;
  };
  const port = option<number>('server.port', config?.server.port);
  const workers = option<number>('server.workers', config?.server.workers);
  const fromConfig = optionsFromConfig(config, given);
  if ('problem' in fromConfig) throw new Refused(fromConfig.problem);
  // an empty variable counts as unset: RT_LOGIN= must not switch auth on with no password
  const auth = credentials('auth', config, option, 'Basic auth needs');
  const admin = credentials('admin', config, option, 'the admin API needs');
  const sms = credentials('sms', config, option, 'the SMS account needs');
  const smsTimeout = option<number>('sms.timeout_ms', config?.sms?.timeout_ms);
  const account: SmsAccount | undefined = sms
    ? { baseUrl: option<string>('sms.base_url', config?.sms?.base_url), ...sms, timeoutMs: smsTimeout }
    : undefined;
  // The service account of outbound calls (src/cli/service-settings.ts): env, then the file.
  const svc = resolveService({}, env, config, configPath);
  if (typeof svc === 'string') throw new Refused(svc);
  const flowsGiven = givenText(optionAt('server.flows_dir'), given);
  const flowsDir = flowsGiven?.text ?? resolve(baseDir, config?.server.flows_dir ?? CONFIG_DEFAULTS.server.flows_dir);
  const store = storeSetting(config, option);
  const sensitiveKeys = sensitiveKeysOf(env);
  const webhooks = webhooksSetting(config, env, option);
  const metrics = config?.metrics ?? METRICS_DEFAULTS;
  if (webhooks?.secret !== undefined && metrics.enabled && webhooks.path === metrics.path)
    throw new Refused(`webhooks.path and metrics.path are both ${metrics.path}: give them different paths`);
  if (metrics.enabled && metrics.auth === 'admin' && admin === undefined)
    throw new Refused(
      'metrics.auth: admin puts /metrics behind the admin credentials, and none are set: give admin.login ' +
        'and admin.password (or ADMIN_LOGIN and ADMIN_PASSWORD), or use metrics.auth: none',
    );
  if (workers > 1 && store.kind === 'memory')
    throw new Refused(
      `${workers} workers need a shared call store: with the memory store each process keeps its own calls, ` +
        `and the requests of one call reach any process. Give a Redis URL (--store, CALLSCRIPT_STORE, or ` +
        `store: in the config file), or run 1 worker`,
    );
  const http = config?.http ?? HTTP_DEFAULTS;
  const host = option<string>('server.host', config?.server.host);
  const options = fromConfig.options as Partial<ServerOptions>;
  // the listen address is a name the admin API, the metrics and /health answer to (IP addresses always are)
  const listenName = isIP(host) === 0 && allowedHostsProblem([host]) === undefined;
  const allowedHosts = [...(options.allowedHosts ?? []), ...(listenName ? [host] : [])];
  return {
    port,
    workers,
    host,
    configFile: configPath,
    store,
    ...(account ? { sms: { baseUrl: account.baseUrl, login: account.login, timeoutMs: account.timeoutMs } } : {}),
    ...(svc.account ? { service: { url: svc.url, login: svc.account.login, from: svc.accountFrom! } } : {}),
    server: {
      ...(svc.account ? { service: { url: svc.url, login: svc.account.login, password: svc.account.password } } : {}),
      effects: account ? { sms: smsSender(account) } : {},
      http: {
        allowPrivate: http.allow_private,
        maxBodyBytes: http.max_body_bytes,
        maxLookupsPerCall: http.max_lookups_per_call,
        ...(http.allow_hosts ? { allowHosts: http.allow_hosts } : {}),
      },
      flowsDir: resolve(cwd, flowsDir),
      // deadlineMs, bodyLimit, ..., logLevel, the timeouts: the options of the table (src/config/table.ts)
      ...options,
      ...(allowedHosts.length > 0 ? { allowedHosts } : {}),
      auth,
      routes: config?.routes ?? { apps: {}, numbers: {} },
      admin,
      canary: config?.canary ?? {},
      configFile: configPath ? resolve(cwd, configPath) : undefined,
      fallback: config?.fallback ? fallbackMedia(config.fallback) : undefined,
      metrics: metrics.enabled ? { path: metrics.path, auth: metrics.auth } : false,
      ...(sensitiveKeys ? { sensitiveKeys } : {}),
      history: historySetting(config),
      ...(webhooks ? { webhooks } : {}),
    },
  };
}

type OptionOf = <T>(key: string, fileValue: unknown, check?: (text: string, from: string) => string | undefined) => T;

/** A login and password that go together (auth, admin, sms): both or neither, from the variables or the file. */
function credentials(
  name: 'auth' | 'admin' | 'sms',
  config: ServerConfig | undefined,
  option: OptionOf,
  needs: string,
): { login: string; password: string } | undefined {
  const login = option<string | undefined>(`${name}.login`, config?.[name]?.login);
  const password = option<string | undefined>(`${name}.password`, config?.[name]?.password);
  if ((login === undefined) !== (password === undefined)) {
    const vars = `${optionAt(`${name}.login`).env} and ${optionAt(`${name}.password`).env}`;
    throw new Refused(`${needs} both a login and a password (${vars}, or ${name}.login and ${name}.password)`);
  }
  return login !== undefined && password !== undefined ? { login, password } : undefined;
}

/** Where calls live: memory, or Redis with the options of the file. */
function storeSetting(config: ServerConfig | undefined, option: OptionOf): StoreSetting {
  const url = option<string>('store.url', config?.store?.url, (text) => storeUrlProblem(text) ?? undefined);
  if (url === 'memory' && !config?.store?.cluster && !config?.store?.sentinels) return { kind: 'memory' };
  return {
    kind: 'redis',
    url,
    prefix: option<string>('store.prefix', config?.store?.prefix),
    commandTimeoutMs: config?.store?.command_timeout_ms ?? STORE_DEFAULTS.command_timeout_ms,
    ...(config?.store?.cluster ? { cluster: config.store.cluster } : {}),
    ...(config?.store?.sentinels && config.store.name
      ? { sentinels: config.store.sentinels, name: config.store.name }
      : {}),
  };
}

/** Keys of sensitive values at rest (src/engine/seal.ts): checked here, a bad one stops the start. */
function sensitiveKeysOf(env: NodeJS.ProcessEnv): string[] | undefined {
  try {
    if (!Sealer.fromEnv(env)) return undefined;
  } catch (err) {
    throw new Refused((err as Error).message);
  }
  return [
    env.CALLSCRIPT_SENSITIVE_KEY!.trim(),
    ...(env.CALLSCRIPT_SENSITIVE_KEY_PREVIOUS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== ''),
  ];
}

/** The service's webhooks: the secret from the environment (better than the file), else webhooks.secret. */
function webhooksSetting(
  config: ServerConfig | undefined,
  env: NodeJS.ProcessEnv,
  option: OptionOf,
): WebhookOptions | undefined {
  // the secret's length is checked with the rest of the webhook options, below
  const secret = option<string | undefined>('webhooks.secret', config?.webhooks?.secret, () => undefined);
  if (!config?.webhooks && secret === undefined) return undefined;
  const w = config?.webhooks ?? WEBHOOKS_CONFIG_DEFAULTS;
  // CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS: comma-separated, accepted too while subscriptions move to the new secret
  const previous = (env.CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  const webhooks: WebhookOptions = {
    path: w.path,
    bodyLimit: w.body_limit,
    toleranceMs: w.tolerance_ms,
    ...(secret !== undefined ? { secret } : {}),
    ...(previous.length > 0 && secret !== undefined ? { previousSecrets: previous } : {}),
  };
  const bad = webhookOptionsProblem(webhooks);
  if (!bad) return webhooks;
  // the problem said of the variable that gave the secret
  throw new Refused(
    env.CALLSCRIPT_WEBHOOK_SECRET && bad.startsWith('webhooks.secret ')
      ? bad.replace('webhooks.secret', 'CALLSCRIPT_WEBHOOK_SECRET')
      : bad.replace('each previous webhook secret', 'each secret of CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS'),
  );
}

/**
 * What a changed config file does to a running server: routes and canary apply at once;
 * the other settings only at the next start (listed by name in `restart`).
 */
export function settingsChanges(
  before: Settings,
  after: Settings,
): { routes?: Settings['server']['routes']; canary?: Record<string, number>; restart: string[] } {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const out: ReturnType<typeof settingsChanges> = { restart: [] };
  if (!same(before.server.routes, after.server.routes)) out.routes = after.server.routes;
  if (!same(before.server.canary, after.server.canary)) out.canary = after.server.canary ?? {};
  const atStart: [string, unknown, unknown][] = [
    ['store', before.store, after.store],
    ['server.port', before.port, after.port],
    ['server.host', before.host, after.host],
    ['server.workers', before.workers, after.workers],
    ['server.flows_dir', before.server.flowsDir, after.server.flowsDir],
    // deadline_ms, body_limit, ..., the timeouts, the limits: the options of the table (src/config/table.ts)
    ...configOptionNames().map(([key, name]): [string, unknown, unknown] => [
      key,
      getPath(before.server, name),
      getPath(after.server, name),
    ]),
    ['fallback', before.server.fallback, after.server.fallback],
    ['auth', before.server.auth, after.server.auth],
    ['admin', before.server.admin, after.server.admin],
    ['metrics', before.server.metrics, after.server.metrics],
    ['sms', before.sms, after.sms],
    ['api, account', before.server.service, after.server.service],
    ['history', before.server.history, after.server.history],
    ['webhooks', before.server.webhooks, after.server.webhooks],
  ];
  for (const [name, a, b] of atStart) if (!same(a, b)) out.restart.push(name);
  return out;
}

/** The call history (history: in the config): its plugin option, false when keep is 0. */
function historySetting(config: ServerConfig | undefined): NonNullable<ServerOptions['history']> {
  const h = config?.history ?? HISTORY_CONFIG_DEFAULTS;
  return h.keep === 0
    ? false
    : {
        keep: h.keep,
        ttlMs: h.ttl_ms,
        maxPath: h.max_path,
        maxPathBytes: h.max_path_bytes,
        maxBytes: h.max_bytes,
      };
}

/** The config's fallback media as the rt_media string sent (none: the default wait). */
function fallbackMedia(m: MediaSpec): string | undefined {
  switch (m.kind) {
    case 'none':
      return undefined;
    case 'id':
      return String(m.id);
    case 'tts':
      return `TTS|${m.voice}|${m.text}`;
    case 'raw':
      return m.value;
  }
}
