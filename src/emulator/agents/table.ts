/**
 * The emulator's agents (docs/emulator.md "Agents"): number -> behaviour, and each agent's live state across every
 * call of the emulator, on the emulator's clock. An agent is `ringing` from the moment a dialout rings it, `talking`
 * once it answered, until the bridge ends, then `free` again. A ring that finds it ringing or talking for another
 * call is an overlap: counted, and that ring is not answered (dial.ts). Not kept with --data; a reset empties it.
 */
import type { Clock } from '../time.js';
import { AGENT_LIMITS, type AgentBehaviour } from './behaviour.js';

export type AgentState = 'free' | 'ringing' | 'talking';

/** The call an agent is busy with: its transcript id and callid. */
export interface AgentCall {
  id: string;
  callid: string;
}

export interface AgentRecord {
  readonly number: string;
  behaviour: AgentBehaviour;
  state: AgentState;
  /** Ringing or talking: for which call, since when (epoch ms, the emulator's clock). */
  call?: AgentCall;
  since?: number;
  /** Rings (overlapping ones included); answered; rings that ended unanswered (overlaps included); overlaps. */
  rung: number;
  answered: number;
  missed: number;
  overlaps: number;
}

/** An agent as GET /emulator/agents shows it. */
export interface AgentView {
  number: string;
  answer: boolean;
  /** Absent for an agent that never answers. */
  answer_after?: number;
  talk?: number;
  state: AgentState;
  /** Ringing or talking: the call's transcript id and callid, and since when (ISO 8601). */
  call?: string;
  callid?: string;
  since?: string;
  rung: number;
  answered: number;
  missed: number;
  overlaps: number;
}

/** What a ring found: the agent busy on another call (an overlap), or free (now ringing for this one). */
export type Ring = { overlap: false } | { overlap: true; state: Exclude<AgentState, 'free'>; call: AgentCall };

export class AgentTable {
  private readonly map = new Map<string, AgentRecord>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.map.size;
  }

  get(number: string): AgentRecord | undefined {
    return this.map.get(number);
  }

  /**
   * Adds an agent, or changes one's behaviour (its state and counters stay: the same person). undefined when the
   * table is full (AGENT_LIMITS.maxAgents).
   */
  set(number: string, behaviour: AgentBehaviour): AgentRecord | undefined {
    const known = this.map.get(number);
    if (known) {
      known.behaviour = { ...behaviour };
      return known;
    }
    if (this.map.size >= AGENT_LIMITS.maxAgents) return undefined;
    const rec: AgentRecord = {
      number,
      behaviour: { ...behaviour },
      state: 'free',
      rung: 0,
      answered: 0,
      missed: 0,
      overlaps: 0,
    };
    this.map.set(number, rec);
    return rec;
  }

  /** false when there was no such agent. A call it is busy with goes on with it. */
  delete(number: string): boolean {
    return this.map.delete(number);
  }

  clear(): void {
    this.map.clear();
  }

  /** Every agent, in the order they were added. */
  views(): AgentView[] {
    return [...this.map.values()].map((r) => view(r));
  }

  /** A dialout of `call` rings the agent. */
  ring(rec: AgentRecord, call: AgentCall): Ring {
    rec.rung++;
    if (rec.state !== 'free' && rec.call) {
      rec.overlaps++;
      return { overlap: true, state: rec.state, call: rec.call };
    }
    this.become(rec, 'ringing', call);
    return { overlap: false };
  }

  /** The ring of `call` ended unanswered (its timeout, an overlap, the call hung up meanwhile). */
  missed(rec: AgentRecord, call: AgentCall): void {
    rec.missed++;
    if (rec.call === call) this.become(rec, 'free');
  }

  /** The agent answered `call`'s ring: bridged. */
  answered(rec: AgentRecord, call: AgentCall): void {
    rec.answered++;
    if (rec.call === call) this.become(rec, 'talking', call);
  }

  /** The bridge with `call` ended (either side hung up). */
  hungUp(rec: AgentRecord, call: AgentCall): void {
    if (rec.call === call) this.become(rec, 'free');
  }

  private become(rec: AgentRecord, state: AgentState, call?: AgentCall): void {
    rec.state = state;
    if (call) {
      rec.call = call;
      rec.since = this.clock.now();
    } else {
      delete rec.call;
      delete rec.since;
    }
  }
}

export function view(r: AgentRecord): AgentView {
  const b = r.behaviour;
  return {
    number: r.number,
    answer: b.answer,
    ...(b.answer ? { answer_after: b.answerAfterS, talk: b.talkS } : {}),
    state: r.state,
    ...(r.call ? { call: r.call.id, callid: r.call.callid } : {}),
    ...(r.since !== undefined ? { since: new Date(r.since).toISOString() } : {}),
    rung: r.rung,
    answered: r.answered,
    missed: r.missed,
    overlaps: r.overlaps,
  };
}
