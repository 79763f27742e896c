/**
 * The checkers' shared context: where diagnostics are collected, how a code gets its
 * severity and hint from the catalogue, positions of nodes, and did-you-mean suggestions.
 */
import type { Diagnostic, Severity } from '../errors/diagnostic.js';
import { FLOW_CODES } from '../errors/flow-codes.js';
import type { Assignment, ModuleSpec, Pos } from './model.js';
import type { Loc, YEntry, YMap, YNode } from './yaml.js';
import { describe } from './yaml.js';
import type { Span } from './spans.js';
import type { LoopsSeen } from './check-loop.js';

/** A `vars.x` or `call.x` read by a template or expression, checked once all writes are known. */
export interface VarRef {
  root: 'vars' | 'call' | 'env' | 'secrets';
  /** Read by an http step's request (url, headers, query, body): where secrets.X may be read. */
  http?: boolean;
  name: string;
  at: YNode;
  /** Where the reference is in the string's value, and its length (for carets under it alone). */
  offset?: number;
  length?: number;
}

export interface Ctx {
  file: string;
  diags: Diagnostic[];
  /** The flow's default TTS voice. */
  voice: string;
  refs: VarRef[];
  /** Every step id the flow refers to (targets, start, handlers), checked by the graph pass. */
  targets: { id: string; at: YNode }[];
  /** What did-you-mean suggestions among the flow's own names (step ids, variables) may still cost. */
  suggest: SuggestBudget;
  /**
   * Variables a valid `save:` or `set:` name declares, even in a step that has other
   * errors: reading them elsewhere is no mistake of its own (one mistake, one diagnostic).
   */
  declared: Set<string>;
  /** The compile weight of the flow's patterns so far (result keys, matches() literals): bounded per flow. */
  patternWeight: number;
  /** The language version the file declares (1 when absent or wrong: the version's own diagnostic says so). */
  version: 1 | 2;
  /** Version 2 constructs already reported in a version 1 file (NEEDS_VERSION_2 once per construct). */
  v2Reported: Set<string>;
  /**
   * Names declared by the version 2 top-level tables (calendars, prompts, languages, environments), read by steps and
   * templates.
   */
  v2: V2Names;
  /** The names of `secrets:` (version 2), once read. */
  secrets?: string[];
  /** The file's `module:` interface, when it is a module (return steps are checked against it). */
  module?: ModuleSpec;
  /** Where each `set` assignment's `expr:` is written (MAYBE_UNSET points into it). */
  exprAt?: WeakMap<Assignment, YNode>;
  /** Media written as one `{{ }}` alone (a media computed at run time), checked once the vars are known. */
  rawMedia?: { at: YNode; source: string; name: string; where: string }[];
  /** The foreach steps checked so far and the names of their items and indexes (version 2). */
  loops?: LoopsSeen;
  /** Names read from the flow's tables and from other files, for editors: set by CheckOptions.symbols only. */
  uses?: NameUse[];
}

/**
 * A name a step reads, with where (for editors): a prompt (`{ prompt: x }`), a calendar step's calendar, a subflow
 * step's module (`flow:`) and its params (`with:` keys).
 */
export interface NameUse {
  kind: 'prompt' | 'calendar' | 'module' | 'param';
  name: string;
  at: YNode;
  /** A param's module. */
  module?: string;
  /** The map a `with:` key is a key of (a rename must not give it the name of another key there). */
  map?: YMap;
}

export interface V2Names {
  calendars?: Set<string>;
  /** Prompt names (checked when a `{ prompt: name }` media refers to one). */
  prompts?: Set<string>;
  languages?: Set<string>;
  /**
   * Every environment's literal values (checked params written with `{{ env.x }}` are checked with each; a value read
   * from the server's environment is not known before the call runs).
   */
  environments?: Record<string, Record<string, string>>;
  envKeys?: Set<string>;
  /** Keys whose value is a secret (`from_env:` of a variable declared in `secrets:`): read in http requests only. */
  envSecrets?: Set<string>;
  /** Calendar names read by open()/holiday() in conditions, with where (the name at `offset` in the value). */
  calendarRefs: { name: string; at: YNode; offset?: number }[];
  /** Env-only templates of checked params already checked in every environment: what failed where. */
  envChecked: Map<string, { env: string; value: string; err: string }[]>;
}

export function newCtx(file: string, voice: string): Ctx {
  return {
    file,
    diags: [],
    voice,
    refs: [],
    targets: [],
    suggest: { left: SUGGEST_BUDGET },
    declared: new Set(),
    patternWeight: 0,
    version: 1,
    v2Reported: new Set(),
    v2: { calendarRefs: [], envChecked: new Map() },
  };
}

/**
 * Work left for did-you-mean suggestions, in characters compared. Suggesting among n step
 * ids costs O(n) per misspelt id: a file with thousands of misspelt ids among thousands of
 * steps would take minutes. Once the budget of a check is spent (a few hundred misspelt
 * names among 10,000 steps), its other diagnostics keep their generic hint.
 */
export interface SuggestBudget {
  left: number;
}

export const SUGGEST_BUDGET = 20_000_000;

const CODES = new Map(FLOW_CODES.map((c) => [c.code, c]));

/** Something with a position: a node, a map entry (its key), a span inside a string, or a location. */
export type At = YNode | YEntry | Span | Loc;

function locs(at: At): { pos: Loc; end?: Loc } {
  if ('keyNode' in at) return { pos: at.keyNode.pos, end: at.keyNode.end };
  if ('pos' in at) return { pos: at.pos, end: at.end };
  return { pos: at };
}

/** Records a diagnostic; the code's severity (and default hint) come from the catalogue. */
export function report(ctx: Ctx, code: string, at: At, message: string, hint?: string): void {
  const info = CODES.get(code);
  const severity: Severity = info?.severity ?? 'error';
  const { pos, end } = locs(at);
  const d: Diagnostic = { code, severity, message, file: ctx.file, line: pos.line, column: pos.col };
  if (end && (end.line > pos.line || (end.line === pos.line && end.col > pos.col))) {
    d.endLine = end.line;
    d.endColumn = end.col;
  }
  const h = hint ?? info?.hint;
  if (h) d.hint = h;
  ctx.diags.push(d);
}

/**
 * A construct of language version 2 (http, subflow, calendars, prompts, environments,
 * sensitive, valid): in a `version: 1` file it is NEEDS_VERSION_2 at `at`, once per
 * construct name, and the caller goes on checking it as written (one mistake, one
 * diagnostic). Returns whether the file is version 2.
 */
export function requireV2(ctx: Ctx, at: At, what: string): boolean {
  if (ctx.version === 2) return true;
  if (!ctx.v2Reported.has(what)) {
    ctx.v2Reported.add(what);
    report(ctx, 'NEEDS_VERSION_2', at, `${what} is part of version 2 of the language; this file declares version: 1`);
  }
  return false;
}

export function posOf(ctx: Ctx, at: At): Pos {
  const { pos } = locs(at);
  return { file: ctx.file, line: pos.line, column: pos.col };
}

/** Levenshtein distance, with a cut-off. */
export function distance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  if (Math.abs(m - n) > 3) return 99;
  let prev2: number[] = [];
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      // transposition (optimal string alignment): "promtp" -> "prompt"
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        cur[j] = Math.min(cur[j]!, prev2[j - 2]! + 1);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[n]!;
}

/**
 * The closest candidate, if close enough to be a likely typo (the first one at the least
 * distance). Candidates that cannot beat the best so far are skipped on cheap lower
 * bounds of the distance (length difference, characters in common) before the table is
 * computed. With a budget, the work is charged to it; none left: no suggestion.
 */
export function closest(word: string, candidates: Iterable<string>, budget?: SuggestBudget): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(word.length / 3));
  const counts = new Int32Array(128);
  for (let i = 0; i < w.length; i++) counts[w.charCodeAt(i) & 127]!++;
  const scratch = new Int32Array(128);
  for (const c of candidates) {
    const lc = c.toLowerCase();
    if (budget && (budget.left -= lc.length + 1) < 0) return undefined;
    // only a distance within the limit, and below the best so far, can change the answer
    const bound = Math.min(limit, bestD - 1);
    if (Math.abs(lc.length - w.length) > bound) continue;
    // an edit changes the characters' counts by 2 at most: distance >= (characters not in common) / 2
    scratch.set(counts);
    let common = 0;
    for (let i = 0; i < lc.length; i++) {
      const k = lc.charCodeAt(i) & 127;
      if (scratch[k]! > 0) {
        scratch[k]!--;
        common++;
      }
    }
    if (Math.ceil((w.length + lc.length - 2 * common) / 2) > bound) continue;
    if (budget && (budget.left -= (w.length + 1) * (lc.length + 1)) < 0) return undefined;
    const d = distance(w, lc);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= limit ? best : undefined;
}

export function didYouMean(word: string, candidates: Iterable<string>, budget?: SuggestBudget): string | undefined {
  const c = closest(word, candidates, budget);
  return c === undefined ? undefined : `did you mean '${c}'?`;
}

/** Reports UNKNOWN_KEY for every key not in `known`; returns the entries that are known. */
export function knownEntries(ctx: Ctx, map: YMap, known: readonly string[], where: string): YEntry[] {
  const out: YEntry[] = [];
  for (const e of map.entries) {
    if (known.includes(e.key)) out.push(e);
    else unknownKey(ctx, e, known, where);
  }
  return out;
}

export function unknownKey(ctx: Ctx, e: YEntry, known: readonly string[], where: string): void {
  const dym = didYouMean(e.key, known);
  const list = known.length <= 12 ? ` (known: ${known.join(', ')})` : '';
  report(
    ctx,
    'UNKNOWN_KEY',
    e,
    `${where}unknown key '${e.key}'`,
    dym ?? `Remove it or use one of the known keys${list}.`,
  );
}

/** Expects a map; reports TYPE_MISMATCH otherwise. */
export function asMap(ctx: Ctx, node: YNode, what: string): YMap | undefined {
  if (node.kind === 'map') return node;
  report(ctx, 'TYPE_MISMATCH', node, `${what} must be a map, not ${describe(node)}`);
  return undefined;
}

/** Expects a non-empty string scalar (a step id, a name...). */
export function asString(ctx: Ctx, node: YNode, what: string): string | undefined {
  if (node.kind === 'scalar' && node.type === 'string') return node.value as string;
  report(ctx, 'TYPE_MISMATCH', node, `${what} must be a string, not ${describe(node)}`);
  return undefined;
}

export const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
export const VAR_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** CEL reserved words: `vars.in` would not parse. */
export const CEL_RESERVED = new Set([
  'as',
  'break',
  'const',
  'continue',
  'else',
  'false',
  'for',
  'function',
  'if',
  'import',
  'in',
  'let',
  'loop',
  'package',
  'namespace',
  'null',
  'return',
  'true',
  'var',
  'void',
  'while',
]);

/**
 * Names that every JavaScript object already has (`__proto__`, `constructor`, `toString`...):
 * a step or a variable by such a name would be mistaken for the object's own property.
 */
export function isObjectMember(name: string): boolean {
  return name === '__proto__' || name in Object.prototype;
}

/** Checks a variable name (save:, set:, vars:); reports BAD_NAME. */
export function checkVarName(ctx: Ctx, name: string, at: At, what: string): boolean {
  if (isObjectMember(name)) {
    report(
      ctx,
      'BAD_NAME',
      at,
      `${what} '${name}' is a reserved name (every JavaScript object has a member by that name); choose another name`,
    );
    return false;
  }
  if (!VAR_RE.test(name)) {
    report(
      ctx,
      'BAD_NAME',
      at,
      `${what} '${name}' is not a valid variable name: start with a letter or _, then letters, digits and _ ` +
        `(64 at most)`,
    );
    return false;
  }
  if (CEL_RESERVED.has(name)) {
    report(
      ctx,
      'BAD_NAME',
      at,
      `${what} '${name}' is a reserved word of CEL conditions: vars.${name} could not be read; choose another name`,
    );
    return false;
  }
  return true;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
