/** A CallStore around another, with hooks before its loads and commits (slow or failing stores). */
import type { CallStore, FinishedExtra, PathAppend, PathCount } from '../../src/store/types.js';

export interface StoreHooks {
  /** Runs before each load; may wait or throw. */
  load?: (callid: string) => Promise<void> | void;
  /** Runs before each commit; may wait or throw. */
  commit?: (callid: string) => Promise<void> | void;
}

export function hooked(inner: CallStore, hooks: StoreHooks): CallStore & { commits: number } {
  const s = {
    commits: 0,
    async load(id: string, keepAside?: boolean) {
      await hooks.load?.(id);
      return inner.load(id, keepAside);
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
    appendPath: (id: string, e: string, max: number, ttl: number) => inner.appendPath(id, e, max, ttl),
    appendPaths: (es: readonly PathAppend[], max: number, ttl: number, bytes?: number) =>
      inner.appendPaths(es, max, ttl, bytes),
    countPaths: (cs: readonly PathCount[], bytes?: number) => inner.countPaths(cs, bytes),
    readPath: (id: string) => inner.readPath(id),
    loadPath: (id: string) => inner.loadPath(id),
    dropPath: (id: string) => inner.dropPath(id),
    addFinished: (id: string, r: string, keep: number, ttl: number, extra?: FinishedExtra) =>
      inner.addFinished(id, r, keep, ttl, extra),
    listFinished: (offset: number, limit: number) => inner.listFinished(offset, limit),
    listFinishedRows: (offset: number, limit: number) => inner.listFinishedRows(offset, limit),
    getFinished: (id: string) => inner.getFinished(id),
    listLive: (cursor: string | undefined, limit: number) => inner.listLive(cursor, limit),
    putOutbound: (id: string, r: string, ttl: number) => inner.putOutbound(id, r, ttl),
    getOutbound: (id: string) => inner.getOutbound(id),
    revisions: (ids: readonly string[]) => inner.revisions!(ids),
  };
  return s;
}
