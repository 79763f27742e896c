/**
 * The ports of the call step: what CallHandler (src/engine/call.ts) is given by its caller.
 * The server's composition root (src/http/plugin.ts) wires the real ones: the call store
 * (src/store), the flow versions and live calls (src/registry), the effect executor, the
 * observers; tests give small fakes. No HTTP, no Fastify here.
 */
import type { EvalLimits } from '../flow/budget.js';
import type { CompiledFlow } from './compile.js';
import type { Executor } from './effects.js';
import type { SettlingLive } from './live-check.js';
import type { StepObserver } from './observe.js';
import type { EngineOptions } from './outcome.js';
import type { OutboundStarts } from './outbound.js';
import type { CallObserver } from './report.js';
import type { Sealer } from './seal.js';

export interface CallLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/**
 * Where call records live (src/store: memory or Redis, see CallStore there); values are JSON text. The call step
 * bounds how long it waits for load and commit (src/engine/stall.ts): a store slow to answer them is waited for.
 */
export interface SnapshotStore {
  /** The call's value and revision, and its aside (taken, unless `keepAside`). */
  load(callid: string, keepAside?: boolean): Promise<{ call?: { value: string; rev: number }; aside?: string }>;
  /** Compare-and-set on the revision; the new revision, or undefined when it had changed. */
  commit(callid: string, rev: number | undefined, value: string, ttlMs: number): Promise<number | undefined>;
  setAside(callid: string, aside: string, ttlMs: number): Promise<void>;
  /** `load` answered at once, by a store in this process (the memory store): used instead of `load` when given. */
  loadSync?(callid: string, keepAside?: boolean): { call?: { value: string; rev: number }; aside?: string };
  /** `commit` answered at once, by a store in this process: used instead of `commit` when given. */
  commitSync?(callid: string, rev: number | undefined, value: string, ttlMs: number): number | undefined;
  /**
   * Each call's committed revision (undefined: none): a store other processes share has it, to check the live calls
   * idle here (src/engine/live-check.ts).
   */
  revisions?(callids: readonly string[]): Promise<(number | undefined)[]>;
}

/** The loaded flow versions (src/registry). */
export interface FlowVersions {
  /** A version a live call is pinned to. */
  get(name: string, version: string): CompiledFlow | undefined;
  /** The version a new call of this flow gets (pin, canary). */
  pick(name: string, callid: string): CompiledFlow | undefined;
  /** A version this process does not have, from where instances share them (a call started elsewhere). */
  fetch?(name: string, version: string): Promise<CompiledFlow | undefined>;
}

/** Which version and step each live call is at, and counts per version (src/registry/live.ts). */
export interface LiveTracker extends Partial<SettlingLive> {
  set(callid: string, flow: string, version: string, step: string, rev?: number): void;
  /** The call is over; truthy when it was live. */
  end(callid: string): unknown;
  /** Forgets calls idle past their TTL; the number forgotten. */
  purge(): number;
  started(flow: string, version: string): void;
  error(flow: string, version: string): void;
  /** Live calls tracked now. */
  readonly size: number;
}

/** Where a new call goes: the flow named by the request's `app`, else its called `number`, else `default`. */
export interface Routes {
  /** By the request's `app` (the REALTIME10 application hash). */
  apps: Record<string, string>;
  /** By the called `number` (E.164). */
  numbers: Record<string, string>;
  /** When neither matches. */
  default?: string;
}

/** How the call step behaves (the server's options: src/http/options.ts). */
export interface CallOptions {
  deadlineMs: number;
  callTtlMs: number;
  /** How long an ended call's tombstone is kept (default 10 min). */
  endedTtlMs?: number;
  /** The cap on a call's stored state, in bytes (default 32 KB): EngineOptions.maxStateBytes. */
  maxStateBytes?: number;
  /** What one request's templates and expressions may spend: EngineOptions.evalLimits. */
  evalLimits?: EvalLimits;
  /** New calls are refused (CALL_LIMIT) while this many are live here (default 50,000). */
  maxLiveCalls?: number;
  unknownCall: EngineOptions['unknownCall'];
  routes: Routes;
  /** The rt_media played when a step misses the deadline; without it, a 1-second `wait`. */
  fallback?: string;
  recorder?: CallObserver;
  /** Seals sensitive values in the stored state and asides (CALLSCRIPT_SENSITIVE_KEY); else stored as they are. */
  sealer?: Sealer;
  /** Reads a secret a flow declares (its http steps' secrets.X): the server reads the environment. */
  secret?: (name: string) => string | undefined;
  /** Told of every request handled, once its work is over (metrics, traces, call history: src/engine/observe.ts). */
  observer?: StepObserver;
}

export interface CallDeps {
  versions: FlowVersions;
  store: SnapshotStore;
  live: LiveTracker;
  /** Versions no live call uses may go (after a call ends). */
  release(): void;
  /** Carries out the flows' effects (src/engine/effects.ts; the server's: src/http/live-executor.ts). */
  executor: Executor;
  /** Outbound calls placed by the server: a new call whose request_hash is one of theirs starts with its vars. */
  outbound?: OutboundStarts;
  /**
   * The store answers from this process's memory (the memory store): it cannot stall, so its loads and commits are not
   * guarded (src/engine/stall.ts: a timer race per operation, for nothing). Default false: guarded.
   */
  storeInProcess?: boolean;
  now?: () => number;
}
