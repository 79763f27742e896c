/**
 * The store's health as its operations find it (GET /health): each operation's outcome, on the
 * request path or the health check's own, is noted here, and the fault is that of the latest
 * outcome, with two kinds apart:
 * - writes refused (Redis out of memory under `noeviction`, a read-only replica, too few
 *   replicas, a failed snapshot): the store still answers reads and pings, so the fault stands
 *   until a write succeeds;
 * - any other failure (a timeout, the connection down, another error): until any operation
 *   succeeds.
 * A fault keeps when it began (`since`: its first occurrence since the store last served) and
 * when it was last met (`at`).
 */

export type StoreFaultKind = 'writes_refused' | 'timeout' | 'unreachable' | 'error';

/** What the store's operations met last, when they failed (times: epoch ms). */
export interface StoreFault {
  kind: StoreFaultKind;
  /** The store's own code of the error, when it gave one (Redis: OOM, READONLY, NOREPLICAS, MISCONF...). */
  code?: string;
  message: string;
  /** Its first occurrence since the store last served. */
  since: number;
  /** Its latest occurrence. */
  at: number;
}

/** The faults of one store's operations, as they come (see the file's comment). */
export class StoreFaults {
  private refused: StoreFault | undefined;
  private failed: StoreFault | undefined;
  /** Epoch ms of the latest write that succeeded. */
  private wroteAt: number | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** An operation succeeded; `wrote`: it wrote (a refusal of writes is over). */
  served(wrote: boolean): void {
    this.failed = undefined;
    if (!wrote) return;
    this.refused = undefined;
    this.wroteAt = this.now();
  }

  /** An operation failed with this fault (its kind, the store's code and message). */
  met(f: Pick<StoreFault, 'kind' | 'code' | 'message'>): void {
    const at = this.now();
    const before = f.kind === 'writes_refused' ? this.refused : this.failed;
    const fault: StoreFault = { ...f, since: before?.kind === f.kind ? before.since : at, at };
    if (f.kind === 'writes_refused') this.refused = fault;
    else this.failed = fault;
  }

  /** The fault the store is in now, if any: the later of the two kinds when both stand. */
  current(): StoreFault | undefined {
    const [r, f] = [this.refused, this.failed];
    return r && f ? (f.at >= r.at ? f : r) : (r ?? f);
  }

  /** Whether a write succeeded within the last `ms` and no fault stands since: a check of its own may only ping. */
  wroteWithin(ms: number): boolean {
    return this.current() === undefined && this.wroteAt !== undefined && this.now() - this.wroteAt <= ms;
  }
}
