/**
 * `environments:` (version 2): substitutions per environment (`{{ env.x }}` in templates,
 * `env.x` in conditions). Values are literal text, never templates. Every environment
 * defines the same keys (one ENV_KEY_MISSING per environment that lacks some, at its
 * name). The selected environment (--env, `environment:` in callscript.yaml,
 * CALLSCRIPT_ENV; none: the first one written) must be one of the flow's.
 */
import { checkFormat } from '../protocol/formats.js';
import type { FormatName } from '../protocol/commands.js';
import { type Ctx, asMap, didYouMean, report, requireV2, unknownKey, VAR_RE, ID_RE } from './check-context.js';
import type { EnvFrom, EnvValue, FlowModel } from './model.js';
import { render } from './expr.js';
import { describe, type YEntry, type YNode } from './yaml.js';
import { FORMAT_HINTS } from './check-values.js';

export const MAX_ENVIRONMENTS = 100;
export const MAX_ENV_KEYS = 500;
/** The longest value, in characters. */
export const MAX_ENV_VALUE = 4096;

export interface Environments {
  all: Record<string, Record<string, EnvValue>>;
  selected?: string;
  /** Keys whose value is a secret: `from_env:` of a variable declared in `secrets:`, in every environment. */
  secretKeys: ReadonlySet<string>;
}

/** A server environment variable's name, as `secrets:` names them. */
const SERVER_VAR_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** The keys of a value read from the server's environment. */
export const FROM_ENV_KEYS = ['from_env', 'default'] as const;

/** An environment's values: its literal ones, and those read from the server's environment when the call runs. */
export function splitEnv(
  values: Record<string, EnvValue>,
  secretKeys: ReadonlySet<string>,
): { env: Record<string, string>; from?: Record<string, EnvFrom> } {
  const env: Record<string, string> = {};
  let from: Record<string, EnvFrom> | undefined;
  for (const [k, v] of Object.entries(values)) {
    if (typeof v === 'string') env[k] = v;
    else
      (from ??= {})[k] = {
        name: v.from_env,
        ...(v.default !== undefined ? { default: v.default } : {}),
        ...(secretKeys.has(k) ? { secret: true } : {}),
      };
  }
  return from ? { env, from } : { env };
}

export function checkEnvironments(
  ctx: Ctx,
  e: YEntry | undefined,
  selected: string | undefined,
): Environments | undefined {
  if (!e) return undefined;
  requireV2(ctx, e, 'environments:');
  const map = asMap(ctx, e.value, 'environments');
  if (!map) {
    ctx.v2.envKeys = new Set();
    return undefined;
  }
  if (map.entries.length > MAX_ENVIRONMENTS) {
    report(
      ctx,
      'TOO_MANY_ENTRIES',
      e,
      `environments: ${map.entries.length.toLocaleString('en-US')} environments; a flow may have at ` +
        `most ${MAX_ENVIRONMENTS}`,
    );
    ctx.v2.envKeys = new Set();
    return undefined;
  }
  const all: Record<string, Record<string, EnvValue>> = {};
  const keys = new Set<string>();
  let ok = true;
  for (const env of map.entries) {
    if (!ID_RE.test(env.key)) {
      report(
        ctx,
        'BAD_NAME',
        env,
        `the environment name '${env.key}' may use only letters, digits, - and _ (64 at most)`,
      );
      ok = false;
      continue;
    }
    const m = asMap(ctx, env.value, `environment ${env.key}`);
    if (!m) {
      ok = false;
      continue;
    }
    if (m.entries.length > MAX_ENV_KEYS) {
      report(
        ctx,
        'TOO_MANY_ENTRIES',
        env,
        `environment ${env.key}: ${m.entries.length.toLocaleString('en-US')} keys; an environment may have ` +
          `at most ${MAX_ENV_KEYS}`,
      );
      ok = false;
      continue;
    }
    const vals: Record<string, EnvValue> = {};
    for (const kv of m.entries) {
      keys.add(kv.key);
      if (!VAR_RE.test(kv.key)) {
        report(
          ctx,
          'BAD_NAME',
          kv,
          `environment ${env.key}: '${kv.key}' is not a valid key: start with a letter or _, then letters, ` +
            `digits and _ (64 at most)`,
        );
        ok = false;
        continue;
      }
      const v = envValue(ctx, kv.value, `environment ${env.key}: ${kv.key}: `);
      if (v === undefined) ok = false;
      else vals[kv.key] = v;
    }
    all[env.key] = vals;
  }
  ctx.v2.envKeys = keys;
  for (const env of map.entries) {
    const vals = all[env.key];
    if (!vals || env.value.kind !== 'map') continue;
    const written = new Set(env.value.entries.map((x) => x.key));
    const missing = [...keys].filter((k) => !written.has(k));
    if (missing.length > 0) {
      report(
        ctx,
        'ENV_KEY_MISSING',
        env,
        `environment ${env.key} has no ${missing.map((k) => `'${k}'`).join(', ')} ` +
          `(${missing.length === 1 ? 'it is' : 'they are'} defined in another environment)`,
        `Give ${env.key} a value for ${missing.join(', ')}: every environment defines the same keys.`,
      );
      ok = false;
    }
  }
  const secretKeys = checkSecretValues(ctx, map.entries, all);
  if (secretKeys === undefined) ok = false;
  ctx.v2.envSecrets = secretKeys ?? new Set();
  // the literal values, with which checked params are checked now (a server variable is known when the call runs)
  ctx.v2.environments = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, splitEnv(v, new Set()).env]));
  const names = Object.keys(all);
  let name = selected;
  if (name !== undefined && !(name in all) && map.entries.every((x) => x.key !== name)) {
    report(
      ctx,
      'UNKNOWN_ENVIRONMENT',
      e,
      `the environment '${name}' is selected (--env, environment: or CALLSCRIPT_ENV), and this flow has no ` +
        `such environment`,
      didYouMean(name, names) ?? `Its environments: ${names.slice(0, 12).join(', ')}.`,
    );
    return undefined;
  }
  name ??= map.entries[0]?.key;
  return ok
    ? { all, secretKeys: secretKeys ?? new Set(), ...(name !== undefined ? { selected: name } : {}) }
    : undefined;
}

/**
 * The keys whose value is a secret: in one environment at least, a `from_env:` of a variable `secrets:` declares. Such
 * a key is a secret in every environment (it is read in http requests only): each must read a declared secret, with
 * no default written in the flow. undefined after a report.
 */
function checkSecretValues(
  ctx: Ctx,
  envs: readonly YEntry[],
  all: Record<string, Record<string, EnvValue>>,
): Set<string> | undefined {
  const declared = ctx.secrets ?? [];
  const secret = (v: EnvValue | undefined): v is { from_env: string; default?: string } =>
    typeof v === 'object' && declared.includes(v.from_env);
  const keys = new Set<string>();
  const first = new Map<string, string>();
  for (const [env, vals] of Object.entries(all))
    for (const [k, v] of Object.entries(vals))
      if (secret(v) && !keys.has(k)) {
        keys.add(k);
        first.set(k, `${env} reads the secret ${v.from_env}`);
      }
  let ok = true;
  for (const env of envs) {
    if (env.value.kind !== 'map') continue;
    for (const kv of env.value.entries) {
      if (!keys.has(kv.key)) continue;
      const v = all[env.key]?.[kv.key];
      if (v === undefined) continue;
      if (!secret(v)) {
        report(
          ctx,
          'TYPE_MISMATCH',
          kv.value,
          `environment ${env.key}: ${kv.key} is a secret (environment ${first.get(kv.key)}, declared in ` +
            `secrets:), and here it is not`,
          `Read a secret here too: ${kv.key}: { from_env: NAME } with NAME in secrets:. A secret is read in ` +
            `http requests only, and never written in the flow.`,
        );
        ok = false;
      } else if (v.default !== undefined && kv.value.kind === 'map') {
        const d = kv.value.entries.find((x) => x.key === 'default')!;
        report(
          ctx,
          'MISPLACED_KEY',
          d,
          `environment ${env.key}: ${kv.key} reads the secret ${v.from_env}, which has no default written in the flow`,
          `Set ${v.from_env} where the server runs: a secret is never written in a flow file.`,
        );
        ok = false;
      }
    }
  }
  return ok ? keys : undefined;
}

/** `{ from_env: NAME, default: "..." }`: a variable of the server's environment, read when the call runs. */
function fromEnv(ctx: Ctx, node: YNode, where: string): EnvValue | undefined {
  if (node.kind !== 'map') return undefined;
  let name: string | undefined;
  let dflt: string | undefined;
  let ok = true;
  for (const e of node.entries) {
    if (e.key === 'from_env') {
      const v = e.value;
      if (v.kind !== 'scalar' || v.type !== 'string' || !SERVER_VAR_RE.test(String(v.value))) {
        report(
          ctx,
          'BAD_NAME',
          v,
          `${where}from_env names a variable of the server's environment (letters, digits and _, not starting ` +
            `with a digit, 64 at most), not ${describe(v)}`,
          'Write e.g. { from_env: BANK_API_URL }.',
        );
        ok = false;
      } else name = String(v.value);
    } else if (e.key === 'default') {
      const v = e.value.kind === 'map' ? undefined : envValue(ctx, e.value, `${where}default: `);
      if (e.value.kind === 'map')
        report(ctx, 'TYPE_MISMATCH', e.value, `${where}default is a text (or a number), not ${describe(e.value)}`);
      if (typeof v === 'string') dflt = v;
      else ok = false;
    } else {
      unknownKey(ctx, e, FROM_ENV_KEYS, where);
      ok = false;
    }
  }
  if (!ok) return undefined;
  if (name === undefined) {
    report(ctx, 'MISSING_KEY', node, `${where}a value read from the server's environment needs from_env: NAME`);
    return undefined;
  }
  return dflt === undefined ? { from_env: name } : { from_env: name, default: dflt };
}

function envValue(ctx: Ctx, node: YNode, where: string): EnvValue | undefined {
  if (node.kind === 'map') return fromEnv(ctx, node, where);
  if (node.kind === 'scalar' && node.type === 'string') {
    const s = String(node.value);
    if (s.length > MAX_ENV_VALUE) {
      report(
        ctx,
        'TOO_MANY_ENTRIES',
        node,
        `${where}the value is ${s.length.toLocaleString('en-US')} characters long; at ` +
          `most ${MAX_ENV_VALUE.toLocaleString('en-US')}`,
      );
      return undefined;
    }
    return s;
  }
  // numbers and booleans are taken as written (+442079460000 is a YAML integer)
  if (node.kind === 'scalar' && (node.type === 'int' || node.type === 'float' || node.type === 'bool'))
    return node.source;
  report(
    ctx,
    'TYPE_MISMATCH',
    node,
    `${where}an environment value is a text (or a number, taken as written), or { from_env: NAME }, not ` +
      `${describe(node)}`,
  );
  return undefined;
}

/**
 * The variables of the server's environment a flow's selected environment reads (`from_env:`, not secrets: those are
 * in `secrets:`) that `read` does not give and that have no default: their values are empty. `serve` warns about them
 * when it starts, as about unset secrets.
 */
export function unsetServerVariables(
  model: Pick<FlowModel, 'envFrom'>,
  read: (name: string) => string | undefined,
): string[] {
  const out = new Set<string>();
  for (const f of Object.values(model.envFrom ?? {}))
    if (!f.secret && f.default === undefined && read(f.name) === undefined) out.add(f.name);
  return [...out];
}

/** A template that reads only env.* (nothing known only during a call): its value in each environment is known now. */
const OTHER_ROOTS = /(?<![\w.])(vars|call|result|error)\b/;
const ENV_REF = /(?<![\w.])env(?:\.[A-Za-z_]|\[)/;
const ENV_KEY_REF = /(?<![\w.])env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])/g;

export function envOnlyTemplate(text: string): boolean {
  return ENV_REF.test(text) && !OTHER_ROOTS.test(text);
}

/**
 * A checked string param written as a template that reads only env.*: rendered with each
 * environment's values and checked (BAD_FORMAT naming the environment). False after a report.
 */
export function checkEnvFormat(
  ctx: Ctx,
  text: string,
  node: YNode,
  name: string,
  format: FormatName,
  where: string,
): boolean {
  const envs = ctx.v2.environments;
  if (!envs || !envOnlyTemplate(text)) return true;
  // the same text in many steps (10,000 dialouts of "{{ env.support }}" in 100 environments)
  // is rendered and checked once per environment, not once per step
  const key = `${format}\u0000${text}`;
  let bad = ctx.v2.envChecked.get(key);
  if (!bad) {
    bad = [];
    const read = [...text.matchAll(ENV_KEY_REF)].map((m) => m[1] ?? m[2]!);
    for (const [env, values] of Object.entries(envs)) {
      // a value read from the server's environment is checked when the call runs (the step's error way)
      if (read.some((k) => !Object.prototype.hasOwnProperty.call(values, k))) continue;
      let s: string;
      try {
        s = render(text, { vars: {}, call: {}, result: '', error: '', env: values });
      } catch {
        continue; // a render error shows at run time (the step's error branch)
      }
      const err = checkFormat(format, s.trim());
      if (err) bad.push({ env, value: s, err });
    }
    ctx.v2.envChecked.set(key, bad);
  }
  for (const b of bad)
    report(
      ctx,
      'BAD_FORMAT',
      node,
      `${where}${name} in environment ${b.env} is "${b.value}": ${b.err}`,
      FORMAT_HINTS[format],
    );
  return bad.length === 0;
}
