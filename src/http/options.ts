import type { PluginControl } from './control.js';
import type { StepObserver } from '../engine/observe.js';
import type { ServiceClientOptions } from '../service/jsonrpc.js';
import type { CallStore } from '../store/types.js';
import type { LoadReport, Registry } from '../registry/registry.js';
import type { Effects } from './effects.js';
import type { HttpPolicy } from './lookup-client.js';
import type { HttpRunner } from '../engine/http-wait.js';
import type { LiveCalls } from '../registry/live.js';
import type { Reloader } from '../registry/reloader.js';
import type { CallObserver } from '../engine/report.js';
import type { Routes } from '../engine/ports.js';
import type { EvalLimits } from '../flow/budget.js';
import { codeString } from '../config/code.js';
import { pluginDefaults } from '../config/plugin.js';
import type { UnknownCallPolicy } from '../config/types.js';
import type { WebhookOptions } from './webhooks.js';
import type { MetricsCluster } from './metrics-cluster.js';
import type { TrafficSource } from './metrics.js';

export type { Routes } from '../engine/ports.js';
export type { UnknownCallPolicy };

/**
 * How the real-time endpoint behaves; every field has a default. The numbers are the config file's options (named
 * below) in the plugin's units: their defaults and bounds are in the table of options (src/config/table.ts), and
 * registering the plugin with one out of its bounds throws.
 */
export interface RtOptions {
  /** Answer within this many ms, with a fallback command if the step is late (server.deadline_ms). */
  deadlineMs: number;
  /** Largest request body in bytes (server.body_limit). */
  bodyLimit: number;
  /** Deepest nesting of objects and arrays in a request body, the body itself 1 (server.body_depth). */
  bodyDepth: number;
  /** Forget a call this long after its last request, a lost HANGUP (server.call_ttl_s, here in ms). */
  callTtlMs: number;
  /**
   * With a shared store (Redis, or any store but the MemoryStore, which one process alone
   * uses): how often the calls idle here this long are checked against it, so that a call
   * answered or ended by another instance or worker stops counting as live here (metrics,
   * /health, limits.max_live_calls). No key in the config file.
   */
  liveCheckMs: number;
  /**
   * Remember an ended call this long (a tombstone): a late request gets `hangup`, not a new call
   * (server.ended_call_ttl_s, here in ms).
   */
  endedTtlMs: number;
  /** The cap on a call's stored state (its variables included), in bytes (limits.call_state_bytes). */
  maxStateBytes: number;
  /** Live calls served at most: a new call past it gets 503 CALL_LIMIT (limits.max_live_calls). */
  maxLiveCalls: number;
  /** The largest flow file, in bytes (limits.flow_file_bytes). */
  maxFlowBytes: number;
  /** The environment of the flows' environments: (version 2) to serve; absent: each flow's first one. */
  environment?: string;
  /**
   * What one request's templates and CEL expressions may spend (limits.expression_cost, template_memory, template_ms).
   */
  evalLimits: EvalLimits;
  /**
   * A changed flow file is published once it has stayed the same for this long (an editor
   * or a copy still writing it is waited for) (server.reload_settle_ms).
   */
  reloadSettleMs: number;
  /** HTTP Basic credentials the service must send (its REALTIME10 app's login/password). */
  auth?: { login: string; password: string };
  /**
   * Failed authentications (on /rt, and on the admin API, counted apart) allowed per client
   * address within `authFailureWindowMs`; past it, 429 AUTH_RATE_LIMITED until the window
   * ends. 0: failures are logged, never limited (server.auth_failure_limit).
   */
  authFailureLimit: number;
  /** The window of `authFailureLimit`, in ms (server.auth_failure_window_s, here in ms). */
  authFailureWindowMs: number;
  /**
   * Host names the admin API, the console, the metrics and /health answer to, besides localhost and IP addresses
   * (server.allowed_hosts; `callscript serve` adds server.host when it is a name): against DNS rebinding
   * (src/http/hosts.ts). /rt and the webhooks answer any name.
   */
  allowedHosts?: string[];
  /** A non-first request for a call with no state (unknown_call). */
  unknownCall: UnknownCallPolicy;
  routes: Routes;
  /**
   * The rt_media played when a step misses the deadline ("Please hold on."); without it,
   * a 1-second `wait`.
   */
  fallback?: string;
  /** Told about each request advanced (its effects and reply): `serve --record` (src/http/recorder.ts). */
  recorder?: CallObserver;
  /**
   * Told of every request handled, once its work is over (src/engine/observe.ts): your own metrics or audit, beside
   * callscript's.
   */
  observer?: StepObserver;
}

/**
 * The defaults of RtOptions, from the table of options (src/config/table.ts): the config file's defaults in the
 * plugin's units (server.call_ttl_s 7200 is callTtlMs 7200000), and liveCheckMs, which has no key in the file.
 */
export const DEFAULT_RT_OPTIONS: RtOptions = {
  ...(pluginDefaults() as Omit<RtOptions, 'routes'>),
  routes: { apps: {}, numbers: {} },
};

/** Options of the Fastify plugin: the flows (a loaded registry or a directory) and the store. */
export interface CallscriptPluginOptions extends Partial<RtOptions> {
  /** A loaded registry; or give `flowsDir`. */
  registry?: Registry;
  /** With `registry`: what loading it found, shown in /health and logged. */
  report?: LoadReport;
  /** Directory of *.yaml flows, loaded at registration. Default `flows`. */
  flowsDir?: string;
  /**
   * Reload the flows when a file of `flowsDir` changes (off by default in the plugin;
   * `callscript serve` watches unless `server.watch: false`). Live calls keep their version.
   */
  watch?: boolean | { debounceMs?: number };
  /** Where call snapshots live. Default: in memory. */
  store?: CallStore;
  /** How the flows' effects are performed (sms steps); without `sms`, they fail with UNAVAILABLE. */
  effects?: Effects;
  /**
   * http steps (version 2): the SSRF policy and bounds (`http:` in callscript.yaml), a
   * runner standing in for the network (tests), and where secrets are read (default:
   * process.env, for the names a flow declares in `secrets:`).
   */
  http?: HttpPolicy & {
    maxLookupsPerCall?: number;
    runner?: HttpRunner;
    secret?: (name: string) => string | undefined;
  };
  /** HTTP Basic credentials of the admin API (/admin/...); without them the admin routes do not exist. */
  admin?: { login: string; password: string };
  /** Canary per flow: the percent (0..100) of new calls sent to the newest version. */
  canary?: Record<string, number>;
  /**
   * The transitions taken per flow version, that the web console colours its diagrams with
   * (`traffic(flow)` → `{version: {coverage key: count}}`). Default: the metrics' transitions
   * counter (none with `metrics: false`: the diagrams are drawn without traffic).
   */
  traffic?: TrafficSource;
  /** Reloads the flows (createServer makes one); default: one over `flowsDir`. */
  reloader?: Reloader;
  /** The live calls (shared with `reloader`); default: a new one. */
  live?: LiveCalls;
  /**
   * Keys sealing sensitive values in the stored call state (AES-256-GCM; 64 hex digits or
   * base64 of 32 bytes): the first seals, all open (rotation). `callscript serve` takes them
   * from CALLSCRIPT_SENSITIVE_KEY and CALLSCRIPT_SENSITIVE_KEY_PREVIOUS.
   */
  sensitiveKeys?: readonly string[];
  /**
   * Prometheus metrics at GET `path` (metrics.path, under the plugin's prefix), open or
   * behind the admin credentials (`auth: 'admin'`, which needs `admin`); `false`: none.
   * Default: on, open. See docs/operations.md.
   */
  metrics?: false | MetricsOptions;
  /**
   * The call history (docs/admin.md "Call history"), kept in `store` (shared by instances on
   * one Redis): the last `keep` finished calls with their paths (the last `maxPath` requests
   * of each, `maxPathBytes` at most), for `ttlMs`, `maxBytes` at most in all. `false` (or keep 0): none, and no
   * writes. Defaults and bounds: the config file's history.keep, history.ttl_ms, history.max_path,
   * history.max_path_bytes and history.max_bytes (the table of options).
   */
  history?: false | { keep?: number; ttlMs?: number; maxPath?: number; maxPathBytes?: number; maxBytes?: number };
  /**
   * The service's webhooks (docs/webhooks.md): POST `path` (webhooks.path) takes the events
   * signed with `secret` (the hmac_secret of webhooks.subscribe, webhooks.secret) and records
   * the delivery status of the SMS the flows sent. Without a secret the route does not exist.
   * `callscript serve` takes the secret from CALLSCRIPT_WEBHOOK_SECRET or webhooks.secret.
   */
  webhooks?: WebhookOptions;
  /**
   * The service's JSON-RPC API and the account the server places outbound calls with
   * (POST /admin/calls, docs/service.md): `url` (default the CALLR API,
   * https://api.callr.com/json-rpc/v1.1/), `login`, `password`, `timeoutMs` per call (default
   * 10 s). Without it, POST /admin/calls answers 503 SERVICE_UNCONFIGURED.
   */
  service?: ServiceClientOptions;
  /** Handles on the running plugin (a config reload, SIGHUP): attached at registration (src/http/control.ts). */
  control?: PluginControl;
}

export interface MetricsOptions {
  /** Where GET metrics is (metrics.path). */
  path?: string;
  /** none: open; admin: the admin API's credentials (metrics.auth). */
  auth?: 'none' | 'admin';
  /**
   * Set by `callscript serve --workers N` in each worker: a scrape answers the sum of the workers
   * (src/http/metrics-cluster.ts).
   */
  cluster?: MetricsCluster;
}

export { PluginControl } from './control.js';

const METRICS_PATH = codeString('metrics.path');
const METRICS_PATH_RE = new RegExp(METRICS_PATH.pattern!);

/**
 * Why a metrics path cannot be used (undefined when it can): a plain absolute path, not one of the plugin's other
 * routes.
 */
export function metricsPathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || !METRICS_PATH_RE.test(path) || path.includes('//'))
    return `${METRICS_PATH.format!.must}, got ${JSON.stringify(path)}`;
  for (const taken of ['/rt', '/health', '/admin'])
    if (path === taken || path.startsWith(`${taken}/`)) return `${path} is taken by the plugin's ${taken} routes`;
  return undefined;
}
