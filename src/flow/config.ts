/**
 * The server config file (callscript.yaml): checked with the same YAML loader and
 * diagnostics as flows. Shape and bounds come from a JSON Schema run by ajv (its errors
 * mapped to positions); E.164 route keys, auth and the fallback media are checked by hand.
 * Every key is optional; `ServerConfig` is the file with its defaults applied.
 */
import { writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Ajv, type ErrorObject } from 'ajv';
import type { Diagnostic } from '../errors/diagnostic.js';
import { checkE164 } from '../protocol/formats.js';
import { DEFAULT_BODY_DEPTH } from '../protocol/request.js';
import { DEFAULT_VOICE, type MediaSpec } from './model.js';
import { type Ctx, didYouMean, newCtx, report } from './check-context.js';
import { checkMedia } from './check-media.js';
import { clip, describe, entry, loadYaml, plain, type YMap, type YNode } from './yaml.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const UNKNOWN_CALL_POLICIES = ['restart', 'hangup', 'reject'] as const;

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
    /** Reload flows (and this file) when they change (absent: true). */
    watch?: boolean;
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
  };
  /** HTTP Basic auth of the admin API (/admin/...); without it the admin API is off. */
  admin?: { login: string; password: string };
  /** Canary per flow: the percent of new calls sent to the flow's newest version. */
  canary?: Record<string, number>;
  /** HTTP Basic auth required on the real-time route. */
  auth?: { login: string; password: string };
  unknown_call: (typeof UNKNOWN_CALL_POLICIES)[number];
  /**
   * The environment of the flows' environments: (version 2) the server runs in; --env and CALLSCRIPT_ENV override it.
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
  /** The SMS account the flows' sms steps send through (SMS REST API v1.1). */
  /** Login and password may come from the environment instead (SMS_LOGIN, SMS_PASSWORD). */
  sms?: { base_url: string; login?: string; password?: string; timeout_ms: number };
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

export interface WebhooksConfig {
  path: string;
  /** The hmac_secret given to webhooks.subscribe; without it (here or in the environment) the route is off. */
  secret?: string;
  body_limit: number;
}

export const WEBHOOKS_CONFIG_DEFAULTS: WebhooksConfig = { path: '/webhooks/callr', body_limit: 262144 };

export interface HistoryConfig {
  /** Finished calls kept, the newest (0: no history at all). */
  keep: number;
  /** How long a finished call is kept, in ms. */
  ttl_ms: number;
  /** Requests kept per call path (its last ones). */
  max_path: number;
}

export const HISTORY_CONFIG_DEFAULTS: HistoryConfig = { keep: 1000, ttl_ms: 86_400_000, max_path: 200 };

export interface MetricsConfig {
  enabled: boolean;
  /** The path of GET metrics. */
  path: string;
  /** none: open; admin: behind the admin API's credentials. */
  auth: 'none' | 'admin';
}

export const METRICS_DEFAULTS: MetricsConfig = { enabled: true, path: '/metrics', auth: 'none' };

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

export const HTTP_DEFAULTS: HttpConfig = { allow_private: false, max_body_bytes: 65536, max_lookups_per_call: 20 };

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

export const STORE_DEFAULTS = { url: 'memory', prefix: 'callscript:', command_timeout_ms: 1000 } as const;

const TRANSPORT_DEFAULTS = {
  headers_timeout_ms: 10_000,
  request_timeout_ms: 10_000,
  keep_alive_timeout_ms: 5_000,
  socket_timeout_ms: 30_000,
  max_connections: 900,
  auth_failure_limit: 10,
  auth_failure_window_s: 60,
};

export const CONFIG_DEFAULTS: ServerConfig = {
  server: {
    port: 3000,
    host: '127.0.0.1',
    flows_dir: 'flows',
    deadline_ms: 4000,
    body_limit: 65536,
    body_depth: DEFAULT_BODY_DEPTH,
    call_ttl_s: 7200,
    ended_call_ttl_s: 600,
    reload_settle_ms: 1000,
    log_level: 'info',
    workers: 1,
    ...TRANSPORT_DEFAULTS,
  },
  limits: {
    call_state_bytes: 32768,
    expression_cost: 100000,
    template_memory: 50000,
    template_ms: 50,
    flow_file_bytes: 2097152,
    max_live_calls: 50000,
  },
  unknown_call: 'restart',
  routes: { apps: {}, numbers: {} },
};

const int = (min: number, max: number, def: number, description: string) => ({
  type: 'integer',
  minimum: min,
  maximum: max,
  default: def,
  description,
});
const flowName = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: 'A flow name (its `name:`, or its file name without extension).',
};
const section = (properties: Record<string, unknown>, description: string) => ({
  type: ['object', 'null'],
  description,
  properties,
  additionalProperties: false,
});

/** The JSON Schema of callscript.yaml (draft-07), for ajv and for editors. */
export function configJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://callscript.dev/schemas/config.schema.json',
    title: 'callscript server config (callscript.yaml)',
    type: ['object', 'null'],
    additionalProperties: false,
    properties: {
      server: section(
        {
          port: int(0, 65535, 3000, 'Port to listen on (0: any free port).'),
          host: { type: 'string', minLength: 1, default: '127.0.0.1', description: 'Address to listen on.' },
          flows_dir: {
            type: 'string',
            minLength: 1,
            default: 'flows',
            description: 'Directory of the *.yaml flows, relative to this file.',
          },
          deadline_ms: int(100, 4900, 4000, 'Answer every request within this many ms (the service allows 5000).'),
          body_limit: int(1024, 1048576, 65536, 'Largest request body, in bytes.'),
          body_depth: int(
            2,
            256,
            DEFAULT_BODY_DEPTH,
            'Deepest nesting of objects and arrays in a request body (the body itself is 1, its variables ' +
              '2); deeper is refused with 400 BODY_TOO_DEEP.',
          ),
          call_ttl_s: int(60, 86400, 7200, 'Forget a call this many seconds after its last request.'),
          ended_call_ttl_s: int(
            10,
            86400,
            600,
            'Remember an ended call this many seconds: its late requests are answered hangup instead of ' +
              'restarting the flow.',
          ),
          reload_settle_ms: int(
            0,
            60000,
            1000,
            'A changed flow file is published once it has stayed unchanged this many ms (a file still being ' +
              'written is waited for).',
          ),
          log_level: { enum: [...LOG_LEVELS], default: 'info', description: 'Log level.' },
          workers: int(
            1,
            256,
            1,
            'Processes serving the port (node:cluster): a primary forks them, restarts one that dies and ' +
              'drains them on SIGTERM. More than 1 needs a Redis store (the requests of a call reach any ' +
              'process); max_connections and limits.max_live_calls apply to each.',
          ),
          watch: {
            type: 'boolean',
            default: true,
            description: 'Reload the flows (and this file) when they change on disk.',
          },
          headers_timeout_ms: int(
            100,
            120000,
            10000,
            "A request's line and headers must arrive within this many ms of its start, or it is answered " +
              '408 and its connection closed.',
          ),
          request_timeout_ms: int(
            100,
            300000,
            10000,
            'A whole request (headers and body) must arrive within this many ms, or it is answered 408 and ' +
              'its connection closed; not less than headers_timeout_ms.',
          ),
          keep_alive_timeout_ms: int(
            100,
            600000,
            5000,
            'An idle keep-alive connection is closed after this many ms (announced to clients in Keep-Alive: ' +
              'timeout=).',
          ),
          socket_timeout_ms: int(
            100,
            600000,
            30000,
            'A connection with a request in progress and no bytes moving either way is closed after this many ms.',
          ),
          max_connections: int(
            1,
            1000000,
            900,
            "Connections open at once; more are closed as they are accepted. Keep it under the process's " +
              'open-files limit (ulimit -n) less about 100.',
          ),
          auth_failure_limit: int(
            0,
            100000,
            10,
            'Failed authentications allowed per client address within auth_failure_window_s, on /rt and on ' +
              'the admin API (counted apart); past it, 429 AUTH_RATE_LIMITED. 0: logged, not limited.',
          ),
          auth_failure_window_s: int(1, 86400, 60, 'The window of auth_failure_limit, in seconds.'),
          trust_proxy: {
            type: ['array', 'null'],
            items: { type: 'string', minLength: 1 },
            description:
              'Reverse proxies in front of the server (addresses, CIDR ranges, or loopback, linklocal, ' +
              'uniquelocal): the client address is taken from their X-Forwarded-For.',
          },
        },
        'The HTTP server.',
      ),
      admin: section(
        {
          login: {
            type: 'string',
            minLength: 1,
            description: "Admin API HTTP Basic login (not the real-time route's).",
          },
          password: { type: 'string', minLength: 1, description: 'Admin API HTTP Basic password.' },
        },
        'Turns the admin API (/admin/...) on, behind these credentials; login and password go together.',
      ),
      canary: {
        type: ['object', 'null'],
        description:
          'Per flow name, the percent (0..100) of new calls sent to its newest version; the rest get the previous one.',
        propertyNames: flowName,
        additionalProperties: { type: 'number', minimum: 0, maximum: 100 },
      },
      auth: section(
        {
          login: {
            type: 'string',
            minLength: 1,
            description: "HTTP Basic login (the REALTIME10 application's login).",
          },
          password: { type: 'string', minLength: 1, description: 'HTTP Basic password.' },
        },
        'HTTP Basic auth on the real-time route; login and password go together.',
      ),
      environment: {
        type: 'string',
        pattern: '^[A-Za-z0-9_-]{1,64}$',
        description:
          "The environment of the flows' environments: (version 2) to serve: their env.* values. --env and " +
          "CALLSCRIPT_ENV override it; absent: each flow's first environment.",
      },
      unknown_call: {
        enum: [...UNKNOWN_CALL_POLICIES],
        default: 'restart',
        description: 'A non-first request for a call with no state: restart the flow, hang up, or reject with 4xx.',
      },
      fallback: {
        description:
          'Played when a request would miss the deadline: a text (default voice), a media id, ' +
          'TTS|voice|text, or { say, voice }.',
        anyOf: [
          { type: 'string', minLength: 1 },
          { type: 'integer', minimum: 0 },
          {
            type: 'object',
            properties: { say: { type: 'string', minLength: 1 }, voice: { type: 'string' } },
            required: ['say'],
            additionalProperties: false,
          },
        ],
      },
      limits: section(
        {
          call_state_bytes: int(
            1024,
            1048576,
            32768,
            "The cap on a call's stored state (its variables included), in bytes: a request that would go " +
              "over it takes the step's error branch (STATE_TOO_LARGE).",
          ),
          expression_cost: int(
            1000,
            10000000,
            100000,
            "What one request's CEL conditions and expr: values may cost in all, in cost units (one per node " +
              'evaluated, plus the size of the lists, maps and strings made); over it the step takes its error ' +
              'branch (EVALUATION_LIMIT).',
          ),
          template_memory: int(
            1000,
            10000000,
            50000,
            "What one request's templates may render and allocate in all (liquidjs memory units: 8 per node " +
              'rendered, items of ranges, characters of joins and appends...); over it the step takes its ' +
              'error branch (EVALUATION_LIMIT).',
          ),
          template_ms: int(
            1,
            1000,
            50,
            "Milliseconds one request's templates may spend rendering in all (the first half on the wall " +
              'clock, the rest in CPU time); over it the step takes its error branch (EVALUATION_LIMIT).',
          ),
          max_live_calls: int(
            1,
            10000000,
            50000,
            'Live calls one process serves at most: a new call past it is answered 503 CALL_LIMIT (the ' +
              'service retries, or places it on another instance).',
          ),
          flow_file_bytes: int(
            1024,
            67108864,
            2097152,
            'The largest flow (and scenario) file, in bytes: a larger one is refused unread (FILE_TOO_LARGE).',
          ),
        },
        'Bounds on what flows and calls may use (see docs/security.md).',
      ),
      // one schema for both forms (a string pattern applies to strings only, properties to maps only): one diagnostic
      // per mistake
      store: {
        type: ['string', 'object'],
        pattern: '^(memory|rediss?://.+)$',
        description:
          'Where calls live between requests: memory (this process, the default) or a Redis URL ' +
          'redis://host:port/db; a map for the options.',
        properties: {
          url: {
            type: 'string',
            pattern: '^(memory|rediss?://.+)$',
            default: 'memory',
            description: 'memory, or redis://[user:password@]host:port[/db] (rediss:// for TLS).',
          },
          prefix: {
            type: 'string',
            pattern: '^[A-Za-z0-9:_.{}-]{0,64}$',
            default: 'callscript:',
            description: 'Prepended to every Redis key: several deployments can share one Redis.',
          },
          command_timeout_ms: int(
            50,
            10000,
            1000,
            'A Redis command that takes longer fails: the request is answered 503 and the service retries.',
          ),
          cluster: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', pattern: '^rediss?://.+' },
            description: 'Redis Cluster nodes (a call keeps all its keys in one slot).',
          },
          sentinels: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              properties: {
                host: { type: 'string', minLength: 1 },
                port: { type: 'integer', minimum: 1, maximum: 65535 },
              },
              required: ['host', 'port'],
              additionalProperties: false,
            },
            description: 'Redis Sentinel: the sentinels to ask for the master.',
          },
          name: { type: 'string', minLength: 1, description: 'Redis Sentinel: the name of the master.' },
        },
        additionalProperties: false,
      },
      sms: section(
        {
          base_url: {
            type: 'string',
            pattern: '^https?://',
            default: 'http://127.0.0.1:4010/rest/v1.1',
            description: 'The SMS REST API v1.1 address (default: the emulator).',
          },
          login: { type: 'string', minLength: 1, description: 'The account login (API_LOGIN).' },
          password: { type: 'string', minLength: 1, description: 'The account password (API_PASSWORD).' },
          timeout_ms: int(100, 30000, 3000, 'Longest wait for the API per SMS; never past the reply deadline.'),
        },
        "The SMS account of the flows' sms steps; login and password go together.",
      ),
      http: section(
        {
          allow_hosts: {
            type: 'array',
            items: { type: 'string', pattern: '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$' },
            uniqueItems: true,
            description:
              'Host names http steps may reach: exact (api.bank.example) or *.bank.example for its ' +
              'subdomains. Absent: any public host.',
          },
          allow_private: {
            type: 'boolean',
            default: false,
            description:
              'Allow private, loopback, link-local and unique-local addresses (checked on the resolved ' +
              'address). Only for a lab or the mock server.',
          },
          max_body_bytes: int(
            1024,
            1048576,
            65536,
            'Response bodies over this size fail with TOO_LARGE (read as a stream and cut off).',
          ),
          max_lookups_per_call: int(
            1,
            1000,
            20,
            'Lookups one call may start; past it, the step takes its error branch with LIMIT.',
          ),
        },
        'The http steps of version 2 flows: which hosts they may reach, and their bounds.',
      ),
      metrics: section(
        {
          enabled: { type: 'boolean', default: true, description: 'Serve Prometheus metrics (docs/operations.md).' },
          path: {
            type: 'string',
            pattern: '^/[A-Za-z0-9._~/-]{0,199}$',
            default: '/metrics',
            description: 'The path of GET metrics; not /rt, /health or /admin (nor under them).',
          },
          auth: {
            enum: ['none', 'admin'],
            default: 'none',
            description:
              'none: open (keep the port private, or filter it at the proxy); admin: behind the admin ' +
              'credentials (admin: must be set).',
          },
        },
        "Prometheus metrics on the server's port: requests, calls, latency, effects, live calls, reloads, transitions.",
      ),
      history: section(
        {
          keep: int(
            0,
            100000,
            1000,
            'Finished calls kept with their paths (the newest; the oldest go), in the call store: shared by ' +
              'every instance on one Redis. 0: no history at all (no writes).',
          ),
          ttl_ms: int(1000, 2592000000, 86400000, 'How long a finished call is kept, in ms (default a day).'),
          max_path: int(
            1,
            10000,
            200,
            "Requests kept per call's path (its last ones): a call of more keeps only its end.",
          ),
        },
        'The call history: the last finished calls with their paths (steps, results, commands, timings), ' +
          'shown by GET /admin/calls and callscript calls / trace.',
      ),
      webhooks: section(
        {
          path: {
            type: 'string',
            pattern: '^/[A-Za-z0-9/_.-]{1,199}$',
            default: '/webhooks/callr',
            description:
              'Where the service POSTs its webhook events (the endpoint given to webhooks.subscribe ends with it).',
          },
          secret: {
            type: 'string',
            minLength: 16,
            maxLength: 256,
            description:
              'The secret given to webhooks.subscribe as hmac_secret: events must carry ' +
              'X-CALLR-HmacSignature, the base64 HMAC-SHA256 of their body with it. Better in the ' +
              'environment: CALLSCRIPT_WEBHOOK_SECRET. Without one the route is off.',
          },
          body_limit: int(
            1024,
            4194304,
            262144,
            'Largest webhook event taken, in bytes; larger ones are refused with 413 BODY_TOO_LARGE.',
          ),
        },
        "The service's webhooks (docs/webhooks.md): SMS delivery reports recorded for the calls whose flows " +
          'sent them (GET /admin/calls/:callid), inbound SMS logged and counted.',
      ),
      api: {
        type: 'string',
        pattern: '^https?://',
        description:
          "The service's JSON-RPC address: the CALLR API https://api.callr.com/json-rpc/v1.1/ (the default), " +
          "or the emulator's http://127.0.0.1:4010 (its base URL is taken: /json-rpc/v1.1/ is added). " +
          'CALLSCRIPT_API and --api override it.',
      },
      account: section(
        {
          login: {
            type: 'string',
            minLength: 1,
            description: "The service account's login (the CALLR API's HTTP Basic login).",
          },
          password: { type: 'string', minLength: 1, description: "The service account's password." },
        },
        'The service account (the CALLR API): callscript apps and dial use it, and the server places ' +
          'outbound calls (POST /admin/calls) with it; login and password go together. ' +
          'CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD and --account override it.',
      ),
      routes: section(
        {
          apps: {
            type: ['object', 'null'],
            additionalProperties: flowName,
            description: 'Flow by REALTIME10 application hash.',
          },
          numbers: {
            type: ['object', 'null'],
            additionalProperties: flowName,
            propertyNames: { pattern: '^\\+[1-9][0-9]{1,14}$' },
            description: 'Flow by called number (E.164 keys).',
          },
          default: { ...flowName, description: 'Flow for calls no other route matches.' },
        },
        'Which flow answers a call: by app, then by called number, then the default.',
      ),
    },
  };
}

/** The committed file's content (schemas/config.schema.json). */
export function configSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

export function writeConfigSchema(path: string): void {
  writeFileSync(path, configSchemaText());
}

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

function handChecks(ctx: Ctx, root: YMap, config: ServerConfig): void {
  const data = plain(root) as Record<string, Record<string, unknown> | null | undefined>;
  Object.assign(config.server, data.server ?? {});
  Object.assign(config.limits, data.limits ?? {});
  if (typeof data.unknown_call === 'string') config.unknown_call = data.unknown_call as ServerConfig['unknown_call'];
  if (typeof data.environment === 'string') config.environment = data.environment;
  transportChecks(ctx, root, config);

  const auth = entry(root, 'auth');
  if (auth && auth.value.kind === 'map') {
    const login = entry(auth.value, 'login');
    const password = entry(auth.value, 'password');
    if (!login || !password)
      report(
        ctx,
        'CONFIG_AUTH',
        auth,
        `auth needs both login and password (${login ? 'password' : 'login'} is missing)`,
      );
    else if (typeof data.auth?.login === 'string' && typeof data.auth.password === 'string')
      config.auth = { login: data.auth.login, password: data.auth.password };
  } else if (auth && auth.value.kind === 'scalar' && auth.value.type === 'null') {
    report(ctx, 'CONFIG_AUTH', auth, 'auth is empty: give login and password, or remove it');
  }

  const admin = entry(root, 'admin');
  if (admin && admin.value.kind === 'map') {
    const login = entry(admin.value, 'login');
    const password = entry(admin.value, 'password');
    if (!login || !password)
      report(
        ctx,
        'CONFIG_AUTH',
        admin,
        `admin needs both login and password (${login ? 'password' : 'login'} is missing)`,
      );
    else if (typeof data.admin?.login === 'string' && typeof data.admin.password === 'string')
      config.admin = { login: data.admin.login, password: data.admin.password };
  } else if (admin && admin.value.kind === 'scalar' && admin.value.type === 'null') {
    report(ctx, 'CONFIG_AUTH', admin, 'admin is empty: give login and password, or remove it');
  }
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
      base_url: typeof s.base_url === 'string' ? s.base_url : 'http://127.0.0.1:4010/rest/v1.1',
      timeout_ms: typeof s.timeout_ms === 'number' ? s.timeout_ms : 3000,
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
  const account = entry(root, 'account');
  if (account && account.value.kind === 'map') {
    const login = entry(account.value, 'login');
    const password = entry(account.value, 'password');
    const a = (data.account ?? {}) as Record<string, unknown>;
    if (!login || !password)
      report(
        ctx,
        'CONFIG_AUTH',
        account,
        `account needs both login and password (${login ? 'password' : 'login'} is missing)`,
        'Or leave account: out and set CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD where callscript runs.',
      );
    else if (typeof a.login === 'string' && a.login.includes(':'))
      report(ctx, 'BAD_FORMAT', login.value, 'account.login: an HTTP Basic login has no ":" (the password may)');
    else if (typeof a.login === 'string' && typeof a.password === 'string')
      config.account = { login: a.login, password: a.password };
  } else if (account && account.value.kind === 'scalar' && account.value.type === 'null') {
    report(ctx, 'CONFIG_AUTH', account, 'account is empty: give login and password, or remove it');
  }

  if (data.history && typeof data.history === 'object')
    config.history = { ...HISTORY_CONFIG_DEFAULTS, ...(data.history as Partial<HistoryConfig>) };
  if (data.webhooks && typeof data.webhooks === 'object')
    config.webhooks = { ...WEBHOOKS_CONFIG_DEFAULTS, ...(data.webhooks as Partial<WebhooksConfig>) };
  if (data.metrics && typeof data.metrics === 'object')
    config.metrics = { ...METRICS_DEFAULTS, ...(data.metrics as Partial<MetricsConfig>) };
  const metricsPath = entry(root, 'metrics')?.value;
  const path = metricsPath?.kind === 'map' ? entry(metricsPath, 'path') : undefined;
  if (path && path.value.kind === 'scalar' && typeof path.value.value === 'string') {
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
  // auth: admin without admin credentials is refused by `serve` (they may come from ADMIN_LOGIN/ADMIN_PASSWORD)

  const fb = entry(root, 'fallback');
  if (fb) {
    const m = checkMedia(ctx, fb.value, 'fallback', '', { say: true, templates: false });
    if (m) config.fallback = m[0];
    if (fb.value.kind === 'seq') report(ctx, 'BAD_MEDIA', fb.value, 'fallback is one media, not a list');
  }

  const routes = entry(root, 'routes');
  if (routes && routes.value.kind === 'map') {
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
}

/** Bounds that span two keys, and the trust_proxy entries (the schema has checked the types). */
function transportChecks(ctx: Ctx, root: YMap, config: ServerConfig): void {
  const server = entry(root, 'server')?.value;
  if (server?.kind !== 'map') return;
  const { headers_timeout_ms: headers, request_timeout_ms: request } = config.server;
  const h = entry(server, 'headers_timeout_ms') ?? entry(server, 'request_timeout_ms');
  if (h && Number.isInteger(headers) && Number.isInteger(request) && headers > request) {
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

/** The YAML node (and the map entry holding it) at a JSON pointer. */
function nodeAt(root: YNode, pointer: string): { node: YNode; key?: YMap['entries'][number] } {
  let node = root;
  let key: YMap['entries'][number] | undefined;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node.kind === 'map') {
      const e = entry(node, seg);
      if (!e) break;
      key = e;
      node = e.value;
    } else if (node.kind === 'seq' && node.items[Number(seg)]) {
      key = undefined;
      node = node.items[Number(seg)]!;
    } else break;
  }
  return key ? { node, key } : { node };
}

function pathText(pointer: string): string {
  return pointer.split('/').slice(1).join('.') || 'the file';
}

function ajvError(ctx: Ctx, root: YNode, e: ErrorObject): void {
  if (e.schemaPath.startsWith('#/properties/fallback/')) return; // checked by hand, as a media
  const { node, key } = nodeAt(root, e.instancePath);
  const where = pathText(e.instancePath);
  const p = e.params as Record<string, unknown>;
  const parentSchema = e.parentSchema as { properties?: Record<string, unknown> } | undefined;
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const at = node.kind === 'map' ? entry(node, name) : undefined;
      const known = Object.keys(parentSchema?.properties ?? {});
      report(
        ctx,
        'UNKNOWN_KEY',
        at ?? node,
        `${where === 'the file' ? '' : `${where}: `}unknown key '${name}'`,
        didYouMean(name, known) ?? `Known keys: ${known.join(', ')}.`,
      );
      return;
    }
    case 'type':
      report(ctx, 'TYPE_MISMATCH', node, `${where} must be ${typeText(String(p.type))}, not ${describe(node)}`);
      return;
    case 'minimum':
    case 'maximum': {
      const s = parentSchema as { minimum?: number; maximum?: number } | undefined;
      report(
        ctx,
        'OUT_OF_BOUNDS',
        node,
        `${where} must be between ${s?.minimum} and ${s?.maximum}, ` +
          `got ${node.kind === 'scalar' ? node.source : describe(node)}`,
      );
      return;
    }
    case 'enum': {
      const allowed = (p.allowedValues as string[]) ?? [];
      const v = node.kind === 'scalar' ? String(node.value) : '';
      report(
        ctx,
        'BAD_ENUM',
        node,
        `${where} must be one of ${allowed.join(', ')}, ` +
          `not ${node.kind === 'scalar' ? `"${clip(v)}"` : describe(node)}`,
        didYouMean(v, allowed),
      );
      return;
    }
    case 'minLength':
    case 'maxLength':
      if (e.instancePath === '/webhooks/secret') {
        // the secret itself is never repeated in a message
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `webhooks.secret must be 16 to 256 characters, got ${node.kind === 'scalar' ? String(node.value).length : 0}`,
          'e.g. the output of openssl rand -base64 32, given to webhooks.subscribe as hmac_secret. Better ' +
            'kept out of the file: CALLSCRIPT_WEBHOOK_SECRET.',
        );
        return;
      }
      report(ctx, 'TYPE_MISMATCH', node, `${where} must not be empty`);
      return;
    case 'pattern':
      if (e.schemaPath.includes('propertyNames')) return; // E.164 keys: reported by hand, with the reason
      if (e.instancePath === '/sms/base_url') {
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `sms.base_url must be an http:// or https:// URL, got ` +
            `'${clip(String(node.kind === 'scalar' ? node.value : ''))}'`,
          "e.g. http://127.0.0.1:4010/rest/v1.1 (the emulator) or the service's REST address for version 1.1.",
        );
        return;
      }
      if (e.instancePath === '/api') {
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `api must be an http:// or https:// URL, got '${clip(String(node.kind === 'scalar' ? node.value : ''))}'`,
          'e.g. https://api.callr.com/json-rpc/v1.1/ (the CALLR API, the default) or http://127.0.0.1:4010 ' +
            '(the emulator).',
        );
        return;
      }
      if (
        e.instancePath === '/store' ||
        e.instancePath === '/store/url' ||
        e.instancePath.startsWith('/store/cluster')
      ) {
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `${where} must be memory or a Redis URL, got '${clip(String(node.kind === 'scalar' ? node.value : ''))}'`,
          'e.g. redis://10.0.0.5:6379/0 (rediss:// for TLS, redis://user:password@host:port/db); see docs/scaling.md.',
        );
        return;
      }
      if (e.instancePath === '/webhooks/path') {
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `webhooks.path must be a path like /webhooks/callr (letters, digits, / _ . -), got ` +
            `'${clip(String(node.kind === 'scalar' ? node.value : ''))}'`,
        );
        return;
      }
      if (e.instancePath === '/metrics/path') {
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `metrics.path must be a path like /metrics (letters, digits, . _ ~ - and /), got ` +
            `'${clip(String(node.kind === 'scalar' ? node.value : ''))}'`,
        );
        return;
      }
      if (e.instancePath === '/store/prefix') {
        report(
          ctx,
          'BAD_FORMAT',
          node,
          `store.prefix may hold letters, digits and : _ . { } - (64 at most), got ` +
            `'${clip(String(node.kind === 'scalar' ? node.value : ''))}'`,
        );
        return;
      }
      report(
        ctx,
        'BAD_NAME',
        node,
        `${where}: '${clip(String(node.kind === 'scalar' ? node.value : ''))}' is not a flow name (letters, ` +
          `digits, - and _)`,
      );
      return;
    case 'propertyNames':
      if (e.instancePath === '/canary') {
        const name = String(p.propertyName);
        const at = node.kind === 'map' ? entry(node, name) : undefined;
        report(ctx, 'BAD_NAME', at ?? node, `canary: '${clip(name)}' is not a flow name (letters, digits, - and _)`);
      }
      return;
    case 'anyOf':
    case 'required':
    case 'additionalItems':
      return; // fallback and auth are checked by hand
    default:
      report(ctx, 'TYPE_MISMATCH', key ?? node, `${where} ${e.message ?? 'is not valid'}`);
  }
}

function typeText(t: string): string {
  const names: Record<string, string> = {
    integer: 'an integer',
    string: 'a string',
    object: 'a map',
    boolean: 'true or false',
    array: 'a list',
    number: 'a number',
    null: 'empty',
  };
  return t
    .split(',')
    .filter((x) => x !== 'null')
    .map((x) => names[x] ?? x)
    .join(' or ');
}

/** A flow a config file names (a route or a canary), with where it names it. */
export interface FlowRef {
  name: string;
  /** `routes.apps["APP1"]`, `routes.numbers["+33..."]`, `routes.default`, `canary`. */
  where: string;
  line: number;
  column: number;
  endColumn: number;
}

/** The flows a config file's routes name, with their positions (empty when it does not load). */
export function configFlowRefs(text: string, file: string): FlowRef[] {
  const root = loadYaml(String(text), file).root;
  if (!root || root.kind !== 'map') return [];
  const out: FlowRef[] = [];
  const add = (node: YNode, where: string) => {
    if (node.kind !== 'scalar' || typeof node.value !== 'string') return;
    out.push({
      name: node.value,
      where,
      line: node.pos.line,
      column: node.pos.col,
      endColumn: node.end.line === node.pos.line ? node.end.col : node.pos.col + node.value.length,
    });
  };
  const routes = entry(root, 'routes')?.value;
  if (routes?.kind === 'map') {
    for (const group of ['apps', 'numbers'] as const) {
      const m = entry(routes, group)?.value;
      if (m?.kind === 'map') for (const e of m.entries) add(e.value, `routes.${group}["${e.key}"]`);
    }
    const d = entry(routes, 'default');
    if (d) add(d.value, 'routes.default');
  }
  return out;
}
