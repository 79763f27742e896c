/**
 * The options of what the server uses (store, sms, http, metrics, history, webhooks, api, account), part of the
 * table of options (table.ts).
 */
import type { OptionDef } from './options.js';

const REDIS_HINT =
  'e.g. redis://10.0.0.5:6379/0 (rediss:// for TLS, redis://user:password@host:port/db); see docs/scaling.md.';
const URL_MUST = 'must be an http:// or https:// URL';
/** The length of the webhooks' secret. */
const SECRET_CHARS = { min: 16, max: 256 };

export const SERVICE_OPTIONS: readonly OptionDef[] = [
  {
    key: 'store.url',
    type: 'string',
    pattern: '^(memory|rediss?://.+)$',
    default: 'memory',
    env: 'CALLSCRIPT_STORE',
    flag: '--store',
    format: { must: 'must be memory or a Redis URL', hint: REDIS_HINT },
    shown: 'memory, a Redis URL',
    doc: 'memory, or redis://[user:password@]host:port[/db] (rediss:// for TLS).',
  },
  {
    key: 'store.prefix',
    type: 'string',
    pattern: '^[A-Za-z0-9:_.{}-]{0,64}$',
    default: 'callscript:',
    env: 'CALLSCRIPT_STORE_PREFIX',
    format: { must: 'may hold letters, digits and : _ . { } - (64 at most)' },
    shown: 'letters, digits, : _ . { } -',
    doc: 'Prepended to every Redis key: several deployments can share one Redis.',
  },
  {
    key: 'store.command_timeout_ms',
    type: 'integer',
    min: 50,
    max: 10000,
    default: 1000,
    doc:
      "A Redis command that takes longer fails (503: the service retries), but a call step's own: those wait for a " +
      'stalled Redis while the deadline fallback can ride the stall (scaling.md).',
  },
  {
    key: 'store.cluster',
    type: 'list',
    item: { pattern: '^rediss?://.+' },
    minItems: 1,
    format: { must: 'must be a Redis URL', hint: REDIS_HINT },
    shown: 'Redis URLs',
    doc: 'Redis Cluster nodes (a call keeps all its keys in one slot).',
  },
  {
    key: 'store.sentinels',
    type: 'custom',
    shown: '[{ host, port }]',
    schema: {
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
    },
    doc: 'Redis Sentinel: the sentinels to ask for the master.',
  },
  { key: 'store.name', type: 'string', minLength: 1, doc: 'Redis Sentinel: the name of the master.' },
  {
    key: 'sms.base_url',
    type: 'string',
    pattern: '^https?://',
    default: 'http://127.0.0.1:4010/rest/v1.1',
    env: 'SMS_BASE_URL',
    format: {
      must: URL_MUST,
      hint: "e.g. http://127.0.0.1:4010/rest/v1.1 (the emulator) or the service's REST address for version 1.1.",
    },
    shown: 'a URL',
    doc: 'The SMS REST API v1.1 address (default: the emulator).',
  },
  { key: 'sms.login', type: 'string', minLength: 1, env: 'SMS_LOGIN', doc: 'The account login (API_LOGIN).' },
  {
    key: 'sms.password',
    type: 'string',
    minLength: 1,
    env: 'SMS_PASSWORD',
    doc: 'The account password (API_PASSWORD).',
  },
  {
    key: 'sms.timeout_ms',
    type: 'integer',
    min: 100,
    max: 30000,
    default: 3000,
    env: 'SMS_TIMEOUT_MS',
    doc: 'Longest wait for the API per SMS; never past the reply deadline.',
  },
  {
    key: 'http.allow_hosts',
    type: 'list',
    item: { pattern: '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$' },
    unique: true,
    format: { must: 'must be a host name (api.bank.example) or *. and a domain (*.bank.example)' },
    shown: 'host names',
    option: { name: 'http.allowHosts', of: 'http' },
    doc:
      'Host names http steps may reach: exact (api.bank.example) or *.bank.example for its ' +
      'subdomains. Absent: any public host.',
  },
  {
    key: 'http.allow_private',
    type: 'boolean',
    default: false,
    option: { name: 'http.allowPrivate', of: 'http' },
    doc:
      'Allow private, loopback, link-local and unique-local addresses (checked on the resolved ' +
      'address). Only for a lab or the mock server.',
  },
  {
    key: 'http.max_body_bytes',
    type: 'integer',
    min: 1024,
    max: 1048576,
    default: 65536,
    option: { name: 'http.maxBodyBytes', of: 'http' },
    doc: 'Response bodies over this size fail with TOO_LARGE (read as a stream and cut off).',
  },
  {
    key: 'http.max_lookups_per_call',
    type: 'integer',
    min: 1,
    max: 1000,
    default: 20,
    option: { name: 'http.maxLookupsPerCall', of: 'http' },
    doc: 'Lookups one call may start; past it, the step takes its error branch with LIMIT.',
  },
  { key: 'metrics.enabled', type: 'boolean', default: true, doc: 'Serve Prometheus metrics (docs/operations.md).' },
  {
    key: 'metrics.path',
    type: 'string',
    pattern: '^/[A-Za-z0-9._~/-]{0,199}$',
    default: '/metrics',
    format: { must: 'must be a path like /metrics (letters, digits, . _ ~ - and /)' },
    shown: 'a path',
    option: { name: 'metrics.path', of: 'metrics' },
    doc: 'The path of GET metrics; not /rt, /health or /admin (nor under them).',
  },
  {
    key: 'metrics.auth',
    type: 'enum',
    values: ['none', 'admin'],
    default: 'none',
    option: { name: 'metrics.auth', of: 'metrics' },
    doc:
      'none: open (keep the port private, or filter it at the proxy); admin: behind the admin ' +
      'credentials (admin: must be set).',
  },
  {
    key: 'history.keep',
    type: 'integer',
    min: 0,
    max: 100000,
    default: 1000,
    option: { name: 'history.keep', of: 'history' },
    doc:
      'Finished calls kept with their paths (the newest; the oldest go), in the call store: shared by ' +
      'every instance on one Redis. 0: no history at all (no writes).',
  },
  {
    key: 'history.ttl_ms',
    type: 'integer',
    min: 1000,
    max: 2592000000,
    default: 86400000,
    option: { name: 'history.ttlMs', of: 'history' },
    doc: 'How long a finished call is kept, in ms (default a day).',
  },
  {
    key: 'history.max_path',
    type: 'integer',
    min: 1,
    max: 10000,
    default: 200,
    option: { name: 'history.maxPath', of: 'history' },
    doc: "Requests kept per call's path (its last ones): a call of more keeps only its end.",
  },
  {
    key: 'history.max_path_bytes',
    type: 'integer',
    min: 4096,
    max: 4194304,
    default: 131072,
    option: { name: 'history.maxPathBytes', of: 'history' },
    doc:
      "Bytes kept per call's path (UTF-8 bytes of its entries' JSON; the oldest entries go first, counted as " +
      '`dropped`): what one call may make the server keep in its history, whatever its requests say. Default 128 KiB.',
  },
  {
    key: 'history.max_bytes',
    type: 'integer',
    min: 1048576,
    max: 4294967296,
    default: 33554432,
    option: { name: 'history.maxBytes', of: 'history' },
    doc:
      'Bytes kept by all the finished calls (their records and rows, UTF-8), besides `keep`: past them the oldest ' +
      'go (the newest is kept). Default 32 MiB.',
  },
  {
    key: 'webhooks.path',
    type: 'string',
    pattern: '^/[A-Za-z0-9/_.-]{1,199}$',
    default: '/webhooks/callr',
    format: { must: 'must be a path like /webhooks/callr (letters, digits, / _ . -)' },
    shown: 'a path',
    option: { name: 'webhooks.path', of: 'webhooks' },
    doc: 'Where the service POSTs its webhook events (the endpoint given to webhooks.subscribe ends with it).',
  },
  {
    key: 'webhooks.secret',
    type: 'string',
    minLength: SECRET_CHARS.min,
    maxLength: SECRET_CHARS.max,
    secret: true,
    env: 'CALLSCRIPT_WEBHOOK_SECRET',
    format: {
      must: `must be ${SECRET_CHARS.min} to ${SECRET_CHARS.max} characters`,
      hint:
        'e.g. the output of openssl rand -base64 32, given to webhooks.subscribe as hmac_secret. Better ' +
        'kept out of the file: CALLSCRIPT_WEBHOOK_SECRET.',
    },
    shown: `${SECRET_CHARS.min} to ${SECRET_CHARS.max} characters`,
    option: { name: 'webhooks.secret', of: 'webhooks' },
    doc:
      'The secret given to webhooks.subscribe as hmac_secret: events must carry ' +
      'X-CALLR-HmacSignature, the base64 HMAC-SHA256 of their body with it. Better in the ' +
      'environment: CALLSCRIPT_WEBHOOK_SECRET. Without one the route is off.',
  },
  {
    key: 'webhooks.body_limit',
    type: 'integer',
    min: 1024,
    max: 4194304,
    default: 262144,
    option: { name: 'webhooks.bodyLimit', of: 'webhooks' },
    doc: 'Largest webhook event taken, in bytes; larger ones are refused with 413 BODY_TOO_LARGE.',
  },
  {
    key: 'webhooks.tolerance_ms',
    type: 'integer',
    min: 1000,
    max: 172800000,
    default: 300000,
    option: { name: 'webhooks.toleranceMs', of: 'webhooks' },
    doc:
      "How far an event's event_at may be from this server's clock, either way, in ms (default 5 minutes; at " +
      'most 48 h, how long event ids are remembered): an event dated further is refused with 400 ' +
      'WEBHOOK_EVENT_TIME, so a captured event cannot be replayed once its id is forgotten.',
  },
  {
    key: 'api',
    type: 'string',
    pattern: '^https?://',
    env: 'CALLSCRIPT_API',
    format: {
      must: URL_MUST,
      hint:
        'e.g. https://api.callr.com/json-rpc/v1.1/ (the CALLR API, the default) or http://127.0.0.1:4010 ' +
        '(the emulator).',
    },
    shown: 'a URL',
    doc:
      "The service's JSON-RPC address: the CALLR API https://api.callr.com/json-rpc/v1.1/ (the default), " +
      "or the emulator's http://127.0.0.1:4010 (its base URL is taken: /json-rpc/v1.1/ is added). " +
      'CALLSCRIPT_API and --api override it.',
  },
  {
    key: 'account.login',
    type: 'string',
    minLength: 1,
    doc: "The service account's login (the CALLR API's HTTP Basic login).",
  },
  { key: 'account.password', type: 'string', minLength: 1, doc: "The service account's password." },
];
