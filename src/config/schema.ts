/** The JSON Schema of callscript.yaml (draft-07), made from the table of options: for ajv and for editors. */
import { writeFileSync } from 'node:fs';
import type { OptionDef } from './options.js';
import { OPTIONS, SECTIONS } from './table.js';

type Schema = Record<string, unknown>;

/** The schema of one option's value. */
export function optionSchema(o: OptionDef): Schema {
  const description = o.doc;
  switch (o.type) {
    case 'integer':
    case 'number':
      return { type: o.type, minimum: o.min, maximum: o.max, ...dflt(o.default), description };
    case 'enum':
      return { enum: [...o.values], ...dflt(o.default), description };
    case 'boolean':
      return { type: 'boolean', ...dflt(o.default), description };
    case 'string':
      return {
        type: 'string',
        ...(o.minLength !== undefined ? { minLength: o.minLength } : {}),
        ...(o.maxLength !== undefined ? { maxLength: o.maxLength } : {}),
        ...(o.pattern !== undefined ? { pattern: o.pattern } : {}),
        ...dflt(o.default),
        description,
      };
    case 'list':
      return {
        type: o.nullable ? ['array', 'null'] : 'array',
        ...(o.minItems !== undefined ? { minItems: o.minItems } : {}),
        items: { type: 'string', ...o.item },
        ...(o.unique ? { uniqueItems: true } : {}),
        description,
      };
    case 'custom':
      return { description, ...o.schema };
  }
}

const dflt = (v: unknown) => (v === undefined ? {} : { default: v });

/** The schema of a map (the whole file: ''), its options and maps in the table's order. */
function mapSchema(path: string): Schema {
  const properties: Schema = {};
  let names: Schema | undefined;
  const prefix = path === '' ? '' : `${path}.`;
  for (const o of OPTIONS) {
    if (o.key === undefined || !o.key.startsWith(prefix)) continue;
    const [head = '', ...rest] = o.key.slice(prefix.length).split('.');
    if (head === '*' && rest.length === 0) names = optionSchema(o);
    else if (rest.length === 0) properties[head] = optionSchema(o);
    else if (!(head in properties)) properties[head] = mapSchema(prefix + head);
  }
  const s = SECTIONS[path];
  if (names) {
    // a map of names: canary (flow: percent), routes.apps (app: flow)
    return {
      type: s?.nullable === false ? 'object' : ['object', 'null'],
      description: s?.doc,
      ...(s?.names ? { propertyNames: s.names } : {}),
      additionalProperties: names,
    };
  }
  if (s?.orString !== undefined) {
    // one schema for both forms (a string pattern applies to strings only, properties to maps only): one
    // diagnostic per mistake
    const str = OPTIONS.find((o) => o.key === `${path}.${s.orString}`);
    return {
      type: ['string', 'object'],
      ...(str?.type === 'string' && str.pattern ? { pattern: str.pattern } : {}),
      description: s.doc,
      properties,
      additionalProperties: false,
    };
  }
  return {
    type: s?.nullable === false ? 'object' : ['object', 'null'],
    ...(s ? { description: s.doc } : {}),
    properties,
    additionalProperties: false,
  };
}

/** The JSON Schema of callscript.yaml (draft-07), for ajv and for editors. */
export function configJsonSchema(): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://callscript.dev/schemas/config.schema.json',
    title: 'callscript server config (callscript.yaml)',
    ...mapSchema(''),
  };
}

/** The committed file's content (schemas/config.schema.json). */
export function configSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

export function writeConfigSchema(path: string): void {
  writeFileSync(path, configSchemaText());
}
