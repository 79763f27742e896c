/**
 * What `callscript serve` runs with: defaults, then callscript.yaml, then environment
 * variables, then command-line flags (each overrides the one before).
 */
import { Sealer } from '../engine/seal.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve, dirname } from 'node:path';
import {
  checkConfig,
  CONFIG_DEFAULTS,
  HISTORY_CONFIG_DEFAULTS,
  METRICS_DEFAULTS,
  STORE_DEFAULTS,
  WEBHOOKS_CONFIG_DEFAULTS,
  type ServerConfig,
} from '../flow/config.js';
import { MIN_SECRET_CHARS, webhookOptionsProblem, type WebhookOptions } from '../http/webhooks.js';
import { storeUrlProblem, type StoreSetting } from '../store/open.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import type { MediaSpec } from '../flow/model.js';
import type { ServerOptions } from '../http/server.js';
import { DEFAULT_RT_OPTIONS, type UnknownCallPolicy } from '../http/options.js';
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

function envSetting(name: string | undefined): { environment?: string } {
  return name !== undefined && name !== '' ? { environment: name } : {};
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
  const baseDir = configPath ? dirname(resolve(cwd, configPath)) : cwd;
  const port = intSetting('port', flags.port ?? env.PORT, config?.server.port ?? 3000, 0, 65535);
  if (typeof port === 'string') return { ok: false, message: port, diagnostics, sources };
  const workers = intSetting(
    flags.workers !== undefined ? '--workers' : 'CALLSCRIPT_WORKERS',
    flags.workers ?? env.CALLSCRIPT_WORKERS,
    config?.server.workers ?? 1,
    1,
    256,
  );
  if (typeof workers === 'string') return { ok: false, message: workers, diagnostics, sources };
  const deadline = intSetting(
    'DEADLINE_MS',
    env.DEADLINE_MS,
    config?.server.deadline_ms ?? DEFAULT_RT_OPTIONS.deadlineMs,
    100,
    4900,
  );
  if (typeof deadline === 'string') return { ok: false, message: deadline, diagnostics, sources };
  const policy = (env.UNKNOWN_CALL ?? config?.unknown_call ?? 'restart') as UnknownCallPolicy;
  if (!['restart', 'hangup', 'reject'].includes(policy)) {
    return {
      ok: false,
      message: `UNKNOWN_CALL must be restart, hangup or reject, not "${policy}"`,
      diagnostics,
      sources,
    };
  }
  // An empty variable counts as unset: RT_LOGIN= must not switch auth on with no password.
  const login = nonEmpty(env.RT_LOGIN) ?? config?.auth?.login;
  const password = nonEmpty(env.RT_PASSWORD) ?? config?.auth?.password;
  if ((login === undefined) !== (password === undefined)) {
    return {
      ok: false,
      message:
        'Basic auth needs both a login and a password (RT_LOGIN and RT_PASSWORD, or auth.login and auth.password)',
      diagnostics,
      sources,
    };
  }
  const adminLogin = nonEmpty(env.ADMIN_LOGIN) ?? config?.admin?.login;
  const adminPassword = nonEmpty(env.ADMIN_PASSWORD) ?? config?.admin?.password;
  if ((adminLogin === undefined) !== (adminPassword === undefined)) {
    return {
      ok: false,
      message:
        'the admin API needs both a login and a password (ADMIN_LOGIN and ADMIN_PASSWORD, or admin.login and ' +
        'admin.password)',
      diagnostics,
      sources,
    };
  }
  const smsLogin = nonEmpty(env.SMS_LOGIN) ?? config?.sms?.login;
  const smsPassword = nonEmpty(env.SMS_PASSWORD) ?? config?.sms?.password;
  if ((smsLogin === undefined) !== (smsPassword === undefined)) {
    return {
      ok: false,
      message:
        'the SMS account needs both a login and a password (SMS_LOGIN and SMS_PASSWORD, or sms.login and sms.password)',
      diagnostics,
      sources,
    };
  }
  const smsTimeout = intSetting('SMS_TIMEOUT_MS', env.SMS_TIMEOUT_MS, config?.sms?.timeout_ms ?? 3000, 100, 30000);
  if (typeof smsTimeout === 'string') return { ok: false, message: smsTimeout, diagnostics, sources };
  const account: SmsAccount | undefined =
    smsLogin !== undefined && smsPassword !== undefined
      ? {
          baseUrl: env.SMS_BASE_URL ?? config?.sms?.base_url ?? 'http://127.0.0.1:4010/rest/v1.1',
          login: smsLogin,
          password: smsPassword,
          timeoutMs: smsTimeout,
        }
      : undefined;
  // The service account of outbound calls (src/cli/service-settings.ts): env, then the file.
  const svc = resolveService({}, env, config, configPath);
  if (typeof svc === 'string') return { ok: false, message: svc, diagnostics, sources };
  const flowsDir = flags.flows ?? env.FLOWS_DIR ?? (config ? resolve(baseDir, config.server.flows_dir) : 'flows');
  const storeUrl = nonEmpty(flags.store) ?? nonEmpty(env.CALLSCRIPT_STORE) ?? config?.store?.url ?? STORE_DEFAULTS.url;
  const storeProblem = storeUrlProblem(storeUrl);
  if (storeProblem) return { ok: false, message: storeProblem, diagnostics, sources };
  const store: StoreSetting =
    storeUrl === 'memory' && !config?.store?.cluster && !config?.store?.sentinels
      ? { kind: 'memory' }
      : {
          kind: 'redis',
          url: storeUrl,
          prefix: env.CALLSCRIPT_STORE_PREFIX ?? config?.store?.prefix ?? STORE_DEFAULTS.prefix,
          commandTimeoutMs: config?.store?.command_timeout_ms ?? STORE_DEFAULTS.command_timeout_ms,
          ...(config?.store?.cluster ? { cluster: config.store.cluster } : {}),
          ...(config?.store?.sentinels && config.store.name
            ? { sentinels: config.store.sentinels, name: config.store.name }
            : {}),
        };
  // Keys of sensitive values at rest (src/engine/seal.ts): checked here, a bad one stops the start.
  let sensitiveKeys: string[] | undefined;
  try {
    if (Sealer.fromEnv(env))
      sensitiveKeys = [
        env.CALLSCRIPT_SENSITIVE_KEY!.trim(),
        ...(env.CALLSCRIPT_SENSITIVE_KEY_PREVIOUS ?? '')
          .split(',')
          .map((k) => k.trim())
          .filter((k) => k !== ''),
      ];
  } catch (err) {
    return { ok: false, message: (err as Error).message, diagnostics, sources };
  }
  // The service's webhooks: the secret from the environment (better than the file), else webhooks.secret.
  const webhookSecret = nonEmpty(env.CALLSCRIPT_WEBHOOK_SECRET) ?? config?.webhooks?.secret;
  let webhooks: WebhookOptions | undefined;
  if (config?.webhooks || webhookSecret !== undefined) {
    const w = config?.webhooks ?? WEBHOOKS_CONFIG_DEFAULTS;
    // CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS: comma-separated, accepted too while subscriptions move to the new secret
    const previous = (env.CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== '');
    webhooks = {
      path: w.path,
      bodyLimit: w.body_limit,
      ...(webhookSecret !== undefined ? { secret: webhookSecret } : {}),
      ...(previous.length > 0 && webhookSecret !== undefined ? { previousSecrets: previous } : {}),
    };
    const bad = webhookOptionsProblem(webhooks);
    if (bad) {
      const named =
        env.CALLSCRIPT_WEBHOOK_SECRET && bad.startsWith('webhooks.secret')
          ? `CALLSCRIPT_WEBHOOK_SECRET must be ${MIN_SECRET_CHARS} to 256 characters (e.g. openssl rand -base64 32)`
          : bad.startsWith('each previous')
            ? `each secret of CALLSCRIPT_WEBHOOK_SECRET_PREVIOUS must be ${MIN_SECRET_CHARS} to 256 characters`
            : bad;
      return { ok: false, message: named, diagnostics, sources };
    }
  }
  const metrics = config?.metrics ?? METRICS_DEFAULTS;
  if (webhooks?.secret !== undefined && metrics.enabled && webhooks.path === metrics.path) {
    return {
      ok: false,
      message: `webhooks.path and metrics.path are both ${metrics.path}: give them different paths`,
      diagnostics,
      sources,
    };
  }
  if (metrics.enabled && metrics.auth === 'admin' && (adminLogin === undefined || adminPassword === undefined)) {
    return {
      ok: false,
      message:
        'metrics.auth: admin puts /metrics behind the admin credentials, and none are set: give admin.login ' +
        'and admin.password (or ADMIN_LOGIN and ADMIN_PASSWORD), or use metrics.auth: none',
      diagnostics,
      sources,
    };
  }
  if (workers > 1 && store.kind === 'memory') {
    return {
      ok: false,
      message:
        `${workers} workers need a shared call store: with the memory store each process keeps its own calls, ` +
        `and the requests of one call reach any process. Give a Redis URL (--store, CALLSCRIPT_STORE, or ` +
        `store: in the config file), or run 1 worker`,
      diagnostics,
      sources,
    };
  }
  return {
    ok: true,
    diagnostics,
    sources,
    settings: {
      port,
      workers,
      host: flags.host ?? env.HOST ?? config?.server.host ?? '127.0.0.1',
      configFile: configPath,
      store,
      ...(account ? { sms: { baseUrl: account.baseUrl, login: account.login, timeoutMs: account.timeoutMs } } : {}),
      ...(svc.account ? { service: { url: svc.url, login: svc.account.login, from: svc.accountFrom! } } : {}),
      server: {
        ...(svc.account ? { service: { url: svc.url, login: svc.account.login, password: svc.account.password } } : {}),
        effects: account ? { sms: smsSender(account) } : {},
        http: {
          allowPrivate: config?.http?.allow_private ?? false,
          maxBodyBytes: config?.http?.max_body_bytes ?? 65536,
          maxLookupsPerCall: config?.http?.max_lookups_per_call ?? 20,
          ...(config?.http?.allow_hosts ? { allowHosts: config.http.allow_hosts } : {}),
        },
        flowsDir: resolve(cwd, flowsDir),
        logLevel: flags.logLevel ?? env.LOG_LEVEL ?? config?.server.log_level ?? 'info',
        deadlineMs: deadline,
        bodyLimit: config?.server.body_limit ?? DEFAULT_RT_OPTIONS.bodyLimit,
        bodyDepth: config?.server.body_depth ?? DEFAULT_RT_OPTIONS.bodyDepth,
        callTtlMs: (config?.server.call_ttl_s ?? DEFAULT_RT_OPTIONS.callTtlMs / 1000) * 1000,
        endedTtlMs: (config?.server.ended_call_ttl_s ?? DEFAULT_RT_OPTIONS.endedTtlMs / 1000) * 1000,
        reloadSettleMs: config?.server.reload_settle_ms ?? DEFAULT_RT_OPTIONS.reloadSettleMs,
        maxStateBytes: config?.limits.call_state_bytes ?? DEFAULT_RT_OPTIONS.maxStateBytes,
        maxFlowBytes: config?.limits.flow_file_bytes ?? DEFAULT_RT_OPTIONS.maxFlowBytes,
        ...envSetting(flags.env ?? env.CALLSCRIPT_ENV ?? config?.environment),
        maxLiveCalls: config?.limits.max_live_calls ?? DEFAULT_RT_OPTIONS.maxLiveCalls,
        evalLimits: config
          ? {
              celUnits: config.limits.expression_cost,
              templateMs: config.limits.template_ms,
              templateMemory: config.limits.template_memory,
            }
          : DEFAULT_RT_OPTIONS.evalLimits,
        ...transportSettings(config),
        unknownCall: policy,
        auth: login !== undefined && password !== undefined ? { login, password } : undefined,
        routes: config?.routes ?? { apps: {}, numbers: {} },
        admin:
          adminLogin !== undefined && adminPassword !== undefined
            ? { login: adminLogin, password: adminPassword }
            : undefined,
        canary: config?.canary ?? {},
        watch: config?.server.watch ?? true,
        configFile: configPath ? resolve(cwd, configPath) : undefined,
        fallback: config?.fallback ? fallbackMedia(config.fallback) : undefined,
        metrics: metrics.enabled ? { path: metrics.path, auth: metrics.auth } : false,
        ...(sensitiveKeys ? { sensitiveKeys } : {}),
        history: historySetting(config),
        ...(webhooks ? { webhooks } : {}),
      },
    },
  };
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
    ['server.deadline_ms', before.server.deadlineMs, after.server.deadlineMs],
    ['server.body_limit', before.server.bodyLimit, after.server.bodyLimit],
    ['server.body_depth', before.server.bodyDepth, after.server.bodyDepth],
    ['server.call_ttl_s', before.server.callTtlMs, after.server.callTtlMs],
    ['server.ended_call_ttl_s', before.server.endedTtlMs, after.server.endedTtlMs],
    ['server.reload_settle_ms', before.server.reloadSettleMs, after.server.reloadSettleMs],
    ['limits.call_state_bytes', before.server.maxStateBytes, after.server.maxStateBytes],
    ['limits.flow_file_bytes', before.server.maxFlowBytes, after.server.maxFlowBytes],
    ['environment', before.server.environment, after.server.environment],
    ['limits.max_live_calls', before.server.maxLiveCalls, after.server.maxLiveCalls],
    ['limits.expression_cost', before.server.evalLimits?.celUnits, after.server.evalLimits?.celUnits],
    ['limits.template_memory', before.server.evalLimits?.templateMemory, after.server.evalLimits?.templateMemory],
    ['limits.template_ms', before.server.evalLimits?.templateMs, after.server.evalLimits?.templateMs],
    ['server.headers_timeout_ms', before.server.headersTimeoutMs, after.server.headersTimeoutMs],
    ['server.request_timeout_ms', before.server.requestTimeoutMs, after.server.requestTimeoutMs],
    ['server.keep_alive_timeout_ms', before.server.keepAliveTimeoutMs, after.server.keepAliveTimeoutMs],
    ['server.socket_timeout_ms', before.server.socketTimeoutMs, after.server.socketTimeoutMs],
    ['server.max_connections', before.server.maxConnections, after.server.maxConnections],
    ['server.auth_failure_limit', before.server.authFailureLimit, after.server.authFailureLimit],
    ['server.auth_failure_window_s', before.server.authFailureWindowMs, after.server.authFailureWindowMs],
    ['server.trust_proxy', before.server.trustProxy, after.server.trustProxy],
    ['server.log_level', before.server.logLevel, after.server.logLevel],
    ['server.watch', before.server.watch, after.server.watch],
    ['unknown_call', before.server.unknownCall, after.server.unknownCall],
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

/**
 * The server's timeouts, connection cap, proxies and failed-authentication limit (defaults: src/http/transport.ts,
 * options.ts).
 */
function transportSettings(config: ServerConfig | undefined): Partial<ServerOptions> {
  // without a config file, the config's defaults: a file that states them changes nothing
  const s = (config ?? CONFIG_DEFAULTS).server;
  return {
    headersTimeoutMs: s.headers_timeout_ms,
    requestTimeoutMs: s.request_timeout_ms,
    keepAliveTimeoutMs: s.keep_alive_timeout_ms,
    socketTimeoutMs: s.socket_timeout_ms,
    maxConnections: s.max_connections,
    authFailureLimit: s.auth_failure_limit,
    authFailureWindowMs: s.auth_failure_window_s * 1000,
    ...(s.trust_proxy && s.trust_proxy.length > 0 ? { trustProxy: s.trust_proxy } : {}),
  };
}

/** The call history (history: in the config): its plugin option, false when keep is 0. */
function historySetting(config: ServerConfig | undefined): NonNullable<ServerOptions['history']> {
  const h = config?.history ?? HISTORY_CONFIG_DEFAULTS;
  return h.keep === 0 ? false : { keep: h.keep, ttlMs: h.ttl_ms, maxPath: h.max_path };
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

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

function intSetting(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number | string {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    return `${name} must be an integer from ${min} to ${max}, not "${raw}"`;
  return Number(raw);
}
