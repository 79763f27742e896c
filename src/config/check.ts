/**
 * The config checker: callscript.yaml is loaded with the flows' YAML loader and diagnostics; its shape, types,
 * bounds and allowed values come from the schema made from the table of options (ajv, its errors mapped to
 * positions); what spans keys (login and password together, headers within the request timeout), E.164 route
 * keys, proxies and the fallback media are checked by hand.
 */
import { isIP } from 'node:net';
import { Ajv } from 'ajv';
import type { Diagnostic } from '../errors/diagnostic.js';
import { checkE164 } from '../protocol/formats.js';
import { DEFAULT_VOICE } from '../flow/model.js';
import { type Ctx, newCtx, report } from '../flow/check-context.js';
import { checkMedia } from '../flow/check-media.js';
import { clip, describe, entry, loadYaml, plain, type YMap } from '../flow/yaml.js';
import { ajvError } from './ajv-diagnostics.js';
import {
  CONFIG_DEFAULTS,
  HISTORY_CONFIG_DEFAULTS,
  HTTP_DEFAULTS,
  METRICS_DEFAULTS,
  numberAt,
  SMS_DEFAULTS,
  STORE_DEFAULTS,
  WEBHOOKS_CONFIG_DEFAULTS,
} from './defaults.js';
import { configJsonSchema } from './schema.js';
import type { HistoryConfig, MetricsConfig, ServerConfig, StoreConfig, WebhooksConfig } from './types.js';

const validateShape = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true }).compile(
  configJsonSchema(),
);

export function checkConfig(text: string, file: string): { config?: ServerConfig; diagnostics: Diagnostic[] } {
  try {
    return run(String(text), file);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return {
      diagnostics: [
        {
          code: 'INTERNAL_ERROR',
          severity: 'error',
          message: `the config checker failed: ${msg}`,
          file,
          line: 1,
          column: 1,
        },
      ],
    };
  }
}

function run(text: string, file: string): { config?: ServerConfig; diagnostics: Diagnostic[] } {
  const loaded = loadYaml(text, file);
  const ctx = newCtx(file, DEFAULT_VOICE);
  ctx.diags.push(...loaded.diagnostics);
  const root = loaded.root;
  if (!root)
    return loaded.diagnostics.length
      ? { diagnostics: ctx.diags }
      : { config: structuredClone(CONFIG_DEFAULTS), diagnostics: [] };
  if (!(root.kind === 'map' || (root.kind === 'scalar' && root.type === 'null'))) {
    report(
      ctx,
      'NOT_A_MAP',
      root,
      `the config file is a map (server, auth, unknown_call, fallback, routes), not ${describe(root)}`,
      'Every key is optional: an empty file means all defaults; see docs/configuration.md.',
    );
    return { diagnostics: ctx.diags };
  }
  if (!validateShape(plain(root))) for (const e of validateShape.errors ?? []) ajvError(ctx, root, e);
  const config = structuredClone(CONFIG_DEFAULTS);
  if (root.kind === 'map') handChecks(ctx, root, config);
  ctx.diags.sort((a, b) => a.line - b.line || a.column - b.column);
  return ctx.diags.some((d) => d.severity === 'error')
    ? { diagnostics: ctx.diags }
    : { config, diagnostics: ctx.diags };
}

type Data = Record<string, Record<string, unknown> | null | undefined>;

function handChecks(ctx: Ctx, root: YMap, config: ServerConfig): void {
  const data = plain(root) as Data;
  Object.assign(config.server, data.server ?? {});
  Object.assign(config.limits, data.limits ?? {});
  if (typeof data.unknown_call === 'string') config.unknown_call = data.unknown_call as ServerConfig['unknown_call'];
  if (typeof data.environment === 'string') config.environment = data.environment;
  transportChecks(ctx, root, config);

  const auth = pair(ctx, root, data, 'auth');
  if (auth) config.auth = auth;
  const admin = pair(ctx, root, data, 'admin');
  if (admin) config.admin = admin;
  const account = pair(
    ctx,
    root,
    data,
    'account',
    'Or leave account: out and set CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD where callscript runs.',
  );
  if (account?.login.includes(':')) {
    const login = entry(entry(root, 'account')!.value as YMap, 'login')!;
    report(ctx, 'BAD_FORMAT', login.value, 'account.login: an HTTP Basic login has no ":" (the password may)');
  } else if (account) config.account = account;

  if (data.canary && typeof data.canary === 'object') {
    config.canary = {};
    for (const [k, v] of Object.entries(data.canary)) if (typeof v === 'number') config.canary[k] = v;
  }

  if (typeof data.store === 'string') config.store = { ...STORE_DEFAULTS, url: data.store };
  else if (data.store && typeof data.store === 'object')
    config.store = { ...STORE_DEFAULTS, ...(data.store as Partial<StoreConfig>) };

  const sms = entry(root, 'sms');
  if (sms && sms.value.kind === 'map') {
    // login and password may be left to SMS_LOGIN / SMS_PASSWORD (secrets out of the file);
    // serve checks that both are known in the end.
    const s = (data.sms ?? {}) as Record<string, unknown>;
    config.sms = {
      base_url: typeof s.base_url === 'string' ? s.base_url : SMS_DEFAULTS.base_url,
      timeout_ms: typeof s.timeout_ms === 'number' ? s.timeout_ms : SMS_DEFAULTS.timeout_ms,
    };
    if (typeof s.login === 'string') config.sms.login = s.login;
    if (typeof s.password === 'string') config.sms.password = s.password;
  }

  if (data.http && typeof data.http === 'object') {
    const h = data.http as Record<string, unknown>;
    config.http = {
      allow_private: h.allow_private === true,
      max_body_bytes: typeof h.max_body_bytes === 'number' ? h.max_body_bytes : HTTP_DEFAULTS.max_body_bytes,
      max_lookups_per_call:
        typeof h.max_lookups_per_call === 'number' ? h.max_lookups_per_call : HTTP_DEFAULTS.max_lookups_per_call,
    };
    if (Array.isArray(h.allow_hosts))
      config.http.allow_hosts = h.allow_hosts.filter((x): x is string => typeof x === 'string');
  }

  if (typeof data.api === 'string') config.api = data.api;
  if (data.history && typeof data.history === 'object')
    config.history = { ...HISTORY_CONFIG_DEFAULTS, ...(data.history as Partial<HistoryConfig>) };
  if (data.webhooks && typeof data.webhooks === 'object')
    config.webhooks = { ...WEBHOOKS_CONFIG_DEFAULTS, ...(data.webhooks as Partial<WebhooksConfig>) };
  if (data.metrics && typeof data.metrics === 'object')
    config.metrics = { ...METRICS_DEFAULTS, ...(data.metrics as Partial<MetricsConfig>) };
  metricsPathCheck(ctx, root);
  // auth: admin without admin credentials is refused by `serve` (they may come from ADMIN_LOGIN/ADMIN_PASSWORD)

  const fb = entry(root, 'fallback');
  if (fb) {
    const m = checkMedia(ctx, fb.value, 'fallback', '', { say: true, templates: false });
    if (m) config.fallback = m[0];
    if (fb.value.kind === 'seq') report(ctx, 'BAD_MEDIA', fb.value, 'fallback is one media, not a list');
  }
  routeChecks(ctx, root, data, config);
}

/** A login and password that go together (auth, admin, account): both, or the section is reported. */
function pair(
  ctx: Ctx,
  root: YMap,
  data: Data,
  name: 'auth' | 'admin' | 'account',
  hint?: string,
): { login: string; password: string } | undefined {
  const at = entry(root, name);
  if (at && at.value.kind === 'map') {
    const login = entry(at.value, 'login');
    const password = entry(at.value, 'password');
    const d = data[name] ?? {};
    if (!login || !password)
      report(
        ctx,
        'CONFIG_AUTH',
        at,
        `${name} needs both login and password (${login ? 'password' : 'login'} is missing)`,
        hint,
      );
    else if (typeof d.login === 'string' && typeof d.password === 'string')
      return { login: d.login, password: d.password };
  } else if (at && at.value.kind === 'scalar' && at.value.type === 'null') {
    report(ctx, 'CONFIG_AUTH', at, `${name} is empty: give login and password, or remove it`);
  }
  return undefined;
}

function metricsPathCheck(ctx: Ctx, root: YMap): void {
  const metrics = entry(root, 'metrics')?.value;
  const path = metrics?.kind === 'map' ? entry(metrics, 'path') : undefined;
  if (!path || path.value.kind !== 'scalar' || typeof path.value.value !== 'string') return;
  const p = path.value.value;
  const taken = ['/rt', '/health', '/admin'].find((t) => p === t || p.startsWith(`${t}/`));
  if (taken)
    report(
      ctx,
      'BAD_FORMAT',
      path.value,
      `metrics.path '${clip(p)}' is taken by the ${taken} routes`,
      'e.g. /metrics (the default).',
    );
  else if (p.includes('//'))
    report(
      ctx,
      'BAD_FORMAT',
      path.value,
      `metrics.path '${clip(p)}' has an empty segment (//)`,
      'e.g. /metrics (the default).',
    );
}

function routeChecks(ctx: Ctx, root: YMap, data: Data, config: ServerConfig): void {
  const routes = entry(root, 'routes');
  if (!routes || routes.value.kind !== 'map') return;
  const r = data.routes ?? {};
  const numbers = entry(routes.value, 'numbers');
  if (numbers && numbers.value.kind === 'map') {
    for (const e of numbers.value.entries) {
      const err = checkE164(e.key);
      if (err)
        report(
          ctx,
          'BAD_FORMAT',
          e,
          `routes.numbers: '${clip(e.key)}' is not an E.164 number: ${err}`,
          'Quote numbers as keys: "+33123456789": front-desk.',
        );
    }
  }
  if (r.apps && typeof r.apps === 'object') config.routes.apps = r.apps as Record<string, string>;
  if (r.numbers && typeof r.numbers === 'object') config.routes.numbers = r.numbers as Record<string, string>;
  if (typeof r.default === 'string') config.routes.default = r.default;
}

/** Bounds that span two keys, and the trust_proxy entries (the schema has checked the types). */
function transportChecks(ctx: Ctx, root: YMap, config: ServerConfig): void {
  const server = entry(root, 'server')?.value;
  if (server?.kind !== 'map') return;
  const { headers_timeout_ms: headers, request_timeout_ms: request } = config.server;
  const h = entry(server, 'headers_timeout_ms') ?? entry(server, 'request_timeout_ms');
  // a value out of its own bounds is reported already: one mistake, one diagnostic
  const fits = (key: string, v: number) => Number.isInteger(v) && v >= numberAt(key).min && v <= numberAt(key).max;
  if (
    h &&
    fits('server.headers_timeout_ms', headers) &&
    fits('server.request_timeout_ms', request) &&
    headers > request
  ) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      h,
      `server.headers_timeout_ms (${headers}) must not be longer than server.request_timeout_ms (${request})`,
      'The whole request includes its headers.',
    );
  }
  const proxies = entry(server, 'trust_proxy')?.value;
  if (proxies?.kind !== 'seq') {
    delete config.server.trust_proxy;
    return;
  }
  for (const item of proxies.items) {
    if (item.kind === 'scalar' && typeof item.value === 'string' && !isProxyAddress(item.value)) {
      report(
        ctx,
        'BAD_FORMAT',
        item,
        `server.trust_proxy: '${clip(item.value)}' is not an IP address, a CIDR range, or loopback, ` +
          `linklocal, uniquelocal`,
        'e.g. 10.0.0.0/8, 127.0.0.1, ::1, loopback.',
      );
    }
  }
}

function isProxyAddress(s: string): boolean {
  if (s === 'loopback' || s === 'linklocal' || s === 'uniquelocal') return true;
  const [addr = '', bits, ...more] = s.split('/');
  const family = isIP(addr);
  if (family === 0 || more.length > 0) return false;
  return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}
