/**
 * What a server option is: its place in callscript.yaml, its type, default, bounds and doc line, the environment
 * variable and `serve` flag that override it, and the option of the plugin (or of createServer) it becomes. The
 * options themselves are in table.ts; everything else (the config file's JSON Schema, the config checker's bounds,
 * the environment and flags of `serve`, the plugin's defaults and option check, the docs' reference) is derived
 * from them.
 */

/** How the file's value becomes a plugin (or server) option given by code. */
export interface OptionLink {
  /** The option's name, dotted when nested: `deadlineMs`, `evalLimits.celUnits`, `history.keep`. */
  name: string;
  /** Plugin units per file unit: 1000 where the file says seconds and the plugin milliseconds. */
  scale?: number;
  /**
   * The option's own bounds in its unit, where code may go further than the file (tests and embedders use short
   * time-to-lives); `max: null` is no upper bound. Absent: the file's bounds times `scale`.
   */
  min?: number;
  max?: number | null;
  /**
   * Who takes it: `plugin` (the default: a field of RtOptions, defaulted by DEFAULT_RT_OPTIONS and checked by the
   * plugin's checkOptions), `server` (createServer's own options: transport, logging, watch), or the module of a
   * nested plugin option that checks it itself.
   */
  of?: 'plugin' | 'server' | 'history' | 'webhooks' | 'metrics' | 'http';
}

/** How a string that does not match its pattern is reported: `${key} ${must}, got '...'`. */
export interface FormatMessage {
  must: string;
  hint?: string;
  /** Default BAD_FORMAT. */
  code?: 'BAD_FORMAT' | 'BAD_NAME';
}

interface Common {
  /**
   * Its place in callscript.yaml, dotted: `server.deadline_ms`; `*` stands for any name (`canary.*`). Absent: an
   * option of the plugin alone (no key in the file).
   */
  key?: string;
  /** One line (or a few) on what it does: the schema's description and the docs' reference. */
  doc: string;
  /** The environment variable that overrides the file (an empty one counts as unset). */
  env?: string;
  /** The `callscript serve` flag that overrides the variable and the file. */
  flag?: string;
  option?: OptionLink;
}

export interface NumberOption extends Common {
  type: 'integer' | 'number';
  default?: number;
  min: number;
  max: number;
}

export interface EnumOption extends Common {
  type: 'enum';
  default?: string;
  values: readonly string[];
}

export interface StringOption extends Common {
  type: 'string';
  default?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  format?: FormatMessage;
  /** A secret: never repeated in a message. */
  secret?: boolean;
  /** What the docs' reference says it takes (default: any text). */
  shown?: string;
}

export interface BooleanOption extends Common {
  type: 'boolean';
  default?: boolean;
}

export interface ListOption extends Common {
  type: 'list';
  item: { pattern?: string; minLength?: number };
  minItems?: number;
  unique?: boolean;
  /** `key:` with no value is taken as no list. */
  nullable?: boolean;
  format?: FormatMessage;
  shown: string;
}

/** A value with a shape of its own (the fallback media, the sentinels): its schema written by hand. */
export interface CustomOption extends Common {
  type: 'custom';
  schema: Record<string, unknown>;
  shown: string;
}

export type OptionDef = NumberOption | EnumOption | StringOption | BooleanOption | ListOption | CustomOption;

/** A map of options (`server`, `limits`, `routes.apps`, ...): its doc line and form. */
export interface SectionDef {
  doc: string;
  /** `key:` with no value is taken as the empty map (default true). */
  nullable?: boolean;
  /** Its keys are names (`canary`, `routes.apps`): the schema of a key. */
  names?: Record<string, unknown>;
  /** The section may be given as a string instead, standing for this option of it (`store: redis://...`). */
  orString?: string;
}

export type Value = number | string | boolean | string[];

/** The option's default in its own unit (undefined: none). */
export function defaultOf(o: OptionDef): Value | undefined {
  return 'default' in o ? o.default : undefined;
}

/** The bounds of a numeric option in the unit of the option given by code (`max: null`: none). */
export function linkBounds(o: NumberOption): { min: number; max: number | null } {
  const scale = o.option?.scale ?? 1;
  return {
    min: o.option?.min ?? o.min * scale,
    max: o.option?.max !== undefined ? o.option.max : o.max * scale,
  };
}

/** `a, b or c`. */
export function orList(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}
