/**
 * The options given by code, from the table: the plugin's defaults and its check of numbers and allowed values,
 * and the plugin's and createServer's options a config file (with `serve`'s flags and variables) gives.
 */
import { codeNumberProblem } from './code.js';
import { orList, type OptionDef, type Value } from './options.js';
import { resolveOption, type Sources } from './sources.js';
import { OPTIONS } from './table.js';
import type { ServerConfig } from './types.js';

type Linked = OptionDef & { option: NonNullable<OptionDef['option']> };

/** The options of the file taken by the plugin (`plugin`) or createServer (`server`), one value each. */
function linked(...of: ('plugin' | 'server')[]): Linked[] {
  return OPTIONS.filter(
    (o): o is Linked =>
      o.option !== undefined &&
      (of as readonly string[]).includes(o.option.of ?? 'plugin') &&
      !o.option.name.includes('*'),
  );
}

export function getPath(obj: unknown, dotted: string): unknown {
  let v = obj;
  for (const k of dotted.split('.'))
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function setPath(obj: Record<string, unknown>, dotted: string, v: unknown): void {
  const keys = dotted.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[keys.at(-1)!] = v;
}

const toOption = (o: Linked, v: Value) => (typeof v === 'number' ? v * (o.option.scale ?? 1) : v);

/** The plugin's defaults (DEFAULT_RT_OPTIONS but routes): `{ deadlineMs: 4000, ..., evalLimits: { ... } }`. */
export function pluginDefaults(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of linked('plugin'))
    if ('default' in o && o.default !== undefined) setPath(out, o.option.name, toOption(o, o.default));
  return out;
}

/** Why the plugin's numbers and choices given by code cannot be used (the first problem found), or undefined. */
export function pluginOptionProblem(options: object): string | undefined {
  for (const o of linked('plugin')) {
    const name = o.option.name;
    const v = getPath(options, name);
    if (o.type === 'integer' || o.type === 'number') {
      const problem = codeNumberProblem(name, v);
      if (problem !== undefined) return problem;
    }
    if (o.type === 'enum' && !o.values.includes(v as string))
      return `${name} must be ${orList(o.values)}, got ${String(v)}`;
  }
  return undefined;
}

/**
 * The plugin's and createServer's options from a checked config (or none: the defaults), a flag or variable
 * overriding the file where the option has one: `{ deadlineMs, ..., evalLimits: {...}, logLevel, trustProxy }`.
 */
export function optionsFromConfig(
  config: ServerConfig | undefined,
  sources: Sources,
): { options: Record<string, unknown> } | { problem: string } {
  const options: Record<string, unknown> = {};
  for (const o of linked('plugin', 'server')) {
    if (o.key === undefined) continue;
    const r = resolveOption(o.key, sources, getPath(config, o.key) as Value | undefined);
    if ('problem' in r) return r;
    // an empty list (trust_proxy: []) is no list
    if (r.value === undefined || (Array.isArray(r.value) && r.value.length === 0)) continue;
    setPath(options, o.option.name, toOption(o, r.value));
  }
  return { options };
}

/**
 * The options of the file that `optionsFromConfig` gives, with the option each sets: `['server.deadline_ms',
 * 'deadlineMs']`, `['limits.expression_cost', 'evalLimits.celUnits']`.
 */
export function configOptionNames(): [key: string, name: string][] {
  return linked('plugin', 'server')
    .filter((o) => o.key !== undefined)
    .map((o) => [o.key!, o.option.name]);
}
