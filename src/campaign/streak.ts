/**
 * Placements failing in a row, with no call placed between them (./scheduler.ts): a run of
 * MAX of them means a problem of every row (the server or the service down, a setting
 * wrong), not of the rows, and stops the campaign.
 *
 * A row the service refused (`refused`) is counted an attempt, as the refusal may be its
 * number's; while the streak is open the rows refused on their last attempt are held (not
 * written as `failed` yet). A placement that succeeds closes the streak: the held rows are
 * failed then. A stop for a problem of every row (the streak reaching MAX, or a `fatal`
 * error) gives the attempts of the streak's refused rows back: the refusals were the
 * campaign's problem, not theirs, and the next run tries those rows again.
 */
import type { StateRow } from './journal.js';
import type { PlaceError } from './types.js';

export class FailureStreak {
  private entries: Array<{ row: StateRow; kind: PlaceError['kind'] }> = [];
  private readonly held = new Set<StateRow>();

  constructor(readonly max: number) {}

  get length(): number {
    return this.entries.length;
  }

  /** Rows refused on their last attempt are held. */
  get holding(): boolean {
    return this.held.size > 0;
  }

  /**
   * A failed placement (transient, refused, unknown); `hold`: refused on its last attempt. Returns true when the streak
   * reached max.
   */
  add(row: StateRow, kind: PlaceError['kind'], hold = false): boolean {
    this.entries.push({ row, kind });
    if (hold) this.held.add(row);
    return this.entries.length >= this.max;
  }

  /** A call was placed: the streak is over. Returns the rows held, to be written as failed now. */
  close(): StateRow[] {
    const held = [...this.held];
    this.entries = [];
    this.held.clear();
    return held;
  }

  /**
   * The campaign stops for a problem of every row: the attempts to give back (a row refused
   * twice in the streak, twice), and the streak is over.
   */
  refunds(): StateRow[] {
    const rows = this.entries.filter((e) => e.kind === 'refused').map((e) => e.row);
    this.entries = [];
    this.held.clear();
    return rows;
  }
}
