/**
 * What version 2 adds to a request's scope (templates, conditions, prompts): the selected
 * environment's values (`env.*`), the flow's calendars at the request's time (`open()`,
 * `holiday()`, calendar steps) and the call's language (`call.language`). Made once per
 * compiled flow (`flowExt`); a flow without these has none, and its requests pay nothing.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { CalendarClock, calendarState, type CalendarState, type CompiledCalendar } from '../flow/calendar.js';
import type { FlowModel, LanguageChoice, Value } from '../flow/model.js';

export interface FlowExt {
  env?: Record<string, string>;
  calendars?: Map<string, CompiledCalendar>;
  language?: { choice: LanguageChoice; declared: ReadonlySet<string> };
}

export function flowExt(model: FlowModel): FlowExt | undefined {
  const ext: FlowExt = {};
  if (model.env) ext.env = model.env;
  if (model.calendars && Object.keys(model.calendars).length > 0) {
    const clock = new CalendarClock();
    ext.calendars = new Map(Object.entries(model.calendars).map(([k, c]) => [k, clock.compile(c)]));
  }
  if (model.languages && model.language)
    ext.language = { choice: model.language, declared: new Set(Object.keys(model.languages)) };
  return ext.env || ext.calendars || ext.language ? ext : undefined;
}

/** What a request's run keeps for these: the clock, and the caller's country once looked up. */
export interface ExtRun {
  now: number;
  country?: string | null;
  states?: Map<string, CalendarState>;
}

/** A calendar's state at the request's time (computed once per calendar per request). */
export function calendarAt(ext: FlowExt, run: ExtRun, name: string): CalendarState {
  const c = ext.calendars?.get(name);
  if (!c) throw new Error(`there is no calendar "${name}"`);
  run.states ??= new Map();
  let s = run.states.get(name);
  if (s === undefined) {
    s = calendarState(c, run.now);
    run.states.set(name, s);
  }
  return s;
}

/** The longest caller number looked up for its country. */
const MAX_NUMBER = 32;

/**
 * The call's language: vars.<variable> when it is a declared language, else the caller's country's, else the default.
 */
export function languageOf(ext: FlowExt, run: ExtRun, vars: Record<string, Value>, caller: string): string {
  const l = ext.language!;
  const v = l.choice.variable;
  if (v !== undefined && Object.prototype.hasOwnProperty.call(vars, v)) {
    const chosen = vars[v];
    if (typeof chosen === 'string' && l.declared.has(chosen)) return chosen;
  }
  if (Object.keys(l.choice.byCountry).length > 0) {
    if (run.country === undefined) {
      run.country = null;
      if (caller.length <= MAX_NUMBER) {
        try {
          run.country = parsePhoneNumberFromString(caller)?.country ?? null;
        } catch {
          run.country = null;
        }
      }
    }
    const byC =
      run.country !== null && Object.prototype.hasOwnProperty.call(l.choice.byCountry, run.country)
        ? l.choice.byCountry[run.country]
        : undefined;
    if (byC !== undefined) return byC;
  }
  return l.choice.default;
}
