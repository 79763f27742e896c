/**
 * The emulator of the telephony service, as one Fastify app:
 *   /rest/v1.1/...      the SMS REST API (sms/rest.ts)
 *   /json-rpc/v1.1/     JSON-RPC 2.0 (rpc/jsonrpc.ts)
 *   /emulator/...       the control API: run calls, transcripts, test hooks (control/routes.ts)
 * the real-time driver behind calls.realtime and POST /emulator/calls, and the webhook
 * events sent to subscriptions (webhooks/).
 * It talks to callscript (or any customer server) over HTTP only.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { EmulatorContext, Logger } from './context.js';
import { controlApi } from './control/routes.js';
import { openData } from './persist/open.js';
import type { Disk } from './persist/files.js';
import type { Journal } from './persist/journal.js';
import { jsonRpc } from './rpc/jsonrpc.js';
import { jsonTooDeep, TOO_DEEP } from './json-depth.js';
import { DEFAULT_SMS_SETTINGS, type SmsSettings } from './sms/record.js';
import { smsRest } from './sms/rest.js';
import { EmulatorStore } from './store.js';
import { realSleep, systemClock, type Clock, type Sleep } from './time.js';
import { clientError, frameworkError, guardEmulator } from './transport-errors.js';
import { EmulatorWebhooks } from './webhooks/events.js';
import { HOOK_TYPES, newHook, secretProblem, type HookRecord } from './webhooks/hooks.js';
import { DEFAULT_RETRY, type RetryPolicy } from './webhooks/sender.js';
import { isHttpUrl } from './sms/validate.js';
import { checkAgent, type AgentBehaviour } from './agents/behaviour.js';
import { AgentTable } from './agents/table.js';
import { checkE164 } from '../protocol/formats.js';

export const DEFAULT_PORT = 4010;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_LOGIN = 'emulator';
export const DEFAULT_PASSWORD = 'emulator';
export const DEFAULT_SEED = 'callscript';
export const DEFAULT_MAX_LIVE_CALLS = 200;
/** Bounds of `speed` (--speed). */
export const MIN_SPEED = 1;
export const MAX_SPEED = 1000;

export interface EmulatorOptions {
  login?: string;
  password?: string;
  /** A JSON file that keeps the data across restarts (with its journal `<file>.journal`). */
  dataFile?: string;
  /** Compact the journal once it reaches this many bytes (and the data file's size); default 8 MiB. */
  dataCompactBytes?: number;
  /** The file system of --data (tests give one that fails). */
  disk?: Disk;
  /** Seed of the ids (callids, hashes); the data file's state wins when there is one. */
  seed?: string;
  /** Wait for real the simulated duration of commands. */
  realtime?: boolean;
  /**
   * Real time runs this many times faster (1 to 1000, default 1): with 10, a 10 s wait lasts 1 s. Waits go through
   * `sleep` (ms / speed).
   */
  speed?: number;
  /** The emulated agents at start, number (E.164) -> behaviour (`--agents`, agents/load.ts); default none. */
  agents?: ReadonlyMap<string, AgentBehaviour>;
  /** The reply time limit, 5000 ms like the service. */
  replyTimeoutMs?: number;
  /** The emulator hangs up a call after this many commands (default 500). */
  maxCommands?: number;
  /** Calls running at once, at most (default 200); more are refused until some end. */
  maxLiveCalls?: number;
  /** Transcripts kept (default 1000; older ones are forgotten). */
  maxTranscripts?: number;
  /** SMS kept, at most (the oldest are forgotten first); default 100,000. */
  maxSms?: number;
  clock?: Clock;
  sleep?: Sleep;
  sms?: Partial<SmsSettings>;
  /** Longest time to receive a whole request, headers and body (default 30 s): then 408 and the connection closes. */
  requestTimeoutMs?: number;
  /** pino level, or false for no logs (default warn). */
  logLevel?: string | false;
  /** Where the log lines go (a pino destination); default pino's stdout, JSON lines. */
  logStream?: DestinationStream;
  /**
   * Webhook receivers subscribed at start to every event type (`--webhook URL
   * --webhook-secret S`): not kept with the data, not forgotten by a reset.
   */
  webhooks?: { endpoint: string; secret?: string }[];
  /** How webhook deliveries are tried again (default 5 tries, after 1 s, 5 s, 30 s, 2 min; 5 s per attempt). */
  webhookRetry?: Partial<RetryPolicy>;
}

export interface Emulator {
  app: FastifyInstance;
  ctx: EmulatorContext;
  /** Listens; resolves to the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** Ends live calls, waits for them, stops listening, compacts and closes the data file. */
  close(): Promise<void>;
}

export async function createEmulator(opts: EmulatorOptions = {}): Promise<Emulator> {
  const requestTimeout = opts.requestTimeoutMs ?? 30_000;
  const app = Fastify({
    logger:
      opts.logLevel === false
        ? false
        : { level: opts.logLevel ?? 'warn', ...(opts.logStream ? { stream: opts.logStream } : {}) },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 2 * 1024 * 1024,
    // A client that sends its request slowly, or half of it, holds a connection: not for long.
    // Given to http.createServer too: set only afterwards (as Fastify does), Node 20 times
    // out requests whose headers never end, but not those whose body never ends.
    requestTimeout,
    // requireHostHeader: Node would answer a missing Host with an empty 400; guardEmulator answers it in the envelope.
    http: { requestTimeout, connectionsCheckingInterval: Math.min(1000, requestTimeout), requireHostHeader: false },
    routerOptions: { ignoreTrailingSlash: true },
    // errors answered before a route runs, in the envelope of the API asked
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
  });
  guardEmulator(app);
  const log: Logger = {
    info: (o, m) => app.log.info(o, m),
    warn: (o, m) => app.log.warn(o, m),
    error: (o, m) => app.log.error(o, m),
  };
  const speed = opts.speed ?? 1;
  if (!(typeof speed === 'number' && speed >= MIN_SPEED && speed <= MAX_SPEED))
    throw new Error(`speed must be a number from ${MIN_SPEED} to ${MAX_SPEED}, got ${speed}`);
  const clock = opts.clock ?? systemClock;
  const agents = agentTable(opts.agents, clock);
  const store = new EmulatorStore(opts.seed ?? DEFAULT_SEED, opts.maxTranscripts ?? 1000, opts.maxSms);
  // checked before the data file is opened: a bad one stops the start with nothing to close
  const configured = configuredHooks(opts.webhooks ?? [], clock.now());
  let journal: Journal | undefined;
  if (opts.dataFile) {
    journal = await openData(store, opts.dataFile, log, {
      ...(opts.dataCompactBytes !== undefined ? { compactBytes: opts.dataCompactBytes } : {}),
      ...(opts.disk ? { disk: opts.disk } : {}),
    });
  }
  const webhooks = new EmulatorWebhooks(store, clock, log, configured, { ...DEFAULT_RETRY, ...opts.webhookRetry });
  const ctx: EmulatorContext = {
    store,
    clock,
    sleep: opts.sleep ?? realSleep,
    account: { login: opts.login ?? DEFAULT_LOGIN, password: opts.password ?? DEFAULT_PASSWORD },
    sms: { ...DEFAULT_SMS_SETTINGS, ...opts.sms },
    calls: {
      realtime: opts.realtime ?? false,
      speed,
      replyTimeoutMs: opts.replyTimeoutMs ?? 5000,
      maxCommands: opts.maxCommands ?? 500,
      maxLiveCalls: opts.maxLiveCalls ?? DEFAULT_MAX_LIVE_CALLS,
    },
    smsFailures: new Map(),
    live: new Map(),
    agents,
    background: new Set(),
    webhooks,
    log,
  };

  // Fastify's JSON parser (with its __proto__ checks), after a look at the nesting depth.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonTooDeep(body as string))
      return done(
        Object.assign(new Error(`the body is ${TOO_DEEP}`), { statusCode: 400, code: 'EMU_TOO_DEEP' }),
        undefined,
      );
    json(req, body as string, done);
  });

  await app.register(smsRest(ctx), { prefix: '/rest/v1.1' });
  await app.register(jsonRpc(ctx), { prefix: '/json-rpc/v1.1' });
  await app.register(controlApi(ctx), { prefix: '/emulator' });
  app.get('/', async () => ({
    name: 'callscript emulator',
    endpoints: {
      sms_rest: '/rest/v1.1/sms',
      json_rpc: '/json-rpc/v1.1/',
      control: '/emulator/calls',
      webhook_deliveries: '/emulator/webhooks/deliveries',
      agents: '/emulator/agents',
      health: '/emulator/health',
    },
    docs: 'docs/emulator.md',
  }));
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({
      error: {
        code: 'NOT_FOUND',
        message: `no endpoint ${req.method} ${req.url.split('?')[0]}: see GET / for the emulator's endpoints`,
      },
    }),
  );
  await app.ready();

  return {
    app,
    ctx,
    async listen(port = DEFAULT_PORT, host = DEFAULT_HOST) {
      await app.listen({ port, host });
      const addr = app.server.address();
      const p = typeof addr === 'object' && addr ? addr.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${p}`;
    },
    async close() {
      for (const c of ctx.live.values()) c.hangUp('emulator', 'the emulator is shutting down');
      await Promise.allSettled([...ctx.background]);
      await webhooks.close();
      await app.close();
      await journal?.close();
    },
  };
}

/**
 * The subscriptions given at start: each receiver gets every event type, with its secret (checked: a bad one is an
 * error).
 */
function configuredHooks(list: { endpoint: string; secret?: string }[], now: number): HookRecord[] {
  const out: HookRecord[] = [];
  for (const w of list) {
    if (!isHttpUrl(w.endpoint)) throw new Error(`webhook ${w.endpoint}: not an http:// or https:// URL`);
    if (w.secret !== undefined) {
      const bad = secretProblem(w.secret);
      if (bad) throw new Error(`the webhook secret ${bad}`);
    }
    for (const type of HOOK_TYPES) {
      const hook = newHook(
        `CONF${String(out.length).padStart(4, '0')}`,
        {
          type,
          endpoint: w.endpoint,
          options: {
            format: 'JSON',
            hmac_algo: 'SHA256',
            ...(w.secret !== undefined ? { hmac_secret: w.secret } : {}),
          },
        },
        now,
      );
      out.push({ ...hook, configured: true });
    }
  }
  return out;
}

/** The agents given at start, checked as the control API checks them: a bad one is an error. */
function agentTable(given: ReadonlyMap<string, AgentBehaviour> | undefined, clock: Clock): AgentTable {
  const table = new AgentTable(clock);
  for (const [number, b] of given ?? []) {
    const bad = checkE164(number);
    if (bad) throw new Error(`agent ${number}: ${bad}`);
    const fields = new Map<string, unknown>([['answer', b.answer]]);
    if (b.answer) fields.set('answer_after', b.answerAfterS).set('talk', b.talkS);
    const c = checkAgent(number, fields);
    if (!c.ok) throw new Error(`agent ${number}: ${c.problems.map((p) => p.message).join('; ')}`);
    if (!table.set(number, c.behaviour)) throw new Error(`more agents than the emulator keeps`);
  }
  return table;
}
