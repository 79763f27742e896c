/**
 * What version 2 adds to a request's scope (templates, conditions, prompts): the selected
 * environment's values (`env.*`), the flow's calendars at the request's time (`open()`,
 * `holiday()`, calendar steps) and the call's language (`call.language`). Made once per
 * compiled flow (`flowExt`); a flow without these has none, and its requests pay nothing.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { CalendarClock, calendarState, type CalendarState, type CompiledCalendar } from '../flow/calendar.js';
import type { EnvFrom, FlowModel, LanguageChoice, Value } from '../flow/model.js';

export interface FlowExt {
  env?: Record<string, string>;
  /** The environment's values read from the server's environment when the call runs (`from_env:`). */
  envFrom?: Record<string, EnvFrom>;
  calendars?: Map<string, CompiledCalendar>;
  language?: { choice: LanguageChoice; declared: ReadonlySet<string> };
}

export function flowExt(model: FlowModel): FlowExt | undefined {
  const ext: FlowExt = {};
  if (model.env) ext.env = model.env;
  if (model.envFrom && Object.keys(model.envFrom).length > 0) ext.envFrom = model.envFrom;
  if (model.calendars && Object.keys(model.calendars).length > 0) {
    const clock = new CalendarClock();
    ext.calendars = new Map(Object.entries(model.calendars).map(([k, c]) => [k, clock.compile(c)]));
  }
  if (model.languages && model.language)
    ext.language = { choice: model.language, declared: new Set(Object.keys(model.languages)) };
  return ext.env || ext.envFrom || ext.calendars || ext.language ? ext : undefined;
}

/**
 * The environment's values for a request: the literal ones and those read from the server's environment (`read`; a
 * variable not set gives its default, else ""), read once per request. A secret's is not there: an http request's
 * scope adds it (`secretEnv`).
 */
export function envOf(ext: FlowExt, run: ExtRun, read: ((name: string) => string | undefined) | undefined): Env {
  if (run.env) return run.env;
  const env: Env = Object.assign({}, ext.env);
  for (const [k, f] of Object.entries(ext.envFrom!)) if (!f.secret) env[k] = read?.(f.name) ?? f.default ?? '';
  return (run.env = env);
}

/** `env` with the environment's secret values, read by `read` (the flow's secrets' reader): an http request's. */
export function secretEnv(ext: FlowExt, env: Env, read: ((name: string) => string | undefined) | undefined): Env {
  let out: Env | undefined;
  for (const [k, f] of Object.entries(ext.envFrom!))
    if (f.secret) (out ??= Object.assign({}, env))[k] = read?.(f.name) ?? '';
  return out ?? env;
}

type Env = Record<string, string>;

/** What a request's run keeps for these: the clock, and the caller's country once looked up. */
export interface ExtRun {
  now: number;
  /** The environment's values, once read in this request. */
  env?: Record<string, string>;
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
