/**
 * A module run on its own (version 2 `module:`, docs/testing.md "Modules"): the params it
 * is given, as a scenario's `with:` (checked against the module's: no unknown name, every
 * required one given) or as `--with name=value` on the command line (`simulate`, `paths`),
 * typed as the param's default is; `paths` samples the required params not given.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { startVars } from '../engine/outbound.js';
import { closest } from '../flow/check-context.js';
import type { Value } from '../flow/model.js';
import type { Scenario, ScenarioError } from './scenario.js';

/**
 * A case's `with:` against the module's params: no unknown name, every required one given; none for a flow that is no
 * module.
 */
export function checkWith(s: Scenario, flow: CompiledFlow): ScenarioError[] {
  const errors: ScenarioError[] = [];
  const spec = flow.model.module;
  for (const c of s.cases) {
    if (!spec) {
      if (c.with)
        errors.push({
          file: s.file,
          line: c.withPos ? (Object.values(c.withPos)[0]?.line ?? c.pos.line) : c.pos.line,
          column: 1,
          message: `with: gives params to a module; flow "${flow.name}" is not one (use vars: for a flow's variables)`,
        });
      continue;
    }
    const names = Object.keys(spec.params);
    for (const [k, pos] of Object.entries(c.withPos ?? {})) {
      if (names.includes(k)) continue;
      errors.push({
        file: s.file,
        line: pos.line,
        column: pos.col,
        message: `with: module "${flow.name}" has no param "${k}"${paramHint(k, names)}`,
      });
    }
    const missing = names.filter((k) => spec.params[k]!.required && !Object.hasOwn(c.with ?? {}, k));
    if (missing.length > 0)
      errors.push({
        file: s.file,
        line: c.pos.line,
        column: c.pos.col,
        message:
          `case "${c.name}": module "${flow.name}" needs ${missing.map((m) => `"${m}"`).join(', ')} in with: ` +
          `(required param${missing.length > 1 ? 's' : ''})`,
      });
  }
  return errors;
}

function paramHint(k: string, names: string[]): string {
  const near = closest(k, names);
  return near ? ` (did you mean "${near}"?)` : names.length ? ` (params: ${names.join(', ')})` : ' (it has none)';
}

/** The most --with one run takes. */
const MAX_WITH = 100;

/**
 * The params of `--with name=value` (repeatable) for a module run on its own, each typed as its default is (a required
 * param: the text given); throws with every one it cannot take. A flow that is no module takes none.
 */
export function withParams(flow: CompiledFlow, given: readonly string[]): Record<string, Value> {
  if (given.length === 0) return {};
  const spec = flow.model.module;
  if (!spec)
    throw new Error(`--with gives params to a module; ${flow.name} is not one (--vars gives an outbound call's vars)`);
  if (given.length > MAX_WITH) throw new Error(`--with: ${given.length} given, at most ${MAX_WITH}`);
  const problems: string[] = [];
  const pairs: Record<string, string> = {};
  const names = Object.keys(spec.params);
  for (const g of given) {
    const at = g.indexOf('=');
    const name = at < 0 ? '' : g.slice(0, at).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name))
      problems.push(`--with ${JSON.stringify(g.slice(0, 80))}: write name=value`);
    else if (!names.includes(name))
      problems.push(`--with ${name}: module ${flow.name} has no such param${paramHint(name, names)}`);
    else pairs[name] = g.slice(at + 1);
  }
  const defaults = Object.fromEntries(
    Object.entries(spec.params).map(([k, p]) => [k, p.required ? null : p.value] as [string, Value]),
  );
  const { vars, dropped } = startVars(defaults, pairs);
  for (const d of dropped) problems.push(`--with ${d.name}: ${d.why}`);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return vars;
}

/** The required params of a module that `given` leaves out (none for a flow that is no module). */
export function missingParams(flow: CompiledFlow, given: Readonly<Record<string, unknown>>): string[] {
  const spec = flow.model.module;
  if (!spec) return [];
  return Object.keys(spec.params).filter((k) => spec.params[k]!.required && !Object.hasOwn(given, k));
}

/**
 * A value for a required param nobody gave (`paths`): a URL where the module's http steps start their URL with it
 * (`{{ vars.bank_api }}/v1/verify`: `https://bank-api.example`), else its name.
 */
export function sampleParam(flow: CompiledFlow, name: string): string {
  const starts = new RegExp(`^\\s*\\{\\{\\s*vars\\.${name}\\s*(\\}\\}|\\|)`);
  for (const s of Object.values(flow.model.steps))
    if (s.kind === 'command' && s.http && starts.test(s.http.url))
      return `https://${
        name
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-+|-+$/g, '') || 'api'
      }.example`;
  return name;
}
