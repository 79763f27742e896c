/**
 * Fixtures of the codes of calendars, prompt tables and languages, and environments
 * (version 2), added to the catalogue's fixtures in codes.test.ts.
 */

import { checkFlow } from '../../src/flow/check.js';

/** The date `i` days after 2026-01-01 (YYYY-MM-DD). */
const day = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);

/** A version 2 flow: top-level lines, then steps (their first line at 4 + top.length). */
const v2 = (top: string[], ...steps: string[]) =>
  ['version: 2', ...top, 'start: a', 'steps:', ...steps].join('\n') + '\n';

const CAL = (lines: string[]) => ['calendars:', '  office:', ...lines];
const LANGS = ['languages:', '  en-GB: { voice: TTS_EN-GB_SERENA }', '  fr-FR: { voice: TTS_FR-FR_AUDREY }'];

export const TABLE_CASES = [
  {
    name: 'a time zone misspelt',
    code: 'BAD_TIMEZONE',
    text: v2(CAL(['    timezone: Europe/Londn', '    weekly: { mon: "09:00-17:00" }']), '  a: { hangup: {} }'),
    line: 4,
    column: 15,
    message: /^calendar 'office': "Europe\/Londn" is not an IANA time zone$/,
    hint: /did you mean 'Europe\/London'\?/,
  },
  {
    name: 'a day misspelt',
    code: 'BAD_DAY',
    text: v2(CAL(['    timezone: UTC', '    weekly: { mon-fir: "09:00-17:00" }']), '  a: { hangup: {} }'),
    line: 5,
    column: 15,
    message: /'mon-fir' is not a day or a range of days/,
    hint: /did you mean 'mon-fri'\?/,
  },
  {
    name: 'an hour that is not a time',
    code: 'BAD_HOURS',
    text: v2(CAL(['    timezone: UTC', '    weekly: { mon: ["09:00-12:00", "13:00-25:00"] }']), '  a: { hangup: {} }'),
    line: 5,
    column: 36,
    message: /^calendar 'office': mon: "25:00" is not a time of day \(00:00 to 24:00\)$/,
  },
  {
    name: 'an empty interval',
    code: 'BAD_HOURS',
    text: v2(CAL(['    timezone: UTC', '    weekly: { mon: "09:00-09:00" }']), '  a: { hangup: {} }'),
    line: 5,
    column: 20,
    message: /is empty: it starts and ends at the same time/,
  },
  {
    name: 'overlapping intervals',
    code: 'OVERLAPPING_HOURS',
    severity: 'warning' as const,
    text: v2(CAL(['    timezone: UTC', '    weekly: { mon: ["09:00-12:00", "11:00-13:00"] }']), '  a: { hangup: {} }'),
    line: 5,
    column: 36,
    message: /^calendar 'office': mon: 11:00-13:00 overlaps 09:00-12:00$/,
  },
  {
    name: 'a date that does not exist',
    code: 'BAD_DATE',
    text: v2(
      CAL(['    timezone: UTC', '    weekly: { mon: "09:00-17:00" }', '    holidays: ["2026-02-30"]']),
      '  a: { hangup: {} }',
    ),
    line: 6,
    column: 16,
    message: /"2026-02-30" does not exist: February 2026 has 28 days/,
  },
  {
    name: 'a calendar step naming no calendar',
    code: 'UNKNOWN_CALENDAR',
    text: v2(
      CAL(['    timezone: UTC', '    weekly: { mon: "09:00-17:00" }']),
      '  a:',
      '    calendar: ofice',
      '    on: { open: b, closed: b }',
      '  b: { hangup: {} }',
    ),
    line: 9,
    column: 15,
    message: /there is no calendar 'ofice'/,
    hint: /did you mean 'office'\?/,
  },
  {
    name: 'open() naming no calendar',
    code: 'UNKNOWN_CALENDAR',
    text: v2(
      CAL(['    timezone: UTC', '    weekly: { mon: "09:00-17:00" }']),
      '  a:',
      '    when: \'open("offce")\'',
      '    then: b',
      '    else: b',
      '  b: { hangup: {} }',
    ),
    line: 9,
    column: 11,
    hint: /did you mean 'office'\?/,
  },
  {
    name: 'a holiday list over its bound',
    code: 'TOO_MANY_ENTRIES',
    text: v2(
      CAL([
        '    timezone: UTC',
        '    weekly: { mon: "09:00-17:00" }',
        `    holidays: [${Array.from({ length: 2001 }, (_, i) => `"${day(i)}"`).join(', ')}]`,
      ]),
      '  a: { hangup: {} }',
    ),
    line: 6,
    column: 5,
    message: /2,001 holidays; a calendar may list at most 2,000 dates/,
  },
  {
    name: 'a prompt misspelt',
    code: 'UNKNOWN_PROMPT',
    text: v2(
      [...LANGS, 'prompts:', '  welcome: { en-GB: "Welcome.", fr-FR: "Bienvenue." }'],
      '  a: { say: { prompt: welcom }, next: b }',
      '  b: { hangup: {} }',
    ),
    line: 9,
    column: 23,
    message: /there is no prompt 'welcom'/,
    hint: /did you mean 'welcome'\?/,
  },
  {
    name: 'a prompt missing a language',
    code: 'MISSING_TRANSLATION',
    text: v2(
      [...LANGS, 'prompts:', '  welcome:', '    en-GB: "Welcome."'],
      '  a: { say: { prompt: welcome }, next: b }',
      '  b: { hangup: {} }',
    ),
    line: 6,
    column: 3,
    message: /^prompt 'welcome': no fr-FR text: every prompt is written in every language of languages:$/,
  },
  {
    name: 'a language not declared',
    code: 'UNKNOWN_LANGUAGE',
    text: v2(
      [...LANGS, 'prompts:', '  welcome: { en-GB: "Welcome.", fr-FR: "Bienvenue.", fr-BR: "Oi." }'],
      '  a: { say: { prompt: welcome }, next: b }',
      '  b: { hangup: {} }',
    ),
    line: 6,
    column: 54,
    message: /'fr-BR' is not a language of languages:/,
    hint: /did you mean 'fr-FR'\?/,
  },
  {
    name: 'an env key misspelt',
    code: 'UNKNOWN_ENV_KEY',
    text: v2(
      ['environments:', '  staging: { support: "+442079460000" }'],
      '  a: { say: "Call {{ env.suport }}.", next: b }',
      '  b: { hangup: {} }',
    ),
    line: 6,
    column: 22,
    message: /^env\.suport is read here but no environment defines 'suport'$/,
    hint: /did you mean 'support'\?/,
  },
  {
    name: 'an environment without a key',
    code: 'ENV_KEY_MISSING',
    text: v2(
      [
        'environments:',
        '  staging: { support: "+442079460000", bank: "https://b.example" }',
        '  production: { support: "+442079460001" }',
      ],
      '  a: { hangup: {} }',
    ),
    line: 4,
    column: 3,
    message: /^environment production has no 'bank' \(it is defined in another environment\)$/,
  },
  {
    name: 'an environment not declared',
    code: 'UNKNOWN_ENVIRONMENT',
    text: () =>
      checkFlow(
        v2(
          ['environments:', '  staging: { support: "+442079460000" }', '  production: { support: "+442079460001" }'],
          '  a: { hangup: {} }',
        ),
        'env.yaml',
        { environment: 'prodution' },
      ).diagnostics,
    line: 2,
    column: 1,
    message: /the environment 'prodution' is selected/,
    hint: /did you mean 'production'\?/,
  },
];
