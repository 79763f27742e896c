/**
 * Weekday and month names for liquid's `date` filter, from cached Intl formatters.
 *
 * liquidjs prints %a %A %b %B %h through a new Intl.DateTimeFormat each time: about 180 µs
 * a render, and native memory that the garbage collector does not see. Here liquid still
 * parses the date and prints every other conversion, with each name conversion replaced
 * by a marker around the date liquid would name (its %Y, %m and %d); the markers are then
 * replaced by the names, with liquid's flags and widths, from one formatter per locale
 * and conversion, built once (`DateNames`, a bounded cache).
 *
 * A weekday or month name depends on the calendar day only, so the day is named in UTC,
 * at noon: the same name liquid gets from the shifted date it formats in the server's
 * zone, whatever that zone. test/flow/dates.test.ts compares the two on many dates,
 * formats and zones.
 */

/** What a liquid filter sees as `this` (the part used here). */
export interface DateFilterThis {
  context: { opts: { locale: string; dateFormat: string }; environments?: unknown };
}
export type DateFilter = (this: DateFilterThis, v: unknown, ...args: unknown[]) => unknown;

type NameConversion = 'a' | 'A' | 'b' | 'B' | 'h';
const OPTIONS: Record<NameConversion, Intl.DateTimeFormatOptions> = {
  a: { weekday: 'short', timeZone: 'UTC' },
  A: { weekday: 'long', timeZone: 'UTC' },
  b: { month: 'short', timeZone: 'UTC' },
  h: { month: 'short', timeZone: 'UTC' },
  B: { month: 'long', timeZone: 'UTC' },
};
const isName = (c: string): c is NameConversion => c === 'a' || c === 'A' || c === 'b' || c === 'B' || c === 'h';

/** Intl formatters for names, by locale and conversion; at most `max`, the oldest dropped first. */
export class DateNames {
  private readonly formats = new Map<string, Intl.DateTimeFormat>();
  /** A reused date (names are computed one at a time, synchronously). */
  private readonly day = new Date(0);

  // 128: a locale's five conversions for 25 languages (the call's language names them since spoken formats)
  constructor(private readonly max = 128) {}

  /** The name of conversion `c` (strftime's a, A, b, B, h) for the calendar day y-m-d (m from 1). */
  name(locale: string, c: NameConversion, y: number, m: number, d: number): string {
    const key = `${locale}\u0000${c}`;
    let f = this.formats.get(key);
    if (!f) {
      if (this.formats.size >= this.max) this.formats.delete(this.formats.keys().next().value!);
      f = new Intl.DateTimeFormat(locale, OPTIONS[c]);
      this.formats.set(key, f);
    }
    this.day.setUTCFullYear(y, m - 1, d); // unlike Date.UTC, years 0 to 99 stay as they are
    this.day.setUTCHours(12, 0, 0, 0);
    return f.format(this.day);
  }

  get size(): number {
    return this.formats.size;
  }
}

const MARK_OPEN = '\u0001';
const HAS_MARK_CHAR = /[\u0001-\u0003]/;

/**
 * liquid's `date` filter (`liquidDate`, called with liquid's own `this`) with names from
 * `names`, in the locale `localeOf` gives (the engine's by default; the call's language in
 * flows). Falls back to liquid alone for formats without names, formats that are not
 * strings, and text that holds the marker characters.
 */
export function cachedDateFilter(
  names: DateNames,
  liquidDate: DateFilter,
  localeOf: (self: DateFilterThis) => string = (self) => self.context.opts.locale,
): DateFilter {
  return function (this: DateFilterThis, v: unknown, ...args: unknown[]): unknown {
    const given = args[0];
    const format = given === undefined || given === null ? this.context.opts.dateFormat : given;
    if (
      typeof format !== 'string' ||
      !format.includes('%') ||
      HAS_MARK_CHAR.test(format) ||
      (typeof v === 'string' && HAS_MARK_CHAR.test(v))
    ) {
      return liquidDate.call(this, v, ...args);
    }
    // liquidjs's strftime conversions, matched left to right as it does.
    const CONVERSION = /%([-_0^#:]+)?(\d+)?([EO])?(.)/g;
    const wanted: { flags: string; width: string | undefined; c: NameConversion }[] = [];
    let marked = '';
    let at = 0;
    for (let m = CONVERSION.exec(format); m; m = CONVERSION.exec(format)) {
      const c = m[4]!;
      if (!isName(c)) continue;
      wanted.push({ flags: m[1] ?? '', width: m[2], c });
      marked += `${format.slice(at, m.index)}${MARK_OPEN}%Y\u0002%m\u0002%d\u0003`;
      at = m.index + m[0].length;
    }
    if (wanted.length === 0) return liquidDate.call(this, v, ...args);
    const out = liquidDate.call(this, v, marked + format.slice(at), ...args.slice(1));
    if (typeof out !== 'string' || !out.includes(MARK_OPEN)) return out === v ? out : liquidDate.call(this, v, ...args);
    const locale = localeOf(this);
    let i = 0;
    const named = out.replace(
      /\u0001(-?\d+)\u0002(\d+)\u0002(\d+)\u0003/g,
      (_all, y: string, mo: string, d: string) => {
        const w = wanted[i++];
        return w ? flagged(names.name(locale, w.c, Number(y), Number(mo), Number(d)), w.flags, w.width, w.c) : '';
      },
    );
    return i === wanted.length ? named : liquidDate.call(this, v, ...args);
  };
}

/**
 * A name with strftime's flags and width, as liquidjs applies them (^ upper, # swap case, _ 0 pad char, - no padding).
 */
function flagged(name: string, flags: string, width: string | undefined, c: NameConversion): string {
  let s = name;
  let padChar = c === 'h' ? '0' : ' '; // liquid pads a, A, b, B with spaces, h with zeros
  let padWidth = Number(width) || 0;
  if (flags.includes('^')) s = s.toUpperCase();
  else if (flags.includes('#')) s = /[a-z]/.test(s) ? s.toUpperCase() : s.toLowerCase();
  if (flags.includes('_')) padChar = ' ';
  else if (flags.includes('0')) padChar = '0';
  if (flags.includes('-')) padWidth = 0;
  if (padChar === '0' && s.startsWith('-')) return '-' + s.slice(1).padStart(padWidth - 1, padChar);
  return s.padStart(padWidth, padChar);
}
