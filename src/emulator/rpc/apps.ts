/** REALTIME10 applications: the customer URL and the Basic credentials the service uses. */
import { isHttpUrl, type Checked } from '../sms/validate.js';
import { formatDatetime } from '../time.js';

export interface AppParams {
  url: string;
  login: string;
  password: string;
  data_format: 'JSON';
}

export interface AppRecord {
  hash: string;
  name: string;
  package: 'REALTIME10';
  p: AppParams;
  date_creation: string;
  date_update: string;
}

const PARAM_KEYS = ['url', 'login', 'password', 'data_format'];

/** Checks apps.create's params: [type, name, params]. */
export function checkNewApp(type: unknown, name: unknown, params: unknown): Checked<{ name: string; p: AppParams }> {
  if (typeof type !== 'string') return fail(`params[0] (type) must be a string, e.g. "REALTIME10"`);
  if (type !== 'REALTIME10')
    return fail(`params[0] (type): "${type}" is not emulated; the only application type is REALTIME10`);
  if (typeof name !== 'string' || name.trim() === '') return fail('params[1] (name) must be a non-empty string');
  if (name.length > 128) return fail(`params[1] (name) is ${name.length} characters long; at most 128`);
  if (!params || typeof params !== 'object' || Array.isArray(params))
    return fail('params[2] (params) must be an object {url, login, password, data_format: "JSON"}');
  const p = params as Record<string, unknown>;
  const extra = Object.keys(p).find((k) => !PARAM_KEYS.includes(k));
  if (extra) return fail(`params[2].${extra} is not a REALTIME10 parameter; they are ${PARAM_KEYS.join(', ')}`);
  if (typeof p.url !== 'string' || !isHttpUrl(p.url))
    return fail(
      `params[2].url must be the http:// or https:// URL of your real-time server, ` +
        `got ${JSON.stringify(p.url ?? null)}`,
    );
  for (const k of ['login', 'password']) {
    if (p[k] !== undefined && p[k] !== null && typeof p[k] !== 'string') return fail(`params[2].${k} must be a string`);
  }
  if (p.data_format !== undefined && p.data_format !== 'JSON')
    return fail(`params[2].data_format must be "JSON", got ${JSON.stringify(p.data_format)}`);
  return {
    ok: true,
    value: {
      name,
      p: {
        url: p.url,
        login: (p.login as string | undefined) ?? '',
        password: (p.password as string | undefined) ?? '',
        data_format: 'JSON',
      },
    },
  };
}

/**
 * Checks apps.update's params: [hash, name, params]. `name` null keeps the name; `params`
 * (null keeps them) are merged over the app's: the keys given replace theirs.
 */
export function checkAppUpdate(
  app: AppRecord,
  name: unknown,
  params: unknown,
): Checked<{ name: string; p: AppParams }> {
  const newName = name === null || name === undefined ? app.name : name;
  const merged =
    params === null || params === undefined
      ? app.p
      : params && typeof params === 'object' && !Array.isArray(params)
        ? { ...app.p, ...(params as object) }
        : params;
  return checkNewApp('REALTIME10', newName, merged);
}

export function newApp(hash: string, name: string, p: AppParams, now: number): AppRecord {
  const d = formatDatetime(now);
  return { hash, name, package: 'REALTIME10', p, date_creation: d, date_update: d };
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}
