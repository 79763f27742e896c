/**
 * Starts for `paths` in a flow with calendars (version 2): call times (`call.date_started`,
 * which is the case's clock when it has no mocks.now) at which each calendar is open,
 * closed, and on a holiday. Found by reading the calendar itself: every half hour of the
 * week after the default call date, then noon of its first holidays. The machine decides
 * what they do.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { CalendarClock, calendarState, type CalendarState } from '../flow/calendar.js';
import { DEFAULT_CALL } from './scenario.js';
import type { Start } from './starts.js';

const HALF_HOUR = 30 * 60_000;

function dateStarted(t: number): string {
  return new Date(t).toISOString().slice(0, 19).replace('T', ' ');
}

export function calendarStarts(flow: CompiledFlow): Start[] {
  const calendars = flow.model.calendars;
  if (!calendars) return [];
  const clock = new CalendarClock();
  const from = Date.parse(DEFAULT_CALL.date_started.replace(' ', 'T') + 'Z');
  const out = new Set<string>();
  for (const cal of Object.values(calendars)) {
    const c = clock.compile(cal);
    const seen = new Set<CalendarState>();
    for (let t = from; t < from + 7 * 86_400_000 && seen.size < 2; t += HALF_HOUR) {
      const s = calendarState(c, t);
      if (s === 'holiday' || seen.has(s)) continue;
      seen.add(s);
      out.add(dateStarted(t));
    }
    for (const d of cal.holidays.slice(0, 3)) {
      const t = Date.parse(`${d}T12:00:00Z`);
      if (calendarState(c, t) === 'holiday') {
        out.add(dateStarted(t));
        break;
      }
    }
  }
  return [...out].filter((d) => d !== DEFAULT_CALL.date_started).map((d) => ({ call: { date_started: d }, vars: {} }));
}
