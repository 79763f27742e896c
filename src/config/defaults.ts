/** The config's defaults, per section, from the table of options. */
import { defaultOf, type NumberOption, type OptionDef } from './options.js';
import { OPTIONS } from './table.js';
import type {
  HistoryConfig,
  HttpConfig,
  MetricsConfig,
  ServerConfig,
  SmsConfig,
  StoreConfig,
  WebhooksConfig,
} from './types.js';

const BY_KEY = new Map(OPTIONS.filter((o) => o.key !== undefined).map((o) => [o.key!, o]));

/** The option at a key of the file (`server.port`, `canary.*`). */
export function optionAt(key: string): OptionDef {
  const o = BY_KEY.get(key);
  if (!o) throw new Error(`no server option ${key}`);
  return o;
}

/** A numeric option (its bounds), at a key of the file. */
export function numberAt(key: string): NumberOption {
  const o = optionAt(key);
  if (o.type !== 'integer' && o.type !== 'number') throw new Error(`server option ${key} is not a number`);
  return o;
}

/** The defaults of a section's own options (`server` gives port, host, ...; not those of the maps inside). */
export function sectionDefaults<T = Record<string, unknown>>(section: string): T {
  const out: Record<string, unknown> = {};
  for (const o of OPTIONS) {
    const name = o.key?.startsWith(`${section}.`) ? o.key.slice(section.length + 1) : undefined;
    const v = defaultOf(o);
    if (name !== undefined && !name.includes('.') && v !== undefined) out[name] = v;
  }
  return out as T;
}

export const STORE_DEFAULTS = sectionDefaults<Pick<StoreConfig, 'url' | 'prefix' | 'command_timeout_ms'>>('store');
export const SMS_DEFAULTS = sectionDefaults<Pick<SmsConfig, 'base_url' | 'timeout_ms'>>('sms');
export const HTTP_DEFAULTS = sectionDefaults<HttpConfig>('http');
export const METRICS_DEFAULTS = sectionDefaults<MetricsConfig>('metrics');
export const HISTORY_CONFIG_DEFAULTS = sectionDefaults<HistoryConfig>('history');
export const WEBHOOKS_CONFIG_DEFAULTS = sectionDefaults<WebhooksConfig>('webhooks');

export const CONFIG_DEFAULTS: ServerConfig = {
  server: sectionDefaults<ServerConfig['server']>('server'),
  limits: sectionDefaults<ServerConfig['limits']>('limits'),
  unknown_call: defaultOf(optionAt('unknown_call')) as ServerConfig['unknown_call'],
  routes: { apps: {}, numbers: {} },
};
