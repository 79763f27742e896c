/**
 * Names inside a template (`{{ }}`, `{% %}`) or a condition (CEL): after `vars.`, `call.`, `env.`, `secrets.`, inside
 * `open("` and `holiday("`, and the roots themselves. Only the end of the expression before the cursor is read.
 */
import type { VarRef } from '../flow/check-context.js';
import { CALL_FIELDS } from '../flow/check-vars.js';
import type { Cursor } from './cursor.js';
import { known, type Found, type Sources } from './suggest.js';
import type { WordKind } from './vocabulary.js';

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
export function expressionWords(cur: Cursor, s: Sources): Found | undefined {
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
