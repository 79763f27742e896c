/**
 * Where call snapshots live between two requests. Values are opaque strings (the engine
 * serialises its CallState), so that memory and Redis stores behave alike and the bytes
 * per call can be measured. Implementations must be safe to call concurrently for
 * different callids; the HTTP layer serialises requests of one callid.
 */
export interface CallStore {
  get(callid: string): Promise<string | undefined>;
  /** ttlMs: forget the call after this long without a request (a lost HANGUP). */
  set(callid: string, value: string, ttlMs: number): Promise<void>;
  delete(callid: string): Promise<void>;
  /** Number of calls held (for health and benchmarks). */
  size(): Promise<number>;
  close(): Promise<void>;
}
