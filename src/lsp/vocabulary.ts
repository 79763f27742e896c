/**
 * The words of the language an editor offers and explains, from the tables the checker uses: the command catalogue
 * and the effects (names, docs, params with their bounds, result sets), the keys each construct takes (exported by
 * the checkers beside their use), and the doc lines of the JSON Schema of flows (itself generated from the same
 * tables) for the keys the catalogue does not describe. Nothing here is a list written a second time.
 */
import { PARAM_ALIASES, COMMAND_NAMES, COMMANDS, type CommandName, type ParamSpec } from '../protocol/commands.js';
import { ACTION_SPECS, isAction, type ActionName } from '../flow/actions.js';
import { REQUIRED_PARAMS } from '../flow/check-commands.js';
import { CAL_RESULTS } from '../flow/check-calendars.js';
import { HTTP_KEYS, HTTP_RESULT_WORDS } from '../flow/check-http.js';
import { QUEUE_KEYS, QUEUE_RESULT_WORDS, QUEUE_STEP_KEYS } from '../flow/check-queue.js';
import { ACTIONS, ALLOWED, stepKind, type StepKind } from '../flow/check-steps.js';
import { FORMAT_HINTS } from '../flow/check-values.js';
import { TOP_KEYS } from '../flow/check.js';
import { flowJsonSchema } from '../flow/schema.js';

export type WordKind = 'action' | 'param' | 'key' | 'result' | 'step' | 'var' | 'name' | 'value';

/** A word offered at the cursor: its text, what kind of thing it is, a short detail and a doc (markdown). */
export interface Word {
  label: string;
  kind: WordKind;
  detail?: string;
  doc?: string;
}

type Schema = { description?: string; $ref?: string; anyOf?: Schema[]; properties?: Record<string, Schema> };

/** The JSON Schema of flows, for its doc lines (computed once: it is plain data, never changed). */
const SCHEMA = flowJsonSchema() as Schema & { definitions: Record<string, Schema> };

/** The doc line of a schema node: its own, its reference's, or that of its first form that has one. */
function docOf(s: Schema | undefined): string | undefined {
  if (!s) return undefined;
  if (s.description) return s.description;
  if (s.$ref) return docOf(SCHEMA.definitions[s.$ref.replace('#/definitions/', '')]);
  for (const f of s.anyOf ?? []) if (f.description) return f.description;
  return undefined;
}

const schemaProp = (s: Schema | undefined, key: string) => s?.properties?.[key];

/** The keys of a schema map whose value is a step id or a branch (which names a step). */
function targets(s: Schema | undefined): string[] {
  const refs = ['#/definitions/stepId', '#/definitions/branch'];
  return Object.entries(s?.properties ?? {}).flatMap(([k, p]) => (refs.includes(p.$ref ?? '') ? [k] : []));
}

/**
 * The keys whose value names a step: a step's (`next`, `then`, `else`, `default`, `do`, `error`), a branch map's
 * (`goto`, `then`) and a switch case's (`goto`); the flow-wide handlers' (`hangup`, `error`).
 */
export const STEP_KEY_TARGETS: readonly string[] = targets(SCHEMA.definitions.step);
export const STEP_TARGET_KEYS: ReadonlySet<string> = new Set([
  ...STEP_KEY_TARGETS,
  ...targets(SCHEMA.definitions.branch?.anyOf?.[1]),
  ...targets((SCHEMA.definitions.step?.properties?.switch as { items?: Schema } | undefined)?.items),
]);
export const HANDLER_TARGET_KEYS: ReadonlySet<string> = new Set(targets(SCHEMA.definitions.handlers));

/** A param's type and bounds, as one line: `integer 1..20, default 1`, `MUSIC | RING`, `media`, `text (locale)`. */
export function boundsOf(p: ParamSpec): string {
  switch (p.type) {
    case 'int':
      return `integer ${p.min}..${p.max}${p.default !== undefined ? `, default ${p.default}` : ''}`;
    case 'bool':
      return `boolean${p.default !== undefined ? `, default ${p.default}` : ''}`;
    case 'media':
      return 'media';
    case 'targets':
      return 'list of { number, timeout }';
    case 'string': {
      const what = p.enum ? p.enum.join(' | ') : p.format ? `text (${p.format})` : 'text';
      return `${what}${p.default !== undefined ? `, default ${p.default}` : ''}`;
    }
  }
}

/** What an action returns, in one sentence (the catalogue's result set). */
export function resultsText(action: ActionName): string {
  const set = ACTION_SPECS[action].results;
  switch (set.kind) {
    case 'enum':
      return `Results: ${set.values.join(', ')}.`;
    case 'digits':
      return `Results: the keys pressed, or ${set.also.join(', ')}.`;
    case 'any':
      return `Result: ${set.doc}.`;
    case 'none':
      return 'No result.';
  }
}

/**
 * The keys of the effects checked by their own checkers (maps, lists, media, not catalogue params): their schema
 * definition gives the doc line of those the catalogue does not describe.
 */
const OWN_KEYS: Partial<Record<ActionName, { keys: readonly string[]; schema: Schema | undefined }>> = {
  http: { keys: HTTP_KEYS, schema: SCHEMA.definitions.command_http },
  queue: { keys: QUEUE_KEYS, schema: SCHEMA.definitions.command_queue },
};

/** The params of an action: its own names, then the aliases of the commands that have some. */
function paramNames(action: ActionName): string[] {
  const own = OWN_KEYS[action];
  if (own) return [...own.keys];
  return [...Object.keys(ACTION_SPECS[action].params), ...Object.keys(PARAM_ALIASES[action as CommandName] ?? {})];
}

/** A param of an action (or an alias of one) as a word: its bounds in the detail, its doc. */
export function paramWord(action: ActionName, name: string): Word | undefined {
  const alias = PARAM_ALIASES[action as CommandName]?.[name];
  const canonical = alias ?? name;
  const spec = ACTION_SPECS[action].params[canonical];
  const required = (REQUIRED_PARAMS[action] ?? []).includes(canonical);
  if (!spec) {
    const own = OWN_KEYS[action];
    if (!own || !own.keys.includes(name)) return undefined;
    // a map, a list, a media or a JSON body, checked by the effect's checker: the schema's doc line says what it takes
    const doc = docOf(schemaProp(own.schema, name));
    return { label: name, kind: 'param', detail: doc ?? name };
  }
  const notes = [required ? 'required' : undefined, alias ? `alias of ${alias}` : undefined].filter(Boolean);
  const detail = `${boundsOf(spec)}${notes.length ? ` (${notes.join('; ')})` : ''}`;
  const hint = spec.type === 'string' && spec.format ? ` ${FORMAT_HINTS[spec.format]}` : '';
  return { label: name, kind: 'param', detail, doc: `${spec.doc}${hint}` };
}

/** The params an action takes, in the catalogue's order (aliases last). */
export function paramWords(action: ActionName): Word[] {
  return paramNames(action).flatMap((n) => paramWord(action, n) ?? []);
}

/** An action key (a command, an effect, say or a logic action) as a word, with its doc line. */
export function actionWord(name: string): Word {
  if (isAction(name)) {
    const spec = ACTION_SPECS[name];
    const what = (COMMAND_NAMES as readonly string[]).includes(name) ? 'command' : 'effect';
    return { label: name, kind: 'action', detail: what, doc: `${spec.doc} ${resultsText(name)}` };
  }
  const doc = docOf(schemaProp(SCHEMA.definitions.step, name));
  return { label: name, kind: 'action', detail: name === 'say' ? 'play' : 'logic', ...(doc ? { doc } : {}) };
}

/** Every action a step may have. */
export function actionWords(): Word[] {
  return ACTIONS.map(actionWord);
}

/** A key of a step besides its action (`on`, `next`, `save`...), with its doc line. */
export function stepKeyWord(key: string): Word {
  const doc = docOf(schemaProp(SCHEMA.definitions.step, key));
  return { label: key, kind: 'key', ...(doc ? { doc } : {}) };
}

/** The keys that may go with a step's action (besides it), with their doc lines. */
export function stepKeyWords(action: string): Word[] {
  if (action === 'queue') return QUEUE_STEP_KEYS.map(stepKeyWord);
  const kind: StepKind = stepKind(action);
  return ALLOWED[kind].map(stepKeyWord);
}

/** The keys of the top level, with their doc lines. */
export function topWords(): Word[] {
  return TOP_KEYS.map((k) => {
    const doc = docOf(schemaProp(SCHEMA, k));
    return { label: k, kind: 'key', ...(doc ? { doc } : {}) };
  });
}

/** Plain keys of a construct (the checker's list), as words. */
export function keyWords(keys: readonly string[], detail?: string): Word[] {
  return keys.map((k) => ({ label: k, kind: 'key', ...(detail ? { detail } : {}) }));
}

/**
 * The result keys a step's `on:` may hold, for its action: the command's results, then `default` and `error`; an
 * http step's words; a calendar's results. (A subflow's are its module's: the caller adds them.)
 */
export function resultWords(action: string): Word[] {
  const word = (label: string, detail: string): Word => ({ label, kind: 'result', detail });
  if (action === 'calendar') return CAL_RESULTS.map((r) => word(r, 'calendar result'));
  if (action === 'http') return HTTP_RESULT_WORDS.map((r) => word(r, 'http result'));
  if (action === 'queue') return QUEUE_RESULT_WORDS.map((r) => word(r, QUEUE_RESULT_DETAILS[r] ?? 'queue result'));
  const cmd = action === 'say' ? 'play' : action;
  if (!isAction(cmd) || cmd === 'hangup') return [];
  const set = ACTION_SPECS[cmd].results;
  const own = set.kind === 'enum' ? set.values : set.kind === 'digits' ? set.also : [];
  return [
    ...own.map((r) => word(r, `${cmd} result`)),
    word('default', 'any other result'),
    word('error', 'the command failed'),
  ];
}

/** What each result of a queue step means, for its completion's detail. */
const QUEUE_RESULT_DETAILS: Record<string, string> = {
  bridged: 'the call with the agent ended (logic steps only)',
  timeout: 'max_wait went by',
  empty: 'no agent can take the call',
  error: 'the store failed, or the agents did not render',
};

/** The commands `handlers.on` takes (those with a known result set), and the results it may hold for one. */
export function handlerCommandWords(): Word[] {
  return COMMAND_NAMES.filter((c) => ['enum', 'digits'].includes(COMMANDS[c].results.kind)).map(actionWord);
}

export function handlerResultWords(cmd: string): Word[] {
  return resultWords(cmd).filter((w) => w.label !== 'default' && w.label !== 'error');
}
