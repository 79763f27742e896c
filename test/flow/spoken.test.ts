/**
 * The spoken-format filters (src/flow/spoken*.ts): what each says in en-GB, en-US, fr-FR and de-DE, the call's
 * language against an explicit locale, the date filter's names in the call's language, and hostile inputs (huge
 * numbers, long texts, bad locales and currencies, many locales): a clear error or the evaluation limit, quickly.
 */
import { describe, expect, it } from 'vitest';
import { render, type Scope } from '../../src/flow/expr.js';
import { EvalBudget, EvaluationLimit } from '../../src/flow/budget.js';
import { SpokenFormats } from '../../src/flow/spoken.js';
import { localeError, currencyError } from '../../src/flow/spoken-values.js';
import { readSpokenArgs, NOT_LITERAL } from '../../src/flow/spoken-args.js';

const scope = (language?: string, vars: Scope['vars'] = {}, budget?: EvalBudget): Scope => ({
  vars,
  call: language === undefined ? {} : { language },
  result: '',
  error: '',
  ...(budget ? { budget } : {}),
});
const say = (template: string, language?: string, vars: Scope['vars'] = {}) => render(template, scope(language, vars));
/** Expected text with Intl's no-break spaces written _ (U+202F, narrow) and ~ (U+00A0). */
const nb = (s: string) => s.replace(/_/g, '\u202f').replace(/~/g, '\u00a0');
const error = (template: string, language?: string, vars: Scope['vars'] = {}): string => {
  try {
    say(template, language, vars);
  } catch (err) {
    return (err as Error).message.replace(/, line:\d+, col:\d+$/, '');
  }
  throw new Error(`rendered: ${template}`);
};

const LANGS = ['en-GB', 'en-US', 'fr-FR', 'de-DE'] as const;
type ByLang = Record<(typeof LANGS)[number], string>;

/** Each filter's template, and what it says in each language. */
const CASES: [string, string, ByLang][] = [
  [
    'say_digits',
    '{{ "0612345678" | say_digits }}|{{ 1234 | say_digits: 2 }}|{{ "AB-12 *#" | say_digits }}',
    {
      'en-GB': '0 6 1 2 3 4 5 6 7 8|1 2, 3 4|A B 1 2 * #',
      'en-US': '0 6 1 2 3 4 5 6 7 8|1 2, 3 4|A B 1 2 * #',
      'fr-FR': '0 6 1 2 3 4 5 6 7 8|1 2, 3 4|A B 1 2 * #',
      'de-DE': '0 6 1 2 3 4 5 6 7 8|1 2, 3 4|A B 1 2 * #',
    },
  ],
  [
    'say_number',
    '{{ 1234567.891 | say_number }}|{{ 3.14159 | say_number: 2 }}|{{ -42 | say_number }}|{{ "0.5" | say_number }}',
    {
      'en-GB': '1,234,567.891|3.14|-42|0.5',
      'en-US': '1,234,567.891|3.14|-42|0.5',
      'fr-FR': nb('1_234_567,891|3,14|-42|0,5'),
      'de-DE': '1.234.567,891|3,14|-42|0,5',
    },
  ],
  [
    'say_ordinal',
    [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 1000].map((n) => `{{ ${n} | say_ordinal }}`).join(' ') +
      "|{{ 1 | say_ordinal: 'feminine' }} {{ 2 | say_ordinal: 'feminine' }}",
    {
      'en-GB': '1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 101st 1,000th|1st 2nd',
      'en-US': '1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 101st 1,000th|1st 2nd',
      'fr-FR': nb('1er 2e 3e 4e 11e 12e 13e 21e 22e 101e 1_000e|1re 2e'),
      'de-DE': '1. 2. 3. 4. 11. 12. 13. 21. 22. 101. 1.000.|1. 2.',
    },
  ],
  [
    'say_money',
    "{{ 1234.5 | say_money: 'EUR' }}|{{ 12 | say_money: 'GBP' }}|{{ 0.99 | say_money: 'USD' }}|" +
      "{{ 3 | say_money: 'EUR', 'name' }}|{{ 1234 | say_money: 'jpy' }}",
    {
      'en-GB': '€1,234.50|£12|US$0.99|3 euros|JP¥1,234',
      'en-US': '€1,234.50|£12|$0.99|3 euros|¥1,234',
      'fr-FR': nb('1_234,50~€|12~£GB|0,99~$US|3 euros|1_234~JPY'),
      'de-DE': nb('1.234,50~€|12~£|0,99~$|3 Euro|1.234~¥'),
    },
  ],
  [
    'say_duration',
    '{{ 3900 | say_duration }}|{{ 45 | say_duration }}|{{ 90061 | say_duration }}|{{ 0 | say_duration }}|' +
      "{{ 90 | say_duration: 'minutes' }}|{{ 1500 | say_duration: 'milliseconds' }}|{{ 7200 | say_duration }}",
    {
      'en-GB':
        '1 hour 5 minutes|45 seconds|1 day 1 hour 1 minute 1 second|0 seconds|1 hour 30 minutes|2 seconds|2 hours',
      'en-US':
        '1 hour 5 minutes|45 seconds|1 day 1 hour 1 minute 1 second|0 seconds|1 hour 30 minutes|2 seconds|2 hours',
      'fr-FR': nb(
        '1~heure 5 minutes|45~secondes|1~jour 1~heure 1 minute 1~seconde|0~seconde|1~heure 30 minutes|' +
          '2~secondes|2~heures',
      ),
      'de-DE':
        '1 Stunde, 5 Minuten|45 Sekunden|1 Tag, 1 Stunde, 1 Minute und 1 Sekunde|0 Sekunden|1 Stunde, 30 Minuten|' +
        '2 Sekunden|2 Stunden',
    },
  ],
  [
    'say_date',
    '{{ "2025-12-04" | say_date }}|{{ "2025-12-01T18:45:00" | say_date: \'full\' }}|' +
      '{{ "2025-12-04" | say_date: \'long\' }}|{{ "2025-12-04 10:00:00" | say_date: \'day\' }}',
    {
      'en-GB': 'Thursday 4 December|Monday, 1 December 2025|4 December 2025|4 December',
      'en-US': 'Thursday, December 4|Monday, December 1, 2025|December 4, 2025|December 4',
      'fr-FR': 'jeudi 4 décembre|lundi 1er décembre 2025|4 décembre 2025|4 décembre',
      'de-DE': 'Donnerstag, 4. Dezember|Montag, 1. Dezember 2025|4. Dezember 2025|4. Dezember',
    },
  ],
  [
    'say_time',
    '{{ "18:45" | say_time }}|{{ "2025-12-04T09:05:00+01:00" | say_time }}|{{ "2025-12-04 00:30:00" | say_time }}',
    {
      'en-GB': '18:45|9:05|0:30',
      'en-US': '6:45 PM|9:05 AM|12:30 AM',
      'fr-FR': '18:45|9:05|0:30',
      'de-DE': '18:45|9:05|0:30',
    },
  ],
  [
    'date (names in the call language)',
    '{{ "2025-12-04" | date: "%A %-d %B %Y, %a %b" }}',
    {
      'en-GB': 'Thursday 4 December 2025, Thu Dec',
      'en-US': 'Thursday 4 December 2025, Thu Dec',
      'fr-FR': 'jeudi 4 décembre 2025, jeu. déc.',
      'de-DE': 'Donnerstag 4 Dezember 2025, Do Dez',
    },
  ],
];

describe('spoken formats in the call language', () => {
  for (const [name, template, want] of CASES)
    it.each(LANGS)(`${name} in %s`, (lang) => {
      expect(say(template, lang)).toBe(want[lang]);
    });

  it('an explicit locale wins over the call language, in any order after the filter own arguments', () => {
    expect(say("{{ 1234.5 | say_number: 'de-DE' }}", 'en-GB')).toBe('1.234,5');
    expect(say("{{ 1234.5 | say_money: 'EUR', 'fr-FR' }}", 'en-GB')).toBe(nb('1_234,50~€'));
    expect(say("{{ 3 | say_money: 'EUR', 'fr-FR', 'name' }}", 'en-GB')).toBe('3 euros');
    expect(say("{{ '2025-12-04' | say_date: 'fr-FR', 'full' }}", 'en-GB')).toBe('jeudi 4 décembre 2025');
    expect(say("{{ 1 | say_ordinal: 'fr', 'feminine' }}", 'en-GB')).toBe('1re');
    expect(say('{{ 2 | say_duration: vars.unit, vars.lang }}', 'en-GB', { unit: 'hours', lang: 'de' })).toBe(
      '2 Stunden',
    );
  });

  it('ordinals in the languages with a written ordinal form; others say the number', () => {
    expect(say('{{ 3 | say_ordinal }} {{ 1 | say_ordinal: "feminine" }}', 'es-ES')).toBe('3.º 1.ª');
    expect(say('{{ 3 | say_ordinal }} {{ 1 | say_ordinal: "feminine" }}', 'pt-BR')).toBe('3.º 1.ª');
    expect(say('{{ 3 | say_ordinal }} {{ 1 | say_ordinal: "feminine" }}', 'it-IT')).toBe('3º 1ª');
    expect(say('{{ 3 | say_ordinal }}', 'nl-NL')).toBe('3e');
    expect(say('{{ 3 | say_ordinal }} {{ 1 | say_ordinal }}', 'en-IN')).toBe('3rd 1st');
    expect(say('{{ 3 | say_ordinal }}', 'ja-JP')).toBe('3');
  });

  it('a date-time with an offset is spoken as written; dates are checked against the calendar', () => {
    expect(
      say('{{ "2025-12-31T23:30:00-05:00" | say_date }} {{ "2025-12-31T23:30:00-05:00" | say_time }}', 'en-GB'),
    ).toBe('Wednesday 31 December 23:30');
    expect(say('{{ "2024-02-29" | say_date: "long" }}', 'en-GB')).toBe('29 February 2024');
    expect(error('{{ "2025-02-29" | say_date }}', 'en-GB')).toBe(
      'say_date: "2025-02-29" is not a date on the calendar',
    );
    expect(error('{{ "2025-12-04T24:00:00" | say_time }}', 'en-GB')).toBe(
      'say_time: "2025-12-04T24:00:00" is not a date on the calendar',
    );
    // a time of day with a one-digit hour, as people write it
    expect(say('{{ "9:05" | say_time }} {{ "9:05" | say_time: "en-US" }}', 'en-GB')).toBe('9:05 9:05 AM');
    expect(error('{{ "25:00" | say_time }}', 'en-GB')).toBe('say_time: "25:00" is not a date on the calendar');
    expect(error('{{ "2025-12-04" | say_time }}', 'en-GB')).toBe(
      'say_time: "2025-12-04" has no time of day (e.g. 2025-12-04T18:45:00)',
    );
    expect(error('{{ "next Tuesday" | say_date }}', 'en-GB')).toBe(
      'say_date takes a date written as 2025-12-04 or 2025-12-04T18:45:00, not "next Tuesday"',
    );
  });

  it('an unset value says nothing, like {{ vars.x }}; a value of the wrong kind is an error', () => {
    expect(
      say('[{{ vars.none | say_money: "EUR" }}][{{ vars.none | say_date }}][{{ "" | say_number }}]', 'en-GB'),
    ).toBe('[][][]');
    expect(error('{{ vars.l | say_number }}', 'en-GB', { l: [1, 2] })).toBe('say_number takes a number, not a list');
    expect(error('{{ vars.m | say_duration }}', 'en-GB', { m: { a: 1 } })).toBe(
      'say_duration takes a number, not a map',
    );
    expect(error('{{ "12 euros" | say_money: "EUR" }}', 'en-GB')).toBe('say_money takes a number, not "12 euros"');
    expect(error('{{ 2.5 | say_ordinal }}', 'en-GB')).toBe('say_ordinal takes a whole number from 0, not 2.5');
    expect(error('{{ -1 | say_duration }}', 'en-GB')).toBe(
      'say_duration: -1 seconds is out of range (0 to 1e+9 seconds)',
    );
  });

  it('the engine default locale when the flow has no languages (the date filter keeps its names)', () => {
    const engine = new Intl.NumberFormat().resolvedOptions().locale;
    expect(say('{{ 1234.5 | say_number }}')).toBe(new Intl.NumberFormat(engine).format(1234.5));
    expect(say('{{ "2025-12-04" | date: "%A %B" }}')).toBe(
      new Intl.DateTimeFormat(engine, { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2025, 11, 4, 12)) +
        ' ' +
        new Intl.DateTimeFormat(engine, { month: 'long', timeZone: 'UTC' }).format(Date.UTC(2025, 11, 4, 12)),
    );
  });
});

describe('hostile inputs', () => {
  it('huge numbers and long numeric texts are refused before any formatting', () => {
    expect(error('{{ vars.n | say_number }}', 'en-GB', { n: 1e300 })).toBe(
      'say_number: "1e+300" is out of range (at most 1e+15 either way)',
    );
    expect(error('{{ vars.n | say_money: "EUR" }}', 'en-GB', { n: '9'.repeat(1_000_000) })).toBe(
      'say_money takes a number, not "999999999999999999999999..."',
    );
    expect(error('{{ vars.n | say_ordinal }}', 'en-GB', { n: 2 ** 60 })).toMatch(/^say_ordinal: .* is out of range/);
    expect(error('{{ vars.n | say_duration: "days" }}', 'en-GB', { n: 1e9 })).toBe(
      'say_duration: 1000000000 days is out of range (0 to 1e+9 seconds)',
    );
  });

  it('a long digit string is refused, not read out for minutes', () => {
    const d = '1'.repeat(10_000_000);
    const started = performance.now();
    expect(error('{{ vars.d | say_digits }}', 'en-GB', { d })).toBe(
      'say_digits reads at most 64 characters, got 10,000,000',
    );
    expect(performance.now() - started).toBeLessThan(200); // well under a millisecond alone
    expect(say('{{ vars.d | say_digits }}', 'en-GB', { d: '7'.repeat(64) })).toBe(Array(64).fill('7').join(' '));
  });

  it('bad locales and currencies from variables are clear errors', () => {
    expect(error('{{ 1 | say_number: vars.l }}', 'en-GB', { l: 'xx-XX' })).toBe(
      "say_number: 'xx-XX' is not a locale this server knows",
    );
    expect(error('{{ 1 | say_number: vars.l }}', 'en-GB', { l: 'not a locale' })).toBe(
      "say_number: 'not a locale' is not a language tag (e.g. en-GB, fr-FR, de)",
    );
    expect(error('{{ 1 | say_date: vars.l }}', 'en-GB', { l: 'fr_FR' })).toBe(
      "say_date: 'fr_FR' is not a style (weekday, full, long, day), and is not a language tag: write fr-FR",
    );
    expect(error('{{ 1 | say_time: vars.l }}', 'en-GB', { l: 'x'.repeat(100_000) })).toBe(
      "say_time: 'xxxxxxxxxxxxxxxxxxxxxxxx...' is not a language tag (100000 characters; e.g. en-GB, fr-FR, de)",
    );
    expect(error('{{ 1 | say_money: vars.c }}', 'en-GB', { c: 'XYZ' })).toBe(
      "say_money: 'XYZ' is not a currency code (ISO 4217: EUR, GBP, USD...)",
    );
    expect(error('{{ 1 | say_money: vars.c }}', 'en-GB', { c: 12 })).toBe(
      "say_money: the currency is a code such as 'EUR', not number",
    );
    expect(error('{{ 1 | say_money: vars.c }}', 'en-GB')).toMatch(/^say_money: the currency is missing/);
    expect(error('{{ 1 | say_number: locale: "fr-FR" }}', 'en-GB')).toMatch(/^say_number: takes no named arguments/);
    expect(error('{{ 1 | say_number: 1, 2, 3 }}', 'en-GB')).toMatch(/^say_number: takes at most 2 arguments, got 3/);
  });

  it('a template naming thousands of locales stops at the evaluation limit, quickly', () => {
    const budget = new EvalBudget();
    const locales = Array.from({ length: 5000 }, (_, i) => `en-x-${i.toString(36)}`);
    const started = performance.now();
    expect(() =>
      render('{% for l in vars.l %}{{ 1 | say_number: l }}{% endfor %}', scope('en-GB', { l: locales }, budget)),
    ).toThrow(EvaluationLimit);
    expect(performance.now() - started).toBeLessThan(1000); // about 20 ms alone; a loaded machine is slower
  });

  it('a loop speaking dates thousands of times is bounded by the memory budget', () => {
    const budget = new EvalBudget();
    const started = performance.now();
    expect(() =>
      render('{% for i in (1..100000) %}{{ "2025-12-04" | say_date: "full" }}{% endfor %}', scope('fr-FR', {}, budget)),
    ).toThrow(EvaluationLimit);
    expect(performance.now() - started).toBeLessThan(1000); // about 20 ms alone; a loaded machine is slower
  });

  it('the formatter cache is bounded by its keys', () => {
    const f = new SpokenFormats(2000);
    const charge = () => {};
    for (let i = 0; i < 500; i++)
      f.number(1, `en-${String.fromCharCode(65 + (i % 26), 65 + ((i / 26) | 0))}`, 2, charge);
    expect(f.size).toBeLessThanOrEqual(2000 / 9); // keys of 9 characters: n, the locale, the decimals
    expect(f.size).toBeGreaterThan(10);
  });

  it('each formatter made is charged to the render budget before it is made', () => {
    const f = new SpokenFormats();
    const charged: number[] = [];
    f.date('2025-12-04', 'full', 'it-IT', (n) => charged.push(n));
    f.date('2025-12-05', 'full', 'it-IT', (n) => charged.push(n));
    f.money(1, 'EUR', 'it-IT', undefined, (n) => charged.push(n));
    expect(charged).toEqual([800, 200]);
  });
});

describe('arguments', () => {
  it('are told apart by what they are; literals only are read when checking', () => {
    expect(readSpokenArgs('say_money', ['EUR', 'name', 'fr-FR'])).toEqual({
      ok: { currency: 'EUR', word: 'name', locale: 'fr-FR' },
    });
    expect(readSpokenArgs('say_money', [NOT_LITERAL, 'fr-FR'])).toEqual({ ok: { locale: 'fr-FR' } });
    expect(readSpokenArgs('say_date', ['full', 'long'])).toEqual({
      error: "say_date: takes one of weekday, full, long, day, got 'full' and 'long'",
      index: 1,
    });
    expect(readSpokenArgs('say_digits', ['fr-FR'])).toEqual({
      error: "say_digits: does not take 'fr-FR' (say_digits or say_digits: 2)",
      index: 0,
    });
    expect(readSpokenArgs('say_digits', [0])).toEqual({
      error: 'say_digits: the group size is a whole number from 1 to 16, not 0',
      index: 0,
    });
    expect(localeError('de')).toBeNull();
    expect(currencyError('chf')).toBeNull();
  });
});
