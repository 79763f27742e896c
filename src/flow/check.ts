/**
 * The flow checker's entry point: YAML text in, diagnostics and (when there is no error)
 * the FlowModel out. Never throws: a checker bug becomes an INTERNAL_ERROR diagnostic.
 */
import type { Diagnostic } from '../errors/diagnostic.js';
import { DEFAULT_VOICE, type FlowModel, type Handlers, type Step, type Value } from './model.js';
import { checkSecrets, checkSecretRefs } from './check-http.js';
import {
  type Ctx,
  type NameUse,
  ID_RE,
  asMap,
  asString,
  checkVarName,
  isObjectMember,
  knownEntries,
  newCtx,
  report,
  requireV2,
} from './check-context.js';
import { checkGraph, checkReachable, checkTargets, type StepNode } from './check-graph.js';
import { checkVoice } from './check-media.js';
import { checkHandlers, stepRef } from './check-results.js';
import { checkStep } from './check-steps.js';
import { checkModuleSpec } from './check-subflow.js';
import { toValue } from './check-values.js';
import { checkVarRefs } from './check-vars.js';
import { checkMaybeUnset } from './check-unset.js';
import { checkRawMediaText } from './check-raw-media.js';
import { checkSensitiveUse } from './check-sensitive.js';
import { describe, entry, loadYaml, type YEntry, type YMap, type YNode } from './yaml.js';
import { loadYamlCached, type YamlCache } from './yaml-cache.js';
import { checkCalendarRefs, checkCalendars } from './check-calendars.js';
import { checkLanguageChoice, checkLanguages, checkPrompts } from './check-prompts.js';
import { checkEnvironments, splitEnv } from './check-environments.js';
import { checkLoopNames } from './check-loop.js';

export interface CheckResult {
  model?: FlowModel;
  /** The flow's name, even when it has errors (the link stage names a module that fails by it). */
  name?: string;
  /** The file declares `module:` (even when it has errors). */
  module?: boolean;
  diagnostics: Diagnostic[];
  /** What the checker saw, for editors (`symbols: true`): absent otherwise. */
  symbols?: CheckSymbols;
}

/**
 * The positioned tree the checker walked and the names it found read there (step targets, variable reads of
 * templates and conditions, calendar reads), errors or not: the language server's index starts from these.
 */
export interface CheckSymbols {
  root: YNode;
  targets: Ctx['targets'];
  refs: Ctx['refs'];
  calendarRefs: Ctx['v2']['calendarRefs'];
  /** Prompts, calendars, modules and params read by steps. */
  uses: NameUse[];
}

/** The keys of a flow file's top level. */
export const TOP_KEYS = [
  'version',
  'name',
  'description',
  'start',
  'voice',
  'vars',
  'sensitive',
  'secrets',
  'module',
  'calendars',
  'languages',
  'language',
  'prompts',
  'environments',
  'handlers',
  'steps',
] as const;

/** The flow name a file gets when it has no `name:`: its base name without extension. */
export function defaultFlowName(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  return base.replace(/\.[^.]*$/, '');
}

/** Options of a check: the file size limit (default MAX_FILE_BYTES, 2 MiB; a server's limits.flow_file_bytes). */
export interface CheckOptions {
  maxFileBytes?: number;
  /** The environment selected (--env, environment:, CALLSCRIPT_ENV); absent: a flow's first one. */
  environment?: string;
  /** Keep the tree and the names read (CheckResult.symbols), for the language server. */
  symbols?: boolean;
  /**
   * Blocks of files already loaded (yaml-cache.ts): a file checked again after a change loads only the blocks
   * that changed, with the same result. The caller's (an editor session's), bounded; absent: the whole file.
   */
  yamlCache?: YamlCache;
}

export function checkFlow(text: string, file: string, opts: CheckOptions = {}): CheckResult {
  try {
    return run(text, file, opts);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return {
      diagnostics: [
        {
          code: 'INTERNAL_ERROR',
          severity: 'error',
          message: `the checker failed: ${msg}`,
          file: String(file),
          line: 1,
          column: 1,
          hint: 'Please report it with the file that triggers it; the flow is refused meanwhile.',
        },
      ],
    };
  }
}

function run(text: string, file: string, opts: CheckOptions): CheckResult {
  const loaded = opts.yamlCache
    ? loadYamlCached(String(text), file, opts.yamlCache, opts.maxFileBytes)
    : loadYaml(String(text), file, opts.maxFileBytes);
  if (!loaded.root) {
    if (loaded.diagnostics.length === 0) {
      const ctx = newCtx(file, DEFAULT_VOICE);
      report(ctx, 'NOT_A_MAP', { line: 1, col: 1 }, 'the file is empty: a flow is a map with version, start and steps');
      return { diagnostics: ctx.diags };
    }
    return { diagnostics: sorted(loaded.diagnostics) };
  }
  const root = loaded.root;
  const ctx = newCtx(file, DEFAULT_VOICE);
  if (opts.symbols) ctx.uses = [];
  ctx.diags.push(...loaded.diagnostics);
  if (root.kind !== 'map') {
    report(ctx, 'NOT_A_MAP', root, `a flow file is a map with version, start and steps, not ${describe(root)}`);
    return { diagnostics: sorted(ctx.diags) };
  }
  const named: { name?: string } = {};
  const model = checkTop(ctx, root, opts, named);
  const diagnostics = sorted(ctx.diags);
  const id: Pick<CheckResult, 'name' | 'module' | 'symbols'> = {};
  if (opts.symbols)
    id.symbols = { root, targets: ctx.targets, refs: ctx.refs, calendarRefs: ctx.v2.calendarRefs, uses: ctx.uses! };
  if (named.name !== undefined) id.name = named.name;
  if (entry(root, 'module')) id.module = true;
  return diagnostics.some((d) => d.severity === 'error') || !model
    ? { diagnostics, ...id }
    : { model, diagnostics, ...id };
}

function checkTop(ctx: Ctx, root: YMap, opts: CheckOptions, named: { name?: string }): FlowModel | undefined {
  knownEntries(ctx, root, TOP_KEYS, '');
  const top = (k: (typeof TOP_KEYS)[number]) => entry(root, k);

  const version = top('version');
  if (!version) report(ctx, 'MISSING_KEY', root, "missing 'version: 1' (the language version)");
  else if (version.value.kind === 'scalar' && version.value.type === 'int' && version.value.value === 2)
    ctx.version = 2;
  else if (version.value.kind !== 'scalar' || version.value.type !== 'int' || version.value.value !== 1) {
    const v = version.value;
    const got = v.kind === 'scalar' && !v.quoted && (v.type === 'int' || v.type === 'float') ? v.source : describe(v);
    const quoted = v.kind === 'scalar' && v.type === 'string' && (v.value === '1' || v.value === '2');
    report(
      ctx,
      'BAD_VERSION',
      v,
      `version must be 1 or 2, got ${got}`,
      quoted ? `Write version: ${String(v.kind === 'scalar' ? v.value : 1)} without quotes (an integer).` : undefined,
    );
  }

  let name = defaultFlowName(ctx.file);
  const nameEntry = top('name');
  if (nameEntry) {
    const n = asString(ctx, nameEntry.value, 'name');
    if (n !== undefined && !ID_RE.test(n))
      report(
        ctx,
        'BAD_NAME',
        nameEntry.value,
        `the flow name '${n}' may use only letters, digits, - and _ (64 at most)`,
      );
    if (n !== undefined) name = n;
  } else if (!ID_RE.test(name)) {
    report(
      ctx,
      'BAD_NAME',
      root,
      `the file name gives the flow name '${name}', which is not valid (letters, digits, - and _ only)`,
      'Rename the file, or give the flow a valid `name:`.',
    );
  }

  named.name = name;
  let description: string | undefined;
  const d = top('description');
  if (d) description = asString(ctx, d.value, 'description');

  const v = top('voice');
  if (v) ctx.voice = checkVoice(ctx, v.value, '') ?? DEFAULT_VOICE;

  const vars: Record<string, Value> = {};
  const varsEntry = top('vars');
  const varsMap = varsEntry
    ? varsEntry.value.kind === 'scalar' && varsEntry.value.type === 'null'
      ? undefined
      : asMap(ctx, varsEntry.value, 'vars')
    : undefined;
  for (const e of varsMap?.entries ?? []) {
    if (!checkVarName(ctx, e.key, e, 'vars:')) continue;
    const val = toValue(ctx, e.value, `vars.${e.key}: `, false);
    if (val !== undefined) vars[e.key] = val;
  }

  const sensitiveListed = checkSensitive(ctx, top('sensitive'));
  const sensitive = sensitiveListed.map((l) => l.name);
  // version 2 tables, before the steps and handlers that read them (secrets first: an environment value may read one)
  const secrets = checkSecrets(ctx, top('secrets'));
  const v2 = checkTables(ctx, top, opts);
  const moduleEntry = top('module');
  const module = moduleEntry ? checkModuleSpec(ctx, moduleEntry, vars) : undefined;
  if (module) ctx.module = module;

  const handlersEntry = top('handlers');
  const handlers: Handlers = checkHandlers(ctx, handlersEntry?.value);

  const steps: Record<string, Step> = {};
  const order: string[] = [];
  const written: StepNode[] = [];
  let allSteps = true;
  const stepsEntry = top('steps');
  if (!stepsEntry) report(ctx, 'MISSING_KEY', root, "missing 'steps': the map of the flow's steps");
  const stepsMap = stepsEntry ? asMap(ctx, stepsEntry.value, 'steps') : undefined;
  if (stepsEntry && !stepsMap) allSteps = false;
  for (const e of stepsMap?.entries ?? []) {
    order.push(e.key);
    if (!ID_RE.test(e.key)) {
      report(ctx, 'BAD_NAME', e, `the step id '${e.key}' may use only letters, digits, - and _ (64 at most)`);
      allSteps = false;
    } else if (isObjectMember(e.key)) {
      report(
        ctx,
        'BAD_NAME',
        e,
        `the step id '${e.key}' is a reserved name (every JavaScript object has a member by that name); ` +
          `choose another id`,
      );
      allSteps = false;
      continue;
    }
    written.push({ id: e.key, entry: e });
    const s = checkStep(ctx, e, handlers);
    if (s) steps[e.key] = s;
    else allSteps = false;
  }

  const startEntry = top('start');
  let start: string | undefined;
  if (!startEntry) report(ctx, 'MISSING_KEY', root, "missing 'start': the id of the first step");
  else start = stepRef(ctx, startEntry.value, 'start: ');

  checkTargets(ctx, order);
  const clean = !ctx.diags.some((x) => x.severity === 'error');
  if (allSteps && start !== undefined && start in steps && clean) {
    const hangupAt = handlersEntry?.value.kind === 'map' ? entry(handlersEntry.value, 'hangup')?.value : undefined;
    checkGraph(ctx, { steps, order, start, handlers, hangupAt });
    const initial = [...Object.keys(vars), ...Object.keys(module?.params ?? {})];
    checkMaybeUnset(ctx, { steps, order, start, handlers, initial });
  } else if (start !== undefined && stepsMap) {
    // other errors: the graph checks that stay sound on a partial graph (unreachable steps)
    checkReachable(ctx, steps, written, start, handlers);
  }
  if (module && handlers.hangup !== undefined && handlersEntry?.value.kind === 'map') {
    report(
      ctx,
      'MISPLACED_KEY',
      entry(handlersEntry.value, 'hangup')!,
      'handlers.hangup does not go in a module: when the call ends inside a module, the hangup handler of ' +
        "the flow served at /rt runs, with that flow's variables",
      "Remove it; put the logic in the calling flow's handlers.hangup.",
    );
  }
  checkCalendarRefs(ctx);
  checkLoopNames(ctx, [...Object.keys(vars), ...Object.keys(module?.params ?? {})]);
  checkVarRefs(ctx, [...Object.keys(vars), ...Object.keys(module?.params ?? {})], steps);
  checkRawMediaText(ctx, vars, steps);
  checkSensitiveUse(ctx, sensitiveListed, written, steps, [...Object.keys(vars), ...Object.keys(module?.params ?? {})]);
  checkSecretRefs(ctx);

  if (start === undefined) return undefined;
  const model: FlowModel = {
    version: ctx.version,
    name,
    file: ctx.file,
    start,
    voice: ctx.voice,
    vars,
    handlers,
    steps,
  };
  if (nameEntry) model.namePos = { file: ctx.file, line: nameEntry.value.pos.line, column: nameEntry.value.pos.col };
  if (description !== undefined) model.description = description;
  if (sensitive.length > 0) model.sensitive = sensitive;
  Object.assign(model, v2);
  if (secrets.length > 0) model.secrets = secrets;
  if (module) model.module = module;
  return model;
}

/** calendars:, languages:, language:, prompts:, environments: (version 2), as model fields. */
function checkTables(
  ctx: Ctx,
  top: (k: (typeof TOP_KEYS)[number]) => YEntry | undefined,
  opts: CheckOptions,
): Partial<FlowModel> {
  const out: Partial<FlowModel> = {};
  const calendars = checkCalendars(ctx, top('calendars'));
  if (calendars) out.calendars = calendars;
  const languagesAt = top('languages');
  const languages = checkLanguages(ctx, languagesAt);
  if (languages) out.languages = languages;
  const choice = checkLanguageChoice(ctx, top('language'), languagesAt);
  if (choice) out.language = choice;
  const prompts = checkPrompts(ctx, top('prompts'), languagesAt);
  if (prompts) out.prompts = prompts;
  const envs = checkEnvironments(ctx, top('environments'), opts.environment);
  if (envs) {
    out.environments = envs.all;
    if (envs.selected !== undefined) {
      out.environment = envs.selected;
      const { env, from } = splitEnv(envs.all[envs.selected] ?? {}, envs.secretKeys);
      out.env = env;
      if (from) out.envFrom = from;
    }
  }
  return out;
}

/** `sensitive: [pin, account]`: variables masked wherever the call is shown (version 2). */
function checkSensitive(ctx: Ctx, e: YEntry | undefined): { name: string; at: YNode }[] {
  if (!e) return [];
  requireV2(ctx, e, 'sensitive:');
  if (e.value.kind === 'scalar' && e.value.type === 'null') return [];
  if (e.value.kind !== 'seq') {
    report(ctx, 'TYPE_MISMATCH', e.value, `sensitive must be a list of variable names, not ${describe(e.value)}`);
    return [];
  }
  const names: { name: string; at: YNode }[] = [];
  const seen = new Set<string>();
  for (const item of e.value.items) {
    const n = asString(ctx, item, 'a sensitive variable');
    if (n === undefined) continue;
    // a variable, or a field of one: `customer.dob` (a path of keys below the variable)
    const [root, ...fields] = n.split('.');
    if (!checkVarName(ctx, root!, item, 'sensitive:')) continue;
    const bad = fields.length > MAX_FIELD_DEPTH ? n : fields.find((f) => !FIELD_RE.test(f));
    if (bad !== undefined) {
      report(
        ctx,
        'BAD_NAME',
        item,
        fields.length > MAX_FIELD_DEPTH
          ? `sensitive: '${n}' goes ${fields.length} keys below its variable; at most ${MAX_FIELD_DEPTH}`
          : `sensitive: '${n}': '${bad}' is not a key of a field (letters, digits, _ and -, 64 at most)`,
        'A field is written variable.key.key (e.g. customer.dob); a key that is a list applies to each of its items.',
      );
      continue;
    }
    if (seen.has(n)) report(ctx, 'DUPLICATE_KEY', item, `sensitive: '${n}' is listed twice`);
    else {
      seen.add(n);
      names.push({ name: n, at: item });
    }
  }
  return names;
}

/** A key of a sensitive field's path (JSON keys as lookups answer them), and how many keys a path may have. */
const FIELD_RE = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_FIELD_DEPTH = 16;

function sorted(diags: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diags
    .map((d, i) => ({ d, i }))
    .sort((a, b) => a.d.line - b.d.line || a.d.column - b.d.column || a.i - b.i)
    .map((x) => x.d)
    .filter((d) => {
      const k = `${d.line}:${d.column}:${d.code}:${d.message}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}
