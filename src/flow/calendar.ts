/**
 * Opening-hours calendars (language version 2): the model of a calendar and its
 * evaluation at an instant. Wall-clock semantics: an interval "08:30-12:30" is open while
 * the calendar's local clock (its IANA zone, through Intl) reads 08:30 to 12:29. On a
 * day when the clocks go forward, local times that do not exist are never read; when
 * they go back, the repeated hour is read twice (an interval covering it is open both
 * times). An interval may cross midnight ("22:00-02:00": from 22:00 that day to 02:00
 * the next); its part after midnight belongs to the day it starts (a holiday or an
 * exception of that day replaces it).
 *
 * Evaluation is bounded: one formatter call (cached per zone), one Set lookup for the
 * date and at most MAX_INTERVALS_PER_DAY intervals of two days compared.
 */

/** Minutes since local midnight: [start, end); end > start, or end < start when crossing midnight. */
export type Interval = [number, number];

export interface Calendar {
  name: string;
  timezone: string;
  /** Intervals per weekday, 0 = Monday ... 6 = Sunday. */
  weekly: Interval[][];
  /** Dates YYYY-MM-DD. */
  holidays: string[];
  /** Dates YYYY-MM-DD with their own hours ([] = closed all day). */
  exceptions: Record<string, Interval[]>;
}

export type CalendarState = 'open' | 'closed' | 'holiday';

export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

/** Bounds, checked at load (TOO_MANY_ENTRIES). */
export const MAX_CALENDARS = 100;
export const MAX_CALENDAR_DATES = 2000;
export const MAX_INTERVALS_PER_DAY = 16;

const HOURS_RE = /^([0-9]{2}):([0-9]{2})-([0-9]{2}):([0-9]{2})$/;

/** "08:30-12:30" as minutes, or why not. */
export function parseInterval(s: string): Interval | string {
  const m = HOURS_RE.exec(s.trim());
  if (!m) return `"${s}" is not an interval HH:MM-HH:MM (e.g. "08:30-12:30")`;
  const [h1, m1, h2, m2] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  const bad = (h: number, mm: number, end: boolean) => mm > 59 || h > 24 || (h === 24 && (mm !== 0 || !end));
  if (bad(h1, m1, false)) return `"${m[1]}:${m[2]}" is not a time of day (00:00 to 23:59)`;
  if (bad(h2, m2, true)) return `"${m[3]}:${m[4]}" is not a time of day (00:00 to 24:00)`;
  const a = h1 * 60 + m1;
  const b = h2 * 60 + m2;
  if (a === b) return `"${s}" is empty: it starts and ends at the same time`;
  if (b === 0) return [a, 1440];
  return [a, b];
}

/** A real calendar date YYYY-MM-DD (2026-02-30 is not one), or why not. */
export function checkDate(s: string): string | null {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return `"${s}" is not a date YYYY-MM-DD`;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) return `"${s}" has no month ${m[2]}`;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d < 1 || d > days) return `"${s}" does not exist: ${MONTHS[mo - 1]} ${y} has ${days} days`;
  return null;
}
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Whether Intl knows the zone (Node has full ICU). */
export function isTimeZone(tz: string): boolean {
  if (tz.trim() === '' || tz !== tz.trim()) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** IANA zone names, for did-you-mean hints. */
export function timeZoneNames(): string[] {
  return [...Intl.supportedValuesOf('timeZone'), 'UTC'];
}

/** Whether two intervals (of one day; crossing ones cover to midnight) overlap. */
export function overlaps(a: Interval, b: Interval): boolean {
  const ea = a[1] < a[0] ? 1440 : a[1];
  const eb = b[1] < b[0] ? 1440 : b[1];
  return a[0] < eb && b[0] < ea;
}

/** A calendar made ready to evaluate: the date lookups as Sets and Maps. */
export interface CompiledCalendar {
  zone: Intl.DateTimeFormat;
  weekly: Interval[][];
  holidays: Set<string>;
  exceptions: Map<string, Interval[]>;
}

/** Formatters per zone: building one costs about 50 µs, formatting a few µs. */
export class CalendarClock {
  private readonly zones = new Map<string, Intl.DateTimeFormat>();

  compile(c: Calendar): CompiledCalendar {
    let zone = this.zones.get(c.timezone);
    if (!zone) {
      zone = new Intl.DateTimeFormat('en-US', {
        timeZone: c.timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        weekday: 'short',
      });
      this.zones.set(c.timezone, zone);
    }
    return { zone, weekly: c.weekly, holidays: new Set(c.holidays), exceptions: new Map(Object.entries(c.exceptions)) };
  }
}

const WEEKDAY: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

/** The local date, weekday and minute of the day of an instant in the calendar's zone. */
export function localTime(c: CompiledCalendar, at: number): { date: string; weekday: number; minute: number } {
  let y = '',
    mo = '',
    d = '',
    h = 0,
    mi = 0,
    wd = 0;
  for (const p of c.zone.formatToParts(at)) {
    switch (p.type) {
      case 'year':
        y = p.value;
        break;
      case 'month':
        mo = p.value;
        break;
      case 'day':
        d = p.value;
        break;
      case 'hour':
        h = Number(p.value) % 24;
        break;
      case 'minute':
        mi = Number(p.value);
        break;
      case 'weekday':
        wd = WEEKDAY[p.value] ?? 0;
        break;
    }
  }
  return { date: `${y}-${mo}-${d}`, weekday: wd, minute: h * 60 + mi };
}

/** The date before a YYYY-MM-DD date. */
function dayBefore(date: string): string {
  const t = Date.parse(`${date}T00:00:00Z`) - 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** The hours a date has: its exception, none on a holiday, else its weekday's. */
function hoursOf(c: CompiledCalendar, date: string, weekday: number): { hours: Interval[]; holiday: boolean } {
  const ex = c.exceptions.get(date);
  if (ex) return { hours: ex, holiday: false };
  if (c.holidays.has(date)) return { hours: [], holiday: true };
  return { hours: c.weekly[weekday] ?? [], holiday: false };
}

/**
 * open, closed or holiday (a date of `holidays:` without an exception, when not open) at the instant `at` (epoch ms).
 */
export function calendarState(c: CompiledCalendar, at: number): CalendarState {
  const t = localTime(c, at);
  const today = hoursOf(c, t.date, t.weekday);
  for (const [a, b] of today.hours) {
    if (b > a ? t.minute >= a && t.minute < b : t.minute >= a) return 'open';
  }
  const prev = hoursOf(c, dayBefore(t.date), (t.weekday + 6) % 7);
  for (const [a, b] of prev.hours) if (b < a && t.minute < b) return 'open';
  return today.holiday ? 'holiday' : 'closed';
}
