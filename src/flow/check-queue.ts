/**
 * The `queue` step (language version 2): the line's name, its agents (numbers, or a CEL list), the strategy, hold
 * media, announcements, ring and wait times under `queue:`, and its result keys (`bridged`, `timeout`, `empty`,
 * `error`). Hostile bounds are checked here: the number of agents and hold chunks, the time bounds.
 */
import type { Branch, Branches, MediaParam, QueueSpec, Step } from './model.js';
import {
  type Ctx,
  asMap,
  asString,
  checkVarName,
  closest,
  didYouMean,
  ID_RE,
  posOf,
  report,
  requireV2,
} from './check-context.js';
import { checkMedia } from './check-media.js';
import { checkInt, checkTemplateText, exprOf } from './check-values.js';
import { checkBranch } from './check-results.js';
import { checkFiller } from './check-http.js';
import { isTemplate } from './expr.js';
import { checkE164 } from '../protocol/formats.js';
import { ACTION_SPECS } from './actions.js';
import { clip, describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';

/** A queue's times, in seconds (bounds and docs: the `queue` entry of src/flow/actions.ts). */
export const QUEUE_SECONDS = ['ring_time', 'wrap_up', 'max_wait', 'handle_time', 'max_talk'] as const;
export const QUEUE_KEYS = [
  'name',
  'agents',
  'strategy',
  ...QUEUE_SECONDS,
  'hold',
  'announce',
  'whisper',
  'cli',
] as const;
export const QUEUE_STRATEGIES = ['in_order', 'round_robin', 'longest_idle'] as const;
/** The keys a queue step takes beside `queue:` (no handlers, no valid). */
export const QUEUE_STEP_KEYS = ['save', 'on', 'next'] as const;
/** The keys of a queue's `announce:`. */
export const ANNOUNCE_KEYS = ['every', 'say'] as const;
/** The result keys of a queue step (`abandoned` is the hangup handler's). */
export const QUEUE_RESULT_WORDS = ['bridged', 'timeout', 'empty', 'error'];
export const QUEUE_BOUNDS = { agents: 1000, holdChunks: 32, announceMin: 10, announceMax: 3600 } as const;
/** A queue's name: what a step id may be (the admin API refuses any other name). */
export const QUEUE_NAME_RE = ID_RE;

/** The hints of result keys an author may expect of a queue step, from other languages or from dialout. */
const QUEUE_KEY_HINTS: Record<string, string> = {
  abandoned: 'A caller who hangs up while waiting ends the call: handlers.hangup runs (call.status says why).',
  default: 'A queue step has no default: write next: for timeout and empty (bridged and error have their own keys).',
  NOANSWER:
    "An agent who does not answer is the queue's affair: the caller goes on waiting for the next free agent " +
    '(ring_time says how long one rings).',
};

type IntKey = (typeof QUEUE_SECONDS)[number];

/** A queue step: `queue: {...}` with save, on, next. */
export function checkQueueStep(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  requireV2(ctx, action, 'queue');
  const before = ctx.diags.length;
  const spec = checkQueueSpec(ctx, action, where);
  const save = entry(node, 'save');
  let saveName: string | undefined;
  if (save) {
    if (save.value.kind !== 'scalar' || save.value.type !== 'string')
      report(ctx, 'TYPE_MISMATCH', save.value, `${where}save must be a variable name, not ${describe(save.value)}`);
    else if (checkVarName(ctx, String(save.value.value), save.value, 'save:')) {
      saveName = String(save.value.value);
      ctx.declared.add(saveName);
    }
  }
  const h = entry(node, 'handlers');
  if (h)
    report(
      ctx,
      'MISPLACED_KEY',
      h,
      `${where}'handlers' does not go with queue`,
      'handlers.on does not apply to a queue step (its results are its own); a failure takes on: { error } or ' +
        'handlers.error.',
    );
  const v = entry(node, 'valid');
  if (v) report(ctx, 'MISPLACED_KEY', v, `${where}'valid' does not go with queue`, 'A queue step takes no input.');
  const { on, quiet } = checkQueueOn(ctx, entry(node, 'on'), entry(node, 'next'), where);
  const missing = QUEUE_RESULT_WORDS.filter((k) => (k === 'timeout' || k === 'empty') && !quiet.has(k));
  if (missing.length > 0 && !quiet.has('*'))
    report(
      ctx,
      'UNHANDLED_RESULT',
      action,
      missing.length === 1
        ? `${where}queue result ${missing[0]} leads nowhere: with no next, the call would be hung up`
        : `${where}queue results ${missing.join(', ')} lead nowhere: with no next, the call would be hung up`,
      'Branch on timeout (max_wait went by) and empty (no agent can take the call) under on:, or give next: ' +
        'for both (e.g. a message, then voicemail).',
    );
  if (!spec || ctx.diags.slice(before).some((d) => d.severity === 'error')) return undefined;
  const step: Step = {
    kind: 'command',
    id,
    pos: posOf(ctx, action),
    command: { name: 'queue', params: {}, media: {} },
    on,
    inheritHandlers: false,
    queue: spec,
  };
  if (saveName !== undefined) step.save = saveName;
  return step;
}

/**
 * The branches of a queue step: bridged, timeout, empty, error (`next:` is the way for timeout and empty). `quiet`:
 * the results written (a branch with a mistake included) for UNHANDLED_RESULT, and `*` when it must say nothing (the
 * `on:` is no map, or a key was a misspelt result: one mistake, one diagnostic).
 */
function checkQueueOn(
  ctx: Ctx,
  on: YEntry | undefined,
  next: YEntry | undefined,
  where: string,
): { on: Branches; quiet: Set<string> } {
  const out: Branches = { exact: {}, patterns: [] };
  const quiet = new Set<string>();
  const map = on ? asMap(ctx, on.value, `${where}on`) : undefined;
  if (on && !map) quiet.add('*');
  for (const e of map?.entries ?? []) {
    const k = e.key;
    if (!QUEUE_RESULT_WORDS.includes(k)) {
      const near = QUEUE_KEY_HINTS[k] ? undefined : didYouMean(k, QUEUE_RESULT_WORDS);
      // a misspelt result, or default meant for timeout and empty: that key's one diagnostic
      if (near || k === 'default') quiet.add('*');
      const hint =
        QUEUE_KEY_HINTS[k] ??
        near ??
        'A queue step branches on bridged, timeout, empty and error (next: for timeout and empty).';
      report(ctx, 'IMPOSSIBLE_RESULT', e, `${where}queue has no result '${k}'`, hint);
      continue;
    }
    quiet.add(k);
    const b: Branch | undefined = checkBranch(ctx, e.value, where);
    if (!b) continue;
    if (!queueBranchOk(ctx, e, b, k, where)) continue;
    if (k === 'error') out.error = b;
    else out.exact[k] = b;
  }
  if (next) {
    quiet.add('timeout').add('empty');
    const b = checkBranch(ctx, next.value, where);
    if (b && queueBranchOk(ctx, next, b, 'next', where)) {
      out.exact.timeout ??= b;
      out.exact.empty ??= b;
    }
  }
  return { on: out, quiet };
}

function queueBranchOk(ctx: Ctx, e: YEntry, b: Branch, k: string, where: string): boolean {
  if (b.retry !== undefined) {
    report(
      ctx,
      'MISPLACED_KEY',
      e.value,
      `${where}queue ${k}: retry does not go with a queue result`,
      'Go to the queue step again (goto) to wait again: the caller keeps no place once out of the line.',
    );
    return false;
  }
  if (k === 'bridged' && b.say) {
    report(
      ctx,
      'MISPLACED_KEY',
      e.value,
      `${where}queue bridged: say does not go with bridged`,
      'The call has ended when bridged is taken (the agent or the caller hung up): only logic steps run there.',
    );
    return false;
  }
  return true;
}

function checkQueueSpec(ctx: Ctx, action: YEntry, where: string): QueueSpec | undefined {
  const node = action.value;
  if (node.kind !== 'map') {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}queue takes a map { name, agents, ... }, not ${describe(node)}`,
      'Write e.g. queue: { name: sales, agents: ["+442079460001"] }.',
    );
    return undefined;
  }
  const before = ctx.diags.length;
  const spec: QueueSpec = {
    name: '',
    agents: { kind: 'list', items: [] },
    strategy: 'in_order',
    ring_time: 20,
    wrap_up: 0,
    max_wait: 900,
    handle_time: 180,
    max_talk: 7200,
    hold: [{ kind: 'wait', wait: 10 }],
  };
  const w = `${where}queue `;
  const given = new Set<string>();
  for (const e of node.entries) {
    given.add(e.key);
    switch (e.key) {
      case 'name': {
        const n = asString(ctx, e.value, `${w}name`);
        if (n === undefined) break;
        if (!QUEUE_NAME_RE.test(n))
          report(
            ctx,
            'BAD_NAME',
            e.value,
            `${w}name '${clip(n)}' may use only letters, digits, - and _ (64 at most)`,
            'A queue is shared by every flow and instance that names it: write a fixed name, e.g. sales or ' +
              'support-fr (a name cannot be a template: one step, one line).',
          );
        else spec.name = n;
        break;
      }
      case 'agents': {
        const a = checkAgents(ctx, e.value, w);
        if (a) spec.agents = a;
        break;
      }
      case 'strategy': {
        const s = asString(ctx, e.value, `${w}strategy`);
        if (s === undefined) break;
        if (!(QUEUE_STRATEGIES as readonly string[]).includes(s))
          report(
            ctx,
            'BAD_ENUM',
            e.value,
            `${w}strategy '${clip(s)}' is not one of ${QUEUE_STRATEGIES.join(', ')}`,
            didYouMean(s, QUEUE_STRATEGIES) ??
              'in_order rings the first free agent as listed, round_robin the next one after the last rung, ' +
                'longest_idle the one free for the longest.',
          );
        else spec.strategy = s as QueueSpec['strategy'];
        break;
      }
      case 'ring_time':
      case 'wrap_up':
      case 'max_wait':
      case 'handle_time':
      case 'max_talk': {
        const key: IntKey = e.key;
        const p = ACTION_SPECS.queue.params[key] as { min: number; max: number; default: number; doc: string };
        const bounds = `${p.doc} ${p.min} to ${p.max}; ${p.default} when not given.`;
        const n = checkInt(ctx, e.value, key, p.min, p.max, w, bounds);
        if (n !== undefined) spec[key] = n;
        break;
      }
      case 'hold': {
        const items = e.value.kind === 'seq' ? e.value.items.length : 1;
        if (items > QUEUE_BOUNDS.holdChunks) {
          report(
            ctx,
            'OUT_OF_BOUNDS',
            e.value,
            `${w}hold has ${items} entries; at most ${QUEUE_BOUNDS.holdChunks}`,
            'Hold media loop: a few chunks (music, a message) are enough.',
          );
          break;
        }
        const f = checkFiller(ctx, e.value, w, 'hold');
        if (f) spec.hold = f;
        break;
      }
      case 'announce': {
        const a = checkAnnounce(ctx, e.value, where);
        if (a) spec.announce = a;
        break;
      }
      case 'whisper': {
        const m = checkMedia(ctx, e.value, 'whisper', w, { say: true });
        if (m) spec.whisper = m;
        break;
      }
      case 'cli': {
        const c = asString(ctx, e.value, `${w}cli`);
        if (c === undefined) break;
        if (!isTemplate(c) && c !== 'BLOCKED' && checkE164(c) !== null)
          report(ctx, 'BAD_FORMAT', e.value, `${w}cli '${clip(c)}' is not an E.164 number or BLOCKED`);
        else if (checkTemplateText(ctx, c, e.value, `${w}cli: `)) spec.cli = c;
        break;
      }
      default: {
        const near = closest(e.key, QUEUE_KEYS);
        // a misspelt required key is that key's one diagnostic (no MISSING_KEY beside it)
        if (near !== undefined) given.add(near);
        report(
          ctx,
          'UNKNOWN_KEY',
          e,
          `${where}unknown key '${e.key}' in queue`,
          near !== undefined ? `did you mean '${near}'?` : `Remove it (known: ${QUEUE_KEYS.join(', ')}).`,
        );
      }
    }
  }
  const missing = ['name', 'agents'].filter((k) => !given.has(k));
  if (missing.length > 0)
    report(
      ctx,
      'MISSING_KEY',
      action,
      `${where}queue needs ${missing.map((k) => `'${k}'`).join(' and ')}`,
      'Write e.g. queue: { name: sales, agents: ["+442079460001", "+442079460002"] }.',
    );
  return ctx.diags.length === before ? spec : undefined;
}

/** `agents:` a list of E.164 numbers (templates allowed), or `{ expr }` giving one. */
function checkAgents(ctx: Ctx, node: YNode, w: string): QueueSpec['agents'] | undefined {
  const expr = exprOf(ctx, node, `${w}agents: `);
  if (expr === null) return undefined;
  if (expr !== undefined) return { kind: 'expr', expr };
  if (node.kind !== 'seq') {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${w}agents must be a list of numbers or { expr: ... }, not ${describe(node)}`,
      node.kind === 'map' && node.entries.length === 1 && closest(node.entries[0]!.key, ['expr']) !== undefined
        ? 'did you mean \'expr\'? (agents: { expr: "vars.team" })'
        : 'Write e.g. agents: ["+442079460001", "+442079460002"], or agents: { expr: "vars.team" }.',
    );
    return undefined;
  }
  if (node.items.length === 0 || node.items.length > QUEUE_BOUNDS.agents) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      node,
      node.items.length === 0
        ? `${w}agents is an empty list: no caller could ever be served`
        : `${w}agents lists ${node.items.length.toLocaleString('en-US')} numbers; at most ` +
            QUEUE_BOUNDS.agents.toLocaleString('en-US'),
      node.items.length === 0
        ? 'List at least one number, or give { expr: ... } for a list known when the call runs (an empty one ' +
            'then takes empty).'
        : 'A queue offers its callers at most 1,000 agents; split a larger team into several queues.',
    );
    return undefined;
  }
  const items: string[] = [];
  const seen = new Set<string>();
  let ok = true;
  for (const it of node.items) {
    const s = it.kind === 'scalar' && it.type === 'string' ? String(it.value) : undefined;
    if (s === undefined) {
      report(ctx, 'TYPE_MISMATCH', it, `${w}agents: an agent is a number in a string ("+44..."), not ${describe(it)}`);
      ok = false;
      continue;
    }
    if (isTemplate(s)) {
      if (checkTemplateText(ctx, s, it, `${w}agents: `)) items.push(s);
      else ok = false;
      continue;
    }
    const bad = checkE164(s);
    if (bad !== null) {
      report(ctx, 'BAD_FORMAT', it, `${w}agents: '${clip(s)}': ${bad}`);
      ok = false;
    } else if (seen.has(s)) {
      report(ctx, 'DUPLICATE_KEY', it, `${w}agents: '${s}' is listed twice`);
      ok = false;
    } else {
      seen.add(s);
      items.push(s);
    }
  }
  return ok ? { kind: 'list', items } : undefined;
}

/** `announce: { every: s, say: media }`. */
function checkAnnounce(ctx: Ctx, node: YNode, where: string): QueueSpec['announce'] | undefined {
  const w = `${where}queue announce`;
  const map = asMap(ctx, node, w);
  if (!map) return undefined;
  let every = 60;
  let media: MediaParam | undefined;
  let sayGiven = false;
  let ok = true;
  for (const e of map.entries) {
    if (e.key === 'every') {
      const n = checkInt(
        ctx,
        e.value,
        'every',
        QUEUE_BOUNDS.announceMin,
        QUEUE_BOUNDS.announceMax,
        `${w} `,
        `Announcements come every ${QUEUE_BOUNDS.announceMin} to ${QUEUE_BOUNDS.announceMax} seconds of waiting ` +
          '(60 when not given).',
      );
      if (n === undefined) ok = false;
      else every = n;
    } else if (e.key === 'say') {
      sayGiven = true;
      const m = checkMedia(ctx, e.value, 'say', `${w} `, { say: true });
      if (m) media = m;
      else ok = false;
    } else {
      ok = false;
      const near = closest(e.key, ANNOUNCE_KEYS);
      if (near === 'say') sayGiven = true;
      report(
        ctx,
        'UNKNOWN_KEY',
        e,
        `${where}unknown key '${e.key}' in queue announce`,
        near !== undefined ? `did you mean '${near}'?` : 'announce takes every (seconds) and say (a media).',
      );
    }
  }
  if (!sayGiven) {
    report(
      ctx,
      'MISSING_KEY',
      node,
      `${w} needs 'say' (what to announce)`,
      'Write e.g. announce: { every: 60, say: "You are number {{ vars.place.position }} in line." }, with save: ' +
        'place on the step.',
    );
    return undefined;
  }
  return ok ? { every, media: media! } : undefined;
}
