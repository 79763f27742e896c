/**
 * The `queue` step (language version 2): the line's name, its agents (numbers, or a CEL list), the strategy, hold
 * media, announcements, ring and wait times under `queue:`, and its result keys (`bridged`, `timeout`, `empty`,
 * `error`). Hostile bounds are checked here: the number of agents and hold chunks, the time bounds.
 */
import type { Branch, Branches, FillerEntry, MediaParam, QueueSpec, Step } from './model.js';
import {
  type Ctx,
  asMap,
  asString,
  checkVarName,
  closest,
  didYouMean,
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
import { describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';

export const QUEUE_KEYS = [
  'name',
  'agents',
  'strategy',
  'ring_time',
  'wrap_up',
  'max_wait',
  'handle_time',
  'max_talk',
  'hold',
  'announce',
  'whisper',
  'cli',
] as const;
export const QUEUE_STRATEGIES = ['in_order', 'round_robin', 'longest_idle'] as const;
/** The result keys of a queue step (`abandoned` is the hangup handler's). */
export const QUEUE_RESULT_WORDS = ['bridged', 'timeout', 'empty', 'error'];
export const QUEUE_BOUNDS = { agents: 1000, holdChunks: 32, announceMin: 10, announceMax: 3600 } as const;
const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

type IntKey = 'ring_time' | 'wrap_up' | 'max_wait' | 'handle_time' | 'max_talk';

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
    report(ctx, 'MISPLACED_KEY', h, `${where}'handlers' does not go with queue`, 'A queue step has no handlers.on.');
  const v = entry(node, 'valid');
  if (v) report(ctx, 'MISPLACED_KEY', v, `${where}'valid' does not go with queue`, 'A queue step takes no input.');
  const on = checkQueueOn(ctx, entry(node, 'on'), entry(node, 'next'), where);
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

/** The branches of a queue step: bridged, timeout, empty, error (`next:` is the way for timeout and empty). */
function checkQueueOn(ctx: Ctx, on: YEntry | undefined, next: YEntry | undefined, where: string): Branches {
  const out: Branches = { exact: {}, patterns: [] };
  const map = on ? asMap(ctx, on.value, `${where}on`) : undefined;
  for (const e of map?.entries ?? []) {
    const k = e.key;
    if (!QUEUE_RESULT_WORDS.includes(k)) {
      const hint =
        k === 'abandoned'
          ? 'A caller who hangs up while waiting ends the call: handlers.hangup runs (call.status says why).'
          : (didYouMean(k, QUEUE_RESULT_WORDS) ??
            'A queue step branches on bridged, timeout, empty and error (next: for timeout and empty).');
      report(ctx, 'IMPOSSIBLE_RESULT', e, `${where}queue has no result '${k}'`, hint);
      continue;
    }
    const b: Branch | undefined = checkBranch(ctx, e.value, where);
    if (!b) continue;
    if (!queueBranchOk(ctx, e, b, k, where)) continue;
    if (k === 'error') out.error = b;
    else out.exact[k] = b;
  }
  if (next) {
    const b = checkBranch(ctx, next.value, where);
    if (b && queueBranchOk(ctx, next, b, 'next', where)) {
      out.exact.timeout ??= b;
      out.exact.empty ??= b;
    }
  }
  return out;
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
        const n = asString(ctx, e.value, 'a queue name');
        if (n === undefined) break;
        if (!NAME_RE.test(n))
          report(
            ctx,
            'BAD_NAME',
            e.value,
            `${w}name '${n}' is not a queue name (1 to 64 letters, digits, - and _)`,
            'Queues are shared by every flow and instance that names them: e.g. sales, support-fr.',
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
        const s = asString(ctx, e.value, 'a strategy');
        if (s === undefined) break;
        if (!(QUEUE_STRATEGIES as readonly string[]).includes(s))
          report(
            ctx,
            'BAD_ENUM',
            e.value,
            `${w}strategy '${s}' is not one of ${QUEUE_STRATEGIES.join(', ')}`,
            didYouMean(s, QUEUE_STRATEGIES) ?? undefined,
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
        const p = ACTION_SPECS.queue.params[key] as { min: number; max: number; doc: string };
        const n = checkInt(ctx, e.value, key, p.min, p.max, w, `${key} is ${p.min} to ${p.max} seconds: ${p.doc}`);
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
        const f = checkFiller(ctx, e.value, `${w}hold: `);
        if (f) spec.hold = f as FillerEntry[];
        break;
      }
      case 'announce': {
        const a = checkAnnounce(ctx, e.value, w);
        if (a) spec.announce = a;
        break;
      }
      case 'whisper': {
        const m = checkMedia(ctx, e.value, 'whisper', w, { say: true });
        if (m) spec.whisper = m;
        break;
      }
      case 'cli': {
        const c = asString(ctx, e.value, 'a caller id');
        if (c === undefined) break;
        if (!isTemplate(c) && c !== 'BLOCKED' && checkE164(c) !== null)
          report(ctx, 'BAD_FORMAT', e.value, `${w}cli '${c}' is not an E.164 number or BLOCKED`);
        else if (checkTemplateText(ctx, c, e.value, w)) spec.cli = c;
        break;
      }
      default: {
        const near = closest(e.key, QUEUE_KEYS);
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
  if (!given.has('name')) report(ctx, 'MISSING_KEY', action, `${where}queue needs 'name'`);
  if (!given.has('agents')) report(ctx, 'MISSING_KEY', action, `${where}queue needs 'agents'`);
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
      'Write e.g. agents: ["+442079460001", "+442079460002"], or agents: { expr: "vars.team" }.',
    );
    return undefined;
  }
  if (node.items.length > QUEUE_BOUNDS.agents) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      node,
      `${w}agents lists ${node.items.length.toLocaleString('en-US')} numbers; at most ${QUEUE_BOUNDS.agents}`,
    );
    return undefined;
  }
  const items: string[] = [];
  const seen = new Set<string>();
  let ok = true;
  for (const it of node.items) {
    const s = it.kind === 'scalar' && it.type === 'string' ? String(it.value) : undefined;
    if (s === undefined) {
      report(ctx, 'TYPE_MISMATCH', it, `${w}an agent is a number in a string ("+44..."), not ${describe(it)}`);
      ok = false;
      continue;
    }
    if (isTemplate(s)) {
      if (checkTemplateText(ctx, s, it, w)) items.push(s);
      else ok = false;
      continue;
    }
    const bad = checkE164(s);
    if (bad !== null) {
      report(ctx, 'BAD_FORMAT', it, `${w}agent '${s}': ${bad}`);
      ok = false;
    } else if (seen.has(s)) {
      report(ctx, 'DUPLICATE_KEY', it, `${w}agent '${s}' is listed twice`);
      ok = false;
    } else {
      seen.add(s);
      items.push(s);
    }
  }
  return ok ? { kind: 'list', items } : undefined;
}

/** `announce: { every: s, say: media }`. */
function checkAnnounce(ctx: Ctx, node: YNode, w: string): QueueSpec['announce'] | undefined {
  const map = asMap(ctx, node, `${w}announce`);
  if (!map) return undefined;
  let every = 60;
  let media: MediaParam | undefined;
  let mediaGiven = false;
  let ok = true;
  for (const e of map.entries) {
    if (e.key === 'every') {
      const n = checkInt(
        ctx,
        e.value,
        'every',
        QUEUE_BOUNDS.announceMin,
        QUEUE_BOUNDS.announceMax,
        `${w}announce `,
        `Announcements come every ${QUEUE_BOUNDS.announceMin} to ${QUEUE_BOUNDS.announceMax} seconds of waiting.`,
      );
      if (n === undefined) ok = false;
      else every = n;
    } else if (e.key === 'say') {
      mediaGiven = true;
      const m = checkMedia(ctx, e.value, 'announce', `${w}`, { say: true });
      if (m) media = m;
      else ok = false;
    } else {
      ok = false;
      report(
        ctx,
        'UNKNOWN_KEY',
        e,
        `${w}unknown key '${e.key}' in announce`,
        didYouMean(e.key, ['every', 'say']) ?? 'announce takes every (seconds) and say (a media).',
      );
    }
  }
  if (!mediaGiven) {
    report(ctx, 'MISSING_KEY', node, `${w}announce needs 'say' (what to announce)`);
    return undefined;
  }
  return ok ? { every, media: media! } : undefined;
}
