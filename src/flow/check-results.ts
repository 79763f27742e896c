/**
 * Where results lead: branches, a command step's `on:`/`next:`, the flow-wide handlers,
 * result keys a command can never return (IMPOSSIBLE_RESULT) and results left unhandled
 * (UNHANDLED_RESULT).
 */
import { COMMANDS, COMMAND_NAMES, type CommandName } from '../protocol/commands.js';
import { ACTION_SPECS, type ActionName } from './actions.js';
import type { Branch, Branches, CommandCall, Handlers, ResultPattern } from './model.js';
import {
  type Ctx,
  asMap,
  asString,
  checkVarName,
  didYouMean,
  knownEntries,
  posOf,
  report,
  requireV2,
} from './check-context.js';
import { checkMedia } from './check-media.js';
import { checkInt } from './check-values.js';
import { enumerateDigits, impossibility, parseResultKey, type ResultKey } from './check-patterns.js';
import { describe, entry, type YEntry, type YNode } from './yaml.js';
import { compileLinear } from './pattern.js';
import { compileWeight, MAX_FLOW_PATTERN_WEIGHT, UNICODE_CLASS_WEIGHT } from './pattern.js';

/** A step id used as a target: recorded for the graph pass (UNKNOWN_STEP). */
export function stepRef(ctx: Ctx, node: YNode, where: string): string | undefined {
  const id = asString(ctx, node, `${where}a step id`);
  if (id !== undefined) ctx.targets.push({ id, at: node });
  return id;
}

const RETRY_HINT =
  'retry is how many times the step runs again for this result before going to then: (1 to 100, a limit of ' +
  'callscript, not of the service); to leave at once, write { goto: step }.';

/** A result key that is a pattern: the branch of one may save its named groups. */
type PatternKey = Extract<ResultKey, { kind: 'pattern' }>;

/** The keys of a branch written as a map, and of the flow-wide `handlers:`. */
export const BRANCH_KEYS = ['goto', 'retry', 'then', 'say', 'save'] as const;
export const HANDLER_KEYS = ['hangup', 'error', 'on'] as const;

/** A branch: `step`, `{ goto, say }` or `{ retry, then, say }`; a pattern's may `save:` its named groups. */
export function checkBranch(ctx: Ctx, node: YNode, where: string, pattern?: PatternKey): Branch | undefined {
  if (node.kind === 'scalar' && node.type === 'string') {
    const id = stepRef(ctx, node, where);
    return id === undefined ? undefined : { goto: id, pos: posOf(ctx, node) };
  }
  if (node.kind !== 'map') {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}a branch is a step id or a map { goto | retry, then, say }, not ${describe(node)}`,
    );
    return undefined;
  }
  const before = ctx.diags.length;
  const b: Branch = { pos: posOf(ctx, node) };
  // which keys it has: flags, not a closure per branch (a big flow has tens of thousands, checked at each change)
  let goto = false;
  let retry = false;
  let then = false;
  for (const e of knownEntries(ctx, node, BRANCH_KEYS, where)) {
    if (e.key === 'goto') {
      goto = true;
      b.goto = stepRef(ctx, e.value, where);
    } else if (e.key === 'then') {
      then = true;
      b.then = stepRef(ctx, e.value, where);
    } else if (e.key === 'retry') {
      retry = true;
      b.retry = checkInt(ctx, e.value, 'retry', 1, 100, where, RETRY_HINT);
    } else if (e.key === 'say') b.say = checkMedia(ctx, e.value, 'say', where, { say: true });
    else {
      const save = checkGroupSave(ctx, e, pattern, where);
      if (save) b.save = save;
    }
  }
  if (goto && retry) {
    report(
      ctx,
      'BAD_BRANCH',
      entry(node, 'retry')!,
      `${where}a branch has goto or retry, not both`,
      'Use { goto: step } to leave, or { retry: n, then: step } to ask again.',
    );
  } else if (then && !retry) {
    report(
      ctx,
      'BAD_BRANCH',
      entry(node, 'then')!,
      `${where}'then' goes with 'retry'`,
      goto ? 'Remove then: goto already says where to go.' : 'Write { retry: n, then: step }, or { goto: step }.',
    );
  } else if (retry && !then) {
    report(
      ctx,
      'MISSING_KEY',
      node,
      `${where}a branch with 'retry' needs 'then': where to go once the retries are used up`,
    );
  } else if (!goto && !retry) {
    report(ctx, 'BAD_BRANCH', node, `${where}a branch needs 'goto' or 'retry' (with 'then')`);
  }
  return ctx.diags.length === before ? b : undefined;
}

/**
 * `save:` of a pattern's branch (version 2): `{ variable: group }`, or `[group, ...]` for variables named as the
 * groups. Each group must be a named group of the pattern (UNKNOWN_GROUP, with the nearest name).
 */
function checkGroupSave(
  ctx: Ctx,
  e: YEntry,
  pattern: PatternKey | undefined,
  where: string,
): Record<string, string> | undefined {
  requireV2(ctx, e, "save: of a pattern's groups");
  if (!pattern) {
    report(
      ctx,
      'MISPLACED_KEY',
      e,
      `${where}save: in a branch keeps the named groups of a /pattern/ key, and this branch's key is not one`,
      'To keep the whole result, write save: on the step.',
    );
    return undefined;
  }
  const pairs: [string, YNode, YNode][] = [];
  const v = e.value;
  if (v.kind === 'map') for (const x of v.entries) pairs.push([x.key, x.keyNode, x.value]);
  else if (v.kind === 'seq')
    for (const it of v.items) {
      const g = asString(ctx, it, 'a group name');
      if (g !== undefined) pairs.push([g, it, it]);
    }
  else {
    report(
      ctx,
      'TYPE_MISMATCH',
      v,
      `${where}save: of a pattern is a map { variable: group } or a list of groups, not ${describe(v)}`,
      `Write e.g. save: { service: svc }, or save: [svc] to name the variable as the group.`,
    );
    return undefined;
  }
  const names = pattern.asterisk ? [] : (compileLinear(pattern.regex).names ?? []);
  const out: Record<string, string> = {};
  let ok = true;
  for (const [name, at, groupNode] of pairs) {
    const group = groupNode === at ? name : asString(ctx, groupNode, 'a group name');
    if (group === undefined || !checkVarName(ctx, name, at, 'save:')) {
      ok = false;
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(out, name)) {
      report(ctx, 'DUPLICATE_KEY', at, `${where}save: '${name}' is saved twice`);
      ok = false;
      continue;
    }
    if (!names.includes(group)) {
      report(
        ctx,
        'UNKNOWN_GROUP',
        groupNode,
        `${where}the pattern ${pattern.source} has no group named '${group}'`,
        didYouMean(group, names) ??
          (pattern.asterisk
            ? 'An Asterisk pattern has no groups: write a /regular expression/ with a named group, (?<name>...).'
            : names.length > 0
              ? `Its named groups: ${names.join(', ')}.`
              : 'Name the part to keep in the pattern: (?<name>[0-9]+).'),
      );
      ok = false;
      continue;
    }
    ctx.declared.add(name);
    out[name] = group;
  }
  return ok ? out : undefined;
}

export function emptyBranches(): Branches {
  return { exact: {}, patterns: [] };
}

/** The effective max_digits of a read (the catalogue default when not given). */
export function maxDigitsOf(call: CommandCall | undefined): number {
  const v = call?.params.max_digits;
  if (typeof v === 'number') return v;
  const spec = COMMANDS.read.params.max_digits;
  return spec?.type === 'int' ? (spec.default ?? 1) : 1;
}

/** What checkOn saw besides the branches. */
export interface OnNotes {
  /**
   * A key of `on:` was reported as a misspelt `default` or result name: UNHANDLED_RESULT
   * would only repeat that mistake, so the step gets none until it is fixed.
   */
  typo?: boolean;
}

/** A step's `on:` map and `next:` into Branches. */
export function checkOn(
  ctx: Ctx,
  cmd: ActionName,
  call: CommandCall | undefined,
  on: YEntry | undefined,
  next: YEntry | undefined,
  where: string,
  notes: OnNotes = {},
): Branches {
  const out = emptyBranches();
  const maxDigits = maxDigitsOf(call);
  let defaultEntry: YEntry | undefined;
  const map = on ? asMap(ctx, on.value, `${where}on`) : undefined;
  for (const e of map?.entries ?? []) {
    const k = resultKey(ctx, e, where);
    if (k === undefined) continue;
    const why = call || ACTION_SPECS[cmd].results.kind !== 'digits' ? impossibility(cmd, k, maxDigits) : null;
    if (why) {
      const hint = k.kind === 'exact' ? resultKeyHint(cmd, k.value, true) : undefined;
      if (hint?.startsWith('did you mean')) notes.typo = true;
      report(ctx, 'IMPOSSIBLE_RESULT', e, `${where}${why}`, hint);
      continue;
    }
    const b = checkBranch(ctx, e.value, where, k.kind === 'pattern' ? k : undefined);
    if (!b) continue;
    if (k.kind === 'default') {
      out.default = b;
      defaultEntry = e;
    } else if (k.kind === 'error') out.error = b;
    else if (k.kind === 'exact') out.exact[k.value] = b;
    else out.patterns.push({ source: k.source, regex: k.regex, branch: b });
  }
  if (next) {
    if (defaultEntry) {
      report(
        ctx,
        'DUPLICATE_DEFAULT',
        next,
        `${where}has both next and on.default (line ${defaultEntry.keyNode.pos.line}); they mean the same thing`,
      );
    } else {
      const b = checkBranch(ctx, next.value, where);
      if (b) out.default = b;
    }
  }
  return out;
}

/**
 * The hint of an IMPOSSIBLE_RESULT on an exact key: a did-you-mean among the command's
 * result names and (on a step's `on:`) the branch keywords default and error, compared
 * case-insensitively and by edit distance (`defualt`, `Default`, `eror`, `timeout`).
 * Digit keys are not compared with the digit results of an enum set ('2' is not a typo
 * of '0'): the hint says which results exist instead. undefined: the catalogue's hint.
 */
export function resultKeyHint(cmd: ActionName, key: string, keywords: boolean): string | undefined {
  const set = ACTION_SPECS[cmd].results;
  const names = set.kind === 'enum' ? set.values : set.kind === 'digits' ? set.also : [];
  const digitKey = /^[0-9*#]+$/.test(key);
  const candidates = [
    ...(digitKey ? names.filter((n) => !/^[0-9*#]+$/.test(n)) : names),
    ...(keywords ? ['default', 'error'] : []),
  ];
  const dym = didYouMean(key, candidates);
  if (dym) return dym;
  const rest = keywords ? ', or default: (or next:) for any result' : '';
  if (set.kind === 'enum') {
    const list =
      set.values.length === 1
        ? `only ${set.values[0]}`
        : `${set.values.slice(0, -1).join(', ')} or ${set.values.at(-1)}`;
    return `${cmd} returns ${list}: use ${set.values.length === 1 ? 'it' : 'those'} as result keys${rest}.`;
  }
  return undefined;
}

/** The flow-wide `handlers:` map. */
export function checkHandlers(ctx: Ctx, node: YNode | undefined): Handlers {
  const h: Handlers = { on: {} };
  if (!node) return h;
  const map = asMap(ctx, node, 'handlers');
  if (!map) return h;
  for (const e of knownEntries(ctx, map, HANDLER_KEYS, 'handlers: ')) {
    if (e.key === 'hangup') h.hangup = stepRef(ctx, e.value, 'handlers.hangup: ');
    else if (e.key === 'error') h.error = checkBranch(ctx, e.value, 'handlers.error: ');
    else checkHandlersOn(ctx, e.value, h);
  }
  return h;
}

function checkHandlersOn(ctx: Ctx, node: YNode, h: Handlers): void {
  const map = asMap(ctx, node, 'handlers.on');
  if (!map) return;
  for (const c of map.entries) {
    if (!(COMMAND_NAMES as readonly string[]).includes(c.key)) {
      const say = c.key === 'say' ? 'say steps are play commands: write handlers.on.play' : undefined;
      report(
        ctx,
        'UNKNOWN_KEY',
        c,
        `handlers.on: '${c.key}' is not a command`,
        say ?? didYouMean(c.key, COMMAND_NAMES),
      );
      continue;
    }
    const cmd = c.key as CommandName;
    const kind = COMMANDS[cmd].results.kind;
    if (kind === 'none' || kind === 'any') {
      const what = kind === 'none' ? 'returns no result' : `returns ${(COMMANDS[cmd].results as { doc: string }).doc}`;
      report(ctx, 'HANDLER_RESULTS', c, `handlers.on.${cmd}: ${cmd} ${what}; there is nothing to match flow-wide`);
      continue;
    }
    const where = `handlers.on.${cmd}: `;
    const keys = asMap(ctx, c.value, `handlers.on.${cmd}`);
    const exact: Record<string, Branch> = {};
    const patterns: ResultPattern[] = [];
    for (const e of keys?.entries ?? []) {
      const k = resultKey(ctx, e, where);
      if (k === undefined) continue;
      if (k.kind === 'default' || k.kind === 'error') {
        const hint =
          k.kind === 'error'
            ? 'Use handlers.error for failed commands.'
            : "A flow-wide default would hide every step's own default; give each step its default or next.";
        report(ctx, 'MISPLACED_KEY', e, `${where}'${k.kind}' cannot be a flow-wide result handler`, hint);
        continue;
      }
      const why = impossibility(cmd, k, 20);
      if (why) {
        report(
          ctx,
          'IMPOSSIBLE_RESULT',
          e,
          `${where}${why}`,
          k.kind === 'exact' ? resultKeyHint(cmd, k.value, false) : undefined,
        );
        continue;
      }
      const b = checkBranch(ctx, e.value, where, k.kind === 'pattern' ? k : undefined);
      if (!b) continue;
      if (k.kind === 'exact') exact[k.value] = b;
      else patterns.push({ source: k.source, regex: k.regex, branch: b });
    }
    h.on[cmd] = { exact, patterns };
  }
}

/**
 * Results of a command step that lead nowhere (no key, no pattern, no flow-wide handler)
 * when the step has no default: for enum sets, each value; for read, TIMEOUT and the keys.
 * Returns the description of what is unhandled, or null.
 */
export function unhandledResults(
  cmd: ActionName,
  call: CommandCall | undefined,
  on: Branches,
  flowWide: Handlers['on'][ActionName] | undefined,
): string | null {
  if (on.default) return null;
  const set = ACTION_SPECS[cmd].results;
  const exact = { ...(flowWide?.exact ?? {}), ...on.exact };
  const res = [...on.patterns, ...(flowWide?.patterns ?? [])].map((p) => compileLinear(p.regex));
  const covered = (v: string) => v in exact || res.some((r) => r.test(v));
  if (set.kind === 'enum') {
    const missing = set.values.filter((v) => !covered(v));
    return missing.length ? missing.join(', ') : null;
  }
  if (set.kind !== 'digits') return null;
  const missing = set.also.filter((v) => !covered(v));
  const maxDigits = maxDigitsOf(call);
  const all = enumerateDigits(maxDigits);
  if (all) {
    const keys = all.filter((v) => !covered(v));
    if (keys.length > 0) {
      const shown = keys.slice(0, 6).map((k) => `'${k}'`);
      missing.push(
        keys.length > 6 ? `${shown.join(', ')} and ${keys.length - 6} other key sequences` : shown.join(', '),
      );
    }
  } else if (res.length === 0) {
    missing.push(Object.keys(exact).some((k) => /^[0-9*]+$/.test(k)) ? 'any other keys pressed' : 'any keys pressed');
  }
  return missing.length ? missing.join(', ') : null;
}

/**
 * A result key, parsed; undefined after a BAD_PATTERN. A pattern is weighed before it is
 * compiled: the patterns of one flow may weigh MAX_FLOW_PATTERN_WEIGHT in all, so that
 * checking (and compiling) a flow stays bounded however many keys it has.
 */
function resultKey(ctx: Ctx, e: YEntry, where: string): ResultKey | undefined {
  if (e.key.startsWith('/')) {
    ctx.patternWeight += compileWeight(e.key);
    if (ctx.patternWeight > MAX_FLOW_PATTERN_WEIGHT) {
      report(
        ctx,
        'BAD_PATTERN',
        e,
        `${where}result key '${e.key}': the flow's patterns weigh more ` +
          `than ${MAX_FLOW_PATTERN_WEIGHT.toLocaleString('en-US')} to compile in all (instructions, a Unicode ` +
          `class counting ${UNICODE_CLASS_WEIGHT}): use exact keys, or fewer and simpler patterns`,
      );
      return undefined;
    }
  }
  const k = parseResultKey(e.key);
  if (typeof k === 'string') {
    report(ctx, 'BAD_PATTERN', e, `${where}result key '${e.key}': ${k}`);
    return undefined;
  }
  return k;
}
