/**
 * Live calls that went on elsewhere. With a shared store (Redis), the service may send a
 * call's requests to any instance or worker, and its end to any of them: the process that
 * answered a request counts the call live (src/registry/live.ts) but never hears of the
 * requests other processes answer. So, now and then, the calls idle here are checked
 * against the store: one whose stored revision is no longer the one this process committed
 * was answered, ended or dropped elsewhere, and leaves this process's count. A call is thus
 * counted by the process that answered its latest request; the figures summed over the
 * processes (metrics, health) are the calls live, within a check's interval.
 *
 * Off the request path: one read of a revision per idle call, in batches, at most every
 * `intervalMs`; a call with a request running here is left alone.
 */

/** What the check reads of the store: each call's committed revision (undefined: none). */
export interface RevisionReader {
  revisions(callids: readonly string[]): Promise<(number | undefined)[]>;
}

/** What it reads and changes of the live-call bookkeeping. */
export interface SettlingLive {
  idleSince(since: number): Iterable<[string, number]>;
  settle(callid: string, rev: number, storeRev: number | undefined): boolean;
}

/** Calls read from the store in one batch. */
export const LIVE_CHECK_BATCH = 500;
/** Calls checked in one run at most (the rest wait for the next run). */
export const LIVE_CHECK_MAX = 20_000;

/**
 * Forgets the calls idle here since `since` (epoch ms) that the store shows answered, ended or
 * expired elsewhere; `busy` calls (a request of theirs running here) are skipped. Returns how
 * many calls were forgotten. Rejects when the store does (nothing is forgotten then).
 */
export async function settleIdleCalls(
  live: SettlingLive,
  store: RevisionReader,
  since: number,
  busy: (callid: string) => boolean,
  max = LIVE_CHECK_MAX,
): Promise<number> {
  const idle: [string, number][] = [];
  for (const entry of live.idleSince(since)) {
    if (busy(entry[0])) continue;
    idle.push(entry);
    if (idle.length >= max) break;
  }
  let forgotten = 0;
  for (let i = 0; i < idle.length; i += LIVE_CHECK_BATCH) {
    const batch = idle.slice(i, i + LIVE_CHECK_BATCH);
    const revs = await store.revisions(batch.map(([callid]) => callid));
    batch.forEach(([callid, rev], j) => {
      // a request that started meanwhile commits a revision of its own: settle compares with it
      if (!busy(callid) && live.settle(callid, rev, revs[j])) forgotten++;
    });
  }
  return forgotten;
}
