/**
 * An option given by code, by its name there (`headersTimeoutMs`, `history.keep`, `webhooks.bodyLimit`): its default
 * and bounds in the unit of code, and what is said of a value outside them. The modules that take such options
 * (the transport, the history, the webhooks, the http lookups, the plugin) read them here, from the table of options,
 * and keep no copy.
 */
import { defaultOf, linkBounds, type NumberOption, type OptionDef, type StringOption, type Value } from './options.js';
import { OPTIONS } from './table.js';

type Linked = OptionDef & { option: NonNullable<OptionDef['option']> };

const BY_NAME = new Map(
  OPTIONS.filter((o): o is Linked => o.option !== undefined && !o.option.name.includes('*')).map((o) => [
    o.option.name,
    o,
  ]),
);

/** The option given by code under this name. */
export function codeOption(name: string): Linked {
  const o = BY_NAME.get(name);
  if (!o) throw new Error(`no option ${name} in the table of options`);
  return o;
}

/** A numeric option given by code. */
export function codeNumber(name: string): NumberOption & Linked {
  const o = codeOption(name);
  if (o.type !== 'integer' && o.type !== 'number') throw new Error(`option ${name} is not a number`);
  return o;
}

/** A text option given by code (its pattern, lengths and message). */
export function codeString(name: string): StringOption & Linked {
  const o = codeOption(name);
  if (o.type !== 'string') throw new Error(`option ${name} is not a text`);
  return o;
}

/** The values an option given by code takes (metrics.auth: none, admin). */
export function codeValues(name: string): readonly string[] {
  const o = codeOption(name);
  if (o.type !== 'enum') throw new Error(`option ${name} is not a choice`);
  return o.values;
}

/** The option's default in the unit of code (server.call_ttl_s 7200 is callTtlMs 7200000); an error when none. */
export function codeDefault(name: string): Value {
  const o = codeOption(name);
  const v = defaultOf(o);
  if (v === undefined) throw new Error(`option ${name} has no default`);
  return typeof v === 'number' ? v * (o.option.scale ?? 1) : v;
}

/** A numeric option's default in the unit of code. */
export function codeNumberDefault(name: string): number {
  const v = codeDefault(name);
  if (typeof v !== 'number') throw new Error(`option ${name} is not a number`);
  return v;
}

/** The defaults of several options given by code, by their last name (`history.keep` gives `keep`). */
export function codeDefaults<K extends string>(prefix: string, names: readonly K[]): Record<K, Value> {
  return Object.fromEntries(names.map((n) => [n, codeDefault(prefix + n)])) as Record<K, Value>;
}

/**
 * Why `v` cannot be the numeric option given by code under this name (its bounds in the unit of code, `max: null`
 * none), or undefined: `history.keep must be an integer from 0 to 100000, got 100001`.
 */
export function codeNumberProblem(name: string, v: unknown): string | undefined {
  const { min, max } = linkBounds(codeNumber(name));
  if (Number.isInteger(v) && (v as number) >= min && (max === null || (v as number) <= max)) return undefined;
  const what =
    max !== null
      ? `an integer from ${min} to ${max}`
      : min === 1
        ? 'a positive integer'
        : `an integer of at least ${min}`;
  return `${name} must be ${what}, got ${String(v)}`;
}

/** Lookups one call may start by default (http.max_lookups_per_call), for those that count them beside the server. */
export const DEFAULT_MAX_LOOKUPS_PER_CALL = codeNumberDefault('http.maxLookupsPerCall');
