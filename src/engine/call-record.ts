/**
 * The record the call store keeps per call, read and written with real fields (one JSON
 * parse per read, one stringify per write, and none when the engine's own serialisation can
 * be stored as it is):
 *
 * - a live call: its CallState (src/engine/types.ts), its sensitive values sealed when a key
 *   is configured, with the effect memo (`lk`, `hn`: src/engine/effects.ts) as fields;
 * - a claim: the state unchanged plus `claim` (an instance performs the call's effects: the
 *   others wait for it instead of performing them again), or the claim alone for a new call;
 * - a tombstone (ENDED): the call is over, for `endedTtlMs`, so that a late request of it (a
 *   retried HANGUP, a request delayed in the network) is answered `hangup` instead of
 *   restarting the flow.
 */
import type { CompiledFlow } from './compile.js';
import type { EffectMemo } from './effects.js';
import { openState, sealState, type Sealer } from './seal.js';
import type { CallState } from './types.js';

/** A call's tombstone. */
export const ENDED = '{"v":2,"ended":true}';

/** How long ended calls are remembered by default: 10 minutes. */
export const DEFAULT_ENDED_TTL_MS = 10 * 60 * 1000;

/** A step of another instance in progress on this call (it performs an effect). */
export interface Claim {
  /** The request it answers: command_id:command:call_status. */
  req: string;
  /** Epoch ms after which the claim is void (its instance died or stalled). */
  until: number;
}

/** A call's record as read. */
export type CallRecord =
  /** No value: never seen, expired (an aside alone is not a value). */
  | { kind: 'none' }
  | { kind: 'ended' }
  /** An instance performs the call's effects; `state`: the call before them (absent for a new call). */
  | { kind: 'claimed'; claim: Claim; state?: CallState }
  | { kind: 'live'; state: CallState }
  | { kind: 'unreadable' };

function isState(o: Partial<CallState> | null): o is CallState {
  return (
    typeof o === 'object' &&
    o !== null &&
    o.v === 2 &&
    typeof o.flow === 'string' &&
    typeof o.s === 'string' &&
    typeof o.commandId === 'number'
  );
}

function isClaim(c: unknown): c is Claim {
  return typeof c === 'object' && c !== null && typeof (c as Claim).until === 'number';
}

/** Reads a stored value. */
export function readRecord(raw: string | undefined): CallRecord {
  if (raw === undefined) return { kind: 'none' };
  if (raw === ENDED) return { kind: 'ended' };
  let o: (Partial<CallState> & { claim?: unknown }) | null;
  try {
    o = JSON.parse(raw) as typeof o;
  } catch {
    return { kind: 'unreadable' };
  }
  const state = isState(o) ? o : undefined;
  if (o && isClaim(o.claim))
    return state ? { kind: 'claimed', claim: o.claim, state } : { kind: 'claimed', claim: o.claim };
  return state ? { kind: 'live', state } : { kind: 'unreadable' };
}

/** The CallState of a stored value (admin, tools): undefined for a tombstone, a claim alone, or garbage. */
export function decodeState(raw: string): CallState | undefined {
  const r = readRecord(raw);
  return r.kind === 'live' || r.kind === 'claimed' ? r.state : undefined;
}

export function encodeState(s: CallState): string {
  return JSON.stringify(s);
}

/** No effect memo to keep (shared: never written to). */
const NO_MEMO: EffectMemo = Object.freeze({});

/**
 * The memo a request that performs no effect keeps: a lookup's record is over, the count of the call's lookups stays
 * (memoOf without `lk`; nothing made when there is no count).
 */
export function countMemo(state: CallState | undefined): EffectMemo {
  return state?.hn ? { hn: state.hn } : NO_MEMO;
}

/** The effect memo a stored state carries. */
export function memoOf(state: CallState | undefined): EffectMemo {
  const memo: EffectMemo = {};
  if (state?.lk) memo.lk = state.lk;
  if (state?.hn) memo.hn = state.hn;
  return memo;
}

/** Sealing of a flow's sensitive values in what is stored (CALLSCRIPT_SENSITIVE_KEY), for one call. */
export class RecordSeal {
  constructor(private readonly sealer: Sealer | undefined) {}

  /** The state as stored: its sensitive values sealed when a key is configured; else itself. */
  seal(flow: CompiledFlow, state: CallState, callid: string): CallState {
    const sens = flow.tables.sensitive;
    return sens && this.sealer ? sealState(state, sens, this.sealer, callid) : state;
  }

  /** The state as the engine reads it: sealed values opened (or `***`, with the problem, when they cannot be). */
  open(state: CallState, callid: string): { state: CallState; problem?: string } {
    return state.x === undefined ? { state } : openState(state, this.sealer, callid);
  }
}

/**
 * A call's record after a step: the state (as sealed) with the effect memo as fields. `json` is
 * the engine's serialisation of that same state when it was not sealed: stored as it is when
 * there is no memo to add.
 */
export function encodeRecord(state: CallState, json: string | undefined, memo: EffectMemo): string {
  const hn = memo.hn !== undefined && memo.hn > 0 ? memo.hn : undefined;
  if (hn === undefined && memo.lk === undefined && json !== undefined) return json;
  const record: CallState = { ...state };
  if (hn !== undefined) record.hn = hn;
  if (memo.lk !== undefined) record.lk = memo.lk;
  return JSON.stringify(record);
}

/** The call's record with a claim: its state as stored (memo included), or, for a new call, the claim alone. */
export function claimRecord(stored: CallState | undefined, claim: Claim): string {
  return JSON.stringify(stored ? { ...stored, claim } : { v: 2, claim });
}
