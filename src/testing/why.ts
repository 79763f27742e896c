/**
 * Why `paths` writes no case for a transition: either no scenario can take it (said with
 * the reason: the step is never reached, or no result the command can return takes that
 * branch: each possible result is tried on the machine), or the search did not find a
 * way (a condition on call fields or vars it did not guess).
 */
import type { CompiledFlow } from '../engine/compile.js';
import { keysTaken } from '../engine/probe.js';
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { enumerateDigits } from '../flow/check-patterns.js';
import { EV_RESULT, type TransitionConfig } from '../flow/machine-config.js';
import { COMMANDS } from '../protocol/commands.js';
import type { Explored } from './explore.js';
import { resultsText } from './results.js';
import { reachableStates, tookKeys } from './transitions.js';

interface Carrier {
  state: string;
  event: string;
  t: TransitionConfig;
}

/** The machine transitions that report each key. */
function carriers(flow: CompiledFlow): Map<string, Carrier[]> {
  const out = new Map<string, Carrier[]>();
  for (const [state, sc] of Object.entries(flow.config.states)) {
    const lists: [string, TransitionConfig[]][] = [...Object.entries(sc.on ?? {}), ['always', sc.always ?? []]];
    for (const [event, list] of lists) {
      for (const t of list) for (const k of tookKeys(t)) out.set(k, [...(out.get(k) ?? []), { state, event, t }]);
    }
  }
  return out;
}

/** Every result a command step can return, when they can be listed (enum, none, a read of up to 3 keys). */
function possibleResults(
  flow: CompiledFlow,
  state: string,
): { command: string; values: string[]; maxDigits?: number } | undefined {
  const meta = flow.config.states[state]?.meta;
  if (!meta || meta.kind !== 'command' || !isAction(meta.command)) return undefined;
  const set = ACTION_SPECS[meta.command].results;
  if (set.kind === 'enum') return { command: meta.command, values: [...set.values] };
  if (set.kind === 'none') return { command: meta.command, values: [''] };
  if (set.kind !== 'digits') return undefined;
  const step = flow.model.steps[meta.step];
  const md = step?.kind === 'command' ? step.command.params.max_digits : undefined;
  const spec = COMMANDS.read.params.max_digits;
  const n =
    md === undefined ? (spec?.type === 'int' ? (spec.default ?? 1) : 1) : typeof md === 'number' ? md : undefined;
  const keys = n === undefined ? undefined : enumerateDigits(n);
  return keys ? { command: meta.command, values: [...keys, ...set.also], maxDigits: n } : undefined;
}

/** Why no result takes carrier `c`, or undefined when one may. */
function noResult(flow: CompiledFlow, c: Carrier): string | undefined {
  if (c.event !== EV_RESULT) return undefined;
  const all = possibleResults(flow, c.state);
  if (!all) return undefined;
  const first = tookKeys(c.t)[0];
  const ways = all.values.map((v) => ({ v, k: keysTaken(flow, c.state, v)[0] }));
  if (ways.some((w) => w.k === first)) return undefined;
  const shown =
    all.values.length <= 6
      ? ways.map((w) => `${w.v === '' ? '""' : w.v} takes ${w.k ?? 'no branch (the flow ends)'}`).join(', ')
      : 'each takes another branch';
  const bridged =
    all.command === 'dialout' ? ' (an answered dialout ends the call with a terminal status, not a result)' : '';
  return `${resultsText(all.command, all.maxDigits)}${bridged}: ${shown}`;
}

/** The transitions of `keys` that no scenario can take, with the reason. */
export function impossible(flow: CompiledFlow, keys: Iterable<string>): Map<string, string> {
  const reach = reachableStates(flow);
  const by = carriers(flow);
  const out = new Map<string, string>();
  for (const k of keys) {
    const cs = (by.get(k) ?? []).filter((c) => reach.has(c.state));
    if (cs.length === 0) {
      const step = k.slice(0, k.indexOf(':'));
      out.set(k, `cannot be taken: no branch of the flow leads to step ${step}`);
      continue;
    }
    const reasons = cs.map((c) => noResult(flow, c));
    if (reasons.every((r) => r !== undefined)) out.set(k, `cannot be taken: ${[...new Set(reasons)].join('; ')}`);
  }
  return out;
}

/** Why the search found no way to `key` (one it could not prove impossible). */
export function notFound(flow: CompiledFlow, key: string, ex: Explored): string {
  const searched =
    `${ex.states} call states from ${ex.starts} start${ex.starts === 1 ? '' : 's'}` +
    (ex.outOfTime !== undefined ? `, stopped at its time limit of ${ex.outOfTime / 1000} s: --max-seconds` : '');
  const step = flow.model.steps[key.slice(0, key.lastIndexOf(':'))];
  if (step?.kind === 'switch' && step.calendar) {
    return (
      `not found: no call searched (${searched}) reached this step when calendar ${step.calendar.name} ` +
      `was ${key.slice(key.lastIndexOf(':') + 1)} at the call's time; write this case by hand with the time ` +
      `that makes it so (mocks.now, or a step's now:)`
    );
  }
  if (step?.kind === 'switch') {
    const m = /:case(\d+)$/.exec(key);
    const what = m ? `its condition \`${step.cases[Number(m[1]) - 1]?.when}\` held` : 'none of its conditions held';
    const conds = m ? [step.cases[Number(m[1]) - 1]?.when ?? ''] : step.cases.map((c) => c.when);
    if (conds.some((c) => /(?<![\w.])(open|holiday)\s*\(/.test(c))) {
      return (
        `not found: no call searched (${searched}) reached this step where ${what}; it reads a calendar: write ` +
        `this case by hand with the time that makes it hold (mocks.now, or a step's now: when time passes ` +
        `during the call)`
      );
    }
    return (
      `not found: no call searched (${searched}) reached this step where ${what}; write this case by hand ` +
      `(call fields, vars: or earlier results that make it hold)`
    );
  }
  if (step?.kind === 'loop') {
    const what = {
      do: 'with an item in its list',
      next: 'with a second item in its list',
      done: 'at the end of its list',
      error: 'where its list is not a list:',
    }[key.slice(key.lastIndexOf(':') + 1)];
    return (
      `not found: no call searched (${searched}) reached this loop ${what ?? 'with its list'} \`${step.in}\`; ` +
      `write this case by hand (vars:, or a mocked lookup's body, giving that list)`
    );
  }
  return `not found in the search (${searched}); write this case by hand`;
}
