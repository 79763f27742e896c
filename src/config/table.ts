/**
 * The table of server options: each defined once, with its key in callscript.yaml, type, default, bounds, doc line,
 * environment variable and flag, and the option it becomes in code (see options.ts for the fields). Adding an
 * option: one entry in table-server.ts, table-calls.ts or table-services.ts (and its field in types.ts, and the
 * code that uses it); the schema, the config checker, `serve`'s variables and flags, the plugin's defaults and
 * checks and the docs' reference follow. `npm run schema` rewrites the files made from it
 * (schemas/config.schema.json, the reference in docs/configuration.md).
 */
import type { OptionDef, SectionDef } from './options.js';
import { CALL_OPTIONS, FLOW_NAME, PERCENT, PLUGIN_OPTIONS, ROUTE_OPTIONS } from './table-calls.js';
import { SERVER_OPTIONS } from './table-server.js';
import { SERVICE_OPTIONS } from './table-services.js';

/** The maps of options, in the file's order; a section's options follow in OPTIONS. */
export const SECTIONS: Record<string, SectionDef> = {
  server: { doc: 'The HTTP server.' },
  admin: { doc: 'Turns the admin API (/admin/...) on, behind these credentials; login and password go together.' },
  canary: {
    doc:
      `Per flow name, the percent (${PERCENT.min}..${PERCENT.max}) of new calls sent to its newest version; the ` +
      'rest get the previous one.',
    names: {
      type: 'string',
      pattern: FLOW_NAME,
      description: 'A flow name (its `name:`, or its file name without extension).',
    },
  },
  auth: { doc: 'HTTP Basic auth on the real-time route; login and password go together.' },
  limits: { doc: 'Bounds on what flows and calls may use (see docs/security.md).' },
  store: {
    doc:
      'Where calls live between requests: memory (this process, the default) or a Redis URL ' +
      'redis://host:port/db; a map for the options.',
    nullable: false,
    orString: 'url',
  },
  sms: { doc: "The SMS account of the flows' sms steps; login and password go together." },
  http: { doc: 'The http steps of version 2 flows: which hosts they may reach, and their bounds.' },
  metrics: {
    doc:
      "Prometheus metrics on the server's port: requests, calls, latency, effects, live calls, reloads, " +
      'transitions.',
  },
  history: {
    doc:
      'The call history: the last finished calls with their paths (steps, results, commands, timings), ' +
      'shown by GET /admin/calls and callscript calls / trace.',
  },
  webhooks: {
    doc:
      "The service's webhooks (docs/webhooks.md): SMS delivery reports recorded for the calls whose flows " +
      'sent them (GET /admin/calls/:callid), inbound SMS logged and counted.',
  },
  account: {
    doc:
      'The service account (the CALLR API): callscript apps and dial use it, and the server places ' +
      'outbound calls (POST /admin/calls) with it; login and password go together. ' +
      'CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD and --account override it.',
  },
  routes: { doc: 'Which flow answers a call: by app, then by called number, then the default.' },
  'routes.apps': { doc: 'Flow by REALTIME10 application hash.' },
  'routes.numbers': { doc: 'Flow by called number (E.164 keys).', names: { pattern: '^\\+[1-9][0-9]{1,14}$' } },
};

/** Every option, in the file's order (the schema's and the docs'). */
export const OPTIONS: readonly OptionDef[] = [
  ...SERVER_OPTIONS,
  ...CALL_OPTIONS,
  ...SERVICE_OPTIONS,
  ...ROUTE_OPTIONS,
  ...PLUGIN_OPTIONS,
];
