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
  | { kind: 'row'; row: CampaignRow }
  | { kind: 'invalid'; index: number; line: number; number: string; reason: string };

/** An outbound call as the server follows it (GET /admin/outbound/:id). */
export interface CallView {
  /** placed: the service has not connected it (no request yet); live; finished. */
  status: 'placed' | 'live' | 'finished';
  callid: string | null;
  /** Finished: the call history's outcome (completed, abandoned, error, ended_by_admin), null when it has no record. */
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
  follow(id: string, signal: AbortSignal): Promise<CallView>;
}

/**
 * A call not placed: `fatal` stops the campaign (credentials refused, no admin API, no
 * account: every row would fail), `row` fails this row only (the server refused its number or
 * variables), `transient` may work later (the server not reached, 5xx, the service's
 * refusal): the row is tried again after the retry delay, as an attempt; `unknown`: the call
 * may have been placed all the same (no answer in time): never tried again, its outcome
 * `unknown`, so that no number is called twice.
 */
export class PlaceError extends Error {
  constructor(
    readonly kind: 'fatal' | 'row' | 'transient' | 'unknown',
    message: string,
  ) {
    super(message);
    this.name = 'PlaceError';
  }
}

/** A row's line of the results CSV. */
export interface RowResult {
  number: string;
  /**
   * completed, abandoned, error, ended_by_admin (the call history's); ended (finished, no
   * history record); not_connected (the service never connected it); timeout (still live at
   * --timeout); failed (not placed); invalid (a bad row); unknown (the campaign was killed
   * while placing it, or lost track of it).
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
