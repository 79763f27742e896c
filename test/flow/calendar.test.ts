/**
 * Calendars (version 2): what open, closed and holiday mean at an instant, in the
 * calendar's zone, around daylight saving time, midnight, holidays and exceptions; and
 * their bounds.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { CalendarClock, calendarState, checkDate, parseInterval } from '../../src/flow/calendar.js';

/** The `office` calendar of a version 2 flow with these lines under it. */
function office(lines: string[]) {
  const text = [
    'version: 2',
    'start: a',
    'calendars:',
    '  office:',
    ...lines.map((l) => `    ${l}`),
    'steps:',
    '  a: { hangup: {} }',
    '',
  ].join('\n');
  const { model, diagnostics } = checkFlow(text, 'cal.yaml');
  expect(diagnostics).toEqual([]);
  const c = new CalendarClock().compile(model!.calendars!.office!);
  return (iso: string) => calendarState(c, Date.parse(iso));
}

describe('calendar state', () => {
  const london = office([
    'timezone: Europe/London',
    'weekly: { mon-fri: ["08:30-12:30", "13:30-18:00"], sat: "09:00-12:00", sun: "00:30-01:30" }',
    'holidays: ["2026-12-25", "2026-12-26"]',
    'exceptions: { "2026-12-24": "08:30-12:00", "2026-12-31": closed }',
  ]);

  it('weekly hours in the zone, not in UTC (BST is UTC+1 in June)', () => {
    expect(london('2026-06-15T07:29:00Z')).toBe('closed'); // Monday 08:29 BST
    expect(london('2026-06-15T07:30:00Z')).toBe('open'); // 08:30 BST
    expect(london('2026-06-15T11:29:59Z')).toBe('open'); // 12:29:59
    expect(london('2026-06-15T11:30:00Z')).toBe('closed'); // 12:30: the end is not open
    expect(london('2026-06-15T12:30:00Z')).toBe('open'); // 13:30
    expect(london('2026-06-20T08:00:00Z')).toBe('open'); // Saturday 09:00
    expect(london('2026-06-20T11:00:00Z')).toBe('closed'); // Saturday 12:00
    expect(london('2026-11-16T08:30:00Z')).toBe('open'); // Monday 08:30 GMT (UTC+0 in November)
  });

  it('holidays (all day) and exceptions (their own hours, or closed)', () => {
    expect(london('2026-12-25T10:00:00Z')).toBe('holiday');
    expect(london('2026-12-26T03:00:00Z')).toBe('holiday'); // a Saturday listed as a holiday
    expect(london('2026-12-24T11:59:00Z')).toBe('open'); // exception 08:30-12:00
    expect(london('2026-12-24T12:00:00Z')).toBe('closed'); // not the weekly 13:30-18:00
    expect(london('2026-12-31T10:00:00Z')).toBe('closed'); // closed: an exception, not a holiday
  });

  it('spring forward (2026-03-29, 01:00 GMT becomes 02:00 BST): "00:30-01:30" is open 00:30 to 01:00 GMT only', () => {
    expect(london('2026-03-29T00:29:00Z')).toBe('closed');
    expect(london('2026-03-29T00:30:00Z')).toBe('open');
    expect(london('2026-03-29T00:59:59Z')).toBe('open');
    expect(london('2026-03-29T01:00:00Z')).toBe('closed'); // 02:00 BST: 01:00-01:59 never existed
    expect(london('2026-03-29T01:30:00Z')).toBe('closed');
  });

  it('fall back (2026-10-25, 02:00 BST becomes 01:00 GMT): the repeated hour is open twice', () => {
    const fall = office(['timezone: Europe/London', 'weekly: { sun: "01:00-01:30" }']);
    expect(fall('2026-10-24T23:59:00Z')).toBe('closed'); // 00:59 BST
    expect(fall('2026-10-25T00:00:00Z')).toBe('open'); // 01:00 BST
    expect(fall('2026-10-25T00:29:00Z')).toBe('open'); // 01:29 BST
    expect(fall('2026-10-25T00:30:00Z')).toBe('closed'); // 01:30 BST
    expect(fall('2026-10-25T01:00:00Z')).toBe('open'); // 01:00 GMT, the second time
    expect(fall('2026-10-25T01:29:00Z')).toBe('open');
    expect(fall('2026-10-25T01:30:00Z')).toBe('closed');
  });

  it('an interval crossing midnight belongs to the day it starts; a holiday that day removes it', () => {
    const night = office(['timezone: UTC', 'weekly: { fri-sat: "22:00-02:00" }', 'holidays: ["2026-12-26"]']);
    expect(night('2026-12-04T21:59:00Z')).toBe('closed'); // Friday 21:59
    expect(night('2026-12-04T22:00:00Z')).toBe('open');
    expect(night('2026-12-05T01:59:00Z')).toBe('open'); // Saturday 01:59, Friday's night
    expect(night('2026-12-05T02:00:00Z')).toBe('closed');
    expect(night('2026-12-06T01:00:00Z')).toBe('open'); // Sunday 01:00, Saturday's night
    expect(night('2026-12-07T01:00:00Z')).toBe('closed'); // Monday 01:00: Sunday has no night
    expect(night('2026-12-26T23:00:00Z')).toBe('holiday'); // Saturday 26 is a holiday: no night
    expect(night('2026-12-27T01:00:00Z')).toBe('closed'); // nor its part after midnight
  });

  it('a wrapping range (fri-mon) and "24:00" as the end of a day', () => {
    const w = office(['timezone: America/New_York', 'weekly: { fri-mon: "20:00-24:00" }']);
    expect(w('2026-06-22T01:00:00Z')).toBe('open'); // Sunday 21:00 EDT
    expect(w('2026-06-23T01:00:00Z')).toBe('open'); // Monday 21:00 EDT
    expect(w('2026-06-24T01:00:00Z')).toBe('closed'); // Tuesday 21:00 EDT
    expect(w('2026-06-22T03:59:00Z')).toBe('open'); // Sunday 23:59
    expect(w('2026-06-22T04:00:00Z')).toBe('closed'); // Monday 00:00 is not Sunday's: Monday's own hours start at 20:00
  });

  it('an evaluation costs microseconds, whatever the number of dates (a Set lookup)', () => {
    const dates = Array.from(
      { length: 2000 },
      (_, i) => `"${new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)}"`,
    );
    const cal = (days: string[]) =>
      office([
        'timezone: Europe/Paris',
        'weekly: { mon-sun: ["00:00-01:00", "02:00-03:00", "04:00-05:00", "06:00-07:00", "08:00-09:00", ' +
          '"10:00-11:00", "12:00-13:00", "14:00-15:00", "16:00-17:00", "18:00-19:00", "20:00-21:00", ' +
          '"22:00-23:00"] }',
        `holidays: [${days.join(', ')}]`,
      ]);
    const big = cal(dates);
    const small = cal(dates.slice(0, 10));
    // a ratio, not a timed bound (the machine is shared): 2,000 dates cost what 10 do (a scan would cost 200 times)
    const least = (f: (at: string) => unknown) => {
      let best = Infinity;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        for (let i = 0; i < 3_000; i++) f(new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString());
        best = Math.min(best, performance.now() - t0);
      }
      return best;
    };
    expect(least(big) / least(small)).toBeLessThan(5);
  });
});

describe('hours and dates', () => {
  it('parses intervals and says why one is wrong', () => {
    expect(parseInterval('08:30-12:30')).toEqual([510, 750]);
    expect(parseInterval('22:00-02:00')).toEqual([1320, 120]);
    expect(parseInterval('18:00-24:00')).toEqual([1080, 1440]);
    expect(parseInterval('18:00-00:00')).toEqual([1080, 1440]);
    expect(parseInterval('8:30-12:30')).toBe('"8:30-12:30" is not an interval HH:MM-HH:MM (e.g. "08:30-12:30")');
    expect(parseInterval('24:00-02:00')).toBe('"24:00" is not a time of day (00:00 to 23:59)');
    expect(parseInterval('10:60-11:00')).toBe('"10:60" is not a time of day (00:00 to 23:59)');
  });
  it('knows which dates exist', () => {
    expect(checkDate('2028-02-29')).toBeNull();
    expect(checkDate('2026-02-29')).toBe('"2026-02-29" does not exist: February 2026 has 28 days');
    expect(checkDate('2026-13-01')).toBe('"2026-13-01" has no month 13');
    expect(checkDate('2026-4-01')).toBe('"2026-4-01" is not a date YYYY-MM-DD');
  });
});
