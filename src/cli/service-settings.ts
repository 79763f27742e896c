/**
 * The service settings every command shares (docs/service.md): where the service's JSON-RPC
 * API is and the account to use it with. Each comes from, the first that gives it:
 * - the address: `--api URL`, env CALLSCRIPT_API, `api:` in callscript.yaml, the CALLR API
 *   (https://api.callr.com/json-rpc/v1.1/); a base URL without a path (the emulator's
 *   http://127.0.0.1:4010) gets /json-rpc/v1.1/;
 * - the account: `--account LOGIN:PASSWORD`, env CALLSCRIPT_ACCOUNT, `account: {login,
 *   password}` in callscript.yaml. The login ends at the first ":" (an HTTP Basic login has
 *   none); the password is the rest, colons included.
 * `callscript serve` takes the same from the environment and the file (no flags: a password
 * on a command line is seen by every user of the machine).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Diagnostic } from '../errors/diagnostic.js';
import { checkConfig } from '../config/check.js';
import type { ServerConfig } from '../config/types.js';
import { DEFAULT_API_URL, DEFAULT_SERVICE_TIMEOUT_MS, ServiceClient, serviceUrl } from '../service/jsonrpc.js';
import type { ServiceError } from '../service/errors.js';
import { formatDiagnostics } from '../flow/format.js';
import { parseDuration } from './duration.js';

export interface ServiceFlags {
  api?: string;
  account?: string;
  config?: string;
}

export interface Account {
  login: string;
  password: string;
}

export interface ServiceSettings {
  /** The JSON-RPC address, normalised. */
  url: string;
  /** Where it came from: --api, CALLSCRIPT_API, the config file, or the default. */
  urlFrom: string;
  account?: Account;
  accountFrom?: string;
}

/** `LOGIN:PASSWORD`: the login up to the first ":", the password after it (colons and all). */
export function parseAccount(text: string, what: string): Account | string {
  const i = text.indexOf(':');
  if (i <= 0)
    return (
      `${what} must be LOGIN:PASSWORD (the service account's login, a colon, its password), ` +
      `got ${i === 0 ? 'no login' : 'no colon'}`
    );
  const password = text.slice(i + 1);
  if (password === '') return `${what} must be LOGIN:PASSWORD: the password is empty`;
  return { login: text.slice(0, i), password };
}

/** The address and account from flags, the environment and the config (already checked), or why not. */
export function resolveService(
  flags: Pick<ServiceFlags, 'api' | 'account'>,
  env: NodeJS.ProcessEnv,
  config: Pick<ServerConfig, 'api' | 'account'> | undefined,
  configFile = 'callscript.yaml',
): ServiceSettings | string {
  const apiText = nonEmpty(flags.api) ?? nonEmpty(env.CALLSCRIPT_API) ?? config?.api ?? DEFAULT_API_URL;
  const urlFrom =
    nonEmpty(flags.api) !== undefined
      ? '--api'
      : nonEmpty(env.CALLSCRIPT_API) !== undefined
        ? 'CALLSCRIPT_API'
        : config?.api !== undefined
          ? `api: in ${configFile}`
          : 'the default';
  const url = serviceUrl(apiText);
  if (typeof url !== 'string') return `${urlFrom}: ${url.problem}`;
  const out: ServiceSettings = { url, urlFrom };
  const accountText = nonEmpty(flags.account) ?? nonEmpty(env.CALLSCRIPT_ACCOUNT);
  if (accountText !== undefined) {
    const what = nonEmpty(flags.account) !== undefined ? '--account' : 'CALLSCRIPT_ACCOUNT';
    const a = parseAccount(accountText, what);
    if (typeof a === 'string') return a;
    out.account = a;
    out.accountFrom = what;
  } else if (config?.account) {
    out.account = config.account;
    out.accountFrom = `account: in ${configFile}`;
  }
  return out;
}

/**
 * The config file a command reads for its service settings: --config, else CALLSCRIPT_CONFIG,
 * else ./callscript.yaml when it exists. Its diagnostics when it has errors.
 */
export async function readServiceConfig(
  flags: Pick<ServiceFlags, 'config'>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<
  | { ok: true; config?: ServerConfig; file?: string }
  | { ok: false; message: string; diagnostics: Diagnostic[]; sources: Map<string, string> }
> {
  const file =
    flags.config ??
    nonEmpty(env.CALLSCRIPT_CONFIG) ??
    (existsSync(resolve(cwd, 'callscript.yaml')) ? 'callscript.yaml' : undefined);
  if (file === undefined) return { ok: true };
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (err) {
    return {
      ok: false,
      message: `cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      diagnostics: [],
      sources: new Map(),
    };
  }
  const checked = checkConfig(text, file);
  if (!checked.config)
    return {
      ok: false,
      message: `${file} has errors (above): fix them, or give another file with --config`,
      diagnostics: checked.diagnostics,
      sources: new Map([[file, text]]),
    };
  return { ok: true, config: checked.config, file };
}

/** What to tell a user with no account. */
export const NO_ACCOUNT =
  'no service account: give --account LOGIN:PASSWORD, or set CALLSCRIPT_ACCOUNT, or account: { login, ' +
  "password } in callscript.yaml (the emulator's is emulator:emulator)";

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** A command's client of the service, from its flags; the exit code 2 (the message written) when it cannot have one. */
export async function openService(
  command: string,
  flags: ServiceFlags & { timeout?: string },
  env: NodeJS.ProcessEnv,
  cwd: string,
  err: NodeJS.WritableStream,
): Promise<{ client: ServiceClient; settings: ServiceSettings & { account: Account } } | number> {
  const fail = (msg: string) => (err.write(`callscript ${command}: ${msg}\n`), 2);
  const timeoutMs =
    flags.timeout === undefined
      ? DEFAULT_SERVICE_TIMEOUT_MS
      : parseDuration(flags.timeout, '--timeout', { minMs: 100, maxMs: 300_000 });
  if (typeof timeoutMs === 'string') return fail(timeoutMs);
  const read = await readServiceConfig(flags, env, cwd);
  if (!read.ok) {
    if (read.diagnostics.length > 0) err.write(formatDiagnostics(read.diagnostics, read.sources) + '\n');
    return fail(read.message);
  }
  const s = resolveService(flags, env, read.config, read.file);
  if (typeof s === 'string') return fail(s);
  if (!s.account) return fail(NO_ACCOUNT);
  const account = s.account;
  return {
    client: new ServiceClient({ url: s.url, login: account.login, password: account.password, timeoutMs }),
    settings: { ...s, account },
  };
}

/**
 * A ServiceError as a command says it, and its exit code: 1 the service refused (not found, invalid), 2 it could not be
 * asked (account refused, unreachable, timeout).
 */
export function serviceFailure(e: ServiceError, s: ServiceSettings): { message: string; exit: 1 | 2 } {
  if (e.isAuth)
    return {
      message:
        `the service refused the account (code 22, authentication failed): check the login and password ` +
        `(${s.accountFrom ?? 'the account'}) for ${s.url}`,
      exit: 2,
    };
  if (typeof e.code === 'number') return { message: e.message, exit: 1 };
  if (e.code === 'SERVICE_BAD_ARGS') return { message: e.message, exit: 2 };
  return {
    message: `${e.message} (the API address is from ${s.urlFrom}: --api, CALLSCRIPT_API, api: in callscript.yaml)`,
    exit: 2,
  };
}
