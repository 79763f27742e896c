#!/usr/bin/env node
/** The `callscript` command: thin wiring of subcommands to the library. */
import { Command } from 'commander';
import type { AppFlags } from './apps.js';
import type { DialFlags } from './dial.js';
import type { CampaignCliFlags } from './campaign.js';
import { printableLines } from '../terminal/printable.js';

// Each subcommand's module is loaded when it runs, not at start: `callscript errors` or
// `calls` need neither Fastify nor the flow checker, and `--version` needs nothing.

// A reader that goes away (`callscript errors | head -1`) ends the output quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const program = new Command();
program
  .name('callscript')
  .description('Declarative IVR engine: YAML call flows served as a real-time telephony endpoint')
  .version('0.1.0');

// serve's help gives the bounds, variables, keys and defaults of the server options from their table (src/config),
// loaded only when serve is the command: the other commands start without it
const serveHelp = process.argv.includes('serve') ? await import('./serve-help.js') : undefined;
const note = (flag: string) => (serveHelp ? ` ${serveHelp.flagNote(flag)}` : '');

program
  .command('serve')
  .description('serve the flows of a directory as the real-time callback endpoint')
  .option('-p, --port <port>', `port to listen on, 0: any free one${note('--port')}`)
  .option('-H, --host <host>', `address to listen on${note('--host')}`)
  .option('-f, --flows <dir>', `directory of *.yaml flows${note('--flows')}`)
  .option(
    '-s, --store <url>',
    `where calls live: memory or a Redis URL redis://host:6379/0, docs/scaling.md${note('--store')}`,
  )
  .option(
    '-w, --workers <n>',
    `processes serving the port with node:cluster, more than 1 needs --store redis://...${note('--workers')}`,
  )
  .option('-c, --config <file>', 'config file (env CALLSCRIPT_CONFIG, default ./callscript.yaml if present)')
  .option('-l, --log-level <level>', `log level${note('--log-level')}`)
  .option(
    '-e, --env <name>',
    `the environment of the flows' environments: to serve, absent each flow's first${note('--env')}`,
  )
  .option(
    '--record <dir>',
    'write each finished call as a replayable scenario file <dir>/<flow>-<callid>.test.yaml (docs/testing.md)',
  )
  .addHelpText('after', () => serveHelp?.variablesHelp() ?? '')
  .action(async (flags) => {
    const r = await (await import('./serve.js')).serve(flags);
    if (typeof r === 'number') process.exitCode = r;
  });

program
  .command('validate')
  .description('check flow files (and callscript.yaml) and print every problem; exit 1 on errors')
  .argument('[paths...]', 'flow files or directories (default: flows)')
  .option(
    '-c, --config <file>',
    'check this file as a server config file, whatever its name (repeatable)',
    (v: string, prev: string[] = []) => [...prev, v],
  )
  .option(
    '-e, --env <name>',
    'also require every flow with environments: to define this one (env CALLSCRIPT_ENV); every environment ' +
      'is checked either way',
  )
  .action(async (paths: string[], flags: { config?: string[]; env?: string }) => {
    process.exitCode = await (
      await import('./validate.js')
    ).validate(paths, process.stdout, {
      configs: flags.config ?? [],
      ...(flags.env !== undefined ? { env: flags.env } : {}),
    });
  });

program
  .command('lsp')
  .description('the language server for editors, on stdin and stdout (docs/editors.md)')
  .option('--stdio', 'talk over stdin and stdout (the default and only transport; editors pass it)')
  .option('--debounce <ms>', 'how long after the last keystroke a flow is checked again (default 150)')
  .action(async (flags: { debounce?: string }) => {
    (await import('./lsp.js')).lsp(flags);
  });

program
  .command('schema')
  .description('print the JSON Schema of flow files (for editors), or write schemas/*.json')
  .option('--write', 'write flow.schema.json and config.schema.json (into schemas/, or --dir)')
  .option('--dir <dir>', 'with --write: the directory to write into (created if missing; default schemas)')
  .action(async (flags: { write?: boolean; dir?: string }) => {
    process.exitCode = await (await import('./schema.js')).schema(flags);
  });

program
  .command('errors')
  .description('explain an error code, list them all, or print docs/errors.md (--markdown)')
  .argument('[code]', 'a code, e.g. UNKNOWN_KEY')
  .option('--markdown', 'print the whole catalogue as Markdown')
  .action(async (code: string | undefined, flags: { markdown?: boolean }) => {
    process.exitCode = (await import('./errors.js')).errors(code, flags);
  });

program
  .command('emulator')
  .description('run the telephony service emulator: SMS REST v1.1, JSON-RPC, real-time calls (docs/emulator.md)')
  .option('-p, --port <port>', 'port to listen on (env EMULATOR_PORT, default 4010)')
  .option('-H, --host <host>', 'address to listen on (env EMULATOR_HOST, default 127.0.0.1)')
  .option('--login <login>', 'account login (env EMULATOR_LOGIN, default emulator)')
  .option('--password <password>', 'account password (env EMULATOR_PASSWORD, default emulator)')
  .option('--data <file.json>', 'keep the data in this JSON file across restarts (env EMULATOR_DATA)')
  .option(
    '--data-compact-bytes <bytes>',
    'compact the --data journal once it reaches this size (env EMULATOR_DATA_COMPACT_BYTES, default 8 MiB)',
  )
  .option('--realtime', 'run commands in real time instead of simulated time')
  .option('--speed <factor>', 'real time runs this many times faster, 1 to 1000 (default 1; 10: a 10 s wait lasts 1 s)')
  .option('--agents <file.yaml>', 'agents that dialouts ring: a YAML map of numbers to {answer_after, talk, answer}')
  .option('--reply-timeout <ms>', 'reply time limit of the real-time server (default 5000)')
  .option('--max-live-calls <n>', 'calls running at once, at most (default 200)')
  .option('--seed <seed>', 'seed of callids and hashes (default callscript)')
  .option(
    '--webhook <url>',
    'send SMS delivery reports and inbound SMS to this webhook receiver (env EMULATOR_WEBHOOK), e.g. ' +
      'http://127.0.0.1:3000/webhooks/callr',
  )
  .option(
    '--webhook-secret <secret>',
    'sign them with X-CALLR-HmacSignature, HMAC-SHA256 with this secret (env EMULATOR_WEBHOOK_SECRET)',
  )
  .option('-l, --log-level <level>', 'fatal|error|warn|info|debug|silent (default warn)')
  .option(
    '--server <url>',
    'the URL of the real-time server the calls are for, shown in the run-a-call line (env CALLSCRIPT_SERVER_URL; ' +
      'default: the origin of a --webhook to /webhooks/..., else not known)',
  )
  .action(async (flags) => {
    const r = await (await import('./emulator.js')).emulator(flags);
    if (typeof r === 'number') process.exitCode = r;
  });

program
  .command('mock-http')
  .description("serve mock HTTP routes (the format of a scenario's mocks.http) for flows' http steps (docs/testing.md)")
  .requiredOption(
    '--routes <file.yaml>',
    'the routes: routes: [ { method, url, match, status, body, headers, delay_ms, error, answers } ]',
  )
  .option('-p, --port <port>', 'port to listen on (default 4020)')
  .option('-H, --host <host>', 'address to listen on (default 127.0.0.1)')
  .option(
    '--log [file]',
    'log each request (method, path, body, the route and answer that served it): a line on stdout, or a JSON ' +
      'line appended to this file (headers too, credentials masked)',
  )
  .action(async (flags) => {
    const r = await (await import('./mock-http.js')).mockHttp(flags);
    if (typeof r === 'number') process.exitCode = r;
  });

program
  .command('call')
  .description(
    'run one call through the emulator and print its transcript (docs/emulator.md); exit 1 on protocol violations',
  )
  .option('--url <url>', 'real-time URL to call, e.g. http://127.0.0.1:3000/rt/front-desk')
  .option('--app <hash>', 'call the URL of this REALTIME10 application')
  .option('--did <number>', 'call the number routed to an application')
  .option('--outbound <number>', 'an outbound call to this number (calls.realtime), instead of an inbound one')
  .option('--caller <file>', 'caller script, YAML or JSON (docs/caller-script.md); default: press 1 at every read')
  .option('--emulator <url>', 'the emulator (env EMULATOR_URL, default http://127.0.0.1:4010)')
  .option('--login <login>', 'emulator account login (env EMULATOR_LOGIN)')
  .option('--password <password>', 'emulator account password (env EMULATOR_PASSWORD)')
  .option('--auth <login:password>', 'Basic credentials for --url (env RT_LOGIN / RT_PASSWORD)')
  .option('--json', 'print the transcript as JSON')
  .option('--full', 'print params in full')
  .option('--realtime', 'run the commands in real time')
  .option('--reply-timeout <ms>', "reply time limit for this call (default: the emulator's)")
  .action(async (flags) => {
    process.exitCode = await (await import('./call.js')).call(flags);
  });

program
  .command('test')
  .description(
    'run scenario files (*.test.yaml) against the flows, in process (docs/testing.md); exit 1 on a failure, ' +
      '2 on an invalid file',
  )
  .argument('[paths...]', 'scenario files or directories (default: the flows directory, --flows)')
  .option('-f, --flows <dir>', 'directory of the flows (env FLOWS_DIR, default flows)')
  .option(
    '--coverage',
    'report the steps and transitions of each flow the scenario files test (every flow of --flows when no ' +
      'path is given)',
  )
  .option('--coverage-json <file>', 'write the raw coverage data (JSON) to this file')
  .option(
    '--min-coverage <percent>',
    'exit 1 when under this percentage of the transitions of the flows tested, all together',
  )
  .option(
    '--min-coverage-per-flow <percent>',
    'exit 1 when any flow tested is under this percentage of its transitions',
  )
  .option(
    '-e, --env <name>',
    "the environment of the flows' environments: (env CALLSCRIPT_ENV; a scenario file's environment: wins)",
  )
  .option(
    '--full-diff',
    "show a failure's values whole (by default a long value is cut around its first difference, and a long map " +
      'or list narrowed to the member that differs)',
  )
  .action(async (paths: string[], flags) => {
    process.exitCode = await (await import('./test.js')).test(paths, flags);
  });

program
  .command('simulate')
  .description('an interactive call of a flow in the terminal, or played by a caller script (docs/simulate.md)')
  .argument('<flow>', 'a flow name (in --flows) or a .yaml file')
  .option('-f, --flows <dir>', 'directory of *.yaml flows (env FLOWS_DIR, default flows)')
  .option('--caller <file>', 'play the caller from this caller script (docs/caller-script.md) instead of asking')
  .option('--from <number>', "the caller's number (cli_number)")
  .option('--to <number>', 'the number dialled')
  .option('-e, --env <name>', "the environment of the flow's environments: (env CALLSCRIPT_ENV; default its first)")
  .option(
    '--vars <name=value>',
    "a start var of an outbound call, typed as the flow's vars: declares it (repeatable)",
    (v: string, all: string[] = []) => [...all, v],
  )
  .option(
    '--now <time>',
    "the call's clock at its first request: ISO 8601 with a zone, or epoch ms (default: a caller script's call.date, " +
      'else 2026-11-22 10:00 UTC, as test and paths)',
  )
  .option('--mocks <routes.yaml>', 'answer http lookups from these routes (the format of callscript mock-http)')
  .option(
    '--with <name=value>',
    "a param of a module run on its own, as a scenario's with: gives it (repeatable; every required one)",
    (v: string, all: string[] = []) => [...all, v],
  )
  .action(async (flow: string, flags) => {
    process.exitCode = await (await import('./simulate.js')).simulate(flow, flags);
  });

program
  .command('paths')
  .description(
    'write a scenario file with one case per transition not yet covered, each the shortest call that takes ' +
      'it, checked by the scenario runner (docs/testing.md)',
  )
  .argument('<flow>', 'a flow name (in the flows dir) or a path to a .yaml flow')
  .option('-f, --flows <dir>', 'directory of flows (env FLOWS_DIR, default flows)')
  .option('-o, --out <file>', 'write the scenario file here instead of stdout')
  .option('--covered <coverage.json>', 'leave out the transitions covered there (callscript test --coverage-json)')
  .option(
    '--max-seconds <n>',
    'stop searching after this long (default 60): the transitions not found by then are listed',
  )
  .option('-e, --env <name>', "the environment of the flow's environments: (env CALLSCRIPT_ENV; default its first)")
  .option(
    '--with <name=value>',
    "a param of a module run on its own, written in each case's with: (repeatable; required ones not given are " +
      'sampled)',
    (v: string, all: string[] = []) => [...all, v],
  )
  .action(
    async (
      flow: string,
      flags: { flows?: string; out?: string; covered?: string; maxSeconds?: string; env?: string; with?: string[] },
    ) => {
      process.exitCode = await (await import('./paths.js')).paths(flow, flags);
    },
  );

program
  .command('graph')
  .description(
    'print a flow as a Mermaid flowchart, a Graphviz digraph, or its xstate machine config (docs/testing.md)',
  )
  .argument('<flow>', 'a flow name (in the flows dir) or a path to a .yaml flow')
  .option('--format <format>', 'mermaid|dot|xstate (default mermaid)')
  .option('--coverage <coverage.json>', 'mark the transitions never taken (callscript test --coverage-json)')
  .option('-f, --flows <dir>', 'directory of flows (env FLOWS_DIR, default flows)')
  .option('-e, --env <name>', "the environment of the flow's environments: (env CALLSCRIPT_ENV; default its first)")
  .action(async (flow: string, flags: { format?: string; coverage?: string; flows?: string; env?: string }) => {
    process.exitCode = await (await import('./graph.js')).graph(flow, flags);
  });

program
  .command('calls')
  .description(
    'list the live calls of a running server, or its finished calls (--finished), from its admin API (docs/admin.md)',
  )
  .option('--finished', 'the finished calls (the call history), newest first')
  .option('--limit <n>', 'calls listed at most, 1..10000 (default 50)')
  .option('--json', 'print the calls as JSON')
  .option(
    '--server <url>',
    'the server: http://LOGIN:PASSWORD@host:port (env CALLSCRIPT_SERVER; default http://127.0.0.1:3000 with ' +
      'ADMIN_LOGIN / ADMIN_PASSWORD)',
  )
  .action(async (flags) => {
    process.exitCode = await (await import('./calls.js')).calls(flags);
  });

program
  .command('trace')
  .description(
    "print a live or finished call's path as a timeline: steps, results, commands sent, transitions, effects " +
      '(docs/admin.md)',
  )
  .argument('<callid>', 'the callid')
  .option('--json', 'print the call as the admin API answers it (JSON)')
  .option(
    '--server <url>',
    'the server: http://LOGIN:PASSWORD@host:port (env CALLSCRIPT_SERVER; default http://127.0.0.1:3000 with ' +
      'ADMIN_LOGIN / ADMIN_PASSWORD)',
  )
  .action(async (callid: string, flags) => {
    process.exitCode = await (await import('./calls.js')).trace(callid, flags);
  });

program
  .command('queues')
  .description(
    "show a running server's queues (callers waiting, agents, counts), or pause or resume an agent in a queue, " +
      'from its admin API (docs/admin.md)',
  )
  .argument('[name]', 'one queue (default: every queue the store knows)')
  .argument('[action]', 'pause or resume, with the agent number after it')
  .argument('[number]', "the agent's number, E.164")
  .option('--json', 'print what the admin API answers (JSON)')
  .option(
    '--server <url>',
    'the server: http://LOGIN:PASSWORD@host:port (env CALLSCRIPT_SERVER; default http://127.0.0.1:3000 with ' +
      'ADMIN_LOGIN / ADMIN_PASSWORD)',
  )
  .action(async (name: string | undefined, action: string | undefined, number: string | undefined, flags) => {
    process.exitCode = await (await import('./queues.js')).queues({ name, action, number }, flags);
  });

// The service (the CALLR API): its applications and outbound calls (docs/service.md).
// a usage mistake (a missing argument, an unknown option) exits 2, as the commands' own checks do
const usageExit2 = (c: Command) => c.exitOverride((e) => process.exit(e.exitCode === 0 ? 0 : 2));
const serviceOptions = (c: Command) =>
  usageExit2(c)
    .option(
      '--api <url>',
      "the service's JSON-RPC address (env CALLSCRIPT_API, api: in callscript.yaml; default the CALLR API " +
        'https://api.callr.com/json-rpc/v1.1/; the emulator: http://127.0.0.1:4010)',
    )
    .option('--account <login:password>', 'the service account (env CALLSCRIPT_ACCOUNT, account: in callscript.yaml)')
    .option(
      '-c, --config <file>',
      'read api: and account: from this file (env CALLSCRIPT_CONFIG, default ./callscript.yaml if present)',
    );

const appsCmd = usageExit2(program.command('apps')).description(
  'the REALTIME10 applications of the service account: list, create, update, show (docs/service.md)',
);
const appAction =
  (action: 'list' | 'create' | 'update' | 'show') =>
  async (...args: unknown[]) => {
    const hash = typeof args[0] === 'string' ? args[0] : undefined;
    const flags = (typeof args[0] === 'string' ? args[1] : args[0]) as AppFlags;
    process.exitCode = await (await import('./apps.js')).apps(action, hash, flags);
  };
const appCommon = (c: Command) =>
  serviceOptions(c)
    .option('--json', 'print the application objects as the API returns them')
    .option('--timeout <duration>', 'longest wait for the API (default 10s)');
appCommon(appsCmd.command('list').description('list the applications, as a table')).action(appAction('list'));
appCommon(
  appsCmd.command('show').description('show one application').argument('<hash>', 'the application hash'),
).action(appAction('show'));
appCommon(
  appsCmd
    .command('create')
    .description("create a REALTIME10 application whose calls are sent to --url (your callscript server's /rt/<flow>)")
    .requiredOption('--url <url>', "the real-time URL the service POSTs the calls' requests to")
    .option('--login <login>', 'HTTP Basic login the service sends to the URL (callscript.yaml auth:); with --password')
    .option('--password <password>', 'HTTP Basic password the service sends to the URL')
    .option('--name <name>', 'a name for the application (default: callscript <host><path>)'),
).action(appAction('create'));
appCommon(
  appsCmd
    .command('update')
    .description("change an application's URL, Basic credentials or name (the rest is kept)")
    .argument('<hash>', 'the application hash')
    .option('--url <url>', 'the new real-time URL')
    .option('--login <login>', 'the new HTTP Basic login; with --password ("" and "" for none)')
    .option('--password <password>', 'the new HTTP Basic password')
    .option('--name <name>', 'the new name'),
).action(appAction('update'));

serviceOptions(
  program
    .command('dial')
    .description(
      'place one outbound call; through --server, follow it to its end and print its outcome ' +
        '(docs/service.md); exit 0 completed or transferred, 1 not, 2 could not try',
    )
    .argument('<number>', 'the number to call, E.164 (e.g. +33612345678)')
    .option('--app <hash>', 'the REALTIME10 application whose URL the service calls (required)')
    .option(
      '--vars <name=value...>',
      'variables the flow starts with (only with --server; only those its vars: declare)',
    )
    .option('--cdr-field <text>', 'calls.realtime cdr_field (up to 32 letters and digits), back as call.cdr_field')
    .option('--cli <number>', 'the caller id shown: an E.164 number of the account, or BLOCKED')
    .option(
      '--server <url>',
      'place it through this callscript server: http://LOGIN:PASSWORD@host:port (env CALLSCRIPT_SERVER); ' +
        'without it, calls.realtime straight to the service',
    )
    .option('--timeout <duration>', 'with --server: give up following the call after this long (default 120s)')
    .option('--poll <duration>', 'with --server: time between two reads of the call (default 1s)')
    .option('--json', 'print the result as JSON'),
).action(async (number: string, flags: DialFlags) => {
  process.exitCode = await (await import('./dial.js')).dial(number, flags);
});

usageExit2(
  program
    .command('campaign')
    .description(
      'call every number of a CSV through a callscript server, one outbound call per row (the other columns: ' +
        "the flow's vars), with a rate, retries, a results CSV and resume (docs/campaign.md)",
    )
    .argument('<file.csv>', 'the numbers: a header row, a number column (else the first column), one row per call')
    .option('--app <hash>', 'the REALTIME10 application whose URL the service calls (required)')
    .option(
      '--server <url>',
      'the callscript server that places the calls: http://LOGIN:PASSWORD@host:port (env CALLSCRIPT_SERVER; ' +
        'default http://127.0.0.1:3000 with ADMIN_LOGIN / ADMIN_PASSWORD)',
    )
    .option('--rate <n>', 'calls placed per second at most, 0.001..1000 (default 1)')
    .option('--concurrency <n>', 'calls in progress at once at most, 1..1000 (default 5)')
    .option(
      '--retries <n>',
      'attempts after the first for a number busy, not answering or never connected, 0..20 (default 2)',
    )
    .option('--retry-delay <duration>', "wait between an attempt's end and the next (default 5m)")
    .option('--timeout <duration>', 'how long a call is followed (default 120s)')
    .option('--poll <duration>', 'time between two reads of a call in progress (default 1s)')
    .option('--results <file>', 'the results CSV (default <file>.results.csv)')
    .option('--state <file>', 'the state file, to resume (default <file.csv>.state.json)'),
).action(async (file: string, flags: CampaignCliFlags) => {
  process.exitCode = await (await import('./campaign.js')).campaign(file, flags);
});

program.parseAsync(process.argv).catch((err: Error) => {
  process.stderr.write(`callscript: ${printableLines(err.message)}\n`);
  process.exitCode = 2;
});
