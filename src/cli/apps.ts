/**
 * `callscript apps list | create | update | show`: the REALTIME10 applications of the
 * service account (the CALLR API's apps.* methods, docs/service.md), through
 * src/service/jsonrpc.ts. Tables by default (passwords shown as ****), `--json` for the app
 * objects as the API returns them.
 *
 * Exit code: 0 done; 1 the service refused (no such application, a parameter it refuses);
 * 2 it could not be asked (bad flags, no account, the account refused, unreachable, timeout).
 */
import { printable } from '../terminal/printable.js';
import { ServiceError } from '../service/errors.js';
import type { App } from '../service/types.js';
import { shortTime, table } from './calls-format.js';
import { openService, serviceFailure, type ServiceFlags } from './service-settings.js';

export interface AppsFlags extends ServiceFlags {
  json?: boolean;
  timeout?: string;
}

export interface AppFlags extends AppsFlags {
  url?: string;
  login?: string;
  password?: string;
  name?: string;
}

type Io = { env?: NodeJS.ProcessEnv; cwd?: string; out?: NodeJS.WritableStream; err?: NodeJS.WritableStream };

export async function apps(
  action: 'list' | 'create' | 'update' | 'show',
  hash: string | undefined,
  flags: AppFlags,
  io: Io = {},
): Promise<number> {
  const env = io.env ?? process.env;
  const out = io.out ?? process.stdout;
  const err = io.err ?? process.stderr;
  const cmd = `apps ${action}`;
  // the service's words (its error messages, the apps' names and URLs) are shown with control characters escaped
  const fail = (msg: string, code: number) => (err.write(`callscript ${cmd}: ${printable(msg)}\n`), code);

  // flags first: a mistake is told before the account is looked for
  if ((action === 'show' || action === 'update') && (hash === undefined || !/^[A-Za-z0-9]{1,64}$/.test(hash)))
    return fail(
      `give the application's hash (letters and digits, e.g. A1B2C3D4), ` +
        `not ${hash === undefined ? 'nothing' : `"${hash.slice(0, 40)}"`}`,
      2,
    );
  if (action === 'create') {
    if (flags.url === undefined)
      return fail(
        "--url is required: the http:// or https:// address the service sends the calls' requests to, e.g. " +
          'https://ivr.example.com/rt/front-desk',
        2,
      );
    const why = urlProblem(flags.url);
    if (why) return fail(why, 2);
  }
  if (action === 'update') {
    if (
      flags.url === undefined &&
      flags.login === undefined &&
      flags.password === undefined &&
      flags.name === undefined
    )
      return fail('nothing to change: give --url, --login and --password, or --name', 2);
    if (flags.url !== undefined && urlProblem(flags.url)) return fail(urlProblem(flags.url)!, 2);
  }
  if (action === 'create' || action === 'update') {
    if ((flags.login === undefined) !== (flags.password === undefined))
      return fail(
        '--login and --password go together: the HTTP Basic credentials the service sends to the URL ' +
          '(callscript.yaml auth:, RT_LOGIN / RT_PASSWORD on the server)',
        2,
      );
    if (flags.login !== undefined && flags.login.includes(':'))
      return fail('--login: an HTTP Basic login has no ":" (the password may)', 2);
    if (flags.name !== undefined && (flags.name.trim() === '' || flags.name.length > 128))
      return fail('--name must be 1 to 128 characters', 2);

    if (flags.name !== undefined && /[\u0000-\u001f\u007f-\u009f]/.test(flags.name))
      return fail('--name may not hold control characters (tabs, newlines, terminal escapes)', 2);
  }

  const opened = await openService(cmd, flags, env, io.cwd ?? process.cwd(), err);
  if (typeof opened === 'number') return opened;
  const { client, settings } = opened;
  try {
    switch (action) {
      case 'list': {
        const list = await client.apps.list();
        out.write(flags.json ? `${JSON.stringify(list, null, 2)}\n` : `${appsTable(list.map(shown))}\n`);
        return 0;
      }
      case 'show': {
        const app = await client.apps.get(hash!);
        out.write(flags.json ? `${JSON.stringify(app, null, 2)}\n` : `${appText(shown(app))}\n`);
        return 0;
      }
      case 'create': {
        const name = flags.name ?? defaultName(flags.url!);
        const app = await client.apps.create(name, {
          url: flags.url!,
          ...(flags.login !== undefined ? { login: flags.login, password: flags.password! } : {}),
        });
        out.write(
          flags.json
            ? `${JSON.stringify(app, null, 2)}\n`
            : `created application ${printable(app.hash)}\n${appText(shown(app))}\n`,
        );
        return 0;
      }
      case 'update': {
        // the API takes the name and params whole: the app's own, with the changes given
        const app = await client.apps.get(hash!);
        const p = app.p;
        const login = flags.login ?? str(p.login);
        const password = flags.password ?? str(p.password);
        const url = flags.url ?? str(p.url);
        const updated = await client.apps.update(hash!, flags.name ?? app.name, {
          url,
          ...(login !== '' || password !== '' ? { login, password } : {}),
        });
        out.write(
          flags.json
            ? `${JSON.stringify(updated, null, 2)}\n`
            : `updated application ${printable(updated.hash)}\n${appText(shown(updated))}\n`,
        );
        return 0;
      }
    }
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    const f = serviceFailure(e, settings);
    return fail(f.message, f.exit);
  }
}

/** The applications as a table: hash, name, URL, Basic login (none: no auth), last update. */
export function appsTable(list: readonly App[]): string {
  if (list.length === 0) return 'no applications (create one: callscript apps create --url URL)';
  return table(
    ['HASH', 'NAME', 'URL', 'LOGIN', 'UPDATED (UTC)'],
    list.map((a) => [
      a.hash,
      a.name ?? '',
      str(a.p.url) || '-',
      str(a.p.login) || '(no auth)',
      shortTime(dateText(a.date_update ?? a.date_creation)),
    ]),
  );
}

/** One application, a field a line; the password masked. */
export function appText(a: App): string {
  const p = a.p;
  const rows: [string, string][] = [
    ['hash', a.hash],
    ['name', a.name ?? ''],
    ['type', a.package ?? 'REALTIME10'],
    ['url', str(p.url) || '-'],
    ['login', str(p.login) || '(no auth: the service sends no credentials)'],
    ['password', str(p.password) ? '****' : '-'],
    ['format', str(p.data_format) || '-'],
    ['created', dateText(a.date_creation) || '-'],
    ['updated', dateText(a.date_update) || '-'],
  ];
  return rows.map(([k, v]) => `${k.padEnd(9)}${v}`).join('\n');
}

/**
 * An application with its text fields' control characters escaped (a name or URL may hold a terminal's escape
 * sequences).
 */
function shown(a: App): App {
  const esc = (o: object) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? printable(v) : v]));
  return { ...esc(a), p: esc(a.p ?? {}) } as App;
}

function defaultName(url: string): string {
  const u = new URL(url);
  return `callscript ${u.host}${u.pathname === '/' ? '' : u.pathname}`.slice(0, 128);
}

function urlProblem(url: string): string | undefined {
  try {
    const u = new URL(url);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '') return undefined;
  } catch {
    // below
  }
  return (
    `--url must be the http:// or https:// address of your callscript server's real-time route (e.g. ` +
    `https://ivr.example.com/rt/front-desk), not "${url.slice(0, 80)}"`
  );
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The API's datetimes (YYYY-MM-DD HH:MM:SS, UTC) as they are; ISO ones shortened. */
function dateText(v: unknown): string {
  if (typeof v !== 'string') return '';
  return v.includes('T') ? shortTime(v) : v;
}
