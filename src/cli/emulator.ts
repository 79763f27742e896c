/** `callscript emulator`: the telephony service on a laptop (src/emulator). */
import {
  createEmulator,
  DEFAULT_MAX_LIVE_CALLS,
  DEFAULT_HOST,
  DEFAULT_LOGIN,
  DEFAULT_PASSWORD,
  DEFAULT_PORT,
  DEFAULT_SEED,
  MAX_SPEED,
  MIN_SPEED,
  type Emulator,
} from '../emulator/server.js';
import { readAgentsFile } from '../emulator/agents/file.js';
import { logStreamFor } from './log-format.js';
import { isHttpUrl } from '../emulator/sms/validate.js';
import { secretProblem } from '../emulator/webhooks/hooks.js';
import { printableLines } from '../terminal/printable.js';

export interface EmulatorFlags {
  port?: string;
  host?: string;
  login?: string;
  password?: string;
  data?: string;
  dataCompactBytes?: string;
  maxLiveCalls?: string;
  realtime?: boolean;
  /** Real time this many times faster (1 to 1000). */
  speed?: string;
  /** The agents file (YAML map of numbers to agents). */
  agents?: string;
  replyTimeout?: string;
  seed?: string;
  webhook?: string;
  webhookSecret?: string;
  logLevel?: string;
  /** The URL of the real-time server the calls are for (`callscript serve`), for the run-a-call line. */
  server?: string;
}

/** `callscript serve`'s address when nothing else is configured (src/config/table-server.ts). */
const SERVE_DEFAULT = 'http://127.0.0.1:3000';

/**
 * The real-time server's URL: --server (env CALLSCRIPT_SERVER_URL), else the origin of a --webhook that is
 * callscript's own receiver (`/webhooks/...`), else unknown.
 */
function serverOf(flag: string | undefined, webhook: string | undefined): { url: string; from: string } | undefined {
  if (flag !== undefined) return { url: flag.replace(/\/+$/, ''), from: '--server' };
  if (webhook === undefined) return undefined;
  try {
    const u = new URL(webhook);
    return u.pathname.startsWith('/webhooks/') ? { url: u.origin, from: 'the origin of --webhook' } : undefined;
  } catch {
    return undefined;
  }
}

export async function emulator(
  flags: EmulatorFlags,
  env: NodeJS.ProcessEnv = process.env,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<Emulator | number> {
  const port = Number(flags.port ?? env.EMULATOR_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    err.write(`callscript emulator: --port must be 0 to 65535, got ${flags.port ?? env.EMULATOR_PORT}\n`);
    return 2;
  }
  const timeout = Number(flags.replyTimeout ?? 5000);
  if (!Number.isInteger(timeout) || timeout < 50 || timeout > 60000) {
    err.write(`callscript emulator: --reply-timeout must be 50 to 60000 ms, got ${flags.replyTimeout}\n`);
    return 2;
  }
  const compactText = flags.dataCompactBytes ?? env.EMULATOR_DATA_COMPACT_BYTES;
  const compact = compactText === undefined ? undefined : Number(compactText);
  if (compact !== undefined && (!Number.isInteger(compact) || compact < 4096 || compact > 2 ** 31)) {
    err.write(
      `callscript emulator: --data-compact-bytes must be a whole number of bytes from 4096 to 2147483648, ` +
        `got ${compactText}\n`,
    );
    return 2;
  }
  const maxLive = Number(flags.maxLiveCalls ?? DEFAULT_MAX_LIVE_CALLS);
  if (!Number.isInteger(maxLive) || maxLive < 1 || maxLive > 10000) {
    err.write(`callscript emulator: --max-live-calls must be 1 to 10000, got ${flags.maxLiveCalls}\n`);
    return 2;
  }
  const speed = Number(flags.speed ?? 1);
  if (!Number.isFinite(speed) || speed < MIN_SPEED || speed > MAX_SPEED) {
    err.write(
      `callscript emulator: --speed must be a number from ${MIN_SPEED} to ${MAX_SPEED} (how many times faster real ` +
        `time runs), got ${flags.speed}\n`,
    );
    return 2;
  }
  const agents = flags.agents === undefined ? undefined : await readAgentsFile(flags.agents);
  if (agents && !agents.ok) {
    err.write(`callscript emulator: ${printableLines(agents.message)}\n`);
    return 2;
  }
  const host = flags.host ?? env.EMULATOR_HOST ?? DEFAULT_HOST;
  const login = flags.login ?? env.EMULATOR_LOGIN ?? DEFAULT_LOGIN;
  const password = flags.password ?? env.EMULATOR_PASSWORD ?? DEFAULT_PASSWORD;
  const dataFile = flags.data ?? env.EMULATOR_DATA;
  const webhook = nonEmpty(flags.webhook ?? env.EMULATOR_WEBHOOK);
  const webhookSecret = nonEmpty(flags.webhookSecret ?? env.EMULATOR_WEBHOOK_SECRET);
  if (webhookSecret !== undefined && webhook === undefined) {
    err.write(
      'callscript emulator: --webhook-secret (EMULATOR_WEBHOOK_SECRET) signs the events sent to --webhook ' +
        'URL (EMULATOR_WEBHOOK): give the URL too\n',
    );
    return 2;
  }
  if (webhook !== undefined && !isHttpUrl(webhook)) {
    err.write(`callscript emulator: --webhook must be an http:// or https:// URL, got ${webhook}\n`);
    return 2;
  }
  const badSecret = webhookSecret === undefined ? null : secretProblem(webhookSecret);
  if (badSecret) {
    err.write(`callscript emulator: --webhook-secret ${badSecret}\n`);
    return 2;
  }
  const serverFlag = nonEmpty(flags.server ?? env.CALLSCRIPT_SERVER_URL);
  if (serverFlag !== undefined && !isHttpUrl(serverFlag)) {
    err.write(`callscript emulator: --server must be an http:// or https:// URL, got ${serverFlag}\n`);
    return 2;
  }
  const server = serverOf(serverFlag, webhook);
  const logs = logStreamFor(env, process.stdout);
  if (!logs.ok) {
    err.write(`callscript emulator: ${logs.message}\n`);
    return 2;
  }
  let emu: Emulator;
  try {
    emu = await createEmulator({
      login,
      password,
      realtime: flags.realtime ?? false,
      speed,
      ...(agents ? { agents: agents.agents } : {}),
      replyTimeoutMs: timeout,
      maxLiveCalls: maxLive,
      seed: flags.seed ?? DEFAULT_SEED,
      ...(webhook !== undefined
        ? { webhooks: [{ endpoint: webhook, ...(webhookSecret !== undefined ? { secret: webhookSecret } : {}) }] }
        : {}),
      logLevel: flags.logLevel ?? env.LOG_LEVEL ?? 'warn',
      ...(logs.stream ? { logStream: logs.stream } : {}),
      ...(dataFile ? { dataFile } : {}),
      ...(compact !== undefined ? { dataCompactBytes: compact } : {}),
    });
  } catch (e) {
    // a data file's problems may quote it: control characters escaped
    err.write(`callscript emulator: ${printableLines((e as Error).message)}\n`);
    return 2;
  }
  let base: string;
  try {
    base = await emu.listen(port, host);
  } catch (e) {
    err.write(`callscript emulator: cannot listen on ${host}:${port}: ${(e as Error).message}\n`);
    await emu.close().catch(() => undefined);
    return 2;
  }
  const s = emu.ctx.store;
  out.write(
    `callscript emulator on ${base}  (account ${login} / ${password === DEFAULT_PASSWORD ? password : '****'})\n`,
  );
  out.write(`  SMS REST v1.1  ${base}/rest/v1.1/sms\n`);
  out.write(`  JSON-RPC       ${base}/json-rpc/v1.1/\n`);
  out.write(`  control API    ${base}/emulator/calls\n`);
  out.write(
    '  data           ' +
      (dataFile
        ? `${dataFile} (${s.apps.size} apps, ${s.sms.size} SMS, ${s.calls.size} calls)`
        : 'in memory (--data file.json to keep it)') +
      '\n',
  );
  const pace = flags.realtime ? (speed === 1 ? 'real time' : `real time x${speed}`) : 'simulated time';
  out.write(`  calls          ${pace}, replies within ${timeout} ms\n`);
  if (agents) out.write(`  agents         ${agents.agents.size} from ${flags.agents} (GET ${base}/emulator/agents)\n`);
  if (webhook !== undefined)
    out.write(
      `  webhooks       sms.mt.status_update and sms.mo ` +
        `to ${webhook}, ` +
        (webhookSecret !== undefined
          ? 'signed (X-CALLR-HmacSignature, HMAC-SHA256)'
          : 'unsigned (no --webhook-secret)') +
        '\n',
    );
  out.write(
    server
      ? `  server         ${server.url} (${server.from})\n`
      : `  server         not known: give callscript serve's URL with --server (its default: ${SERVE_DEFAULT})\n`,
  );
  // the last line: scripts wait for it
  out.write(
    `run a call: callscript call --emulator ${base} --url ${server ? server.url : '<server>'}/rt/<flow> ` +
      '--caller caller.yaml\n',
  );
  const stop = async () => {
    await emu.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return emu;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
