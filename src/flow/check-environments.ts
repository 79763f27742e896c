/**
 * `environments:` (version 2): substitutions per environment (`{{ env.x }}` in templates,
 * `env.x` in conditions). Values are literal text, never templates. Every environment
 * defines the same keys (one ENV_KEY_MISSING per environment that lacks some, at its
 * name). The selected environment (--env, `environment:` in callscript.yaml,
 * CALLSCRIPT_ENV; none: the first one written) must be one of the flow's.
 */
import { checkFormat } from '../protocol/formats.js';
import type { FormatName } from '../protocol/commands.js';
import { type Ctx, asMap, didYouMean, report, requireV2, VAR_RE, ID_RE } from './check-context.js';
import { render } from './expr.js';
import { describe, type YEntry, type YNode } from './yaml.js';
import { FORMAT_HINTS } from './check-values.js';

export const MAX_ENVIRONMENTS = 100;
export const MAX_ENV_KEYS = 500;
/** The longest value, in characters. */
export const MAX_ENV_VALUE = 4096;

export interface Environments {
  all: Record<string, Record<string, string>>;
  selected?: string;
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
  const all: Record<string, Record<string, string>> = {};
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
    const vals: Record<string, string> = {};
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
  ctx.v2.environments = all;
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
  return ok ? { all, ...(name !== undefined ? { selected: name } : {}) } : undefined;
}

function envValue(ctx: Ctx, node: YNode, where: string): string | undefined {
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
    `${where}an environment value is a text (or a number, taken as written), not ${describe(node)}`,
  );
  return undefined;
}

/** A template that reads only env.* (nothing known only during a call): its value in each environment is known now. */
const OTHER_ROOTS = /(?<![\w.])(vars|call|result|error)\b/;
const ENV_REF = /(?<![\w.])env(?:\.[A-Za-z_]|\[)/;

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
    for (const [env, values] of Object.entries(envs)) {
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
