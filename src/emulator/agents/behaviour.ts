/**
 * What an emulated agent does when a dialout rings it (docs/emulator.md "Agents"): it answers `answer_after`
 * seconds into the ring (when that is less than the target's timeout) and talks `talk` seconds, then hangs up; or,
 * with `answer: false`, never answers. One check of the fields, shared by the agents file (load.ts) and the control
 * API (PUT /emulator/agents/<number>), so both say the same thing about the same mistake.
 */
import { suggest } from '../suggest.js';

export interface AgentBehaviour {
  /** false: never answers (NOANSWER after the target's timeout). */
  answer: boolean;
  /** Seconds it rings before it answers. */
  answerAfterS: number;
  /** Seconds of conversation once bridged; then the agent hangs up. */
  talkS: number;
}

export const AGENT_LIMITS = {
  answerAfter: { min: 0, max: 300, default: 3 },
  talk: { min: 1, max: 86_400, default: 60 },
  /** Agents one emulator keeps (file and control API together). */
  maxAgents: 10_000,
} as const;

export const AGENT_KEYS = ['answer_after', 'talk', 'answer'] as const;

export const DEFAULT_AGENT: AgentBehaviour = {
  answer: true,
  answerAfterS: AGENT_LIMITS.answerAfter.default,
  talkS: AGENT_LIMITS.talk.default,
};

/** A problem with one agent's fields: `key` names the field (absent: the agent as a whole). */
export interface AgentProblem {
  key?: string;
  /** The problem is the key itself (an unknown one): its position is the key's, not the value's. */
  onKey?: boolean;
  message: string;
}

export type AgentCheck = { ok: true; behaviour: AgentBehaviour } | { ok: false; problems: AgentProblem[] };

const show = (v: unknown) => (v === undefined ? 'nothing' : (JSON.stringify(v) ?? String(v)));

/** Checks an agent's fields (`number` is for messages); every problem is reported, one per field. */
export function checkAgent(number: string, fields: ReadonlyMap<string, unknown>): AgentCheck {
  const problems: AgentProblem[] = [];
  const b: AgentBehaviour = { ...DEFAULT_AGENT };
  for (const k of fields.keys())
    if (!(AGENT_KEYS as readonly string[]).includes(k))
      problems.push({
        key: k,
        onKey: true,
        message: `unknown key ${k} in agent ${number}${suggest(k, AGENT_KEYS)}; the keys are ${AGENT_KEYS.join(', ')}`,
      });
  const seconds = (k: 'answer_after' | 'talk', lim: { min: number; max: number }, what: string) => {
    if (!fields.has(k)) return undefined;
    const v = fields.get(k);
    if (typeof v === 'number' && Number.isFinite(v) && v >= lim.min && v <= lim.max) return v;
    problems.push({ key: k, message: `${k} is ${what}: a number from ${lim.min} to ${lim.max}, got ${show(v)}` });
    return undefined;
  };
  const after = seconds('answer_after', AGENT_LIMITS.answerAfter, 'the seconds the agent rings before it answers');
  const talk = seconds('talk', AGENT_LIMITS.talk, 'the seconds the agent talks once bridged');
  if (after !== undefined) b.answerAfterS = after;
  if (talk !== undefined) b.talkS = talk;
  if (fields.has('answer')) {
    const a = fields.get('answer');
    if (typeof a !== 'boolean')
      problems.push({
        key: 'answer',
        message: `answer is false for an agent that never answers (true, the default, answers), got ${show(a)}`,
      });
    else b.answer = a;
  }
  if (!b.answer)
    for (const k of ['answer_after', 'talk'] as const)
      if (fields.has(k))
        problems.push({
          key: k,
          onKey: true,
          message: `${k} does not apply: agent ${number} never answers (answer: false)`,
        });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, behaviour: b };
}
