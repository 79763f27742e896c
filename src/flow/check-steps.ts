/**
 * Steps: dispatch on the one action key of a step (a command, `say`, `set`, `switch`,
 * `when`), check the keys that may go with it, and build the model's Step.
 */
import { PARAM_ALIASES, type CommandName } from '../protocol/commands.js';
import { ACTION_SPECS, EFFECT_NAMES, isAction, type ActionName } from './actions.js';
import { COMMAND_NAMES } from '../protocol/commands.js';
import type { Assignment, Branches, CommandCall, Handlers, Step, SwitchCase, Valid } from './model.js';
import {
  type Ctx,
  asMap,
  checkVarName,
  closest,
  didYouMean,
  knownEntries,
  posOf,
  report,
  requireV2,
} from './check-context.js';
import { checkCommand } from './check-commands.js';
import { checkHttpStep } from './check-http.js';
import { checkQueueStep } from './check-queue.js';
import { checkReturnStep, checkSubflowStep } from './check-subflow.js';
import { checkMedia } from './check-media.js';
import { type OnNotes, checkBranch, checkOn, emptyBranches, stepRef, unhandledResults } from './check-results.js';
import { checkCel, toValue } from './check-values.js';
import { describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';
import { compileLinear, type LinearRegex } from './pattern.js';
import { checkCalendarStep } from './check-calendars.js';
import { checkLoopStep, loopsOf } from './check-loop.js';

/** What a foreach step may be written as by someone used to another language. */
const LOOP_WORDS = ['loop', 'for', 'for_each', 'forEach', 'each', 'repeat'];

export const LOGIC_ACTIONS = ['set', 'switch', 'when', 'calendar', 'subflow', 'return', 'foreach'] as const;
export const ACTIONS: readonly string[] = [...COMMAND_NAMES, ...EFFECT_NAMES, 'say', ...LOGIC_ACTIONS];
const ACTION_SET: ReadonlySet<string> = new Set(ACTIONS);
export const MODIFIERS = ['save', 'on', 'next', 'handlers', 'valid', 'default', 'then', 'else', 'do', 'error'] as const;

export type StepKind = 'command' | 'hangup' | 'set' | 'switch' | 'when' | 'calendar' | 'subflow' | 'return' | 'foreach';

/** The keys that may go with each kind of action. */
export const ALLOWED: Record<StepKind, readonly string[]> = {
  command: ['save', 'on', 'next', 'handlers', 'valid'],
  hangup: [],
  set: ['next'],
  switch: ['default'],
  when: ['then', 'else'],
  calendar: ['on'],
  subflow: ['save', 'on', 'next'],
  return: [],
  foreach: ['do', 'next', 'error'],
};

const MISPLACED_HINT: Record<string, string> = {
  save: '`save` keeps the result of a command; logic steps have none.',
  on: '`on` branches on the result of a command; logic steps have none (use a switch or when step).',
  handlers: '`handlers: false` opts a command step out of flow-wide result handlers.',
  valid: '`valid` checks the input a command returned; logic steps have none (use a switch or when step).',
  next: 'switch and when steps say where to go with default / then / else.',
  default: 'On a command step write next: (or on: { default: ... }); default: belongs to switch steps.',
  then: 'then/else belong to when steps; in a branch, then goes with retry.',
  else: 'then/else belong to when steps.',
  do: '`do` is the body of a foreach step (version 2): the step run for each item.',
  error:
    'On a command step write on: { error: ... }; a step-level error: belongs to foreach steps (a value that is ' +
    'not a list).',
};

/** The kind of step an action key makes (one of ACTIONS). */
export function stepKind(action: string): StepKind {
  if (action === 'hangup') return 'hangup';
  return isAction(action) || action === 'say' ? 'command' : (action as StepKind);
}

/** The keys of `valid:` written as a map, and of a switch case. */
export const VALID_KEYS = ['when', 'else'] as const;
export const SWITCH_CASE_KEYS = ['when', 'goto'] as const;

/** Checks one step; undefined when it has errors (they are reported). */
export function checkStep(ctx: Ctx, stepEntry: YEntry, handlers: Handlers): Step | undefined {
  const id = stepEntry.key;
  const where = `step '${id}': `;
  const node = stepEntry.value;
  if (node.kind !== 'map') {
    report(
      ctx,
      'NOT_A_MAP',
      node,
      `${where}a step must be a map with one action, not ${describe(node)}`,
      'Write e.g. `' + id + ': { say: "Hello", next: menu }`.',
    );
    return undefined;
  }
  const diagsBefore = ctx.diags.length;
  const actions = node.entries.filter((e) => ACTION_SET.has(e.key));
  const unknown = node.entries.filter(
    (e) => !ACTION_SET.has(e.key) && !(MODIFIERS as readonly string[]).includes(e.key),
  );
  const seen = new Set([...actions, ...unknown]);
  // required params of the action written beside it (or misspelt there): one error each, the UNKNOWN_KEY
  const excused = new Set<string>();
  for (const e of unknown) {
    // a misspelt foreach names no item: the variables its body reads are its (one mistake, one diagnostic)
    if (LOOP_WORDS.includes(e.key)) loopsOf(ctx).unnamed = true;
    const u = unknownStepKey(e.key, actions[0]?.key);
    if (u.param) excused.add(u.param);
    report(ctx, 'UNKNOWN_KEY', e, `${where}unknown key '${e.key}'`, u.hint);
  }
  if (actions.length === 0) {
    if (unknown.length === 0)
      report(ctx, 'NO_ACTION', stepEntry, `${where}no action: give it a command, say, set, switch or when`);
    return undefined;
  }
  for (const extra of actions.slice(1)) {
    report(
      ctx,
      'MANY_ACTIONS',
      extra,
      `${where}has two actions, '${actions[0]!.key}' and '${extra.key}'; a step does one thing`,
    );
  }
  const action = actions[0]!;
  const kind = stepKind(action.key);
  for (const e of node.entries) {
    if (seen.has(e) || ALLOWED[kind].includes(e.key)) continue;
    const what =
      kind === 'hangup'
        ? 'nothing runs after hangup in this call (use handlers.hangup for logic at the end)'
        : MISPLACED_HINT[e.key];
    report(ctx, 'MISPLACED_KEY', e, `${where}'${e.key}' does not go with ${action.key}`, what);
  }
  const pos = posOf(ctx, stepEntry);
  let step: Step | undefined;
  if (kind === 'set') step = checkSet(ctx, node, action, id, where);
  else if (kind === 'switch') step = checkSwitch(ctx, node, action, id, where);
  else if (kind === 'when') step = checkWhen(ctx, node, action, id, where);
  else if (kind === 'calendar') step = checkCalendarStep(ctx, node, action, id, where);
  else if (action.key === 'http') step = checkHttpStep(ctx, node, action, id, where);
  else if (action.key === 'queue') step = checkQueueStep(ctx, node, action, id, where);
  else if (kind === 'subflow') step = checkSubflowStep(ctx, node, action, id, where);
  else if (kind === 'return') step = checkReturnStep(ctx, action, id, where);
  else if (kind === 'foreach') step = checkLoopStep(ctx, node, action, id, where);
  else step = checkCommandStep(ctx, node, action, id, where, handlers, excused);
  if (step) step.pos = pos;
  // only the diagnostics of this step are looked at: counting all of them per step was quadratic
  for (let i = diagsBefore; i < ctx.diags.length; i++) if (ctx.diags[i]!.severity === 'error') return undefined;
  return step;
}

/** The hint of an unknown key of a step, and the action's param it stands for, if any. */
function unknownStepKey(key: string, action: string | undefined): { hint: string; param?: string } {
  const aliases: Record<string, string> =
    action && isAction(action) ? (PARAM_ALIASES[action as CommandName] ?? {}) : {};
  const params =
    action && isAction(action) ? [...Object.keys(ACTION_SPECS[action].params), ...Object.keys(aliases)] : [];
  if (params.includes(key))
    return {
      hint: `'${key}' is a parameter of ${action}: indent it under ${action}: (${action}: { ${key}: ... }).`,
      param: aliases[key] ?? key,
    };
  if (['goto', 'retry', 'then'].includes(key) && action !== undefined)
    return { hint: `'${key}' belongs in a branch: next: { ${key}: ... } or under on:.` };
  if (LOOP_WORDS.includes(key))
    return { hint: `did you mean 'foreach'? (foreach: { in: vars.list, as: item } with do: and next:)` };
  const dym = didYouMean(key, [...ACTIONS, ...MODIFIERS]);
  if (dym) return { hint: dym };
  const near = closest(key, params);
  if (near !== undefined)
    return {
      hint:
        `did you mean '${near}'? It is a parameter of ${action}: indent it under ${action}: (${action}: ` +
        `{ ${near}: ... }).`,
      param: aliases[near] ?? near,
    };
  return {
    hint: 'A step has one action (a command, say, set, switch or when) and save, on, next, handlers as they apply.',
  };
}

function checkCommandStep(
  ctx: Ctx,
  node: YMap,
  action: YEntry,
  id: string,
  where: string,
  handlers: Handlers,
  excused: ReadonlySet<string>,
): Step | undefined {
  const cmd: ActionName = action.key === 'say' ? 'play' : (action.key as ActionName);
  let call: CommandCall | undefined;
  if (action.key === 'say') {
    const m = checkMedia(ctx, action.value, 'say', where, { say: true });
    if (m) call = { name: 'play', params: {}, media: { media_id: m } };
  } else {
    call = checkCommand(ctx, cmd, action, where, excused);
  }
  const save = entry(node, 'save');
  let saveName: string | undefined;
  if (save) {
    if (cmd === 'hangup') {
      // reported as MISPLACED_KEY above
    } else if (ACTION_SPECS[cmd].results.kind === 'none') {
      report(ctx, 'MISPLACED_KEY', save, `${where}${cmd} returns no result: there is nothing to save`);
    } else if (save.value.kind !== 'scalar' || save.value.type !== 'string') {
      report(ctx, 'TYPE_MISMATCH', save.value, `${where}save must be a variable name, not ${describe(save.value)}`);
    } else if (checkVarName(ctx, String(save.value.value), save.value, 'save:')) {
      saveName = String(save.value.value);
      ctx.declared.add(saveName);
    }
  }
  let inherit = true;
  const h = entry(node, 'handlers');
  if (h && cmd !== 'hangup') {
    if (h.value.kind === 'scalar' && h.value.type === 'bool') inherit = h.value.value as boolean;
    else
      report(
        ctx,
        'TYPE_MISMATCH',
        h.value,
        `${where}handlers on a step is true or false (false: flow-wide result handlers do not apply here), ` +
          `not ${describe(h.value)}`,
        'Flow-wide handlers are set at the top level; a step overrides one result simply by handling it under on:.',
      );
  }
  const notes: OnNotes = {};
  const on: Branches =
    cmd === 'hangup' ? emptyBranches() : checkOn(ctx, cmd, call, entry(node, 'on'), entry(node, 'next'), where, notes);
  // Results matter where the step branches on them (a read always does); a step with no
  // result key of its own that simply ends the flow after it is deliberate.
  const branches = cmd === 'read' || Object.keys(on.exact).length > 0 || on.patterns.length > 0;
  if (call && cmd !== 'hangup' && branches && !notes.typo) {
    const missing = unhandledResults(cmd, call, on, inherit ? handlers.on[cmd] : undefined);
    if (missing) {
      report(
        ctx,
        'UNHANDLED_RESULT',
        action,
        `${where}${action.key === 'say' ? 'say (play)' : cmd} results ${missing} lead nowhere: with no ` +
          `default or next, the call would be hung up`,
      );
    }
  }
  if (inherit && cmd !== 'hangup') shadowedHandlers(ctx, entry(node, 'on'), on, handlers.on[cmd], where);
  const validEntry = entry(node, 'valid');
  const valid = validEntry && cmd !== 'hangup' ? checkValid(ctx, validEntry, cmd, on, where) : undefined;
  if (!call) return undefined;
  const step: Step = { kind: 'command', id, pos: posOf(ctx, action), command: call, on, inheritHandlers: inherit };
  if (saveName !== undefined) step.save = saveName;
  if (valid) step.valid = valid;
  return step;
}

/** `valid: 'cel'` or `valid: { when: 'cel', else: branch }` (version 2). */
function checkValid(ctx: Ctx, e: YEntry, cmd: ActionName, on: Branches, where: string): Valid | undefined {
  requireV2(ctx, e, 'valid:');
  if (ACTION_SPECS[cmd].results.kind === 'none') {
    report(ctx, 'MISPLACED_KEY', e, `${where}${cmd} returns no result: there is no input for valid to check`);
    return undefined;
  }
  let whenNode: YNode | undefined;
  let elseEntry: YEntry | undefined;
  if (e.value.kind === 'map') {
    knownEntries(ctx, e.value, VALID_KEYS, `${where}valid: `);
    whenNode = entry(e.value, 'when')?.value;
    elseEntry = entry(e.value, 'else');
    if (!whenNode) report(ctx, 'MISSING_KEY', e.value, `${where}valid needs 'when': the condition an input must meet`);
  } else whenNode = e.value;
  const when = whenNode ? checkCel(ctx, whenNode, `${where}valid: `) : undefined;
  const otherwise = elseEntry ? checkBranch(ctx, elseEntry.value, `${where}valid else: `) : undefined;
  if (!elseEntry && !on.default) {
    report(
      ctx,
      'MISSING_KEY',
      e,
      `${where}valid has no 'else', and the step no default or next: a rejected input would have nowhere to go`,
      'Give valid an else (e.g. else: { retry: 2, say: "That is not right.", then: goodbye }), or the step a ' +
        'default under on: (a rejected input counts as one that matched no key).',
    );
  }
  if (when === undefined || (elseEntry && !otherwise)) return undefined;
  const v: Valid = { when, pos: posOf(ctx, e) };
  if (otherwise) v.else = otherwise;
  return v;
}

/**
 * A pattern of the step that matches a flow-wide handler's exact key: the pattern is tried
 * first, so the handler never applies here (SHADOWED_HANDLER, at the pattern).
 */
function shadowedHandlers(
  ctx: Ctx,
  onEntry: YEntry | undefined,
  on: Branches,
  flowWide: Handlers['on'][ActionName],
  where: string,
): void {
  if (!flowWide || on.patterns.length === 0 || onEntry?.value.kind !== 'map') return;
  const keys = Object.keys(flowWide.exact).filter((k) => !(k in on.exact));
  for (const p of on.patterns) {
    let re: LinearRegex;
    try {
      re = compileLinear(p.regex);
    } catch {
      continue;
    }
    const hit = keys.find((k) => re.test(k));
    if (hit === undefined) continue;
    const at = onEntry.value.entries.find((e) => e.key === p.source);
    if (at)
      report(
        ctx,
        'SHADOWED_HANDLER',
        at,
        `${where}the pattern ${p.source} matches "${hit}", so the flow-wide handlers.on key "${hit}" never ` +
          `applies at this step`,
      );
  }
}

function checkSet(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  const assign: Assignment[] = [];
  const map = asMap(ctx, action.value, `${where}set`);
  if (map && map.entries.length === 0)
    report(ctx, 'MISSING_KEY', action, `${where}set assigns nothing: give it at least one variable`);
  for (const e of map?.entries ?? []) {
    if (!checkVarName(ctx, e.key, e, 'set:')) continue;
    ctx.declared.add(e.key);
    const v = e.value;
    if (v.kind === 'map' && v.entries.some((x) => x.key === 'expr')) {
      if (v.entries.length > 1) {
        const other = v.entries.find((x) => x.key !== 'expr')!;
        report(
          ctx,
          'UNKNOWN_KEY',
          other,
          `${where}unknown key '${other.key}' beside expr`,
          'An { expr: "..." } map holds only expr; to store a map literally, do not name a key expr.',
        );
        continue;
      }
      const expr = checkCel(ctx, v.entries[0]!.value, `${where}set ${e.key}: `);
      if (expr !== undefined) {
        const a: Assignment = { name: e.key, value: { kind: 'expr', expr }, pos: posOf(ctx, e) };
        assign.push(a);
        (ctx.exprAt ??= new WeakMap()).set(a, v.entries[0]!.value);
      }
      continue;
    }
    const lit = toValue(ctx, v, `${where}set ${e.key}: `, true);
    if (lit !== undefined) assign.push({ name: e.key, value: { kind: 'literal', value: lit }, pos: posOf(ctx, e) });
  }
  const next = entry(node, 'next');
  const step: Step = { kind: 'set', id, pos: posOf(ctx, action), assign };
  if (next) {
    const to = stepRef(ctx, next.value, where);
    if (to !== undefined) step.next = to;
  }
  return step;
}

function checkSwitch(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  const cases: SwitchCase[] = [];
  const list = action.value;
  if (list.kind !== 'seq') {
    report(ctx, 'TYPE_MISMATCH', list, `${where}switch takes a list of { when, goto }, not ${describe(list)}`);
  } else if (list.items.length === 0) {
    report(ctx, 'MISSING_KEY', list, `${where}switch has no case: give it at least one { when, goto }`);
  } else {
    for (const it of list.items) {
      const c = asMap(ctx, it, `${where}a switch case`);
      if (!c) continue;
      knownEntries(ctx, c, SWITCH_CASE_KEYS, where);
      const w = entry(c, 'when');
      const g = entry(c, 'goto');
      if (!w || !g) {
        report(ctx, 'MISSING_KEY', it, `${where}a switch case needs ${!w ? "'when'" : "'goto'"}`);
        continue;
      }
      const cond = checkCel(ctx, w.value, where);
      const to = stepRef(ctx, g.value, where);
      if (cond !== undefined && to !== undefined) cases.push({ when: cond, goto: to, pos: posOf(ctx, it) });
    }
  }
  const step: Step = { kind: 'switch', id, pos: posOf(ctx, action), cases };
  const def = entry(node, 'default');
  if (!def) report(ctx, 'MISSING_KEY', action, `${where}switch needs 'default': where to go when no case holds`);
  else {
    const to = stepRef(ctx, def.value, where);
    if (to !== undefined) step.default = to;
  }
  return step;
}

/** `when` / `then` / `else` is a switch with one case. */
function checkWhen(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  const cond = checkCel(ctx, action.value, where);
  const then = entry(node, 'then');
  const els = entry(node, 'else');
  if (!then) report(ctx, 'MISSING_KEY', action, `${where}when needs 'then': where to go when the condition holds`);
  if (!els) report(ctx, 'MISSING_KEY', action, `${where}when needs 'else': where to go when it does not`);
  const to = then ? stepRef(ctx, then.value, where) : undefined;
  const other = els ? stepRef(ctx, els.value, where) : undefined;
  if (cond === undefined || to === undefined || other === undefined) return undefined;
  return {
    kind: 'switch',
    id,
    pos: posOf(ctx, action),
    cases: [{ when: cond, goto: to, pos: posOf(ctx, action.value) }],
    default: other,
  };
}
