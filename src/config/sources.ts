/**
 * An option's value for `callscript serve`: its flag, else its environment variable, else the config file's
 * (already checked), else its default. A flag's or variable's text is checked like the file's value: its type,
 * bounds, allowed values and pattern; an empty one counts as unset.
 */
import { defaultOf, orList, type OptionDef, type Value } from './options.js';
import { OPTIONS } from './table.js';

export interface Sources {
  /** The flags of `serve`, by commander's name (`--log-level`: logLevel). */
  flags: Record<string, string | undefined>;
  env: Record<string, string | undefined>;
}

/** `--log-level` as commander names it: logLevel. */
export function flagProperty(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The flag's or variable's text for an option, and which of them gave it; undefined when neither. */
export function givenText(o: OptionDef, s: Sources): { from: string; text: string } | undefined {
  const flag = o.flag !== undefined ? s.flags[flagProperty(o.flag)] : undefined;
  if (flag !== undefined && flag !== '') return { from: o.flag!, text: flag };
  const env = o.env !== undefined ? s.env[o.env] : undefined;
  if (env !== undefined && env !== '') return { from: o.env!, text: env };
  return undefined;
}

/** A flag's or variable's text as the option's value, or why not. */
export function parseText(o: OptionDef, from: string, text: string): { value: Value } | { problem: string } {
  switch (o.type) {
    case 'integer':
    case 'number':
      if (!/^[0-9]+$/.test(text) || Number(text) < o.min || Number(text) > o.max)
        return { problem: `${from} must be an integer from ${o.min} to ${o.max}, not "${text}"` };
      return { value: Number(text) };
    case 'enum':
      if (!o.values.includes(text)) return { problem: `${from} must be ${orList(o.values)}, not "${text}"` };
      return { value: text };
    case 'boolean':
      if (text !== 'true' && text !== 'false') return { problem: `${from} must be true or false, not "${text}"` };
      return { value: text === 'true' };
    case 'string':
      if (o.pattern !== undefined && !new RegExp(o.pattern).test(text))
        return { problem: `${from} ${o.format?.must ?? `must match ${o.pattern}`}, not "${text}"` };
      return { value: text };
    case 'list':
    case 'custom':
      throw new Error(`${o.key}: a list or a map is not given by a flag or a variable`);
  }
}

/**
 * The option's value from its flag or variable, else `fileValue` (the checked config's), else its default.
 * `check` replaces the table's check of a flag's or variable's text (a message of its own, or none here).
 */
export function resolveOption(
  key: string,
  s: Sources,
  fileValue: Value | undefined,
  check?: (text: string, from: string) => string | undefined,
): { value: Value | undefined } | { problem: string } {
  const o = OPTIONS.find((x) => x.key === key);
  if (!o) throw new Error(`no server option ${key}`);
  const given = givenText(o, s);
  if (given === undefined) return { value: fileValue ?? defaultOf(o) };
  if (check) {
    const problem = check(given.text, given.from);
    return problem === undefined ? { value: given.text } : { problem };
  }
  return parseText(o, given.from, given.text);
}
