/**
 * The reference of the options in docs/configuration.md, written from the table between two markers
 * (`npm run schema` rewrites it; a test fails when the page's copy is stale).
 */
import type { OptionDef } from './options.js';
import { OPTIONS } from './table.js';

export const REFERENCE_BEGIN = '<!-- options:begin (written from src/config/table*.ts by npm run schema) -->';
export const REFERENCE_END = '<!-- options:end -->';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (s: string) => `\`${s}\``;

function takes(o: OptionDef): string {
  switch (o.type) {
    case 'integer':
      return `${o.min}..${o.max}`;
    case 'number':
      return `${o.min}..${o.max} (a number)`;
    case 'enum':
      return o.values.map(code).join(', ');
    case 'boolean':
      return 'true, false';
    case 'string':
      return o.shown ?? 'a text';
    case 'list':
      return `a list: ${o.shown}`;
    case 'custom':
      return o.shown;
  }
}

function defaultText(o: OptionDef): string {
  const d = 'default' in o ? o.default : undefined;
  if (d === undefined) return '';
  return typeof d === 'string' ? code(d) : String(d);
}

function optionText(o: OptionDef): string {
  if (!o.option) return '';
  const name = code(o.option.name.replace('.*', ''));
  return o.option.scale === 1000 ? `${name} (ms)` : name;
}

/** The reference: one row per key of the file, then the options the plugin alone takes. */
export function optionsReference(): string {
  const rows = OPTIONS.filter((o) => o.key !== undefined).map((o) =>
    [
      code(o.key!),
      takes(o),
      defaultText(o),
      [o.env, o.flag]
        .filter((x) => x !== undefined)
        .map((x) => code(x!))
        .join(', '),
      optionText(o),
      o.doc,
    ]
      .map(cell)
      .join(' | '),
  );
  const pluginOnly = OPTIONS.filter((o) => o.key === undefined).map(
    (o) => `- ${optionText(o)}: ${takes(o)}, default ${defaultText(o)}. ${o.doc}`,
  );
  return [
    '| key | takes | default | variable, flag | in code | what it does |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
    '',
    'Options of the Fastify plugin with no key in the file:',
    '',
    ...pluginOnly,
  ].join('\n');
}

/** The page with its reference rewritten (unchanged when it is up to date); an error when a marker is missing. */
export function withOptionsReference(page: string): string {
  const begin = page.indexOf(REFERENCE_BEGIN);
  const end = page.indexOf(REFERENCE_END);
  if (begin < 0 || end < begin) throw new Error(`the page has no ${REFERENCE_BEGIN} ... ${REFERENCE_END}`);
  return `${page.slice(0, begin + REFERENCE_BEGIN.length)}\n${optionsReference()}\n${page.slice(end)}`;
}
