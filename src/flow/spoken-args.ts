/**
 * The arguments of the spoken-format filters, read the same way when a call runs (spoken-filters.ts, every value
 * known) and when a flow is checked (check-spoken.ts, literal arguments only). Arguments are told apart by what
 * they are, in any order after say_money's currency: a number (say_digits' group, say_number's decimals), a word
 * of the filter's list (a date style, a duration unit...), else a locale (a language tag: 'fr-FR').
 */
import { DATE_STYLES, DURATION_UNITS, GENDERS, MONEY_DISPLAYS } from './spoken.js';
import { currencyError, localeError } from './spoken-values.js';

interface Signature {
  /** say_money: a currency code first, required. */
  currency?: true;
  /** An integer argument, its bounds and what it means. */
  number?: { min: number; max: number; what: string };
  /** Words the filter takes (one of them at most), and what they name. */
  words?: readonly string[];
  wordsAre?: string;
  /** An explicit locale, instead of the call's language. */
  locale?: true;
  /** How it is written, for messages. */
  usage: string;
}

export const SPOKEN_FILTERS = {
  say_digits: { number: { min: 1, max: 16, what: 'the group size' }, usage: 'say_digits or say_digits: 2' },
  say_number: {
    number: { min: 0, max: 10, what: 'the most decimals' },
    locale: true,
    usage: "say_number, say_number: 2 or say_number: 'fr-FR'",
  },
  say_ordinal: {
    words: GENDERS,
    wordsAre: 'a gender',
    locale: true,
    usage: "say_ordinal, say_ordinal: 'feminine' or say_ordinal: 'fr-FR'",
  },
  say_money: {
    currency: true,
    words: MONEY_DISPLAYS,
    wordsAre: 'a way to name the currency',
    locale: true,
    usage: "say_money: 'EUR', say_money: 'EUR', 'name' or say_money: 'EUR', 'fr-FR'",
  },
  say_duration: {
    words: Object.keys(DURATION_UNITS),
    wordsAre: 'the unit of the value',
    locale: true,
    usage: "say_duration (seconds), say_duration: 'minutes' or say_duration: 'fr-FR'",
  },
  say_date: {
    words: Object.keys(DATE_STYLES),
    wordsAre: 'a style',
    locale: true,
    usage: "say_date, say_date: 'full' or say_date: 'full', 'fr-FR'",
  },
  say_time: { locale: true, usage: "say_time or say_time: 'fr-FR'" },
} as const satisfies Record<string, Signature>;

export type SpokenFilter = keyof typeof SPOKEN_FILTERS;
export const SPOKEN_FILTER_NAMES = Object.keys(SPOKEN_FILTERS) as SpokenFilter[];

/** What the arguments say. */
export interface SpokenArgs {
  currency?: string;
  number?: number;
  word?: string;
  locale?: string;
}

/** An argument not known when checking (a variable): not classified. */
export const NOT_LITERAL: unique symbol = Symbol('not literal');

/** The arguments read, or the first wrong one (its index) and why. */
export type ArgsResult = { ok: SpokenArgs } | { error: string; index: number };

/** Whether a locale is known; localeError by default (the filters keep the answers). */
export type LocaleCheck = (tag: string) => string | null;

/**
 * Reads a filter's arguments. Unset values (null, undefined, '': a variable not set) are left out, except the
 * currency, which is required.
 */
export function readSpokenArgs(
  filter: SpokenFilter,
  args: readonly unknown[],
  checkLocale: LocaleCheck = localeError,
): ArgsResult {
  const sig: Signature = SPOKEN_FILTERS[filter];
  const max = maxArgs(filter);
  const wrong = (index: number, why: string): ArgsResult => ({ error: `${filter}: ${why}`, index });
  if (args.length > max) return wrong(max, tooMany(filter, String(args.length)));
  const out: SpokenArgs = {};
  let i = 0;
  if (sig.currency) {
    const c = args[0];
    i = 1;
    if (args.length === 0 || c === undefined || c === null || c === '')
      return wrong(0, `the currency is missing (${sig.usage})`);
    if (c !== NOT_LITERAL) {
      if (typeof c !== 'string') return wrong(0, `the currency is a code such as 'EUR', not ${kind(c)}`);
      const err = currencyError(c);
      if (err) return wrong(0, err);
      out.currency = c.toUpperCase();
    }
  }
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === NOT_LITERAL || a === undefined || a === null || a === '') continue;
    if (Array.isArray(a))
      return wrong(i, `takes no named arguments nor lists: write its arguments as values (${sig.usage})`);
    if (typeof a === 'number') {
      const n = sig.number;
      if (!n || out.number !== undefined) return wrong(i, `does not take a number here (${sig.usage})`);
      if (!Number.isInteger(a) || a < n.min || a > n.max)
        return wrong(i, `${n.what} is a whole number from ${n.min} to ${n.max}, not ${a}`);
      out.number = a;
      continue;
    }
    if (typeof a !== 'string') return wrong(i, `does not take ${kind(a)} (${sig.usage})`);
    if (sig.words?.includes(a)) {
      if (out.word !== undefined) return wrong(i, `takes one of ${sig.words.join(', ')}, got '${out.word}' and '${a}'`);
      out.word = a;
      continue;
    }
    if (!sig.locale) return wrong(i, `does not take '${clip(a)}' (${sig.usage})`);
    const err = checkLocale(a);
    if (err)
      return wrong(
        i,
        sig.words ? `'${clip(a)}' is not ${sig.wordsAre} (${sig.words.join(', ')}), and ${err}` : `'${clip(a)}' ${err}`,
      );
    if (out.locale !== undefined) return wrong(i, `takes one locale, got '${out.locale}' and '${clip(a)}'`);
    out.locale = a;
  }
  return { ok: out };
}

/** The most arguments `filter` takes. */
export function maxArgs(filter: SpokenFilter): number {
  const sig: Signature = SPOKEN_FILTERS[filter];
  return (sig.currency ? 1 : 0) + (sig.number ? 1 : 0) + (sig.words ? 1 : 0) + (sig.locale ? 1 : 0);
}

/** "takes at most 2 arguments, got 3 (usage)". */
export function tooMany(filter: SpokenFilter, got: string): string {
  const max = maxArgs(filter);
  return `takes at most ${max} argument${max === 1 ? '' : 's'}, got ${got} (${SPOKEN_FILTERS[filter].usage})`;
}

function clip(s: string): string {
  return s.length > 24 ? s.slice(0, 24) + '...' : s;
}

function kind(v: unknown): string {
  if (v === true || v === false) return String(v);
  if (typeof v === 'string') return `'${clip(v)}'`;
  return typeof v === 'object' ? 'a map' : typeof v;
}
