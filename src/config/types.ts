/**
 * The server config file (callscript.yaml) once checked: `ServerConfig` is the file with its defaults applied.
 * Every key of the file is optional; the keys, their defaults and bounds are in the table of options (table.ts).
 */
import type { MediaSpec } from '../flow/model.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const UNKNOWN_CALL_POLICIES = ['restart', 'hangup', 'reject'] as const;
export type UnknownCallPolicy = (typeof UNKNOWN_CALL_POLICIES)[number];

export interface ServerConfig {
  server: {
    port: number;
    host: string;
    /** As written, relative to the config file's directory. */
    flows_dir: string;
    deadline_ms: number;
    body_limit: number;
    /** Deepest nesting of objects and arrays in a request body (the body's own object is 1). */
    body_depth: number;
    call_ttl_s: number;
    /** Remember an ended call this long, answering its late requests hangup. */
    ended_call_ttl_s: number;
    /** A changed flow file is published once unchanged for this long. */
    reload_settle_ms: number;
    log_level: LogLevel;
    /** Processes serving the port (node:cluster); more than 1 needs a shared (Redis) store. */
    workers: number;
    /** Reload flows (and this file) when they change. */
    watch: boolean;
    /** A request's line and headers must arrive within this long. */
    headers_timeout_ms: number;
    /** A whole request (headers and body) must arrive within this long. */
    request_timeout_ms: number;
    /** An idle keep-alive connection is closed after this long. */
    keep_alive_timeout_ms: number;
    /** A connection with a request in progress and nothing moving is closed after this long. */
    socket_timeout_ms: number;
    /** Connections open at once; more are closed as they are accepted. */
    max_connections: number;
    /** Failed authentications allowed per address and window (0: not limited). */
    auth_failure_limit: number;
    auth_failure_window_s: number;
    /** Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For is believed. */
    trust_proxy?: string[];
    /** Host names the admin API, the console, /metrics and /health answer to, besides localhost and IP addresses. */
    allowed_hosts?: string[];
  };
  /** HTTP Basic auth of the admin API (/admin/...); without it the admin API is off. */
  admin?: { login: string; password: string };
  /** Canary per flow: the percent of new calls sent to the flow's newest version. */
  canary?: Record<string, number>;
  /** HTTP Basic auth required on the real-time route. */
  auth?: { login: string; password: string };
  unknown_call: UnknownCallPolicy;
  /**
   * The environment of the flows' environments: (version 2) the server runs in; --env and CALLSCRIPT_ENV override
   * it.
   */
  environment?: string;
  /** Played when the deadline is missed (TTS texts use the default voice). */
  fallback?: MediaSpec;
  routes: { apps: Record<string, string>; numbers: Record<string, string>; default?: string };
  /** Bounds on what flows and calls may use. */
  limits: {
    call_state_bytes: number;
    expression_cost: number;
    template_memory: number;
    template_ms: number;
    flow_file_bytes: number;
    max_live_calls: number;
  };
  /** Where calls live between requests: this process (memory, the default) or Redis, shared by instances. */
  store?: StoreConfig;
  /**
   * The SMS account the flows' sms steps send through (SMS REST API v1.1). Login and password may come from the
   * environment instead (SMS_LOGIN, SMS_PASSWORD).
   */
  sms?: SmsConfig;
  /** The http steps' SSRF policy and bounds (version 2 flows). */
  http?: HttpConfig;
  /** The call history (absent: its defaults, HISTORY_CONFIG_DEFAULTS). */
  history?: HistoryConfig;
  /**
   * The service's webhooks (SMS delivery reports, inbound SMS); the secret may come from CALLSCRIPT_WEBHOOK_SECRET
   * instead.
   */
  webhooks?: WebhooksConfig;
  /** The service's JSON-RPC address (the CALLR API by default; the emulator's base URL is taken too). */
  api?: string;
  /** The service account: `callscript apps`, `dial`, and the outbound calls the server places. */
  account?: { login: string; password: string };
  /** Prometheus metrics (absent: on, at /metrics, open). */
  metrics?: MetricsConfig;
}

export interface SmsConfig {
  base_url: string;
  login?: string;
  password?: string;
  timeout_ms: number;
}

export interface WebhooksConfig {
  path: string;
  /** The hmac_secret given to webhooks.subscribe; without it (here or in the environment) the route is off. */
  secret?: string;
  body_limit: number;
  /** How far an event's event_at may be from this server's clock, either way, in ms. */
  tolerance_ms: number;
}

export interface HistoryConfig {
  /** Finished calls kept, the newest (0: no history at all). */
  keep: number;
  /** How long a finished call is kept, in ms. */
  ttl_ms: number;
  /** Requests kept per call path (its last ones). */
  max_path: number;
  /** Bytes kept per call path (UTF-8 of its entries). */
  max_path_bytes: number;
  /** Bytes kept by all the finished calls. */
  max_bytes: number;
}

export interface MetricsConfig {
  enabled: boolean;
  /** The path of GET metrics. */
  path: string;
  /** none: open; admin: behind the admin API's credentials. */
  auth: 'none' | 'admin';
}

export interface HttpConfig {
  /** Host names lookups may reach: exact, or `*.example.com` (its subdomains); absent: any public host. */
  allow_hosts?: string[];
  /** Private, loopback and link-local addresses allowed (a lab, the mock server); default false. */
  allow_private: boolean;
  /** Response bodies over this size fail with TOO_LARGE. */
  max_body_bytes: number;
  /** Lookups one call may start; past it, the step's error branch with LIMIT. */
  max_lookups_per_call: number;
}

export interface StoreConfig {
  /** `memory`, or redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  url: string;
  /** Prepended to every Redis key, so that several deployments share one Redis. */
  prefix: string;
  command_timeout_ms: number;
  /** Redis Cluster: its nodes (url is then the first). */
  cluster?: string[];
  /** Redis Sentinel: the sentinels and the master's name. */
  sentinels?: { host: string; port: number }[];
  name?: string;
}
