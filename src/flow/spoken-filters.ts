/**
 * The spoken-format filters of templates (docs/flow-language.md, "Spoken formats"): say_digits, say_number,
 * say_ordinal, say_money, say_duration, say_date and say_time. They speak in the call's language (`call.language`,
 * the language the call's prompts are taken in), or in the locale given as an argument; in a flow without
 * languages, in the engine's default locale (the one the date filter uses).
 *
 * Bounded like every filter: inputs are checked for size and range before any work (spoken.ts), each call is
 * charged to the render's memory budget (its input, and each formatter or locale it makes the first time), and
 * what it writes is charged by the renderer (liquid-charge.ts).
 */
import type { FilterImplOptions, Liquid } from 'liquidjs';
import { BoundedCache } from './bounded-cache.js';
import { readSpokenArgs, SPOKEN_FILTER_NAMES, type SpokenArgs, type SpokenFilter } from './spoken-args.js';
import {
  FORMATTER_COST,
  SpokenFormats,
  type Charge,
  type DateStyle,
  type DurationUnit,
  type Gender,
  type MoneyDisplay,
} from './spoken.js';
import { localeError } from './spoken-values.js';

/** What a filter sees as `this` (the part used here). */
export interface SpokenFilterThis {
  context: {
    opts: { locale: string };
    environments: unknown;
    memoryLimit: { use(count: number): void };
  };
}

/** What one filter call costs before its formatter: about a microsecond, like a few nodes rendered. */
const CALL_COST = 16;

/** The language a template speaks: the call's (`call.language`), else the engine's default locale. */
export function spokenLocale(self: { context: { opts: { locale: string }; environments?: unknown } }): string {
  const env = self.context.environments as { call?: { language?: unknown } } | null | undefined;
  const lang = env && typeof env === 'object' ? env.call?.language : undefined;
  return typeof lang === 'string' && lang !== '' ? lang : self.context.opts.locale;
}

type Speak = (f: SpokenFormats, v: unknown, a: SpokenArgs, locale: string, charge: Charge) => string;

const SPEAK: Record<SpokenFilter, Speak> = {
  say_digits: (f, v, a, _l, c) => f.digits(v, a.number, c),
  say_number: (f, v, a, l, c) => f.number(v, l, a.number, c),
  say_ordinal: (f, v, a, l, c) => f.ordinal(v, l, a.word as Gender | undefined, c),
  say_money: (f, v, a, l, c) => f.money(v, a.currency!, l, a.word as MoneyDisplay | undefined, c),
  say_duration: (f, v, a, l, c) => f.duration(v, a.word as DurationUnit | undefined, l, c),
  say_date: (f, v, a, l, c) => f.date(v, a.word as DateStyle | undefined, l, c),
  say_time: (f, v, _a, l, c) => f.time(v, l, c),
};

/** Registers the filters on `engine`, with their formatters and the locales they checked (both bounded). */
export function registerSpokenFilters(engine: Liquid, formats = new SpokenFormats()): SpokenFormats {
  const locales = new BoundedCache<string>(4 * 1024);
  for (const name of SPOKEN_FILTER_NAMES) {
    const speak = SPEAK[name];
    engine.registerFilter(name, function (this: SpokenFilterThis, v: unknown, ...args: unknown[]) {
      const meter = this.context.memoryLimit;
      const charge: Charge = (n) => meter.use(n);
      charge(CALL_COST);
      // an unset value says nothing, like {{ vars.x }} (use | default: to say something else)
      if (v === undefined || v === null || v === '') return '';
      const read = readSpokenArgs(name, args, (tag) => {
        let known = locales.get(tag);
        if (known === undefined) {
          charge(FORMATTER_COST);
          known = localeError(tag) ?? '';
          locales.set(tag, known);
        }
        return known === '' ? null : known;
      });
      if ('error' in read) throw new Error(read.error);
      return speak(formats, v, read.ok, read.ok.locale ?? spokenLocale(this), charge);
    } as FilterImplOptions);
  }
  return formats;
}
