/**
 * One queue of the memory store (./memory-queues.ts): its callers in sorted lists, its paused and known agents, its
 * counts and handling times.
 */
import { QUEUE_LIMITS } from './queues.js';
import { SortedList, cmpText } from './sorted-list.js';

export interface Caller {
  callid: string;
  arrival: number;
  seen: number;
  /** `seen` + its last poll's staleMs. */
  staleAt: number;
  /** The agent it is ringing, and when that claim lapses. */
  claim?: { agent: string; until: number };
  /** Agents rung for it that did not answer. */
  tried: Set<string>;
}

interface Known {
  number: string;
  /** When it was last listed (or paused). */
  at: number;
}

export interface Queue {
  name: string;
  lastOp: number;
  callers: Map<string, Caller>;
  line: SortedList<Caller>;
  ringing: SortedList<Caller>;
  /** The callers not ringing, by staleAt. */
  stale: SortedList<Caller>;
  /** The ringing callers, by their claim's end. */
  leases: SortedList<Caller>;
  paused: Set<string>;
  known: Map<string, Known>;
  knownOrder: SortedList<Known>;
  /** The last poll's list, joined: a list polled again is not noted again. */
  list?: string;
  /** The agent this queue claimed last (round_robin). */
  rr?: string;
  /** The last HANDLE_KEEP handling times, oldest first. */
  handle: number[];
  answered: number;
  abandoned: number;
  timedOut: number;
}

const byArrival = (a: Caller, b: Caller) => a.arrival - b.arrival || cmpText(a.callid, b.callid);
const byStale = (a: Caller, b: Caller) => a.staleAt - b.staleAt || cmpText(a.callid, b.callid);
const byLease = (a: Caller, b: Caller) => (a.claim?.until ?? 0) - (b.claim?.until ?? 0) || cmpText(a.callid, b.callid);
const byAt = (a: Known, b: Known) => a.at - b.at || cmpText(a.number, b.number);

/** A queue with nobody in it yet. */
export function newQueue(name: string, now: number): Queue {
  return {
    name,
    lastOp: now,
    callers: new Map(),
    line: new SortedList(byArrival),
    ringing: new SortedList(byArrival),
    stale: new SortedList(byStale),
    leases: new SortedList(byLease),
    paused: new Set(),
    known: new Map(),
    knownOrder: new SortedList(byAt),
    handle: [],
    answered: 0,
    abandoned: 0,
    timedOut: 0,
  };
}

/** Notes the agents of a poll's list as known to the queue (when the list changed); maxAgents kept, the latest. */
export function noteList(q: Queue, agents: readonly string[], now: number): void {
  const list = agents.join(',');
  if (q.list === list) return;
  q.list = list;
  for (const a of agents) know(q, a, now);
  trimKnown(q);
}

export function know(q: Queue, number: string, now: number): void {
  const k = q.known.get(number);
  if (k) q.knownOrder.remove(k);
  const next = { number, at: now };
  q.known.set(number, next);
  q.knownOrder.insert(next);
}

/** Forgets the agents listed longest ago past QUEUE_LIMITS.maxAgents. */
export function trimKnown(q: Queue): void {
  while (q.known.size > QUEUE_LIMITS.maxAgents) {
    const k = q.knownOrder.at(0) as Known;
    q.knownOrder.remove(k);
    q.known.delete(k.number);
  }
}
