/** The options of the HTTP server (`server:`), part of the table of options (table.ts). */
import { DEFAULT_BODY_DEPTH } from '../protocol/request.js';
import type { OptionDef } from './options.js';
import { LOG_LEVELS } from './types.js';

export const SERVER_OPTIONS: readonly OptionDef[] = [
  {
    key: 'server.port',
    type: 'integer',
    min: 0,
    max: 65535,
    default: 3000,
    env: 'PORT',
    flag: '--port',
    doc: 'Port to listen on (0: any free port).',
  },
  {
    key: 'server.host',
    type: 'string',
    minLength: 1,
    default: '127.0.0.1',
    shown: 'an address',
    env: 'HOST',
    flag: '--host',
    doc: 'Address to listen on.',
  },
  {
    key: 'server.flows_dir',
    type: 'string',
    minLength: 1,
    default: 'flows',
    shown: 'a directory',
    env: 'FLOWS_DIR',
    flag: '--flows',
    doc: 'Directory of the *.yaml flows, relative to this file (FLOWS_DIR and --flows: to the current directory).',
  },
  {
    key: 'server.deadline_ms',
    type: 'integer',
    min: 100,
    max: 4900,
    default: 4000,
    env: 'DEADLINE_MS',
    option: { name: 'deadlineMs' },
    doc: 'Answer every request within this many ms (the service allows 5000).',
  },
  {
    key: 'server.body_limit',
    type: 'integer',
    min: 1024,
    max: 1048576,
    default: 65536,
    option: { name: 'bodyLimit' },
    doc: 'Largest request body, in bytes.',
  },
  {
    key: 'server.body_depth',
    type: 'integer',
    min: 2,
    max: 256,
    default: DEFAULT_BODY_DEPTH,
    option: { name: 'bodyDepth' },
    doc:
      'Deepest nesting of objects and arrays in a request body (the body itself is 1, its variables ' +
      '2); deeper is refused with 400 BODY_TOO_DEEP.',
  },
  // code may give shorter lives than the file (tests, embedders): no upper bound either
  {
    key: 'server.call_ttl_s',
    type: 'integer',
    min: 60,
    max: 86400,
    default: 7200,
    option: { name: 'callTtlMs', scale: 1000, min: 1000, max: null },
    doc: 'Forget a call this many seconds after its last request.',
  },
  {
    key: 'server.ended_call_ttl_s',
    type: 'integer',
    min: 10,
    max: 86400,
    default: 600,
    option: { name: 'endedTtlMs', scale: 1000, min: 1000, max: null },
    doc:
      'Remember an ended call this many seconds: its late requests are answered hangup instead of ' +
      'restarting the flow.',
  },
  {
    key: 'server.reload_settle_ms',
    type: 'integer',
    min: 0,
    max: 60000,
    default: 1000,
    option: { name: 'reloadSettleMs' },
    doc:
      'A changed flow file is published once it has stayed unchanged this many ms (a file still being ' +
      'written is waited for).',
  },
  {
    key: 'server.log_level',
    type: 'enum',
    values: LOG_LEVELS,
    default: 'info',
    env: 'LOG_LEVEL',
    flag: '--log-level',
    option: { name: 'logLevel', of: 'server' },
    doc: 'Log level.',
  },
  {
    key: 'server.workers',
    type: 'integer',
    min: 1,
    max: 256,
    default: 1,
    env: 'CALLSCRIPT_WORKERS',
    flag: '--workers',
    doc:
      'Processes serving the port (node:cluster): a primary forks them, restarts one that dies and ' +
      'drains them on SIGTERM. More than 1 needs a Redis store (the requests of a call reach any ' +
      'process); max_connections and limits.max_live_calls apply to each.',
  },
  {
    key: 'server.watch',
    type: 'boolean',
    default: true,
    option: { name: 'watch', of: 'server' },
    doc: 'Reload the flows (and this file) when they change on disk.',
  },
  {
    key: 'server.headers_timeout_ms',
    type: 'integer',
    min: 100,
    max: 120000,
    default: 10000,
    option: { name: 'headersTimeoutMs', of: 'server' },
    doc:
      "A request's line and headers must arrive within this many ms of its start, or it is answered " +
      '408 and its connection closed.',
  },
  {
    key: 'server.request_timeout_ms',
    type: 'integer',
    min: 100,
    max: 300000,
    default: 10000,
    option: { name: 'requestTimeoutMs', of: 'server' },
    doc:
      'A whole request (headers and body) must arrive within this many ms, or it is answered 408 and ' +
      'its connection closed; not less than headers_timeout_ms.',
  },
  {
    key: 'server.keep_alive_timeout_ms',
    type: 'integer',
    min: 100,
    max: 600000,
    default: 5000,
    option: { name: 'keepAliveTimeoutMs', of: 'server' },
    doc:
      'An idle keep-alive connection is closed after this many ms (announced to clients in Keep-Alive: ' + 'timeout=).',
  },
  {
    key: 'server.socket_timeout_ms',
    type: 'integer',
    min: 100,
    max: 600000,
    default: 30000,
    option: { name: 'socketTimeoutMs', of: 'server' },
    doc: 'A connection with a request in progress and no bytes moving either way is closed after this many ms.',
  },
  {
    key: 'server.max_connections',
    type: 'integer',
    min: 1,
    max: 1000000,
    default: 900,
    option: { name: 'maxConnections', of: 'server' },
    doc:
      "Connections open at once; more are closed as they are accepted. Keep it under the process's " +
      'open-files limit (ulimit -n) less about 100.',
  },
  {
    key: 'server.auth_failure_limit',
    type: 'integer',
    min: 0,
    max: 100000,
    default: 10,
    option: { name: 'authFailureLimit' },
    doc:
      'Failed authentications allowed per client address within auth_failure_window_s, on /rt and on ' +
      'the admin API (counted apart); past it, 429 AUTH_RATE_LIMITED. 0: logged, not limited.',
  },
  {
    key: 'server.auth_failure_window_s',
    type: 'integer',
    min: 1,
    max: 86400,
    default: 60,
    option: { name: 'authFailureWindowMs', scale: 1000 },
    doc: 'The window of auth_failure_limit, in seconds.',
  },
  {
    key: 'server.trust_proxy',
    type: 'list',
    item: { minLength: 1 },
    nullable: true,
    shown: 'addresses, CIDR ranges',
    option: { name: 'trustProxy', of: 'server' },
    doc:
      'Reverse proxies in front of the server (addresses, CIDR ranges, or loopback, linklocal, ' +
      'uniquelocal): the client address is taken from their X-Forwarded-For.',
  },
  {
    key: 'server.allowed_hosts',
    type: 'list',
    item: { pattern: '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$' },
    unique: true,
    nullable: true,
    format: { must: 'must be a host name (ivr.example.com) or *. and a domain (*.example.com)' },
    shown: 'host names',
    option: { name: 'allowedHosts' },
    doc:
      'Host names the admin API, the console, /metrics and /health answer to (against DNS rebinding), besides ' +
      'localhost, IP addresses and server.host: those your browsers and scrapers use. Another name gets 403 ' +
      'HOST_NOT_ALLOWED; /rt and the webhooks answer any name.',
  },
];
