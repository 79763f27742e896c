#!/usr/bin/env node
/** The `callscript` command: thin wiring of subcommands to the library. */
import { Command } from 'commander';
import { serve } from './serve.js';
import { validate } from './validate.js';
import { schema } from './schema.js';
import { errors } from './errors.js';

const program = new Command();
program.name('callscript').description('Declarative IVR engine: YAML call flows served as a real-time telephony endpoint').version('0.1.0');

program
  .command('serve')
  .description('serve the flows of a directory as the real-time callback endpoint')
  .option('-p, --port <port>', 'port to listen on (env PORT, default 3000)')
  .option('-H, --host <host>', 'address to listen on (env HOST, default 127.0.0.1)')
  .option('-f, --flows <dir>', 'directory of *.yaml flows (env FLOWS_DIR, default flows)')
  .option('-c, --config <file>', 'config file (env CALLSCRIPT_CONFIG, default ./callscript.yaml if present)')
  .option('-l, --log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL, default info)')
  .action(async (flags) => {
    const r = await serve(flags);
    if (typeof r === 'number') process.exitCode = r;
  });

program
  .command('validate')
  .description('check flow files (and callscript.yaml) and print every problem; exit 1 on errors')
  .argument('[paths...]', 'flow files or directories (default: flows)')
  .action(async (paths: string[]) => {
    process.exitCode = await validate(paths);
  });

program
  .command('schema')
  .description('print the JSON Schema of flow files (for editors), or write schemas/*.json')
  .option('--write', 'write schemas/flow.schema.json and schemas/config.schema.json')
  .action(async (flags: { write?: boolean }) => {
    process.exitCode = await schema(flags);
  });

program
  .command('errors')
  .description('explain an error code, list them all, or print docs/errors.md (--markdown)')
  .argument('[code]', 'a code, e.g. UNKNOWN_KEY')
  .option('--markdown', 'print the whole catalogue as Markdown')
  .action((code: string | undefined, flags: { markdown?: boolean }) => {
    process.exitCode = errors(code, flags);
  });

program.parseAsync(process.argv).catch((err: Error) => {
  process.stderr.write(`callscript: ${err.message}\n`);
  process.exitCode = 2;
});
