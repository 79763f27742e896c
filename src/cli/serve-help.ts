/**
 * What `callscript serve --help` says of the server options, from the table of options (src/config/table.ts): after
 * each flag that sets one, its values or bounds, its environment variable, its key in callscript.yaml and its
 * default; after the flags, the environment variables of the options that have no flag.
 */
import type { OptionDef } from '../config/options.js';
import { OPTIONS } from '../config/table.js';

function byFlag(flag: string): OptionDef {
  const o = OPTIONS.find((x) => x.flag === flag);
  if (!o) throw new Error(`no server option has the flag ${flag}`);
  return o;
}

function values(o: OptionDef): string | undefined {
  if (o.type === 'integer' || o.type === 'number') return `${o.min}..${o.max}`;
  if (o.type === 'enum') return o.values.join('|');
  return undefined;
}

function defaultText(o: OptionDef): string | undefined {
  const d = 'default' in o ? o.default : undefined;
  return d === undefined ? undefined : `default ${String(d)}`;
}

const given = <T>(...xs: (T | undefined)[]): T[] => xs.filter((x): x is T => x !== undefined);

/** `(0..65535; env PORT, config server.port; default 3000)`: the part of a flag's help the table gives. */
export function flagNote(flag: string): string {
  const o = byFlag(flag);
  const from = given(o.env && `env ${o.env}`, o.key && `config ${o.key}`).join(', ');
  return `(${given(values(o), from, defaultText(o)).join('; ')})`;
}

/** The variables of the options without a flag, one a line, with their key and default: for the end of the help. */
export function variablesHelp(): string {
  const rows = OPTIONS.filter((o) => o.env !== undefined && o.flag === undefined).map((o) => {
    const note = given(values(o), defaultText(o)).join(', ');
    return [`  ${o.env}`, `${o.key}${note ? ` (${note})` : ''}`];
  });
  const width = Math.max(...rows.map(([name]) => name!.length)) + 2;
  return [
    '',
    'The environment variables of the other options (each overrides its key in the config):',
    ...rows.map(([name, what]) => `${name!.padEnd(width)}${what}`),
    'Every option and variable, with its bounds and default: docs/configuration.md.',
  ].join('\n');
}
