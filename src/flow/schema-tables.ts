/**
 * The JSON Schema of the version 2 tables (calendars, languages, language, prompts,
 * environments) and of the calendar step, for src/flow/schema.ts.
 */
import { DAYS, MAX_CALENDAR_DATES, MAX_CALENDARS, MAX_INTERVALS_PER_DAY } from './calendar.js';
import { MAX_ENV_KEYS, MAX_ENV_VALUE, MAX_ENVIRONMENTS } from './check-environments.js';
import { MAX_LANGUAGES, MAX_PROMPTS } from './check-prompts.js';

type Schema = Record<string, unknown>;

const ID = '^[A-Za-z0-9_-]{1,64}$';
const VAR = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
const LANG = '^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$';
const DAY = `^(${DAYS.join('|')})(-(${DAYS.join('|')}))?$`;
const DATE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const HOURS: Schema = {
  type: 'string',
  pattern: '^[0-9]{2}:[0-9]{2}-[0-9]{2}:[0-9]{2}$',
  description: 'HH:MM-HH:MM, local time; may cross midnight ("22:00-02:00").',
};
const hoursList: Schema = {
  anyOf: [HOURS, { type: 'array', items: HOURS, minItems: 1, maxItems: MAX_INTERVALS_PER_DAY }],
};

/** `{ prompt: name }`, a media item. */
export const PROMPT_MEDIA: Schema = {
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1, description: "Version 2: a prompt of prompts:, in the call's language." },
  },
  required: ['prompt'],
  additionalProperties: false,
};

/** The `calendar:` action of a step. */
export const CALENDAR_STEP: Schema = {
  type: 'string',
  pattern: ID,
  description:
    'Version 2: a calendar of calendars:; a logic step whose results (under on:) are open, closed and ' +
    'holiday (holiday goes to closed when absent).',
};

export function tableSchemas(ref: (name: string) => Schema): Record<string, Schema> {
  return {
    calendars: {
      type: 'object',
      maxProperties: MAX_CALENDARS,
      propertyNames: { pattern: ID },
      description: 'Version 2: opening-hours calendars by name (calendar steps, open() and holiday() in conditions).',
      additionalProperties: {
        type: 'object',
        required: ['timezone', 'weekly'],
        additionalProperties: false,
        properties: {
          timezone: { type: 'string', minLength: 1, description: 'An IANA time zone, e.g. Europe/London.' },
          weekly: {
            type: 'object',
            propertyNames: { pattern: DAY },
            additionalProperties: hoursList,
            description: 'Day (mon..sun) or range (mon-fri) -> opening hours.',
          },
          holidays: {
            type: ['array', 'null'],
            maxItems: MAX_CALENDAR_DATES,
            items: { type: 'string', pattern: DATE },
            uniqueItems: true,
            description: 'Dates (YYYY-MM-DD) closed all day: the holiday result.',
          },
          exceptions: {
            type: ['object', 'null'],
            propertyNames: { pattern: DATE },
            additionalProperties: { anyOf: [hoursList, { const: 'closed' }] },
            description: 'Date -> its own hours, or closed; replaces the weekly hours and holidays of that date.',
          },
        },
      },
    },
    languages: {
      type: 'object',
      minProperties: 1,
      maxProperties: MAX_LANGUAGES,
      propertyNames: { pattern: LANG },
      description: 'Version 2: the languages of the prompts, each with its TTS voice.',
      additionalProperties: {
        type: 'object',
        required: ['voice'],
        additionalProperties: false,
        properties: {
          voice: { type: 'string', pattern: ID, description: "The TTS voice of this language's prompts." },
        },
      },
    },
    language: {
      type: 'object',
      additionalProperties: false,
      description: "Version 2: how a call's language is chosen.",
      properties: {
        default: {
          type: 'string',
          pattern: LANG,
          description: 'The language when nothing else chooses (default: the first of languages:).',
        },
        by_country: {
          type: 'object',
          propertyNames: { pattern: '^[A-Z]{2}$' },
          additionalProperties: { type: 'string', pattern: LANG },
          description: "The caller's country (from the number) -> language.",
        },
        variable: {
          type: 'string',
          pattern: VAR,
          description: 'vars.<variable>, once set to a declared language, chooses it.',
        },
      },
    },
    prompts: {
      type: 'object',
      maxProperties: MAX_PROMPTS,
      description:
        'Version 2: prompts by name, each with a media per language (every media form, escalating lists included).',
      additionalProperties: { type: 'object', propertyNames: { pattern: LANG }, additionalProperties: ref('media') },
    },
    environments: {
      type: 'object',
      maxProperties: MAX_ENVIRONMENTS,
      propertyNames: { pattern: ID },
      description:
        'Version 2: substitutions per environment ({{ env.x }}, env.x); every environment defines the same ' +
        'keys. Values are literal text, or { from_env: NAME, default } read from the server environment.',
      additionalProperties: {
        type: 'object',
        maxProperties: MAX_ENV_KEYS,
        propertyNames: { pattern: VAR },
        additionalProperties: {
          anyOf: [
            { type: 'string', maxLength: MAX_ENV_VALUE },
            { type: 'number' },
            { type: 'boolean' },
            {
              type: 'object',
              required: ['from_env'],
              additionalProperties: false,
              description:
                "A variable of the server's environment, read when the call runs (a secret when secrets: " +
                'declares it: http requests only).',
              properties: {
                from_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' },
                default: {
                  anyOf: [{ type: 'string', maxLength: MAX_ENV_VALUE }, { type: 'number' }, { type: 'boolean' }],
                  description: 'The value when the variable is not set (not for a secret).',
                },
              },
            },
          ],
        },
      },
    },
  };
}
