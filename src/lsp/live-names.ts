/**
 * Names declared in the text as it is now, read line by line (the YAML may not parse while it is typed): step ids,
 * top-level tables' names (calendars, prompts, languages, environment keys, secrets) and variables written by
 * `vars:`, `save:` and a loop's `as:`/`index:`. They complete the index of the file's last check, which may be older.
 * One pass over the lines, and one over each table read.
 */
import { lineAt, lineCount, type SourceLines } from '../flow/source-lines.js';
import { childKeys, topKeys } from './yaml-lines.js';
import type { Entry } from './flow-scan.js';

export interface LiveNames {
  top: Map<string, Entry>;
  steps: string[];
  vars: string[];
  env: string[];
  secrets: string[];
  calendars: string[];
  prompts: string[];
  languages: string[];
}

/** `save: name`, a loop's `as: name` and `index: name` (the whole text at once: one pass of the regex engine). */
const varWrites = () =>
  /^[ \t]*(?:-[ \t]+)?(?:save|as|index):[ \t]*["']?([A-Za-z_][A-Za-z0-9_]*)["']?[ \t]*(?:#.*)?$/gm;

/** The items of a list: `[a, b]` on the key's line, or `- a` lines below it. */
function listItems(src: SourceLines, e: Entry): string[] {
  const clean = (s: string) => s.trim().replace(/^["']|["']$/g, '');
  if (e.value.startsWith('['))
    return e.value
      .replace(/^\[|\].*$/g, '')
      .split(',')
      .map(clean)
      .filter(Boolean);
  const out: string[] = [];
  for (let i = e.line + 1; i < lineCount(src); i++) {
    const m = /^(\s*)-\s+(.*)$/.exec(lineAt(src, i));
    if (!m) {
      if (lineAt(src, i).trim() === '') continue;
      break;
    }
    out.push(clean(m[2]!.replace(/\s#.*$/, '')));
  }
  return out.filter(Boolean);
}

export function liveNames(src: SourceLines): LiveNames {
  const top = topKeys(src);
  const keys = (k: string) => {
    const e = top.get(k);
    return e ? [...childKeys(src, e).keys()] : [];
  };
  const env = new Set<string>();
  const envs = top.get('environments');
  if (envs) for (const e of childKeys(src, envs).values()) for (const k of childKeys(src, e).keys()) env.add(k);
  const vars = new Set(keys('vars'));
  for (const m of src.text.matchAll(varWrites())) vars.add(m[1]!);
  const secrets = top.get('secrets');
  return {
    top,
    steps: keys('steps'),
    vars: [...vars],
    env: [...env],
    secrets: secrets ? listItems(src, secrets) : [],
    calendars: keys('calendars'),
    prompts: keys('prompts'),
    languages: keys('languages'),
  };
}
