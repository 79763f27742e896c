/**
 * The JSON Schema (draft-07) of flow files, generated from the command catalogue, for
 * editors (yaml-language-server: `# yaml-language-server: $schema=../schemas/flow.schema.json`).
 * It describes the same language as the checker, never stricter; the checker adds what a
 * schema cannot say (step targets, results, graph, templates, WAV data...).
 * schemas/flow.schema.json is its committed output (`npm run schema` rewrites it).
 */
import { CALENDAR_STEP, PROMPT_MEDIA, tableSchemas } from './schema-tables.js';
import { writeFileSync } from 'node:fs';
import {
  COMMANDS,
  COMMAND_NAMES,
  PARAM_ALIASES,
  SCALAR_PARAM,
  type CommandName,
  type FormatName,
  type ParamSpec,
} from '../protocol/commands.js';
import { ACTION_SPECS, EFFECT_NAMES, type ActionName } from './actions.js';
import { REQUIRED_PARAMS } from './check-commands.js';
import { DEFAULT_LOOP_MAX, MAX_LOOP_MAX } from './model.js';
import { QUEUE_SECONDS } from './check-queue.js';

type Schema = Record<string, unknown>;

const TEMPLATE = '.*\\{[{%].*';
const ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const VAR_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
const ref = (name: string): Schema => ({ $ref: `#/definitions/${name}` });

/** Formats as patterns (strings only; a template is always accepted). */
const FORMAT_PATTERNS: Partial<Record<FormatName, string>> = {
  phone_number: '\\+[1-9][0-9]{1,14}',
  cli_phone_number: 'BLOCKED|\\+[1-9][0-9]{1,14}',
  cdr_customer_field: '[a-zA-Z0-9]{0,32}',
  rt_conference_id: '[a-zA-Z0-9_.:-]{1,64}',
  callid: '[0-9]{1,20}',
  locale: '|[a-z]{2}_[A-Z]{2}',
  dtmf_digits: '[0-9*#]{1,64}',
  pin_code: '[0-9]{0,10}',
};

function paramSchema(p: ParamSpec): Schema {
  switch (p.type) {
    case 'int':
      return {
        type: 'integer',
        minimum: p.min,
        maximum: p.max,
        ...(p.default !== undefined ? { default: p.default } : {}),
        description: `${p.doc} (${p.min}..${p.max})`,
      };
    case 'bool':
      return { type: 'boolean', ...(p.default !== undefined ? { default: p.default } : {}), description: p.doc };
    case 'media':
      return { ...ref('media'), description: p.doc };
    case 'targets':
      return { ...ref('targets'), description: p.doc };
    case 'string': {
      if (p.enum)
        return { enum: [...p.enum], ...(p.default !== undefined ? { default: p.default } : {}), description: p.doc };
      const pat = p.format ? FORMAT_PATTERNS[p.format] : undefined;
      const s: Schema = {
        type: p.format === 'base64_wav' || p.format === 'media_file' ? 'string' : ['string', 'integer'],
        description: p.doc,
      };
      if (pat) s.pattern = `^(?:${pat}|${TEMPLATE})$`;
      if (p.format === 'media_file' || p.format === 'base64_wav') s.minLength = 1;
      return s;
    }
  }
}

function commandSchema(name: ActionName): Schema {
  const spec = ACTION_SPECS[name];
  const aliases = PARAM_ALIASES[name as CommandName] ?? {};
  const properties: Schema = {};
  for (const [k, p] of Object.entries(spec.params)) properties[k] = paramSchema(p);
  for (const [alias, target] of Object.entries(aliases))
    properties[alias] = { ...paramSchema(spec.params[target]!), description: `Alias of ${target}.` };
  const map: Schema = { type: 'object', properties, additionalProperties: false };
  const required = REQUIRED_PARAMS[name] ?? [];
  const plain = required.filter((r) => !Object.values(aliases).includes(r));
  if (plain.length > 0) map.required = plain;
  for (const req of required.filter((r) => Object.values(aliases).includes(r))) {
    map.anyOf = [
      req,
      ...Object.entries(aliases)
        .filter(([, t]) => t === req)
        .map(([a]) => a),
    ].map((n) => ({ required: [n] }));
  }
  const forms: Schema[] = [map];
  if (required.length === 0) forms.unshift({ type: 'null' });
  const scalar = SCALAR_PARAM[name as CommandName];
  if (scalar) forms.push(paramSchema(spec.params[scalar]!));
  const results = spec.results;
  const res =
    results.kind === 'enum'
      ? `Results: ${results.values.join(', ')}.`
      : results.kind === 'digits'
        ? `Results: the keys pressed, or ${results.also.join(', ')}.`
        : results.kind === 'any'
          ? `Result: ${results.doc}.`
          : 'No result.';
  return { description: `${spec.doc} ${res}`, anyOf: forms };
}

function definitions(): Schema {
  const defs: Schema = {};
  const mediaItem: Schema = {
    anyOf: [
      { type: 'integer', minimum: 0, description: 'A library media id; 0 means no media.' },
      {
        type: 'string',
        minLength: 1,
        description: 'Text spoken in the flow voice, TTS|voice|text, a media id, or a template rendering a media.',
      },
      {
        type: 'object',
        properties: {
          say: { type: 'string', minLength: 1, description: 'Text to speak.' },
          voice: { type: 'string', pattern: ID_PATTERN, description: 'TTS voice, e.g. TTS_EN-GB_DANIEL.' },
        },
        required: ['say'],
        additionalProperties: false,
      },
      PROMPT_MEDIA,
    ],
  };
  defs.mediaItem = mediaItem;
  defs.media = {
    anyOf: [
      ref('mediaItem'),
      {
        type: 'array',
        minItems: 1,
        items: ref('mediaItem'),
        description: 'Escalating prompts: the n-th visit plays the n-th entry.',
      },
    ],
  };
  defs.targets = {
    anyOf: [
      { type: 'string' },
      {
        type: 'array',
        minItems: 1,
        items: {
          anyOf: [
            { type: 'string', description: 'An E.164 number.' },
            {
              type: 'object',
              properties: {
                number: paramSchema({ type: 'string', format: 'phone_number', doc: 'E.164 number to call.' }),
                timeout: { type: 'integer', minimum: 5, maximum: 300, description: 'Seconds to ring (5..300).' },
              },
              required: ['number'],
              additionalProperties: false,
            },
          ],
        },
      },
    ],
  };
  defs.stepId = { type: 'string', pattern: ID_PATTERN };
  defs.branch = {
    description: 'Where a result leads: a step id, { goto, say } or { retry, then, say }.',
    anyOf: [
      ref('stepId'),
      {
        type: 'object',
        properties: {
          goto: { ...ref('stepId'), description: 'The step to go to.' },
          retry: {
            type: 'integer',
            minimum: 1,
            maximum: 100,
            description: 'Run this step again at most this many times for this result, then go to `then`.',
          },
          then: { ...ref('stepId'), description: 'Where to go once the retries are used up.' },
          say: { ...ref('media'), description: 'Played before going on.' },
          save: {
            description:
              "Version 2, a /pattern/ key's branch: its named groups saved, { variable: group } or [group, ...].",
            anyOf: [
              { type: 'object', additionalProperties: { type: 'string' } },
              { type: 'array', items: { type: 'string' } },
            ],
          },
        },
        additionalProperties: false,
        anyOf: [
          { required: ['goto'], not: { anyOf: [{ required: ['retry'] }, { required: ['then'] }] } },
          { required: ['retry', 'then'], not: { required: ['goto'] } },
        ],
      },
    ],
  };
  defs.on = {
    type: 'object',
    description: 'Result -> branch: exact values, /regex/, _asterisk patterns, default, error.',
    additionalProperties: ref('branch'),
  };
  for (const name of [...COMMAND_NAMES, ...EFFECT_NAMES]) defs[`command_${name}`] = commandSchema(name);
  defs.command_http = httpSchema();
  defs.command_queue = queueSchema();
  defs.step = stepSchema();
  defs.handlers = handlersSchema();
  return defs;
}

/** The queue step (version 2): the line, its agents, hold media and announcements (src/flow/check-queue.ts). */
function queueSchema(): Schema {
  const spec = ACTION_SPECS.queue;
  const seconds = (k: string): Schema => {
    const p = spec.params[k] as { min: number; max: number; default: number; doc: string };
    return { type: 'integer', minimum: p.min, maximum: p.max, default: p.default, description: p.doc };
  };
  const wait: Schema = {
    type: 'object',
    properties: { wait: { type: 'integer', minimum: 1, maximum: 30 } },
    required: ['wait'],
    additionalProperties: false,
  };
  return {
    description: spec.doc,
    type: 'object',
    required: ['name', 'agents'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: ID_PATTERN, description: spec.params.name!.doc },
      agents: {
        description: 'The agents: E.164 numbers (templates allowed), or { expr: CEL } giving a list of them.',
        anyOf: [
          { type: 'array', minItems: 0, maxItems: 1000, items: { type: 'string' } },
          {
            type: 'object',
            required: ['expr'],
            additionalProperties: false,
            properties: { expr: { type: 'string', description: 'A CEL expression giving a list of numbers.' } },
          },
        ],
      },
      strategy: { enum: ['in_order', 'round_robin', 'longest_idle'], default: 'in_order' },
      ...Object.fromEntries(QUEUE_SECONDS.map((k) => [k, seconds(k)])),
      hold: {
        description: 'Played in turn while the caller waits, looped: a media, { wait: seconds }, or a list of them.',
        anyOf: [
          ref('mediaItem'),
          wait,
          { type: 'array', minItems: 1, maxItems: 32, items: { anyOf: [ref('mediaItem'), wait] } },
        ],
      },
      announce: {
        type: 'object',
        required: ['say'],
        additionalProperties: false,
        description: 'Played every `every` seconds of waiting (the first at once) instead of the hold chunk.',
        properties: {
          every: { type: 'integer', minimum: 10, maximum: 3600, default: 60 },
          say: { description: 'What to announce (any media form; templates read the save: variable).' },
        },
      },
      whisper: { description: 'Media whispered to the agent who answers.' },
      cli: { type: 'string', description: spec.params.cli!.doc },
    },
  };
}

/** The http step (version 2): its request, bounds and filler (src/flow/check-http.ts). */
function httpSchema(): Schema {
  const strings = (max: number, description: string): Schema => ({
    type: 'object',
    maxProperties: max,
    additionalProperties: {
      anyOf: [
        { type: ['string', 'integer', 'boolean'] },
        {
          type: 'object',
          required: ['expr'],
          additionalProperties: false,
          properties: { expr: { type: 'string', description: 'A CEL expression: its value as text.' } },
        },
      ],
    },
    description,
  });
  return {
    description:
      'Version 2: an HTTP lookup. Branch on ok (any 2xx), exact status codes ("404"), timeout, error and ' +
      'default; save: keeps { status, body }.',
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'GET', description: 'The HTTP method.' },
      url: {
        type: 'string',
        minLength: 1,
        maxLength: 8192,
        description: 'http:// or https:// URL, templated (vars, call, secrets.X).',
      },
      headers: strings(
        32,
        'Request headers, templated; secrets.X allowed. Not Host, Content-Length, Transfer-Encoding, Connection.',
      ),
      query: strings(64, 'Query parameters, templated, appended to the URL; a list from { expr } repeats the key.'),
      body: {
        description:
          'A JSON body (64 KiB at most); strings templated at any depth, { expr: CEL } takes the value typed ' +
          '(a list, a number, a boolean, a map).',
      },
      timeout_ms: {
        type: 'integer',
        minimum: 100,
        maximum: 30000,
        default: 5000,
        description: "The lookup's whole time, retries and fillers included.",
      },
      retries: {
        type: 'integer',
        minimum: 0,
        maximum: 5,
        default: 0,
        description: 'Retries on network errors, timeouts and 5xx, with backoff, within timeout_ms.',
      },
      filler: {
        description:
          'Answered while the lookup runs past the reply deadline: a media, { wait: seconds }, or a list of ' +
          'them (escalating).',
        anyOf: [
          ref('mediaItem'),
          {
            type: 'object',
            properties: { wait: { type: 'integer', minimum: 1, maximum: 30 } },
            required: ['wait'],
            additionalProperties: false,
          },
          {
            type: 'array',
            minItems: 1,
            items: {
              anyOf: [
                ref('mediaItem'),
                {
                  type: 'object',
                  properties: { wait: { type: 'integer', minimum: 1, maximum: 30 } },
                  required: ['wait'],
                  additionalProperties: false,
                },
              ],
            },
          },
        ],
      },
    },
  };
}

function stepSchema(): Schema {
  const properties: Schema = {};
  for (const name of [...COMMAND_NAMES, ...EFFECT_NAMES]) properties[name] = ref(`command_${name}`);
  properties.say = { ...ref('media'), description: 'Plays text in the flow voice (a play command).' };
  properties.set = {
    type: 'object',
    description: 'Assigns variables: strings are templates, { expr: CEL } is computed, other values are taken as is.',
    propertyNames: { pattern: VAR_PATTERN },
  };
  properties.switch = {
    type: 'array',
    minItems: 1,
    description: 'Cases tried in order; the first whose condition holds wins.',
    items: {
      type: 'object',
      properties: { when: { type: 'string', description: 'A CEL condition.' }, goto: ref('stepId') },
      required: ['when', 'goto'],
      additionalProperties: false,
    },
  };
  properties.when = { type: 'string', description: 'A CEL condition; goes to `then` when it holds, else to `else`.' };
  properties.calendar = CALENDAR_STEP;
  properties.then = ref('stepId');
  properties.else = ref('stepId');
  properties.default = { ...ref('stepId'), description: 'switch: where to go when no case holds.' };
  properties.save = {
    anyOf: [
      { type: 'string', pattern: VAR_PATTERN, description: 'Stores the result in vars.<name>.' },
      {
        type: 'object',
        propertyNames: { pattern: VAR_PATTERN },
        additionalProperties: { type: 'string', pattern: VAR_PATTERN },
        description: 'subflow (version 2): caller variable <- the name of a value the module returns.',
      },
    ],
  };
  properties.subflow = {
    type: 'object',
    description:
      'Version 2: runs a module (a flow file of the same directory with module:), then branches on the ' +
      'result it returns (on:).',
    required: ['flow'],
    additionalProperties: false,
    properties: {
      flow: { type: 'string', pattern: ID_PATTERN, description: "The module's flow name." },
      with: {
        type: ['object', 'null'],
        propertyNames: { pattern: VAR_PATTERN },
        description: "The module's params: name -> value (strings are templates read in the caller's scope).",
      },
    },
  };
  properties.return = {
    description:
      'Version 2, modules only: ends the module with a result (one of module.results), and values (of module.returns).',
    anyOf: [
      { type: 'string', pattern: ID_PATTERN },
      {
        type: 'object',
        required: ['result'],
        additionalProperties: false,
        properties: {
          result: { type: 'string', pattern: ID_PATTERN },
          values: {
            type: 'object',
            propertyNames: { pattern: VAR_PATTERN },
            description: "Returned values: strings are templates read in the module's scope.",
          },
        },
      },
    ],
  };
  properties.on = ref('on');
  properties.next = { ...ref('branch'), description: 'Where to go after the command (same as on.default).' };
  properties.handlers = { type: 'boolean', description: 'false: flow-wide result handlers do not apply to this step.' };
  properties.valid = {
    description:
      'Version 2: a CEL condition every input must meet (`result` is the input); a rejected input is not ' +
      'saved and goes to else, or to the default branch.',
    oneOf: [
      { type: 'string' },
      {
        type: 'object',
        required: ['when'],
        additionalProperties: false,
        properties: {
          when: { type: 'string', description: 'A CEL condition over result, vars, call.' },
          else: {
            ...ref('branch'),
            description: 'Where a rejected input goes (retry counts and escalates the prompts).',
          },
        },
      },
    ],
  };
  properties.foreach = {
    type: 'object',
    description:
      'Version 2: runs the body (do:) once per item of a list, the item in vars.<as> and its index in ' +
      'vars.<index>; the body comes back with next: <this step>, then next: is taken once the list is over.',
    required: ['in', 'as'],
    additionalProperties: false,
    properties: {
      in: { type: 'string', description: 'A CEL expression giving the list, e.g. vars.appointments.' },
      as: { type: 'string', pattern: VAR_PATTERN, description: 'The variable holding each item.' },
      index: { type: 'string', pattern: VAR_PATTERN, description: "The variable holding the item's index (0 first)." },
      max: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_LOOP_MAX,
        default: DEFAULT_LOOP_MAX,
        description: `The most items one run of the loop takes (1..${MAX_LOOP_MAX}); a longer list stops there.`,
      },
    },
  };
  properties.do = { ...ref('stepId'), description: 'foreach: the first step of the body, run for each item.' };
  properties.error = { ...ref('stepId'), description: 'foreach: where a value that is not a list goes.' };
  const actions = [
    ...COMMAND_NAMES,
    ...EFFECT_NAMES,
    'say',
    'set',
    'switch',
    'when',
    'calendar',
    'subflow',
    'return',
    'foreach',
  ];
  return {
    type: 'object',
    properties,
    additionalProperties: false,
    oneOf: actions.map((a) => ({ required: [a] })),
  };
}

function handlersSchema(): Schema {
  const on: Schema = {};
  for (const name of COMMAND_NAMES) {
    const kind = COMMANDS[name].results.kind;
    if (kind === 'enum' || kind === 'digits') on[name] = { type: 'object', additionalProperties: ref('branch') };
  }
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      hangup: { ...ref('stepId'), description: 'A logic step run when the call ends (no commands).' },
      error: { ...ref('branch'), description: 'Where a command_error goes when the step does not handle it.' },
      on: {
        type: 'object',
        properties: on,
        additionalProperties: false,
        description: 'Results handled on every step of a command, unless the step handles the key.',
      },
    },
  };
}

/** The JSON Schema of flow files. */
export function flowJsonSchema(): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://callscript.dev/schemas/flow.schema.json',
    title: 'callscript flow',
    description:
      'A call flow: steps issuing telephony commands and branching on their results. See docs/flow-language.md.',
    type: 'object',
    required: ['version', 'start', 'steps'],
    additionalProperties: false,
    properties: {
      version: {
        enum: [1, 2],
        description:
          'The language version: 1, or 2 for http, subflows, calendars, prompt tables, environments, ' +
          'sensitive values and valid: (docs/flow-language.md).',
      },
      name: { type: 'string', pattern: ID_PATTERN, description: 'The flow name (default: the file name).' },
      description: { type: 'string' },
      start: { ...ref('stepId'), description: 'The first step.' },
      voice: {
        type: 'string',
        pattern: ID_PATTERN,
        default: 'TTS_EN-GB_SERENA',
        description: 'TTS voice of say: and plain-text media.',
      },
      vars: { type: ['object', 'null'], propertyNames: { pattern: VAR_PATTERN }, description: 'Initial variables.' },
      sensitive: {
        type: ['array', 'null'],
        items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}(?:\\.[A-Za-z0-9_-]{1,64}){0,16}$' },
        uniqueItems: true,
        description:
          'Version 2: variables (or fields of them, customer.dob) masked in logs, the call summary, the admin API, ' +
          'recordings and traces.',
      },
      ...tableSchemas(ref),
      secrets: {
        type: ['array', 'null'],
        items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' },
        uniqueItems: true,
        description:
          'Version 2: environment variables the http steps may read as {{ secrets.NAME }} (url, headers, ' +
          'query, body only).',
      },
      module: {
        type: 'object',
        additionalProperties: false,
        required: ['results'],
        description:
          'Version 2: makes the file a module, entered by other flows with subflow: (never served at /rt on its own).',
        properties: {
          params: {
            type: ['object', 'null'],
            propertyNames: { pattern: VAR_PATTERN },
            description: 'Param name -> `required`, or its default value. Params are variables of the module.',
          },
          results: {
            type: 'array',
            items: { type: 'string', pattern: ID_PATTERN },
            uniqueItems: true,
            description: 'What a return may end the module with: the callers branch on them (on:).',
          },
          returns: {
            type: ['array', 'null'],
            items: { type: 'string', pattern: VAR_PATTERN },
            uniqueItems: true,
            description: 'Values a return may give back: the callers save them (save: { var: name }).',
          },
        },
      },
      handlers: ref('handlers'),
      steps: {
        type: 'object',
        propertyNames: { pattern: ID_PATTERN },
        additionalProperties: ref('step'),
        description: 'Step id -> step.',
      },
    },
    definitions: definitions(),
  };
}

/** The committed file's content. */
export function flowSchemaText(): string {
  return `${JSON.stringify(flowJsonSchema(), null, 2)}\n`;
}

export function writeFlowSchema(path: string): void {
  writeFileSync(path, flowSchemaText());
}
