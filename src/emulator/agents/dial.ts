/**
 * A dialout whose targets include agents (docs/emulator.md "Agents"), played target by target as the service calls
 * them, in order, until one answers:
 *
 * - an agent free when rung rings `answer_after` seconds and answers, if that is less than the target's timeout;
 *   then it is bridged and talks `talk` seconds (after the whisper, if any), and hangs up: the call ends (bridge);
 * - an agent that never answers (`answer: false`), or would answer too late, rings the whole timeout: NOANSWER;
 * - an agent ringing or talking for another call when rung is an overlap: counted, an AGENT_OVERLAP warning, and it
 *   does not answer (the whole timeout);
 * - a target that is not in the agents table does not answer either (AGENT_UNKNOWN warning).
 *
 * The agents' states change at the moments they happen: with real time (`realtime`) each phase is waited for
 * (`pause`), so other calls see an agent ringing or talking for as long as it does; in simulated time a dialout takes
 * no real time. A call that ends during the dialout (the caller's `hangup_at`, a `hangup_callid` from another call)
 * frees its agent at once.
 */
import type { SimResult } from '../driver/simulate.js';
import type { EndedBy } from '../driver/transcript.js';
import type { AgentCall, AgentRecord, AgentTable } from './table.js';

export interface Target {
  number: string;
  /** Seconds. */
  timeout: number;
}

export interface DialEnv {
  agents: AgentTable;
  call: AgentCall;
  realtime: boolean;
  /** The call's simulated time (ms) when the dialout starts; the caller hangs up at `hangupAt` (Infinity: never). */
  at: number;
  hangupAt: number;
  /** `hangup_at` as the script wrote it, seconds (for the words). */
  hangupAtS?: number;
  /** Real time: waits `ms` of call time (less if the call is hung up meanwhile); the call time waited. */
  pause(ms: number): Promise<number>;
  /** Why the call was ended from outside during a wait, if it was. */
  hungUp(): { by: 'hangup_callid' | 'emulator'; reason: string } | undefined;
  /** Milliseconds of the whisper played to the agent before bridging (0: none). */
  whisperMs: number;
}

export interface Note {
  code: 'AGENT_OVERLAP' | 'AGENT_UNKNOWN';
  message: string;
}

interface Cut {
  by: EndedBy;
  reason: string;
  words: string;
}

export type AgentDial =
  | { kind: 'done'; sim: SimResult; notes: Note[] }
  /** The call ended during the dialout, `ms` into it. */
  | { kind: 'interrupted'; ms: number; caller: string; by: EndedBy; reason: string; notes: Note[] };

/** True when the agents table decides this dialout: one of its targets is an agent. */
export function agentsDecide(agents: AgentTable, targets: readonly Target[]): boolean {
  return agents.size > 0 && targets.some((t) => agents.get(t.number) !== undefined);
}

const s = (ms: number) => `${+(ms / 1000).toFixed(1)} s`;

export async function dialAgents(env: DialEnv, targets: readonly Target[]): Promise<AgentDial> {
  /** The agent this call holds (ringing or talking), freed whatever happens. */
  const held: { rec?: AgentRecord } = {};
  try {
    return await play(env, targets, held);
  } finally {
    if (held.rec) env.agents.hungUp(held.rec, env.call);
  }
}

async function play(env: DialEnv, targets: readonly Target[], held: { rec?: AgentRecord }): Promise<AgentDial> {
  const notes: Note[] = [];
  /** What happened, in words, target by target (the transcript's `caller`). */
  const parts: string[] = [];
  let elapsed = 0;
  /** Waits one phase of `ms` (a ring, a conversation); what cut it short, if anything. */
  const phase = async (ms: number): Promise<Cut | undefined> => {
    const now = env.at + elapsed;
    if (now + ms > env.hangupAt) {
      const cut = Math.max(0, env.hangupAt - now);
      if (env.realtime) await env.pause(cut);
      elapsed += cut;
      return {
        by: 'caller',
        reason: `the caller hung up at ${env.hangupAtS} s (call.hangup_at)`,
        words: `hung up ${env.hangupAtS} s into the call`,
      };
    }
    const waited = env.realtime ? await env.pause(ms) : ms;
    const r = env.realtime ? env.hungUp() : undefined;
    if (r) {
      elapsed += waited;
      return { ...r, words: `interrupted: ${r.reason}` };
    }
    elapsed += ms;
    return undefined;
  };
  /** The call ended during the phase that began at `start`: `doing` for so long, then why. */
  const cut = (x: Cut, start: number, doing: string): AgentDial => ({
    kind: 'interrupted',
    ms: elapsed,
    caller: [...parts, `${doing} ${s(elapsed - start)}`, x.words].join('; '),
    by: x.by,
    reason: x.reason,
    notes,
  });

  for (const t of targets) {
    const timeoutMs = t.timeout * 1000;
    const start = elapsed;
    const rec = env.agents.get(t.number);
    if (!rec) {
      notes.push({
        code: 'AGENT_UNKNOWN',
        message: `${t.number} is not in the agents table (a dialout to agents): it does not answer`,
      });
      const x = await phase(timeoutMs);
      if (x) return cut(x, start, `${t.number} (not an agent) rang`);
      parts.push(`${t.number} (not an agent) did not answer (${t.timeout} s)`);
      continue;
    }
    const ring = env.agents.ring(rec, env.call);
    if (!ring.overlap) held.rec = rec;
    const b = rec.behaviour;
    if (ring.overlap || !b.answer || b.answerAfterS * 1000 >= timeoutMs) {
      let why: string;
      if (ring.overlap) {
        const doing = ring.state === 'ringing' ? 'ringing for' : 'talking on';
        notes.push({
          code: 'AGENT_OVERLAP',
          message:
            `agent ${t.number} was rung while ${doing} another call (${ring.call.id}, callid ${ring.call.callid}): ` +
            'it does not answer',
        });
        why = `is busy (${doing} call ${ring.call.id})`;
      } else if (!b.answer) why = 'never answers';
      else why = `answers after ${b.answerAfterS} s, not within the timeout`;
      const x = await phase(timeoutMs);
      env.agents.missed(rec, env.call);
      delete held.rec;
      if (x) return cut(x, start, `agent ${t.number} ${why}: rang`);
      parts.push(`agent ${t.number} ${why}: did not answer (${t.timeout} s)`);
      continue;
    }
    const rang = await phase(Math.round(b.answerAfterS * 1000));
    if (rang) {
      env.agents.missed(rec, env.call);
      delete held.rec;
      return cut(rang, start, `agent ${t.number} rang`);
    }
    env.agents.answered(rec, env.call);
    parts.push(`agent ${t.number} answered after ${b.answerAfterS} s`);
    const talkMs = Math.round(b.talkS * 1000);
    const bridged = elapsed;
    const talked = await phase(env.whisperMs + talkMs);
    env.agents.hungUp(rec, env.call);
    delete held.rec;
    if (talked) return cut(talked, bridged, 'bridged');
    const whisper = env.whisperMs > 0 ? ` (after the whisper, ${s(env.whisperMs)})` : '';
    parts.push(`bridged ${s(talkMs)}${whisper}; the agent hung up`);
    return {
      kind: 'done',
      sim: { result: '', error: '', durationMs: elapsed, caller: parts.join('; '), bridged: 'callee', warnings: [] },
      notes,
    };
  }
  return {
    kind: 'done',
    sim: { result: 'NOANSWER', error: '', durationMs: elapsed, caller: parts.join('; '), warnings: [] },
    notes,
  };
}
