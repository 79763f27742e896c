import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { flowSchemaText, writeFlowSchema } from '../flow/schema.js';
import { writeConfigSchema } from '../config/schema.js';

/**
 * `callscript schema [--write] [--dir d]`: print the flow schema, or write both schema files
 * into `d` (default `schemas`, created if missing).
 */
export async function schema(
  flags: { write?: boolean; dir?: string },
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  if (!flags.write) {
    out.write(flowSchemaText());
    return 0;
  }
  const dir = resolve(flags.dir ?? 'schemas');
  try {
    mkdirSync(dir, { recursive: true });
    writeFlowSchema(resolve(dir, 'flow.schema.json'));
    writeConfigSchema(resolve(dir, 'config.schema.json'));
  } catch (e) {
    err.write(
      `callscript schema: cannot write into ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`,
    );
    return 2;
  }
  out.write(`wrote ${dir}/flow.schema.json and ${dir}/config.schema.json\n`);
  return 0;
}
