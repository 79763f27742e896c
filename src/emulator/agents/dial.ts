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
  const parts: string[] = [];
  let elapsed = 0;
  /** Waits one phase of `ms`; the interruption that cut it short, if any. */
  const phase = async (ms: number) => {
    const now = env.at + elapsed;
    if (now + ms > env.hangupAt) {
      const cut = Math.max(0, env.hangupAt - now);
      if (env.realtime) await env.pause(cut);
      elapsed += cut;
      return {
        by: 'caller' as const,
        reason: `the caller hung up at ${env.hangupAtS} s (call.hangup_at)`,
        words: `hung up ${env.hangupAtS} s into the call`,
      };
    }
    const waited = env.realtime ? await env.pause(ms) : ms;
    const r = env.realtime ? env.hungUp() : undefined;
    if (r) {
      elapsed += waited;
      return { ...r, words: `interrupted after ${waited} ms: ${r.reason}` };
    }
    elapsed += ms;
    return undefined;
  };
  const cut = (x: { by: EndedBy; reason: string; words: string }): AgentDial => ({
    kind: 'interrupted',
    ms: elapsed,
    caller: [...parts, x.words].join('; '),
    by: x.by,
    reason: x.reason,
    notes,
  });

  for (const t of targets) {
    const timeoutMs = t.timeout * 1000;
    const rec = env.agents.get(t.number);
    if (!rec) {
      notes.push({
        code: 'AGENT_UNKNOWN',
        message: `${t.number} is not in the agents table (a dialout to agents): it does not answer`,
      });
      parts.push(`${t.number} (not an agent) did not answer (${t.timeout} s)`);
      const x = await phase(timeoutMs);
      if (x) return cut(x);
      continue;
    }
    const ring = env.agents.ring(rec, env.call);
    if (!ring.overlap) held.rec = rec;
    const b = rec.behaviour;
    const answers = !ring.overlap && b.answer && b.answerAfterS * 1000 < timeoutMs;
    if (!answers) {
      if (ring.overlap) {
        const doing = ring.state === 'ringing' ? 'ringing for' : 'talking on';
        notes.push({
          code: 'AGENT_OVERLAP',
          message:
            `agent ${t.number} was rung while ${doing} another call (${ring.call.id}, callid ${ring.call.callid}): ` +
            'it does not answer',
        });
        parts.push(`agent ${t.number} is busy (${doing} call ${ring.call.id}): did not answer (${t.timeout} s)`);
      } else if (!b.answer) parts.push(`agent ${t.number} never answers: did not answer (${t.timeout} s)`);
      else
        parts.push(
          `agent ${t.number} answers after ${b.answerAfterS} s, not within the ${t.timeout} s timeout: ` +
            'did not answer',
        );
      const x = await phase(timeoutMs);
      env.agents.missed(rec, env.call);
      delete held.rec;
      if (x) return cut(x);
      continue;
    }
    const ringStart = elapsed;
    const rang = await phase(Math.round(b.answerAfterS * 1000));
    if (rang) {
      env.agents.missed(rec, env.call);
      delete held.rec;
      parts.push(`agent ${t.number} rang ${s(elapsed - ringStart)}`);
      return cut(rang);
    }
    env.agents.answered(rec, env.call);
    const talkMs = Math.round(b.talkS * 1000);
    const whisper = env.whisperMs > 0 ? ` (after the whisper, ${s(env.whisperMs)})` : '';
    parts.push(`agent ${t.number} answered after ${b.answerAfterS} s`);
    const talked = await phase(env.whisperMs + talkMs);
    env.agents.hungUp(rec, env.call);
    delete held.rec;
    if (talked) return cut(talked);
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
