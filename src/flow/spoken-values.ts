/**
 * The values the spoken formats read (spoken.ts), checked before any work: numbers (finite, at most 10^15, a
 * numeric text at most 32 characters), dates and times as written, locales and currency codes Intl knows. Each
 * check throws, or returns, a message saying what was wrong.
 */
/** The longest text say_digits reads out (phone numbers, card numbers, references). */
export const MAX_DIGITS = 64;
/** The largest magnitude of a number, an amount or an ordinal (exact in a double, far past any spoken use). */
export const MAX_NUMBER = 1e15;
/** The longest numeric text read as a number. */
export const MAX_NUMBER_TEXT = 32;
/** The longest duration, in seconds (about 31 years). */
export const MAX_DURATION_SECONDS = 1e9;
/** The longest date or time text. */
export const MAX_DATE_TEXT = 40;
/** The longest locale tag (BCP 47 tags in practice are far shorter). */
export const MAX_LOCALE = 35;
/** The ISO 4217 codes Intl knows (a well-formed code it does not know would be printed as is). */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** null when `tag` is a locale Intl knows, else why not: "is not ...", to follow the tag. */
export function localeError(tag: string): string | null {
  if (tag.length > MAX_LOCALE) return `is not a language tag (${tag.length} characters; e.g. en-GB, fr-FR, de)`;
  if (/^[A-Za-z]{2,3}_[A-Za-z]{2}$/.test(tag)) return `is not a language tag: write ${tag.replace('_', '-')}`;
  try {
    if (Intl.NumberFormat.supportedLocalesOf(tag).length > 0) return null;
  } catch {
    return 'is not a language tag (e.g. en-GB, fr-FR, de)';
  }
  return 'is not a locale this server knows';
}

/** null when `code` is an ISO 4217 currency code Intl knows, else why not. */
export function currencyError(code: string): string | null {
  if (/^[A-Za-z]{3}$/.test(code) && CURRENCIES.has(code.toUpperCase())) return null;
  return `'${code.length > 16 ? code.slice(0, 16) + '...' : code}' is not a currency code (ISO 4217: EUR, GBP, USD...)`;
}

/** A number from a value: a finite number, or a decimal number written as text; `what` names it in errors. */
export function toNumber(v: unknown, what: string): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    const s = v.trim();
    if (s.length > MAX_NUMBER_TEXT || !/^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(s))
      throw new Error(`${what} takes a number, not ${quote(v)}`);
    n = Number(s);
  } else throw new Error(`${what} takes a number, not ${describeValue(v)}`);
  if (!Number.isFinite(n) || Math.abs(n) > MAX_NUMBER)
    throw new Error(`${what}: ${quote(String(v))} is out of range (at most ${MAX_NUMBER.toExponential()} either way)`);
  return n;
}

export function quote(s: string): string {
  return JSON.stringify(s.length > 24 ? s.slice(0, 24) + '...' : s);
}

export function describeValue(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === true || v === false) return String(v);
  return typeof v === 'object' ? 'a map' : typeof v;
}

/** A date or a time of day as written (wall clock): the offset of a date-time, when it has one, is not applied. */
export interface WallClock {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  /** true when the text gave a time of day. */
  timed: boolean;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const TIME_RE = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

/**
 * A date ("2025-12-04"), a date-time ("2025-12-04T18:45:00", "2025-12-04 18:45", with or without an offset: it is
 * spoken as written, like the date filter) or, when `timeOnly`, a time of day ("18:45").
 */
export function wallClock(v: unknown, what: string, timeOnly: boolean): WallClock {
  const s = typeof v === 'string' ? v.trim() : undefined;
  const example = timeOnly ? '18:45 or 2025-12-04T18:45:00' : '2025-12-04 or 2025-12-04T18:45:00';
  if (s === undefined || s.length > MAX_DATE_TEXT)
    throw new Error(`${what} takes a date written as ${example}, not ${s === undefined ? describeValue(v) : quote(s)}`);
  const t = timeOnly ? TIME_RE.exec(s) : null;
  const m = t ? null : DATE_RE.exec(s);
  if (!t && !m) throw new Error(`${what} takes a date written as ${example}, not ${quote(s)}`);
  const w: WallClock = t
    ? { y: 2000, mo: 1, d: 1, h: Number(t[1]), mi: Number(t[2]), timed: true }
    : {
        y: Number(m![1]),
        mo: Number(m![2]),
        d: Number(m![3]),
        h: Number(m![4] ?? 0),
        mi: Number(m![5] ?? 0),
        timed: m![4] !== undefined,
      };
  const sec = Number((t ? t[3] : m![6]) ?? 0);
  const days = new Date(Date.UTC(2000, w.mo, 0)).getUTCDate() + (w.mo === 2 && !leap(w.y) ? -1 : 0);
  if (w.mo < 1 || w.mo > 12 || w.d < 1 || w.d > days || w.h > 23 || w.mi > 59 || sec > 59)
    throw new Error(`${what}: ${quote(s)} is not a date on the calendar`);
  return w;
}

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
