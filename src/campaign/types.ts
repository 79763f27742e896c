/**
 * A call campaign (`callscript campaign`, docs/campaign.md): the shapes shared by its modules.
 * The scheduler (./scheduler.ts) places and follows calls through a Dialer; the command
 * gives it one that uses the server's admin API (POST /admin/calls, GET /admin/outbound/:id),
 * the tests a fake.
 */

/** A row of the CSV to call. */
export interface CampaignRow {
  /** 0-based position among the CSV's data rows (the header and blank rows not counted). */
  index: number;
  /** The line of the CSV file where the row starts (1-based; the header is line 1). */
  line: number;
  /** E.164 */
  number: string;
  /** The row's other columns, by the header's names; empty cells left out. */
  vars: Record<string, string>;
}

/** What the CSV reader yields: a row to call, or a row that cannot be called (why). */
export type RowRead =
  { kind: 'row'; row: CampaignRow } | { kind: 'invalid'; index: number; line: number; number: string; reason: string };

/** An outbound call as the server follows it (GET /admin/outbound/:id). */
export interface CallView {
  /** placed: the service has not connected it (no request yet); live; finished. */
  status: 'placed' | 'live' | 'finished';
  callid: string | null;
  /**
   * Finished: the call history's outcome (completed, transferred, abandoned, error, ended_by_admin), null when it has
   * no record.
   */
  outcome?: string | null;
  lastStep?: string | null;
  durationMs?: number | null;
  /** Finished: the call_status it ended with (HANGUP, NOANSWER, BUSY...). */
  callStatus?: string | null;
  /** Live: the step it is at, when known. */
  step?: string;
}

/**
 * Places and follows calls. `follow` resolves with the call's view once it is finished, or
 * with the last view seen when it gave up waiting (the campaign's --timeout): `placed` (never
 * connected) or `live`. Both reject with the signal's reason once it is aborted.
 */
export interface Dialer {
  /** The outbound call's id. Throws a PlaceError when the call could not be placed. */
  place(row: CampaignRow, signal: AbortSignal): Promise<string>;
  /**
   * Throws FollowInterrupted when the server cannot be asked now (the call is followed again later); any other error:
   * the call is lost track of.
   */
  follow(id: string, signal: AbortSignal): Promise<CallView>;
}

/**
 * A call not placed, or perhaps placed, and whose fault it is: only a call placed (or
 * perhaps placed) or a row refused spends one of the row's attempts.
 * - `fatal`: every row would get it (the server unreachable, credentials refused, no admin
 *   API, no account, an unknown app): the campaign stops; not counted as an attempt.
 * - `transient`: not placed, for a passing reason that is not the row's (429, the service
 *   unreachable or busy, the store down): tried again after the retry delay; not counted.
 * - `refused`: the service refused this call (a JSON-RPC error): perhaps the number's fault,
 *   perhaps not: counted, tried again after the delay as a retry; if the campaign stops
 *   for a problem of every row before another call is placed, the attempt is given back.
 * - `row`: the row itself refused (BAD_ADMIN_BODY): counted, `failed`, not tried again.
 * - `unknown`: the call may have been placed all the same (the request sent, no usable
 *   answer): counted, `unknown`, never tried again, so that no number is called twice.
 */
export class PlaceError extends Error {
  constructor(
    readonly kind: 'fatal' | 'transient' | 'refused' | 'row' | 'unknown',
    message: string,
  ) {
    super(message);
    this.name = 'PlaceError';
  }
}

/**
 * Following a call failed for a reason of every call (the server not reached, overloaded,
 * refusing the credentials): not the call's. The campaign stops; the call stays `calling` in
 * the state, and the next run follows it again.
 */
export class FollowInterrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FollowInterrupted';
  }
}

/** A row's line of the results CSV. */
export interface RowResult {
  number: string;
  /**
   * completed, transferred, abandoned, error, ended_by_admin (the call history's); ended (finished, no
   * history record); not_connected (the service never connected it); timeout (still live at
   * --timeout); failed (not placed); invalid (a bad row); unknown (perhaps placed: no usable
   * answer to a request sent, the campaign killed while placing it, or track of it lost).
   */
  outcome: string;
  callStatus: string;
  lastStep: string;
  durationMs: number | null;
  attempts: number;
  callid: string;
  line: number;
  detail: string;
}

/** The call_status of a call not answered: such a call is tried again. */
export const RETRIED_STATUSES: ReadonlySet<string> = new Set(['NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED']);

/** What a campaign tells its progress display, as it happens. */
export type CampaignEvent =
  | { type: 'invalid'; line: number; number: string; reason: string }
  | { type: 'placed'; line: number; number: string; attempt: number; id: string }
  | { type: 'retry'; line: number; number: string; attempt: number; why: string; at: number }
  | { type: 'result'; result: RowResult }
  | { type: 'warning'; message: string };
