/**
 * `calendars:` (version 2): named opening-hours calendars, and the `calendar:` step that
 * branches on open, closed or holiday at the engine's time. See src/flow/calendar.ts for
 * what the hours mean.
 */
import {
  DAYS,
  MAX_CALENDAR_DATES,
  MAX_CALENDARS,
  MAX_INTERVALS_PER_DAY,
  checkDate,
  isTimeZone,
  overlaps,
  parseInterval,
  timeZoneNames,
  type Calendar,
  type Interval,
} from './calendar.js';
import {
  type Ctx,
  asMap,
  closest,
  didYouMean,
  knownEntries,
  posOf,
  report,
  requireV2,
  ID_RE,
} from './check-context.js';
import { stepRef } from './check-results.js';
import type { Step } from './model.js';
import { describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';

export const CAL_KEYS = ['timezone', 'weekly', 'holidays', 'exceptions'] as const;

/** The calendars of `calendars:`; their names go to ctx.v2.calendars. */
export function checkCalendars(ctx: Ctx, e: YEntry | undefined): Record<string, Calendar> | undefined {
  if (!e) return undefined;
  requireV2(ctx, e, 'calendars:');
  const map = asMap(ctx, e.value, 'calendars');
  if (!map) {
    ctx.v2.calendars = new Set();
    return undefined;
  }
  ctx.v2.calendars = new Set(map.entries.map((x) => x.key));
  if (map.entries.length > MAX_CALENDARS) {
    report(
      ctx,
      'TOO_MANY_ENTRIES',
      e,
      `calendars: ${map.entries.length.toLocaleString('en-US')} calendars; a flow may have at most ${MAX_CALENDARS}`,
    );
    return undefined;
  }
  const out: Record<string, Calendar> = {};
  for (const c of map.entries) {
    if (!ID_RE.test(c.key)) {
      report(ctx, 'BAD_NAME', c, `the calendar name '${c.key}' may use only letters, digits, - and _ (64 at most)`);
      continue;
    }
    const cal = checkCalendar(ctx, c);
    if (cal) out[c.key] = cal;
  }
  return out;
}

function checkCalendar(ctx: Ctx, c: YEntry): Calendar | undefined {
  const where = `calendar '${c.key}': `;
  const map = asMap(ctx, c.value, `${where}a calendar`);
  if (!map) return undefined;
  const before = ctx.diags.length;
  knownEntries(ctx, map, CAL_KEYS, where);
  const tz = entry(map, 'timezone');
  let timezone = 'UTC';
  if (!tz)
    report(
      ctx,
      'MISSING_KEY',
      c,
      `${where}missing 'timezone': the IANA time zone its hours are in (e.g. Europe/London)`,
    );
  else if (tz.value.kind !== 'scalar' || tz.value.type !== 'string')
    report(ctx, 'TYPE_MISMATCH', tz.value, `${where}timezone must be an IANA zone name, not ${describe(tz.value)}`);
  else if (!isTimeZone(String(tz.value.value))) {
    const name = String(tz.value.value);
    report(
      ctx,
      'BAD_TIMEZONE',
      tz.value,
      `${where}"${name}" is not an IANA time zone`,
      didYouMean(name, timeZoneNames()) ??
        'Write a zone of the IANA database as Area/City, e.g. Europe/London, America/New_York, or UTC.',
    );
  } else timezone = String(tz.value.value);

  const weekly: Interval[][] = DAYS.map(() => []);
  const w = entry(map, 'weekly');
  if (!w)
    report(
      ctx,
      'MISSING_KEY',
      c,
      `${where}missing 'weekly': the opening hours by day (e.g. weekly: { mon-fri: "09:00-17:00" })`,
    );
  else {
    const wm = asMap(ctx, w.value, `${where}weekly`);
    for (const d of wm?.entries ?? []) {
      const days = dayRange(ctx, d, where);
      const hours = intervals(ctx, d.value, `${where}${d.key}: `);
      if (!days || !hours) continue;
      for (const day of days) {
        const name = DAYS[day]!;
        // a day named by two keys (mon-fri and mon) gets both keys' hours: overlaps are warned
        for (const h of hours) {
          const other = weekly[day]!.find((x) => overlaps(x, h));
          if (other && hours.indexOf(other) < 0)
            report(
              ctx,
              'OVERLAPPING_HOURS',
              d.value,
              `${where}${d.key}: ${fmt(h)} overlaps ${fmt(other)} on ${name}, given by another key`,
            );
          weekly[day]!.push(h);
        }
        if (weekly[day]!.length > MAX_INTERVALS_PER_DAY) {
          report(
            ctx,
            'TOO_MANY_ENTRIES',
            d.value,
            `${where}${name} has ${weekly[day]!.length} intervals; a day may have at most ${MAX_INTERVALS_PER_DAY}`,
          );
          weekly[day] = weekly[day]!.slice(0, MAX_INTERVALS_PER_DAY);
        }
      }
    }
  }

  const holidays: string[] = [];
  const exceptions: Record<string, Interval[]> = {};
  let dates = 0;
  const h = entry(map, 'holidays');
  if (h && !(h.value.kind === 'scalar' && h.value.type === 'null')) {
    if (h.value.kind !== 'seq')
      report(
        ctx,
        'TYPE_MISMATCH',
        h.value,
        `${where}holidays must be a list of dates ("2026-12-25"), not ${describe(h.value)}`,
      );
    else if (h.value.items.length > MAX_CALENDAR_DATES)
      report(
        ctx,
        'TOO_MANY_ENTRIES',
        h,
        `${where}${h.value.items.length.toLocaleString('en-US')} holidays; a calendar may list at ` +
          `most ${MAX_CALENDAR_DATES.toLocaleString('en-US')} dates (holidays and exceptions)`,
      );
    else {
      dates += h.value.items.length;
      for (const it of h.value.items) {
        const d = dateOf(ctx, it, where);
        if (d === undefined) continue;
        if (holidays.includes(d)) report(ctx, 'DUPLICATE_KEY', it, `${where}the holiday ${d} is listed twice`);
        else holidays.push(d);
      }
    }
  }
  const x = entry(map, 'exceptions');
  if (x && !(x.value.kind === 'scalar' && x.value.type === 'null')) {
    const xm = asMap(ctx, x.value, `${where}exceptions`);
    if (xm && dates + xm.entries.length > MAX_CALENDAR_DATES)
      report(
        ctx,
        'TOO_MANY_ENTRIES',
        x,
        `${where}${(dates + xm.entries.length).toLocaleString('en-US')} dates in holidays and exceptions; a ` +
          `calendar may list at most ${MAX_CALENDAR_DATES.toLocaleString('en-US')}`,
      );
    else {
      for (const d of xm?.entries ?? []) {
        const err = checkDate(d.key);
        if (err) {
          report(ctx, 'BAD_DATE', d, `${where}exceptions: ${err}`);
          continue;
        }
        if (d.value.kind === 'scalar' && d.value.type === 'string' && d.value.value === 'closed') {
          exceptions[d.key] = [];
          continue;
        }
        const hours = intervals(ctx, d.value, `${where}${d.key}: `, true);
        if (hours) exceptions[d.key] = hours;
      }
    }
  }
  for (let i = before; i < ctx.diags.length; i++) if (ctx.diags[i]!.severity === 'error') return undefined;
  return { name: c.key, timezone, weekly, holidays, exceptions };
}

function fmt([a, b]: Interval): string {
  const t = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return `${t(a)}-${t(b)}`;
}

function dateOf(ctx: Ctx, node: YNode, where: string): string | undefined {
  if (node.kind !== 'scalar' || node.type !== 'string') {
    report(ctx, 'TYPE_MISMATCH', node, `${where}a date is a string YYYY-MM-DD, not ${describe(node)}`);
    return undefined;
  }
  const err = checkDate(String(node.value));
  if (err) {
    report(ctx, 'BAD_DATE', node, `${where}${err}`);
    return undefined;
  }
  return String(node.value);
}

/** `mon`, `mon-fri` (a range, may wrap: fri-mon): the weekday numbers. */
function dayRange(ctx: Ctx, d: YEntry, where: string): number[] | undefined {
  const parts = d.key.split('-');
  const idx: number[] = [];
  for (const p of parts) {
    const i = (DAYS as readonly string[]).indexOf(p);
    if (i < 0 || parts.length > 2) {
      const near = parts.length > 2 ? undefined : closest(p, DAYS);
      report(
        ctx,
        'BAD_DAY',
        d,
        `${where}weekly: '${d.key}' is not a day or a range of days (mon, tue, wed, thu, fri, sat, sun; mon-fri)`,
        near ? `did you mean '${d.key.replace(p, near)}'?` : undefined,
      );
      return undefined;
    }
    idx.push(i);
  }
  if (idx.length === 1) return idx;
  const out: number[] = [];
  for (let i = idx[0]!; ; i = (i + 1) % 7) {
    out.push(i);
    if (i === idx[1]) break;
  }
  return out;
}

/** An interval or a list of them; `closed` allowed for exceptions only. */
function intervals(ctx: Ctx, node: YNode, where: string, exception = false): Interval[] | undefined {
  const items = node.kind === 'seq' ? node.items : [node];
  if (items.length > MAX_INTERVALS_PER_DAY) {
    report(
      ctx,
      'TOO_MANY_ENTRIES',
      node,
      `${where}${items.length.toLocaleString('en-US')} intervals; a day may have at most ${MAX_INTERVALS_PER_DAY}`,
    );
    return undefined;
  }
  const out: Interval[] = [];
  let ok = true;
  for (const it of items) {
    if (it.kind !== 'scalar' || it.type !== 'string') {
      report(
        ctx,
        'TYPE_MISMATCH',
        it,
        `${where}opening hours are "HH:MM-HH:MM" or a list of them${exception ? ', or closed' : ''}, ` +
          `not ${describe(it)}`,
      );
      ok = false;
      continue;
    }
    const r = parseInterval(String(it.value));
    if (typeof r === 'string') {
      report(
        ctx,
        'BAD_HOURS',
        it,
        `${where}${r}`,
        String(it.value) === 'closed'
          ? 'A day without hours is left out of weekly: (closed is for exceptions).'
          : undefined,
      );
      ok = false;
      continue;
    }
    const other = out.find((x) => overlaps(x, r));
    if (other) report(ctx, 'OVERLAPPING_HOURS', it, `${where}${fmt(r)} overlaps ${fmt(other)}`);
    out.push(r);
  }
  return ok ? out : undefined;
}

export const CAL_RESULTS = ['open', 'closed', 'holiday'] as const;

/** A `calendar: name` step: a switch on the calendar's state, with its results' labels. */
export function checkCalendarStep(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  requireV2(ctx, action, 'calendar steps');
  let name: string | undefined;
  if (action.value.kind !== 'scalar' || action.value.type !== 'string')
    report(
      ctx,
      'TYPE_MISMATCH',
      action.value,
      `${where}calendar names a calendar of calendars:, not ${describe(action.value)}`,
    );
  else {
    name = String(action.value.value);
    ctx.uses?.push({ kind: 'calendar', name, at: action.value });
    calendarName(ctx, name, action.value, where);
  }
  const on = entry(node, 'on');
  const targets: Partial<Record<(typeof CAL_RESULTS)[number], string>> = {};
  if (!on)
    report(
      ctx,
      'MISSING_KEY',
      action,
      `${where}a calendar step needs on: { open: ..., closed: ... }`,
      'A calendar step branches on open and closed (and holiday, which goes to closed when absent).',
    );
  else {
    const m = asMap(ctx, on.value, `${where}on`);
    const meant = new Set<string>();
    for (const r of m?.entries ?? []) {
      if (!(CAL_RESULTS as readonly string[]).includes(r.key)) {
        const near = closest(r.key, CAL_RESULTS);
        if (near !== undefined) meant.add(near);
        report(
          ctx,
          'IMPOSSIBLE_RESULT',
          r,
          `${where}a calendar step's results are open, closed and holiday, not '${r.key}'`,
          near !== undefined ? `did you mean '${near}'?` : 'Branch on open, closed and (optionally) holiday.',
        );
        continue;
      }
      const to = stepRef(ctx, r.value, where);
      if (to !== undefined) targets[r.key as (typeof CAL_RESULTS)[number]] = to;
    }
    // a misspelt result is its IMPOSSIBLE_RESULT alone (one mistake, one diagnostic)
    if (m)
      for (const k of ['open', 'closed'] as const)
        if (!meant.has(k) && !m.entries.some((x) => x.key === k))
          report(
            ctx,
            'MISSING_KEY',
            on,
            `${where}a calendar step needs on.${k}: where to go when the calendar is ${k}`,
            'A calendar step branches on open and closed (and holiday, which goes to closed when absent).',
          );
  }
  if (name === undefined || targets.open === undefined || targets.closed === undefined) return undefined;
  const q = JSON.stringify(name);
  const cases = [{ when: `open(${q})`, goto: targets.open, pos: posOf(ctx, action) }];
  const labels = ['open'];
  if (targets.holiday !== undefined) {
    cases.push({ when: `holiday(${q})`, goto: targets.holiday, pos: posOf(ctx, action) });
    labels.push('holiday');
  }
  return {
    kind: 'switch',
    id,
    pos: posOf(ctx, action),
    cases,
    default: targets.closed,
    calendar: { name, labels, otherwise: 'closed' },
  };
}

/** A calendar name read by a step or by open()/holiday(): UNKNOWN_CALENDAR with a hint. */
export function calendarName(ctx: Ctx, name: string, at: YNode, where: string): boolean {
  const known = ctx.v2.calendars;
  if (known?.has(name)) return true;
  report(
    ctx,
    'UNKNOWN_CALENDAR',
    at,
    `${where}there is no calendar '${name}'${known ? '' : ' (the flow has no calendars:)'}`,
    (known && didYouMean(name, known)) ??
      (known && known.size > 0
        ? `Calendars: ${[...known].slice(0, 12).join(', ')}.`
        : 'Declare it under calendars: at the top level.'),
  );
  return false;
}

/** open("x") / holiday("x") calls with a literal name, read by a condition: checked once calendars are known. */
export function checkCalendarRefs(ctx: Ctx): void {
  for (const r of ctx.v2.calendarRefs) calendarName(ctx, r.name, r.at, '');
}
