/**
 * Completion while a flow is typed: the context comes from the text around the cursor (cursor.ts: the keys above it,
 * the flow maps open on its line), the words from the checker's tables (vocabulary.ts) and the names from the file's
 * last index that had a tree, with those of the live text (live-names.ts) and of the directory's modules. At most
 * MAX_ITEMS items are answered (those matching the word typed first; the list is then marked incomplete).
 */
import {
  CompletionItemKind,
  type CompletionItem,
  type CompletionList,
  type CompletionParams,
} from 'vscode-languageserver';
import { PARAM_ALIASES, type CommandName } from '../protocol/commands.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { DAYS } from '../flow/calendar.js';
import { CAL_KEYS } from '../flow/check-calendars.js';
import type { VarRef } from '../flow/check-context.js';
import { FROM_ENV_KEYS } from '../flow/check-environments.js';
import { LOOP_KEYS } from '../flow/check-loop.js';
import { PROMPT_MEDIA_KEYS, SAY_MEDIA_KEYS } from '../flow/check-media.js';
import { LANGUAGE_ENTRY_KEYS, LANGUAGE_KEYS } from '../flow/check-prompts.js';
import { BRANCH_KEYS, HANDLER_KEYS } from '../flow/check-results.js';
import { ACTIONS, SWITCH_CASE_KEYS, VALID_KEYS } from '../flow/check-steps.js';
import { MODULE_KEYS, RETURN_KEYS, SUBFLOW_KEYS } from '../flow/check-subflow.js';
import { CALL_FIELDS } from '../flow/check-vars.js';
import { sourceLines, type SourceLines } from '../flow/source-lines.js';
import { entry } from '../flow/yaml.js';
import { childKeys, cursorAt, type Cursor, type Entry, type Level } from './cursor.js';
import { liveNames, type LiveNames } from './live-names.js';
import { moduleOf, modulesNear, type ModuleInfo } from './modules.js';
import { fileKind } from './project.js';
import type { LspContext } from './server.js';
import type { FlowIndex, SymbolKind } from './symbols.js';
import { uriToPath } from './uris.js';
import {
  actionWords,
  handlerCommandWords,
  handlerResultWords,
  keyWords,
  paramWords,
  resultWords,
  stepKeyWords,
  topWords,
  type Word,
  type WordKind,
} from './vocabulary.js';

/** The most items one answer holds: a flow of 10,000 steps offers the steps matching what is typed, 1,000 at most. */
export const MAX_ITEMS = 1000;

/** The characters after which an editor asks for completion without being told to. */
export const TRIGGER_CHARACTERS = ['.', ' ', '(', '"', "'"];

/** What completion reads: the text's lines, the names it declares, the last index, the directory's modules. */
interface Sources {
  src: SourceLines;
  live: LiveNames;
  index: FlowIndex | undefined;
  modules(): Promise<ModuleInfo[]>;
}

interface Found {
  words: Word[];
  /** Where the word replaced starts, when not the cursor's word (inside a template or a condition). */
  start?: number;
}

export async function completion(ctx: LspContext, p: CompletionParams): Promise<CompletionList | null> {
  const path = uriToPath(p.textDocument.uri);
  const text = ctx.documents.get(p.textDocument.uri)?.getText() ?? (path ? ctx.text(path) : undefined);
  if (text === undefined || (path && fileKind(path) !== 'flow')) return null;
  const src = sourceLines(text);
  const cur = cursorAt(src, p.position.line, p.position.character);
  if (!cur) return null;
  const index = path ? await ctx.index(path, { lastGood: true }) : undefined;
  let modules: Promise<ModuleInfo[]> | undefined;
  const sources: Sources = {
    src,
    live: liveNames(src),
    index,
    modules: () => (modules ??= path ? modulesNear(ctx, path) : Promise.resolve([])),
  };
  const found = expressionWords(cur, sources) ?? (await structureWords(cur, sources));
  if (!found) return null;
  return toList(found, cur, p.position.line, src);
}

/** The CEL keys: a switch case's and a when step's `when`, `valid`, an `expr:` value, a loop's `in`. */
function isCondition(cur: Cursor): boolean {
  if (cur.slot.kind !== 'value') return false;
  const key = cur.slot.key;
  const parent = cur.path.at(-1)?.key;
  if (key === 'when' || key === 'expr') return true;
  if (key === 'valid') return cur.path.length === 2;
  return key === 'in' && parent === 'foreach';
}

/** How much of an expression before the cursor is read. */
const MAX_EXPRESSION_TAIL = 200;

const ROOTS: readonly VarRef['root'][] = ['vars', 'call', 'env', 'secrets'];

/** Names after `vars.`, `call.`, `env.`, `secrets.` in a template (`{{ }}`, `{% %}`) or a condition. */
function expressionWords(cur: Cursor, s: Sources): Found | undefined {
  const p = cur.prefix;
  const open = Math.max(p.lastIndexOf('{{'), p.lastIndexOf('{%'));
  const template = open >= 0 && open > Math.max(p.lastIndexOf('}}'), p.lastIndexOf('%}'));
  const condition = isCondition(cur);
  if (!template && !condition) return undefined;
  // the end of the expression is enough to know what is being written there (and bounds the work on a long line)
  const code = (template ? p.slice(open + 2) : p.slice(cur.start)).slice(-MAX_EXPRESSION_TAIL);
  const dotted = /(?:^|[^\w.])(vars|call|env|secrets)\.([A-Za-z0-9_]*)$/.exec(code);
  if (dotted) {
    const root = dotted[1] as VarRef['root'];
    const label = root === 'secrets' ? 'secret' : root === 'env' ? 'environment key' : 'variable';
    const names =
      root === 'call'
        ? [...CALL_FIELDS, ...(s.live.top.has('languages') ? ['language'] : [])]
        : root === 'vars'
          ? known(s, 'var', s.live.vars)
          : root === 'env'
            ? known(s, 'env', s.live.env)
            : known(s, 'secret', s.live.secrets);
    const kind: WordKind = root === 'call' ? 'value' : root === 'vars' ? 'var' : 'name';
    const detail = root === 'call' ? 'call field' : label;
    return { words: names.map((n) => ({ label: n, kind, detail })), start: p.length - dotted[2]!.length };
  }
  const calendar = condition && /(?:^|[^\w.])(?:open|holiday)\s*\(\s*["']([\w-]*)$/.exec(code);
  if (calendar) {
    const names = known(s, 'calendar', s.live.calendars);
    return {
      words: names.map((n) => ({ label: n, kind: 'name', detail: 'calendar' })),
      start: p.length - calendar[1]!.length,
    };
  }
  const word = /(?:^|[^\w.])([A-Za-z_]\w*)?$/.exec(code);
  const before = code.slice(0, code.length - (word?.[1]?.length ?? 0));
  if (word && (condition || /^\s*-?\s*$/.test(before)))
    return {
      words: ROOTS.map((r) => ({ label: r, kind: 'var', detail: 'names' })),
      start: p.length - (word[1]?.length ?? 0),
    };
  return { words: [] };
}

/** Names of a kind: the last index's declarations and the live text's, each once. */
function known(s: Sources, kind: SymbolKind, live: readonly string[]): string[] {
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

const names = (list: readonly string[], kind: WordKind, detail: string): Word[] =>
  list.map((label) => ({ label, kind, detail }));

/** Words for a key, a value or a list item, by where the cursor is in the flow's structure. */
async function structureWords(cur: Cursor, s: Sources): Promise<Found | undefined> {
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
  if (['goto', 'next', 'then', 'else', 'do'].includes(key)) return steps();
  if (key === 'default' && keys[0] === 'steps') return steps();
  if (key === 'error' && (keys[0] === 'steps' || (depth === 1 && parent === 'handlers'))) return steps();
  if (key === 'hangup' && depth === 1 && parent === 'handlers') return steps();
  if (parent === 'on' && keys[0] === 'steps') return steps();
  if (keys[0] === 'handlers' && keys[1] === 'on' && depth === 3) return steps();
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

const KINDS: Record<WordKind, CompletionItemKind> = {
  action: CompletionItemKind.Function,
  param: CompletionItemKind.Property,
  key: CompletionItemKind.Property,
  result: CompletionItemKind.EnumMember,
  step: CompletionItemKind.Reference,
  var: CompletionItemKind.Variable,
  name: CompletionItemKind.Constant,
  value: CompletionItemKind.Value,
};

/** The items: each replaces the word typed (a key gets its `: `); MAX_ITEMS at most, those matching first. */
function toList(found: Found, cur: Cursor, line: number, src: SourceLines): CompletionList {
  const start = found.start ?? cur.start;
  const typed = cur.prefix.slice(start).toLowerCase();
  let words = found.words;
  const incomplete = words.length > MAX_ITEMS;
  if (incomplete) {
    const matching = words.filter((w) => w.label.toLowerCase().startsWith(typed));
    words = (matching.length > 0 ? matching : words).slice(0, MAX_ITEMS);
  }
  const end = cur.prefix.length;
  const after = src.text.slice(src.starts[line]! + end, src.ends[line]);
  const isKey = cur.slot.kind === 'key' && found.start === undefined;
  const items = words.map((w, i): CompletionItem => {
    const quote = !cur.quoted && (w.kind === 'result' || w.kind === 'step') && /^[0-9*#]/.test(w.label);
    const text = quote ? JSON.stringify(w.label) : w.label;
    const newText = isKey && !/^\s*:/.test(after) ? `${text}: ` : text;
    const item: CompletionItem = {
      label: w.label,
      kind: KINDS[w.kind],
      sortText: String(i).padStart(5, '0'),
      textEdit: { range: { start: { line, character: start }, end: { line, character: end } }, newText },
    };
    if (w.detail) item.detail = w.detail;
    if (w.doc) item.documentation = { kind: 'markdown', value: w.doc };
    return item;
  });
  return { isIncomplete: incomplete, items };
}
