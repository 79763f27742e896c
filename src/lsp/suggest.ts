/**
 * What to offer where the cursor is in the flow's structure: the keys a construct takes (the checker's lists), the
 * values a key takes (step ids, names of the flow and of its directory's modules, enumerated values), from the
 * cursor's path of keys (cursor.ts).
 */
import { PARAM_ALIASES, type CommandName } from '../protocol/commands.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { DAYS } from '../flow/calendar.js';
import { CAL_KEYS } from '../flow/check-calendars.js';
import { FROM_ENV_KEYS } from '../flow/check-environments.js';
import { LOOP_KEYS } from '../flow/check-loop.js';
import { ANNOUNCE_KEYS } from '../flow/check-queue.js';
import { PROMPT_MEDIA_KEYS, SAY_MEDIA_KEYS } from '../flow/check-media.js';
import { LANGUAGE_ENTRY_KEYS, LANGUAGE_KEYS } from '../flow/check-prompts.js';
import { BRANCH_KEYS, HANDLER_KEYS } from '../flow/check-results.js';
import { ACTIONS, SWITCH_CASE_KEYS, VALID_KEYS } from '../flow/check-steps.js';
import { MODULE_KEYS, RETURN_KEYS, SUBFLOW_KEYS } from '../flow/check-subflow.js';
import type { SourceLines } from '../flow/source-lines.js';
import { entry } from '../flow/yaml.js';
import type { Cursor, Entry, Level } from './cursor.js';
import type { LiveNames } from './live-names.js';
import { moduleOf, type ModuleInfo } from './modules.js';
import type { FlowIndex, SymbolKind } from './symbols.js';
import {
  actionWords,
  HANDLER_TARGET_KEYS,
  handlerCommandWords,
  handlerResultWords,
  keyWords,
  paramWords,
  resultWords,
  STEP_TARGET_KEYS,
  stepKeyWords,
  topWords,
  type Word,
  type WordKind,
} from './vocabulary.js';
import { childKeys } from './yaml-lines.js';

/** What completion reads: the text's lines, the names it declares, the last index, the directory's modules. */
export interface Sources {
  src: SourceLines;
  live: LiveNames;
  index: FlowIndex | undefined;
  modules(): Promise<ModuleInfo[]>;
}

export interface Found {
  words: Word[];
  /** Where the word replaced starts, when not the cursor's word (inside a template or a condition). */
  start?: number;
}

/** Names of a kind: the last index's declarations and the live text's, each once. */
export function known(s: Sources, kind: SymbolKind, live: readonly string[]): string[] {
  return [...new Set([...(s.index?.names(kind) ?? []), ...live])];
}

/** The step ids, with the action of each (from the last index's tree) as detail. */
function stepWords(s: Sources): Word[] {
  const actions = new Map<string, string>();
  const root = s.index?.symbols.root;
  const steps = root?.kind === 'map' ? entry(root, 'steps')?.value : undefined;
  if (steps?.kind === 'map')
    for (const e of steps.entries) {
      const action = e.value.kind === 'map' ? e.value.entries.find((x) => ACTIONS.includes(x.key))?.key : undefined;
      if (action) actions.set(e.key, action);
    }
  return known(s, 'step', s.live.steps).map((id) => ({
    label: id,
    kind: 'step',
    detail: actions.has(id) ? `step: ${actions.get(id)}` : 'step',
  }));
}

/** The action of the step a level is under (`steps.<id>`): the first key of the step that is an action. */
function actionOf(src: SourceLines, path: Level[]): string | undefined {
  const step = path[1];
  if (path[0]?.key !== 'steps' || !step) return undefined;
  const keys = path.length > 2 ? path[2]!.siblings() : undefined;
  return [...(keys ?? childKeys(src, step)).keys()].find((k) => ACTIONS.includes(k));
}

/** The own module of the file (for `return:`), from the last index's tree. */
const ownModule = (s: Sources) => moduleOf(s.index?.symbols.root);

/** The module a subflow step enters: its `flow:` value, read beside `on:`/`save:` or inside `subflow:`. */
async function enteredModule(s: Sources, subflow: Entry | undefined): Promise<ModuleInfo | undefined> {
  const flow = subflow ? childKeys(s.src, subflow).get('flow')?.value : undefined;
  return flow ? (await s.modules()).find((m) => m.name === flow) : undefined;
}

export const names = (list: readonly string[], kind: WordKind, detail: string): Word[] =>
  list.map((label) => ({ label, kind, detail }));

/** Words for a key, a value or a list item, by where the cursor is in the flow's structure. */
export async function structureWords(cur: Cursor, s: Sources): Promise<Found | undefined> {
  const keys = cur.path.map((l) => l.key);
  const [first] = keys;
  const parent = keys.at(-1);
  const depth = keys.length;
  if (cur.slot.kind === 'value') return valueWords(cur, cur.slot.key, s);
  if (cur.slot.kind === 'item') {
    if (depth === 1 && first === 'sensitive') return { words: names(known(s, 'var', s.live.vars), 'var', 'variable') };
    return undefined;
  }
  const present = cur.slot.siblings();
  const fresh = (words: Word[]): Found => ({ words: words.filter((w) => !present.has(w.label)) });
  if (depth === 0) return fresh(topWords());
  if (first === 'steps' && depth === 2) {
    const action = [...present.keys()].find((k) => ACTIONS.includes(k));
    return fresh(action ? stepKeyWords(action) : actionWords());
  }
  if (first === 'steps' && depth >= 3) {
    const action = actionOf(s.src, cur.path);
    if (depth === 3 && parent === action && action !== undefined && isAction(action)) {
      // a param given under its name or an alias is given
      const aliases: Record<string, string> = PARAM_ALIASES[action as CommandName] ?? {};
      const given = new Set([...present.keys()].map((k) => aliases[k] ?? k));
      return { words: paramWords(action).filter((w) => !given.has(aliases[w.label] ?? w.label)) };
    }
    if (depth === 3 && parent === 'on') {
      if (action === 'subflow') {
        const mod = await enteredModule(s, cur.path[2]!.siblings().get('subflow'));
        const other: Word = { label: 'default', kind: 'result', detail: 'any other result' };
        return fresh([...names(mod?.results ?? [], 'result', 'module result'), other]);
      }
      return fresh(action ? resultWords(action) : []);
    }
    if (parent === 'foreach') return fresh(keyWords(LOOP_KEYS));
    if (parent === 'announce' && keys.at(-2) === 'queue') return fresh(keyWords(ANNOUNCE_KEYS));
    if (parent === 'subflow') return fresh(keyWords(SUBFLOW_KEYS));
    if (parent === 'with' && keys.at(-2) === 'subflow') {
      const mod = await enteredModule(s, cur.path.at(-2));
      return fresh(
        (mod?.params ?? []).map((p) => ({
          label: p.name,
          kind: 'param',
          detail: p.required ? 'required' : `default ${p.value ?? ''}`.trim(),
        })),
      );
    }
    if (parent === 'save' && action === 'subflow') return fresh(names(known(s, 'var', s.live.vars), 'var', 'variable'));
    if (parent === 'valid' && depth === 3) return fresh(keyWords(VALID_KEYS));
    if (parent === 'return' && depth === 3) return fresh(keyWords(RETURN_KEYS));
    if (parent === 'values' && keys.at(-2) === 'return')
      return fresh(names(ownModule(s)?.returns ?? [], 'var', 'module returns'));
    if (parent === 'switch' && depth === 3) return fresh(keyWords(SWITCH_CASE_KEYS));
    if (isBranch(keys)) return fresh(keyWords(BRANCH_KEYS));
    if (isMedia(keys, action)) return fresh(keyWords([...SAY_MEDIA_KEYS, ...PROMPT_MEDIA_KEYS]));
    return undefined;
  }
  if (first === 'handlers') {
    if (depth === 1) return fresh(keyWords(HANDLER_KEYS));
    if (depth === 2 && parent === 'on') return fresh(handlerCommandWords());
    if (depth === 3 && keys[1] === 'on') return fresh(handlerResultWords(parent!));
    if (isBranch(keys)) return fresh(keyWords(BRANCH_KEYS));
    return undefined;
  }
  if (first === 'module' && depth === 1) return fresh(keyWords(MODULE_KEYS));
  if (first === 'calendars' && depth === 2) return fresh(keyWords(CAL_KEYS));
  if (first === 'calendars' && depth === 3 && parent === 'weekly') return fresh(keyWords(DAYS, 'day'));
  if (first === 'language' && depth === 1) return fresh(keyWords(LANGUAGE_KEYS));
  if (first === 'languages' && depth === 2) return fresh(keyWords(LANGUAGE_ENTRY_KEYS));
  if (first === 'prompts' && depth === 2) return fresh(names(s.live.languages, 'name', 'language'));
  if (first === 'environments' && depth === 2)
    return fresh(names(known(s, 'env', s.live.env), 'name', 'environment key'));
  if (first === 'environments' && depth === 3) return fresh(keyWords(FROM_ENV_KEYS));
  return undefined;
}

/** A branch map: a result's under `on:` (a step's or `handlers.on`'s), `next:`, `handlers.error`, `valid.else`. */
function isBranch(keys: string[]): boolean {
  const n = keys.length;
  if (keys[0] === 'steps')
    return (
      (n === 4 && keys[2] === 'on') ||
      (n === 3 && keys[2] === 'next') ||
      (n === 4 && keys[2] === 'valid' && keys[3] === 'else')
    );
  return (n === 2 && keys[1] === 'error') || (n === 4 && keys[1] === 'on');
}

/** A media written as a map: under `say:`, a media param of the step's command, or a branch's `say:`. */
function isMedia(keys: string[], action: string | undefined): boolean {
  const last = keys.at(-1)!;
  if (last === 'say') return true;
  // a queue's whisper: a media of its own checker (not a catalogue param)
  if (action === 'queue' && keys.length === 4 && keys[2] === 'queue' && last === 'whisper') return true;
  if (!action || !isAction(action) || keys.length !== 4 || keys[2] !== action) return false;
  const canonical = PARAM_ALIASES[action as CommandName]?.[last] ?? last;
  return ACTION_SPECS[action].params[canonical]?.type === 'media';
}

/** Words for the value of `key`, the last key of the cursor's line or flow map. */
async function valueWords(cur: Cursor, key: string, s: Sources): Promise<Found | undefined> {
  const keys = cur.path.map((l) => l.key);
  const parent = keys.at(-1);
  const depth = keys.length;
  const steps = () => ({ words: stepWords(s) });
  if (key === 'start' && depth === 0) return steps();
  if (keys[0] === 'steps' && (STEP_TARGET_KEYS.has(key) || parent === 'on')) return steps();
  if (keys[0] === 'handlers') {
    if (depth === 1 ? HANDLER_TARGET_KEYS.has(key) : STEP_TARGET_KEYS.has(key)) return steps();
    if (keys[1] === 'on' && depth === 3) return steps();
  }
  if (key === 'flow' && parent === 'subflow')
    return { words: (await s.modules()).map((m) => ({ label: m.name, kind: 'name', detail: 'module' })) };
  if (key === 'calendar' && depth === 2 && keys[0] === 'steps')
    return { words: names(known(s, 'calendar', s.live.calendars), 'name', 'calendar') };
  if (key === 'prompt' && !PARAM_ALIASES[parent as CommandName]?.prompt)
    return { words: names(known(s, 'prompt', s.live.prompts), 'name', 'prompt') };
  if ((key === 'return' && depth === 2) || (key === 'result' && parent === 'return'))
    return { words: names(ownModule(s)?.results ?? [], 'result', 'module result') };
  if (parent === 'save' && actionOf(s.src, cur.path) === 'subflow') {
    const mod = await enteredModule(s, cur.path.at(-1)!.siblings().get('subflow'));
    return { words: names(mod?.returns ?? [], 'name', 'module returns') };
  }
  if (key === 'default' && keys[0] === 'language') return { words: names(s.live.languages, 'name', 'language') };
  if (parent && isAction(parent) && depth === 3) {
    const canonical = PARAM_ALIASES[parent as CommandName]?.[key] ?? key;
    const spec = ACTION_SPECS[parent].params[canonical];
    if (spec?.type === 'string' && spec.enum) return { words: names(spec.enum, 'value', `${parent} ${canonical}`) };
    if (spec?.type === 'bool') return { words: names(['true', 'false'], 'value', 'boolean') };
  }
  return undefined;
}
