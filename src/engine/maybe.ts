/**
 * A stage's answer now or later. The call step runs its stages at once while nothing is waited for (a store in this
 * process answers at once, a step performs no effect) and goes on from a promise at the first stage that waits (the
 * Redis store, an effect, another instance's claim): the same stages, in the same order, either way, and no promise
 * nor turn of the event loop per stage for a request that waits for nothing.
 */
import type { SnapshotStore } from './ports.js';

export type Maybe<T> = T | Promise<T>;

/** `v` is a promise (or a thenable: a store of one's own may answer with one). */
export function isPromise<T>(v: Maybe<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === 'function';
}

/** The call's record and aside: at once from a store that answers at once. */
export function loadFrom(store: SnapshotStore, callid: string, keepAside: boolean) {
  return store.loadSync ? store.loadSync(callid, keepAside) : store.load(callid, keepAside);
}

/** The compare-and-set of a call's record: at once on a store that answers at once. */
export function commitTo(
  store: SnapshotStore,
  callid: string,
  rev: number | undefined,
  value: string,
  ttlMs: number,
): Maybe<number | undefined> {
  return store.commitSync ? store.commitSync(callid, rev, value, ttlMs) : store.commit(callid, rev, value, ttlMs);
}
