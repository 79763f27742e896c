/**
 * The literal arguments of the spoken-format filters (say_money: 'EUR', say_date: 'full', 'fr-FR'...), checked
 * when the flow loads: a locale, a currency, a style or a number the filter would refuse when the call runs is
 * BAD_FILTER_ARGUMENT here, under the argument. Arguments read from variables are checked when the call runs.
 */
import {
  maxArgs,
  NOT_LITERAL,
  readSpokenArgs,
  SPOKEN_FILTERS,
  tooMany,
  type ArgsResult,
  type SpokenFilter,
} from './spoken-args.js';
import { spanIn } from './spans.js';
import { type Ctx, didYouMean, report } from './check-context.js';
import type { YNode } from './yaml.js';

/** One use of a spoken filter in a template: its name, and each argument (a literal's value, or NOT_LITERAL). */
export interface SpokenUse {
  filter: SpokenFilter;
  args: { value: unknown; offset: number; length: number }[];
  /** Where the filter's name is in the text. */
  offset: number;
  /** More arguments follow the ones read (MAX_ARGS_READ). */
  more?: true;
}

const TAG_RE = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;
const USE_RE = /\|\s*(say_[a-z]+)\b/g;
const NUMBER = /^-?\d+(?:\.\d+)?(?![\w.])/;
const NAMED = /^[A-Za-z_][\w-]*\s*:/;
/** The arguments read of one use (a filter takes 4 at most: more are an error, however many). */
const MAX_ARGS_READ = 16;
const WORDS: Record<string, unknown> = { true: true, false: false, nil: null, null: null };

/** The spoken filters a template uses, with their arguments as written. */
export function spokenUses(text: string): SpokenUse[] {
  const out: SpokenUse[] = [];
  for (const t of text.matchAll(TAG_RE)) {
    const body = t[1] ?? t[2] ?? '';
    const base = t.index + 2;
    for (const u of body.matchAll(USE_RE)) {
      const name = u[1]!;
      if (!Object.prototype.hasOwnProperty.call(SPOKEN_FILTERS, name)) continue;
      const use: SpokenUse = {
        filter: name as SpokenFilter,
        args: [],
        offset: base + u.index + u[0].length - name.length,
      };
      let i = u.index + u[0].length;
      i = skipSpaces(body, i);
      if (body[i] === ':') {
        for (;;) {
          i = skipSpaces(body, i + 1);
          const start = i;
          const arg = readArg(body, i);
          i = arg.end;
          use.args.push({ value: arg.value, offset: base + start, length: Math.max(1, arg.end - start) });
          i = skipSpaces(body, i);
          if (body[i] !== ',') break;
          if (use.args.length >= MAX_ARGS_READ) {
            use.more = true; // far past the most any filter takes (4): the rest is not read
            break;
          }
        }
      }
      out.push(use);
    }
  }
  return out;
}

function skipSpaces(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i]!)) i++;
  return i;
}

/** One argument from `i`: a quoted string, a number, true/false/nil, a named argument ([]), or NOT_LITERAL. */
function readArg(s: string, i: number): { value: unknown; end: number } {
  const q = s[i];
  if (q === '"' || q === "'") {
    const close = s.indexOf(q, i + 1);
    const end = close < 0 ? s.length : close + 1;
    return { value: s.slice(i + 1, close < 0 ? s.length : close), end };
  }
  const rest = s.slice(i, i + 64);
  const n = NUMBER.exec(rest);
  if (n) return { value: Number(n[0]), end: i + n[0].length };
  const named = NAMED.exec(rest);
  let end = i;
  let depth = 0;
  for (; end < s.length; end++) {
    const c = s[end]!;
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === '"' || c === "'") {
      const close = s.indexOf(c, end + 1);
      end = close < 0 ? s.length - 1 : close;
    } else if (depth <= 0 && (c === ',' || c === '|')) break;
  }
  while (end > i && /\s/.test(s[end - 1]!)) end--;
  const word = s.slice(i, end);
  if (named) return { value: [], end };
  if (Object.prototype.hasOwnProperty.call(WORDS, word)) return { value: WORDS[word], end };
  return { value: NOT_LITERAL, end };
}

/** Reports BAD_FILTER_ARGUMENT for each spoken filter of `text` whose literal arguments it would refuse. */
export function checkSpokenArgs(ctx: Ctx, text: string, at: YNode, where: string): boolean {
  if (!text.includes('say_')) return true;
  let ok = true;
  for (const use of spokenUses(text)) {
    const read: ArgsResult = use.more
      ? { error: `${use.filter}: ${tooMany(use.filter, `more than ${MAX_ARGS_READ}`)}`, index: maxArgs(use.filter) }
      : readSpokenArgs(
          use.filter,
          use.args.map((a) => a.value),
        );
    if (!('error' in read)) continue;
    ok = false;
    const arg = use.args[read.index];
    const offset = arg?.offset ?? use.offset;
    const length = arg?.length ?? use.filter.length;
    const span = at.kind === 'scalar' ? spanIn(at, offset, length) : undefined;
    const value = arg?.value;
    const sig = SPOKEN_FILTERS[use.filter] as { words?: readonly string[] };
    const hint = typeof value === 'string' && sig.words ? didYouMean(value, sig.words) : undefined;
    report(ctx, 'BAD_FILTER_ARGUMENT', span ?? at, `${where}${read.error}`, hint);
  }
  return ok;
}
