/** A CallStore around another, with hooks before its loads and commits (slow or failing stores). */
import type { CallStore } from '../../src/store/types.js';

export interface StoreHooks {
  /** Runs before each load; may wait or throw. */
  load?: (callid: string) => Promise<void> | void;
  /** Runs before each commit; may wait or throw. */
  commit?: (callid: string) => Promise<void> | void;
}

export function hooked(inner: CallStore, hooks: StoreHooks): CallStore & { commits: number } {
  const s = {
    commits: 0,
    async load(id: string) {
      await hooks.load?.(id);
      return inner.load(id);
    },
    async commit(id: string, rev: number | undefined, v: string, ttl: number) {
      await hooks.commit?.(id);
      s.commits++;
      return inner.commit(id, rev, v, ttl);
    },
    setAside: (id: string, a: string, ttl: number) => inner.setAside(id, a, ttl),
    get: (id: string) => inner.get(id),
    set: (id: string, v: string, ttl: number) => inner.set(id, v, ttl),
    delete: (id: string) => inner.delete(id),
    size: () => inner.size(),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return s;
}
