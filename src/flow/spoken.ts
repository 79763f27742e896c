/**
 * Spoken formats: digits, numbers, ordinals, amounts, durations, dates and times written the way a TTS voice
 * reads them in a language ("€12.50", "12,50 €", "1 hour 5 minutes", "jeudi 4 décembre", "3rd", "3e"). The
 * liquid filters of spoken-filters.ts call these; they check their input (size, range, shape) before any work
 * and throw an Error saying what was wrong, never a crash.
 *
 * Intl formatters are made once per kind, locale and options, and kept in a bounded cache (bounded-cache.ts):
 * making one costs 30 to 150 µs, formatting with it about 1 µs. Each formatter made is charged to the render's
 * memory budget (`Charge`) first, so that a template naming many locales pays for each one.
 */
import { BoundedCache } from './bounded-cache.js';
import {
  MAX_DIGITS,
  MAX_DURATION_SECONDS,
  describeValue,
  quote,
  toNumber,
  wallClock,
  type WallClock,
} from './spoken-values.js';

/** Charges `units` to the render's memory budget (liquid's memoryLimit.use); throws when it is spent. */
export type Charge = (units: number) => void;

/** What making an Intl.DateTimeFormat costs in memory units (about 150 µs); other formatters cost less. */
export const DATE_FORMATTER_COST = 800;
export const FORMATTER_COST = 200;

type Formatter = Intl.NumberFormat | Intl.DateTimeFormat | Intl.PluralRules | Intl.ListFormat;

const EN_SUFFIX: Record<string, string> = { one: 'st', two: 'nd', few: 'rd', other: 'th' };

/** say_date's styles: which parts of the date are spoken. */
export const DATE_STYLES = {
  weekday: { weekday: 'long', day: 'numeric', month: 'long' },
  full: { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' },
  long: { day: 'numeric', month: 'long', year: 'numeric' },
  day: { day: 'numeric', month: 'long' },
} as const satisfies Record<string, Intl.DateTimeFormatOptions>;
export type DateStyle = keyof typeof DATE_STYLES;

/** say_duration's input units, in seconds. */
export const DURATION_UNITS = { milliseconds: 0.001, seconds: 1, minutes: 60, hours: 3600, days: 86400 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;
const PARTS = [
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
] as const;
const SINGULAR: Record<DurationUnit, 'second' | 'minute' | 'hour' | 'day'> = {
  milliseconds: 'second',
  seconds: 'second',
  minutes: 'minute',
  hours: 'hour',
  days: 'day',
};

/** say_money's ways of naming the currency (Intl's currencyDisplay). */
export const MONEY_DISPLAYS = ['symbol', 'name', 'code'] as const;
export type MoneyDisplay = (typeof MONEY_DISPLAYS)[number];

export const GENDERS = ['masculine', 'feminine'] as const;
export type Gender = (typeof GENDERS)[number];

/** The formatters of spoken formats, made once per kind, locale and options; one per liquid engine. */
export class SpokenFormats {
  private readonly cache: BoundedCache<Formatter>;
  /** A reused date (formatting is synchronous). */
  private readonly day = new Date(0);

  /** `maxChars`: the total length of the cache's keys (about 30 characters each). */
  constructor(maxChars = 16 * 1024) {
    this.cache = new BoundedCache<Formatter>(maxChars);
  }

  get size(): number {
    return this.cache.size;
  }

  private formatter<F extends Formatter>(key: string, locale: string, charge: Charge, make: () => F): F {
    let f = this.cache.get(key) as F | undefined;
    if (!f) {
      const date = key.startsWith('d');
      charge(date ? DATE_FORMATTER_COST : FORMATTER_COST);
      // an explicit locale was checked by the filter; the call's language is a declared tag: Intl falls back
      // to its default locale for one it does not know
      try {
        f = make();
      } catch (err) {
        throw new Error(`cannot format in '${locale}': ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      this.cache.set(key, f);
    }
    return f;
  }

  private numberFormat(locale: string, charge: Charge, decimals: number | undefined): Intl.NumberFormat {
    return this.formatter(`n\u0000${locale}\u0000${decimals ?? ''}`, locale, charge, () =>
      decimals === undefined
        ? new Intl.NumberFormat(locale)
        : new Intl.NumberFormat(locale, { maximumFractionDigits: decimals }),
    );
  }

  /** "1234" -> "1 2 3 4"; with `group`, a pause (", ") every `group` characters: "12, 34". */
  digits(v: unknown, group: number | undefined, charge: Charge): string {
    let s: string;
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || v < 0)
        throw new Error(`say_digits reads whole numbers from 0 to 2^53 and text, not ${v}`);
      s = String(v);
    } else if (typeof v === 'string') s = v;
    else throw new Error(`say_digits reads digits written as text or a number, not ${describeValue(v)}`);
    if (s.length > MAX_DIGITS)
      throw new Error(`say_digits reads at most ${MAX_DIGITS} characters, got ${s.length.toLocaleString('en-US')}`);
    charge(s.length * 2);
    const chars = [...s].filter((c) => /[0-9A-Za-z*#+]/.test(c));
    if (!group) return chars.join(' ');
    const groups: string[] = [];
    for (let i = 0; i < chars.length; i += group) groups.push(chars.slice(i, i + group).join(' '));
    return groups.join(', ');
  }

  /** A number in the locale's way: "1,234.5", "1 234,5", "1.234,5"; `decimals`: the most fraction digits. */
  number(v: unknown, locale: string, decimals: number | undefined, charge: Charge): string {
    const n = toNumber(v, 'say_number');
    return this.numberFormat(locale, charge, decimals).format(n);
  }

  /**
   * An ordinal as a TTS voice reads it: en 1st 2nd 3rd 4th 11th 21st; fr 1er (1re) 2e; de 3.; es and pt 3.º (3.ª);
   * it 3º (3ª); nl 3e. Other languages: the number alone.
   */
  ordinal(v: unknown, locale: string, gender: Gender | undefined, charge: Charge): string {
    const n = toNumber(v, 'say_ordinal');
    if (!Number.isInteger(n) || n < 0) throw new Error(`say_ordinal takes a whole number from 0, not ${String(v)}`);
    const written = this.numberFormat(locale, charge, 0).format(n);
    const fem = gender === 'feminine';
    switch (locale.split('-')[0]!.toLowerCase()) {
      case 'en': {
        const rules = this.formatter(`p\u0000${locale}`, locale, charge, () => {
          return new Intl.PluralRules(locale, { type: 'ordinal' });
        });
        return written + (EN_SUFFIX[rules.select(n)] ?? 'th');
      }
      case 'fr':
        return written + (n === 1 ? (fem ? 're' : 'er') : 'e');
      case 'nl':
        return written + 'e';
      case 'de':
        return written + '.';
      case 'es':
      case 'pt':
        return written + (fem ? '.ª' : '.º');
      case 'it':
        return written + (fem ? 'ª' : 'º');
      default:
        return written;
    }
  }

  /** An amount with its currency: en-GB "€12.50", fr-FR "12,50 €"; whole amounts without decimals ("€12"). */
  money(v: unknown, currency: string, locale: string, display: MoneyDisplay | undefined, charge: Charge): string {
    const n = toNumber(v, 'say_money');
    const code = currency.toUpperCase();
    const shown = display ?? 'symbol';
    const f = this.formatter(`m\u0000${locale}\u0000${code}\u0000${shown}`, locale, charge, () => {
      return new Intl.NumberFormat(locale, {
        style: 'currency',
        currency: code,
        currencyDisplay: shown,
        trailingZeroDisplay: 'stripIfInteger',
      } as Intl.NumberFormatOptions);
    });
    return f.format(n);
  }

  /**
   * A duration in days, hours, minutes and seconds, each part that is not zero, in long units joined as the
   * language does: "1 hour 5 minutes", "1 heure 5 minutes", "1 Stunde und 5 Minuten". `v` is in `unit`
   * (seconds by default), rounded to the second; zero is "0 <unit>".
   */
  duration(v: unknown, unit: DurationUnit | undefined, locale: string, charge: Charge): string {
    const given = toNumber(v, 'say_duration');
    const u = unit ?? 'seconds';
    const total = Math.round(given * DURATION_UNITS[u]);
    if (given < 0 || total > MAX_DURATION_SECONDS)
      throw new Error(
        `say_duration: ${String(v)} ${u} is out of range (0 to ${MAX_DURATION_SECONDS.toExponential()} seconds)`,
      );
    const part = (name: string, count: number): string =>
      this.formatter(`u\u0000${locale}\u0000${name}`, locale, charge, () => {
        return new Intl.NumberFormat(locale, { style: 'unit', unit: name, unitDisplay: 'long' });
      }).format(count);
    if (total === 0) return part(SINGULAR[u], 0);
    const parts: string[] = [];
    let left = total;
    for (const [name, size] of PARTS) {
      const count = Math.floor(left / size);
      left -= count * size;
      if (count > 0) parts.push(part(name, count));
    }
    if (parts.length === 1) return parts[0]!;
    const list = this.formatter(`l\u0000${locale}`, locale, charge, () => {
      return new Intl.ListFormat(locale, { type: 'unit', style: 'narrow' });
    });
    return list.format(parts);
  }

  /** A calendar date, in `style` (default weekday: "Thursday 4 December", "jeudi 4 décembre"). French: "1er". */
  date(v: unknown, style: DateStyle | undefined, locale: string, charge: Charge): string {
    const w = wallClock(v, 'say_date', false);
    const s = style ?? 'weekday';
    const f = this.formatter(`d\u0000${locale}\u0000${s}`, locale, charge, () => {
      return new Intl.DateTimeFormat(locale, { ...DATE_STYLES[s], timeZone: 'UTC' });
    });
    this.setDay(w);
    if (w.d !== 1 || locale.split('-')[0]!.toLowerCase() !== 'fr') return f.format(this.day);
    // French says the first of the month as an ordinal: "1er décembre" (premier), not "1 décembre" (un)
    return f
      .formatToParts(this.day)
      .map((p) => (p.type === 'day' ? `${p.value}er` : p.value))
      .join('');
  }

  /** A time of day: en-GB "18:45", en-US "6:45 PM", fr-FR "18:45"; seconds are not spoken. */
  time(v: unknown, locale: string, charge: Charge): string {
    const w = wallClock(v, 'say_time', true);
    if (!w.timed) throw new Error(`say_time: ${quote(String(v))} has no time of day (e.g. 2025-12-04T18:45:00)`);
    const f = this.formatter(`dt\u0000${locale}`, locale, charge, () => {
      return new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' });
    });
    this.setDay(w);
    return f.format(this.day);
  }

  private setDay(w: WallClock): void {
    this.day.setUTCFullYear(w.y, w.mo - 1, w.d); // unlike Date.UTC, years 0 to 99 stay as they are
    this.day.setUTCHours(w.h, w.mi, 0, 0);
  }
}
