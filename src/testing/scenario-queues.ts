/**
 * Queues in scenario files (docs/testing.md "Queues"): the state of a case's queues (`queues:` on a case: callers
 * ahead, agents busy or paused; on a step: callers served, agents freed, made busy, paused or resumed). Parsed over
 * the positioned YAML tree, every problem at its file:line:col with the key meant; checked in order over a case
 * (`checkCaseQueues`: no more callers served than are ahead, no agent freed that is not busy...). A queue operation
 * as a step, and its `answer:`, are queue-steps.ts's.
 */
import { closest } from '../flow/check-context.js';
import type { Loc, YNode } from '../flow/yaml.js';
import { describe } from '../flow/yaml.js';
import { checkE164 } from '../protocol/formats.js';
import { QUEUE_LIMITS } from '../store/queues.js';
import { meantKey } from './suggest-key.js';

/** Reports a problem at a node or a position. */
export type Report = (at: { pos: Loc } | Loc, message: string) => void;

/** The keys of a case's `queues:` (the state before the call) and of a step's (changes during it). */
export const CASE_QUEUE_KEYS = ['ahead', 'busy', 'paused'] as const;
export const STEP_QUEUE_KEYS = ['served', 'busy', 'free', 'paused', 'resumed'] as const;
const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** A number of callers (ahead, served) and where it is written. */
export interface Counted {
  n: number;
  pos: Loc;
}
/** An agent's number in a list and where it is written. */
export interface Listed {
  number: string;
  pos: Loc;
}

/** What a case or a step says of one queue. */
export interface QueueChange {
  queue: string;
  /** Where the queue's name is written. */
  pos: Loc;
  ahead?: Counted;
  served?: Counted;
  busy?: Listed[];
  free?: Listed[];
  paused?: Listed[];
  resumed?: Listed[];
}

/** Where a key of `queues:` belongs, said when it is written in the other place. */
const ELSEWHERE: Record<string, { case: string; step: string }> = {
  ahead: {
    case: '',
    step:
      "callers join the line ahead of this caller before the call starts: write ahead: in the case's queues: " +
      '(a step serves them: served:)',
  },
  served: {
    case: "served: serves callers ahead during the call: write it in a step's queues: (or give fewer callers ahead)",
    step: '',
  },
  free: {
    case:
      "free: frees an agent made busy before: at the case's start an agent not listed in busy: is free; write it " +
      "in a step's queues:",
    step: '',
  },
  resumed: {
    case:
      "resumed: resumes an agent paused before: at the case's start an agent not listed in paused: is not " +
      "paused; write it in a step's queues:",
    step: '',
  },
};

const SYNONYMS: Record<string, string> = {
  waiting: 'ahead',
  callers: 'ahead',
  before: 'ahead',
  line: 'ahead',
  answered: 'served',
  done: 'served',
  serve: 'served',
  available: 'free',
  idle: 'free',
  release: 'free',
  released: 'free',
  claimed: 'busy',
  ringing: 'busy',
  talking: 'busy',
  pause: 'paused',
  resume: 'resumed',
  unpaused: 'resumed',
};

/**
 * `queues:` of a case (`where` 'case': the state before the call) or of a step ('step': changes before the request
 * that carries its outcome): a map of queue names to what is said of each.
 */
export function parseQueueChanges(n: YNode, where: 'case' | 'step', report: Report): QueueChange[] {
  const label = where === 'case' ? "a case's queues" : "a step's queues";
  if (n.kind !== 'map') {
    report(
      n,
      `${label} is a map of queue names, each with ` +
        `${(where === 'case' ? CASE_QUEUE_KEYS : STEP_QUEUE_KEYS).join(', ')}` +
        ` (e.g. queues: { sales: { ${where === 'case' ? 'ahead: 2' : 'served: 1'} } }), not ${describe(n)}`,
    );
    return [];
  }
  const out: QueueChange[] = [];
  for (const e of n.entries) {
    if (!NAME_RE.test(e.key)) {
      report(e.keyNode, `queues: "${e.key}" is not a queue name (1 to 64 letters, digits, - and _)`);
      continue;
    }
    const c = parseChange(e.key, e.keyNode.pos, e.value, where, report);
    if (c) out.push(c);
  }
  return out;
}

function parseChange(queue: string, pos: Loc, n: YNode, where: 'case' | 'step', report: Report) {
  const allowed: readonly string[] = where === 'case' ? CASE_QUEUE_KEYS : STEP_QUEUE_KEYS;
  if (n.kind !== 'map') {
    report(n, `queues.${queue} is a map of ${allowed.join(', ')}, not ${describe(n)}`);
    return undefined;
  }
  const c: QueueChange = { queue, pos };
  for (const e of n.entries) {
    const at = `queues.${queue}.${e.key}`;
    if (!allowed.includes(e.key)) {
      const other = ELSEWHERE[e.key]?.[where];
      if (other) report(e.keyNode, `${at}: ${other}`);
      else {
        const near = meantKey(e.key, allowed, SYNONYMS);
        report(
          e.keyNode,
          `unknown key "${e.key}" in queues.${queue}${near !== undefined ? `: did you mean "${near}"?` : ''} ` +
            `(allowed ${where === 'case' ? "in a case's" : "in a step's"} queues: ${allowed.join(', ')})`,
        );
      }
      continue;
    }
    if (e.key === 'ahead' || e.key === 'served') {
      const min = e.key === 'ahead' ? 0 : 1;
      const v = e.value;
      const num = v.kind === 'scalar' && v.type === 'int' ? Number(v.value) : undefined;
      if (num === undefined || num < min || num > QUEUE_LIMITS.maxLine)
        report(
          v,
          `${at} is a number of callers, ${min} to ${QUEUE_LIMITS.maxLine.toLocaleString('en-US')} (a line ` +
            `holds ${QUEUE_LIMITS.maxLine.toLocaleString('en-US')} callers), not ${describe(v)}`,
        );
      else c[e.key] = { n: num, pos: v.pos };
      continue;
    }
    const list = parseNumbers(e.value, at, report);
    if (list) c[e.key as 'busy' | 'free' | 'paused' | 'resumed'] = list;
  }
  return c;
}

/** A list of agents' numbers (E.164, distinct, QUEUE_LIMITS.maxAgents at most). */
function parseNumbers(n: YNode, at: string, report: Report): Listed[] | undefined {
  if (n.kind !== 'seq') {
    report(n, `${at} is a list of agents' numbers (${at.split('.').pop()}: ["+442079460001"]), not ${describe(n)}`);
    return undefined;
  }
  if (n.items.length > QUEUE_LIMITS.maxAgents) {
    report(n, `${at} lists ${n.items.length.toLocaleString('en-US')} numbers; at most ${QUEUE_LIMITS.maxAgents}`);
    return undefined;
  }
  const out: Listed[] = [];
  const seen = new Set<string>();
  for (const it of n.items) {
    const s = it.kind === 'scalar' && it.type === 'string' ? String(it.value) : undefined;
    if (s === undefined) {
      report(it, `${at}: an agent is a number in a string ("+442079460001"), not ${describe(it)}`);
      continue;
    }
    const bad = checkE164(s);
    if (bad !== null) report(it, `${at}: "${s.slice(0, 40)}": ${bad}`);
    else if (seen.has(s)) report(it, `${at}: "${s}" is listed twice`);
    else {
      seen.add(s);
      out.push({ number: s, pos: it.pos });
    }
  }
  return out;
}

/** What a case's queues are at each point of the case, for its checks. */
interface Tracked {
  ahead: Map<string, { left: number; pos: Loc }>;
  busy: Map<string, Loc>;
  paused: Map<string, Loc>;
}

/**
 * The changes of a case (its own `queues:`, then each step's in order) as they run: no more callers served than are
 * ahead, an agent made busy or paused once, freed or resumed only when it is.
 */
export function checkCaseQueues(changes: readonly QueueChange[][], reportTo: Report): void {
  // said in the order written (a step's lists are walked in the order they take effect)
  const said: { pos: Loc; message: string }[] = [];
  const report: Report = (at, message) => said.push({ pos: 'pos' in at ? at.pos : at, message });
  walk(changes, report);
  said.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  for (const x of said) reportTo(x.pos, x.message);
}

function walk(changes: readonly QueueChange[][], report: Report): void {
  const t: Tracked = { ahead: new Map(), busy: new Map(), paused: new Map() };
  for (const list of changes)
    for (const c of list) {
      if (c.ahead) t.ahead.set(c.queue, { left: c.ahead.n, pos: c.ahead.pos });
      if (c.served) {
        const a = t.ahead.get(c.queue);
        const left = a?.left ?? 0;
        if (c.served.n > left)
          report(
            c.served,
            `queues.${c.queue}.served: ${c.served.n} serves more callers than are ahead: ` +
              (a
                ? `${left} left (ahead: at line ${a.pos.line})`
                : `none (give the case's queues: { ${c.queue}: { ahead: n } })`),
          );
        else t.ahead.set(c.queue, { left: left - c.served.n, pos: a!.pos });
      }
      for (const b of c.busy ?? []) {
        const was = t.busy.get(b.number);
        if (was) report(b, `queues.${c.queue}.busy: "${b.number}" is busy already (line ${was.line})`);
        else t.busy.set(b.number, b.pos);
      }
      for (const f of c.free ?? []) {
        if (t.busy.delete(f.number)) continue;
        const near = closest(f.number, [...t.busy.keys()]);
        report(
          f,
          `queues.${c.queue}.free: "${f.number}" is not busy (free: frees an agent a busy: made busy)` +
            (near ? ` (did you mean "${near}"?)` : ''),
        );
      }
      for (const p of c.paused ?? []) {
        const key = `${c.queue} ${p.number}`;
        const was = t.paused.get(key);
        if (was) report(p, `queues.${c.queue}.paused: "${p.number}" is paused already (line ${was.line})`);
        else t.paused.set(key, p.pos);
      }
      for (const r of c.resumed ?? []) {
        if (t.paused.delete(`${c.queue} ${r.number}`)) continue;
        report(r, `queues.${c.queue}.resumed: "${r.number}" is not paused in ${c.queue} (resumed: undoes a paused:)`);
      }
    }
}
