import { resolve } from 'node:path';
import { flowSchemaText, writeFlowSchema } from '../flow/schema.js';
import { writeConfigSchema } from '../flow/config.js';

/** `callscript schema [--write]`: print the flow schema, or write both schema files. */
export async function schema(flags: { write?: boolean; dir?: string }, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  if (!flags.write) {
    out.write(flowSchemaText());
    return 0;
  }
  const dir = resolve(flags.dir ?? 'schemas');
  writeFlowSchema(resolve(dir, 'flow.schema.json'));
  writeConfigSchema(resolve(dir, 'config.schema.json'));
  out.write(`wrote ${dir}/flow.schema.json and ${dir}/config.schema.json\n`);
  return 0;
}
