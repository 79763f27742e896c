/**
 * The options of calls and routes (admin, canary, auth, environment, unknown_call, fallback, limits, routes) and
 * the plugin's own, part of the table of options (table.ts).
 */
import { DEFAULT_EVAL_LIMITS } from '../flow/budget.js';
import { MAX_FILE_BYTES } from '../flow/yaml.js';
import type { OptionDef } from './options.js';
import { UNKNOWN_CALL_POLICIES } from './types.js';

export const FLOW_NAME = '^[A-Za-z0-9_-]{1,64}$';
/** The bounds of a canary's percent. */
export const PERCENT = { min: 0, max: 100 };

export const CALL_OPTIONS: readonly OptionDef[] = [
  {
    key: 'admin.login',
    type: 'string',
    minLength: 1,
    env: 'ADMIN_LOGIN',
    doc: "Admin API HTTP Basic login (not the real-time route's).",
  },
  { key: 'admin.password', type: 'string', minLength: 1, env: 'ADMIN_PASSWORD', doc: 'Admin API HTTP Basic password.' },
  {
    key: 'canary.*',
    type: 'number',
    min: PERCENT.min,
    max: PERCENT.max,
    option: { name: 'canary.*' },
    doc: "The percent of the flow's new calls sent to its newest version.",
  },
  {
    key: 'auth.login',
    type: 'string',
    minLength: 1,
    env: 'RT_LOGIN',
    doc: "HTTP Basic login (the REALTIME10 application's login).",
  },
  { key: 'auth.password', type: 'string', minLength: 1, env: 'RT_PASSWORD', doc: 'HTTP Basic password.' },
  {
    key: 'environment',
    type: 'string',
    pattern: FLOW_NAME,
    env: 'CALLSCRIPT_ENV',
    flag: '--env',
    option: { name: 'environment' },
    format: { code: 'BAD_NAME', must: 'must be an environment name (letters, digits, - and _; 64 at most)' },
    shown: 'a name',
    doc:
      "The environment of the flows' environments: (version 2) to serve: their env.* values. --env and " +
      "CALLSCRIPT_ENV override it; absent: each flow's first environment.",
  },
  {
    key: 'unknown_call',
    type: 'enum',
    values: UNKNOWN_CALL_POLICIES,
    default: 'restart',
    env: 'UNKNOWN_CALL',
    option: { name: 'unknownCall' },
    doc: 'A non-first request for a call with no state: restart the flow, hang up, or reject with 4xx.',
  },
  {
    key: 'fallback',
    type: 'custom',
    shown: 'a media',
    schema: {
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
    doc:
      'Played when a request would miss the deadline: a text (default voice), a media id, ' +
      'TTS|voice|text, or { say, voice }.',
  },
  {
    key: 'limits.call_state_bytes',
    type: 'integer',
    min: 1024,
    max: 1048576,
    default: 32768,
    option: { name: 'maxStateBytes' },
    doc:
      "The cap on a call's stored state (its variables included), in bytes: a request that would go " +
      "over it takes the step's error branch (STATE_TOO_LARGE).",
  },
  {
    key: 'limits.expression_cost',
    type: 'integer',
    min: 1000,
    max: 10000000,
    default: DEFAULT_EVAL_LIMITS.celUnits,
    option: { name: 'evalLimits.celUnits' },
    doc:
      "What one request's CEL conditions and expr: values may cost in all, in cost units (one per node " +
      'evaluated, plus the size of the lists, maps and strings made); over it the step takes its error ' +
      'branch (EVALUATION_LIMIT).',
  },
  {
    key: 'limits.template_memory',
    type: 'integer',
    min: 1000,
    max: 10000000,
    default: DEFAULT_EVAL_LIMITS.templateMemory,
    option: { name: 'evalLimits.templateMemory' },
    doc:
      "What one request's templates may render and allocate in all (liquidjs memory units: 8 per node " +
      'rendered, items of ranges, characters of joins and appends...); over it the step takes its ' +
      'error branch (EVALUATION_LIMIT).',
  },
  {
    key: 'limits.template_ms',
    type: 'integer',
    min: 1,
    max: 1000,
    default: DEFAULT_EVAL_LIMITS.templateMs,
    option: { name: 'evalLimits.templateMs' },
    doc:
      "Milliseconds one request's templates may spend rendering in all (the first half on the wall " +
      'clock, the rest in CPU time); over it the step takes its error branch (EVALUATION_LIMIT).',
  },
  {
    key: 'limits.max_live_calls',
    type: 'integer',
    min: 1,
    max: 10000000,
    default: 50000,
    option: { name: 'maxLiveCalls', max: null },
    doc:
      'Live calls one process serves at most: a new call past it is answered 503 CALL_LIMIT (the ' +
      'service retries, or places it on another instance).',
  },
  {
    key: 'limits.flow_file_bytes',
    type: 'integer',
    min: 1024,
    max: 67108864,
    default: MAX_FILE_BYTES,
    option: { name: 'maxFlowBytes' },
    doc: 'The largest flow (and scenario) file, in bytes: a larger one is refused unread (FILE_TOO_LARGE).',
  },
];

export const ROUTE_OPTIONS: readonly OptionDef[] = [
  {
    key: 'routes.apps.*',
    type: 'string',
    pattern: FLOW_NAME,
    shown: 'a flow name',
    doc: 'The flow of the calls to this application.',
  },
  {
    key: 'routes.numbers.*',
    type: 'string',
    pattern: FLOW_NAME,
    shown: 'a flow name',
    doc: 'The flow of the calls to this number.',
  },
  {
    key: 'routes.default',
    type: 'string',
    pattern: FLOW_NAME,
    shown: 'a flow name',
    doc: 'Flow for calls no other route matches.',
  },
];

/** Options of the plugin alone (no key in the file). */
export const PLUGIN_OPTIONS: readonly OptionDef[] = [
  {
    type: 'integer',
    min: 100,
    max: 3_600_000,
    default: 30_000,
    option: { name: 'liveCheckMs' },
    doc:
      'With a shared store: how often the calls idle here this long are checked against it, so that a call ' +
      'answered or ended by another instance stops counting as live here.',
  },
];
